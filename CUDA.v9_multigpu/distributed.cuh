// The interface between a distributed step (kind `distributed`, e.g. CUDA.v9_multigpu) and its
// driver, distributed_driver.cu, which owns main(): the decomposition of the matrix into
// bands, one rank's buffers and streams, and the team of ranks this process drives.
//
// G ranks, one band each. Rank g holds input rows [g*R/G, (g+1)*R/G) (a band_rows(g) x cols
// row-major block) and output rows [g*C/G, (g+1)*C/G) (a band_cols(g) x rows row-major block):
// uneven bands when G does not divide. The step turns the input bands into the output bands; the
// driver fills, verifies, times and reports. Two exchanges (--exchange): an NCCL all-to-all
// between local transposes and placements, or peer writes (one kernel per GPU writes its tiles
// straight into every rank's output band, where every GPU reaches every other's memory).
#pragma once

#include <cuda_runtime.h>
#include <nccl.h>

#include <cstddef>
#include <cstdint>
#include <vector>

#include "cuda_check.cuh"
#include "cuda_step.cuh"

// ncclMemAlloc, ncclCommRegister and ncclCommDeregister came with NCCL 2.19; ncclAlltoAll, which
// NCCL runs on the copy engines between symmetric windows under NCCL_CTA_POLICY_ZERO, with 2.28.
#if NCCL_VERSION_CODE >= NCCL_VERSION(2, 19, 0)
#define LAB_NCCL_CAN_REGISTER 1
#else
#define LAB_NCCL_CAN_REGISTER 0
#endif
#if NCCL_VERSION_CODE >= NCCL_VERSION(2, 28, 0)
#define LAB_NCCL_HAS_WINDOWS 1
#else
#define LAB_NCCL_HAS_WINDOWS 0
#endif

namespace lab {

using Index = std::int64_t;

struct Decomposition {
  Index rows = 0, cols = 0;  // the whole matrix
  int ranks = 1;             // G
  int chunks = 1;            // K: pieces of each input band, exchanged one after another
  bool tapered = false;      // chunks of 1, 2, 4, 8, ..., 8, 4, 2, 1 parts (weight_before)
  int elem_bytes = 4;

  // On the host and in the peer kernel alike (it is passed to it by value).
  __host__ __device__ Index row_begin(int g) const { return rows * g / ranks; }  // input band of g
  __host__ __device__ Index band_rows(int g) const { return row_begin(g + 1) - row_begin(g); }
  __host__ __device__ Index col_begin(int g) const { return cols * g / ranks; }  // output band of g
  __host__ __device__ Index band_cols(int g) const { return col_begin(g + 1) - col_begin(g); }
  // The rank whose output band holds output row c (input column c): the largest g with
  // col_begin(g) <= c, that is with cols * g < (c + 1) * ranks.
  __host__ __device__ int owner_of_col(Index c) const {
    return static_cast<int>(((c + 1) * ranks - 1) / cols);
  }
  // Tapered: nothing runs beside the first chunk's transpose (the links wait for it) nor beside
  // the last chunk's placement (the links are done), so the ends of the pipeline are its smallest
  // chunks. Chunk i weighs 2^min(i, K-1-i, kTaperSteps): 1, 2, 4, 8, 8, ..., 8, 4, 2, 1.
  static constexpr int kTaperSteps = 3;
  // The weight of chunks 0 .. k-1, in closed form (K may be large): rising(k) sums the weights
  // 2^min(i, kTaperSteps) of the first k chunks; past the middle the falling side mirrors it.
  Index weight_before(int k) const {
    if (!tapered) return k;
    const auto rising = [](Index n) {
      return n <= kTaperSteps
                 ? (Index{1} << n) - 1
                 : (Index{1} << kTaperSteps) - 1 + (n - kTaperSteps) * (Index{1} << kTaperSteps);
    };
    const int middle = (chunks + 1) / 2;  // chunks 0 .. middle-1 are on the rising side
    if (k <= middle) return rising(k);
    return rising(middle) + rising(chunks - middle) - rising(chunks - k);
  }
  // Chunk k of rank g: input rows [chunk_begin(g, k), chunk_begin(g, k + 1)) of its band.
  Index chunk_begin(int g, int k) const {
    return band_rows(g) * weight_before(k) / weight_before(chunks);
  }
  Index chunk_rows(int g, int k) const { return chunk_begin(g, k + 1) - chunk_begin(g, k); }
  std::size_t bytes(Index elements) const {
    return static_cast<std::size_t>(elements) * static_cast<std::size_t>(elem_bytes);
  }
};

// One rank: a GPU in the single-process and MPI modes, or one of several virtual ranks sharing a
// GPU in the test mode. Buffers are raw bytes: NCCL moves bytes, the kernels see the storage type.
struct Rank {
  int rank = 0;                        // 0 .. G-1 in the whole team
  int device = 0;                      // the CUDA device it runs on
  ncclComm_t comm = nullptr;           // null for virtual ranks (their exchange is device copies)
  char* in = nullptr;                  // input band, band_rows x cols
  char* out = nullptr;                 // output band, band_cols x rows
  char* send[2] = {nullptr, nullptr};  // the step's scratch: a transposed chunk, double-buffered
  char* recv[2] = {nullptr, nullptr};  // the blocks received for a chunk, double-buffered
  cudaStream_t compute = nullptr;      // local transposes (and the timing events)
  cudaStream_t link = nullptr;         // the exchange (the highest priority: NCCL's kernels
                                       // take SMs before the local work that waits beside them)
  cudaStream_t place = nullptr;        // placement of the blocks into the output band
  cudaEvent_t transposed[2] = {}, exchanged[2] = {}, placed[2] = {};
  cudaEvent_t joined = nullptr;  // virtual exchange: this rank's link stream reached the barrier
  char** bands = nullptr;  // peer exchange: PeerBands::out in this GPU's memory, for the kernel
  LaunchShape shape;       // of its first kernel (a local transpose or the peer kernel)
};

// How received blocks reach their place in the output band (--place).
enum class PlacePath {
  kKernel,      // the SMs copy them, 16-byte words where the rows allow
  kCopyEngine,  // one strided 2D copy per block, by a copy engine
};

// Where NCCL's send and receive buffers come from (--nccl-buffers). Plain: cudaMalloc, and NCCL
// stages every message through FIFO buffers of its own (a copy on each side). Registered: the
// bands and exchange buffers come from ncclMemAlloc and are registered with each communicator,
// so NCCL's kernels can read and write them across the link directly. Windows: the same buffers
// registered as symmetric windows with communicators that may use no SM (NCCL_CTA_POLICY_ZERO),
// and the exchange one ncclAlltoAll, which NCCL then hands to the copy engines: the SMs are left
// to the local transposes and placements. ncclAlltoAll moves equal blocks, the own one included.
enum class NcclBuffers {
  kPlain,
  kRegistered,
  kWindows,
};

// How the blocks reach the other ranks (--exchange).
enum class Exchange {
  kNccl,  // local transposes, an NCCL all-to-all, placements (virtual ranks: device copies)
  kPeer,  // one kernel per GPU writes its tiles into every rank's output band
};

// The peer exchange: every rank's output band as this process reaches it (index: the rank), and
// the events that order the writes into it. Set up by the driver: peer access within one process,
// CUDA IPC handles between processes under MPI.
struct PeerBands {
  std::vector<char*> out;
  std::vector<int> device;                // the GPU it lives on, as this process numbers its GPUs
  std::vector<cudaEvent_t> ready;         // recorded on its compute stream: the band may be written
  std::vector<cudaEvent_t> written;       // recorded on its compute stream: its own writes are done
  void (*between_processes)() = nullptr;  // under MPI, a barrier: records come before the waits
};

// The ranks this process drives: all G in the single-process and virtual modes, one under MPI.
struct Team {
  Decomposition plan;
  bool virtual_ranks = false;  // every rank on one GPU, exchange by device copies
  PlacePath place = PlacePath::kKernel;
  int place_blocks = 0;  // > 0: placement kernels launch at most this many blocks (--place-blocks)
  NcclBuffers nccl_buffers = NcclBuffers::kPlain;
  Exchange exchange = Exchange::kNccl;
  PeerBands peers;  // the peer exchange only
  std::vector<Rank> local;
};

// What one rank sends to and receives from every rank (index: the peer's rank), in bytes.
struct Blocks {
  const char* send = nullptr;
  char* recv = nullptr;
  std::vector<std::size_t> send_offset, send_bytes, recv_offset, recv_bytes;
  explicit Blocks(int ranks)
      : send_offset(ranks), send_bytes(ranks), recv_offset(ranks), recv_bytes(ranks) {}
};

// Defined by the step. Scratch each rank needs beyond its bands: bytes of one send and one recv
// buffer (0: the step runs without them, e.g. with one rank).
struct Scratch {
  std::size_t send = 0, recv = 0;
};
Scratch step_scratch(const Team& team, int rank);

// Defined by the step: one all-to-all on every local rank's link stream, blocks[i] for
// team.local[i]; pairs of zero bytes are skipped on both sides. The driver's ceiling calls it too.
// With NcclBuffers::kWindows every block has the same size, block d at d times that size on both
// sides (ncclAlltoAll).
void all_to_all(Team& team, const std::vector<Blocks>& blocks);

// Defined by the step, for T any storage type: enqueue the transpose of every local rank's input
// band into its output band. Starts after the work already on each rank's compute stream; when it
// returns, everything it enqueued is ordered before later work on the compute streams.
template <class T>
void enqueue_distributed_transpose(Team& team);

// Defined by the step, for the peer exchange: the writes into other ranks' bands enqueued between
// the two calls start after every rank's earlier work on its compute stream, and every rank's later
// work on its compute stream starts after them. The driver's peer-copy ceiling calls them too.
void peer_writes_begin(Team& team);
void peer_writes_end(Team& team);

// Defined by the driver: the linked kernel step's launcher (STEP_KERNEL), checked like every
// launch (common/cuda_harness.cuh's launch_checked).
template <class T>
LaunchShape local_transpose(const T* in, T* out, int rows, int cols, cudaStream_t stream);

// NCCL calls are checked like CUDA calls: a failure names the call and exits non-zero.
[[noreturn]] void fail_nccl(ncclResult_t status, ncclComm_t comm, const char* file, int line,
                            const char* call);

}  // namespace lab

// The step's one-line lesson is kStepSummary (common/cuda_step.cuh), kPeerSummary with the peer
// exchange; the kernel step it links (STEP_KERNEL) has its own, renamed by common/step.mk:
extern const char* const kPeerSummary;
extern const char* const kReusedKernelSummary;

#define NCCL_CHECK(call, comm)                                              \
  do {                                                                      \
    const ncclResult_t nccl_check_status = (call);                          \
    if (nccl_check_status != ncclSuccess)                                   \
      lab::fail_nccl(nccl_check_status, (comm), __FILE__, __LINE__, #call); \
  } while (0)
