// --exchange peer: the transpose without NCCL. Where every GPU can write into every other GPU's
// memory (peer access over NVLink within one process, CUDA IPC between processes), the exchange
// needs no buffers of its own: one kernel per GPU reads its input band and writes each transposed
// tile straight into the output band of the rank that owns the tile's columns. Every byte is read
// once on its source GPU and written once on its destination: no local transpose pass, no
// placement pass, no NCCL buffer. Virtual ranks write into each other's bands on one GPU.
// Included by transpose.cu; the driver sets up the bands (PeerBands in distributed.cuh).
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>
#include <vector>

#include "../common/packed_block.cuh"  // VECTOR_BYTES, VectorOf
#include "distributed.cuh"

namespace lab {
namespace {

// What crosses the link is what the stores write: a warp's store of 4-byte elements moves 128
// bytes, of 16-byte words 512, a quarter of the instructions. So every thread stores 16 bytes (N
// elements) of an output row, as in v7, and gathers them with N loads down one input column: the
// loads stay on the GPU's own memory, which is many times faster than the link. The gathered
// vectors go through shared memory, their cell index swizzled (XOR with the row) so that neither
// phase has bank conflicts.
constexpr int TILE_COLS = 32;     // input columns a tile: a warp's loads, an element a lane
constexpr int TILE_VECTORS = 32;  // 16-byte vectors of each output row a tile: a warp's stores
constexpr int WARPS = 8;
// Blocks an SM. Elements under 16 bytes gather N of them a store; at two blocks an SM (up to 128
// registers a thread, against 64 at four) float32's peer writes go from 95 to 100% of the
// all-to-all on two H200s and from 89-91 to 98% on four (peer_blocks.csv in docs/results/h200x4).
// complex128 (one load a store) keeps four: at two it lost on four GPUs.
template <class T>
constexpr int MIN_BLOCKS = sizeof(T) < VECTOR_BYTES ? 2 : 4;

// The tiles of rank me's input band, in the order the kernel takes them: the column tiles of
// every owner's output band, the owners interleaved (the next rank's first), so that the tiles
// bound for the links and those that stay on the GPU run side by side rather than one after the
// other. A tile never straddles two owners.
struct TileOrder {
  Decomposition plan;
  int me;
  Index tiles_per_owner;  // column tiles of the widest output band
  __device__ Index count() const { return tiles_per_owner * plan.ranks; }
  __device__ int owner(Index y) const {
    return static_cast<int>((me + 1 + y % plan.ranks) % plan.ranks);
  }
  __device__ Index first_col(Index y) const {
    return plan.col_begin(owner(y)) + y / plan.ranks * TILE_COLS;
  }
};

// Rank me's input band (band_rows x cols) into the output bands of its owners: output row c (input
// column c) is row c - col_begin(owner) of bands[owner], whose rows hold `rows` elements; input row
// r of the band is column row_begin(me) + r there.
template <class T>
__global__ void __launch_bounds__(WARPS * 32, MIN_BLOCKS<T>)
    peer_transpose_kernel(const T* in, T* const* bands, TileOrder order) {
  constexpr int N = VECTOR_BYTES / sizeof(T);
  constexpr int TILE_ROWS = TILE_VECTORS * N;
  __shared__ uint4 tile[TILE_COLS][TILE_VECTORS];  // [output row][vector ^ row]
  const Decomposition& plan = order.plan;
  const int lane = threadIdx.x % 32, warp = threadIdx.x / 32;
  const Index band_rows = plan.band_rows(order.me), first_row = plan.row_begin(order.me);
  const Index tile_r = Index{blockIdx.x} * TILE_ROWS;  // blockIdx.x walks down the band, as in v6
  // Grid y has at most 65535 blocks: more tiles are walked in strides of the grid.
  for (Index y = blockIdx.y; y < order.count(); y += gridDim.y) {
    const int owner = order.owner(y);
    const Index tile_c = order.first_col(y), col_end = plan.col_begin(owner + 1);
    if (tile_c >= col_end) continue;  // a narrower band than the widest: the whole block skips
    const Index c = tile_c + lane;
    for (int v = warp; v < TILE_VECTORS; v += WARPS) {
      VectorOf<T> gathered;  // N elements of one output row
#pragma unroll
      for (int i = 0; i < N; ++i) {
        const Index r = tile_r + v * N + i;
        gathered.element[i] = r < band_rows && c < col_end ? in[r * plan.cols + c] : T{};
      }
      tile[lane][v ^ lane] = gathered.word;
    }
    __syncthreads();  // outside any bounds check: every thread of the block must reach it
    T* band = bands[owner];
    const Index r = tile_r + lane * N;
    for (int j = warp; j < TILE_COLS && tile_c + j < col_end && r < band_rows; j += WARPS) {
      // The store crosses NVLink when the owner is another GPU.
      T* target = band + (tile_c + j - plan.col_begin(owner)) * plan.rows + first_row + r;
      VectorOf<T> vector;
      vector.word = tile[j][lane ^ j];
      if (r + N <= band_rows && reinterpret_cast<std::uintptr_t>(target) % VECTOR_BYTES == 0) {
        *reinterpret_cast<uint4*>(target) = vector.word;
      } else {  // the band's last rows, or a band that starts or a matrix whose rows end mid-word
#pragma unroll
        for (int i = 0; i < N; ++i)
          if (r + i < band_rows) target[i] = vector.element[i];
      }
    }
    __syncthreads();  // the tile is read out before the next stride fills it again
  }
}

template <class T>
LaunchShape launch_peer_transpose(const Decomposition& plan, const Rank& me) {
  constexpr int TILE_ROWS = TILE_VECTORS * (VECTOR_BYTES / sizeof(T));
  const Index band_rows = plan.band_rows(me.rank);
  if (band_rows == 0) return {};  // an empty band sends nothing
  Index widest = 0;
  for (int g = 0; g < plan.ranks; ++g) widest = std::max(widest, plan.band_cols(g));
  const TileOrder order{plan, me.rank, (widest + TILE_COLS - 1) / TILE_COLS};
  const dim3 block(WARPS * 32);
  const dim3 grid(
      static_cast<unsigned>((band_rows + TILE_ROWS - 1) / TILE_ROWS),
      static_cast<unsigned>(std::min<Index>(order.tiles_per_owner * plan.ranks, kMaxGridYZ)));
  peer_transpose_kernel<<<grid, block, 0, me.compute>>>(
      reinterpret_cast<const T*>(me.in), reinterpret_cast<T* const*>(me.bands), order);
  CUDA_CHECK(cudaGetLastError());
  return {grid, block};
}

// Each local rank records its event in `events` on its compute stream, then its compute stream
// waits for every other rank's. Under MPI a barrier between the processes comes between the two,
// so that no process waits on an event before its owner has recorded it.
void wait_for_every_rank(Team& team, const std::vector<cudaEvent_t>& events) {
  for (Rank& me : team.local) {
    CUDA_CHECK(cudaSetDevice(me.device));
    CUDA_CHECK(cudaEventRecord(events[me.rank], me.compute));
  }
  if (team.peers.between_processes != nullptr) team.peers.between_processes();
  for (Rank& me : team.local) {
    CUDA_CHECK(cudaSetDevice(me.device));
    for (int g = 0; g < team.plan.ranks; ++g)
      if (g != me.rank) CUDA_CHECK(cudaStreamWaitEvent(me.compute, events[g], 0));
  }
}

// Every rank writes into every band, so the writes wait until no rank still uses its band (the
// poison before a verified run, the ceiling before), and no rank reads its band back before every
// rank's writes into it are done.
template <class T>
void enqueue_peer_transpose(Team& team) {
  peer_writes_begin(team);
  for (Rank& me : team.local) {
    CUDA_CHECK(cudaSetDevice(me.device));
    me.shape = launch_peer_transpose<T>(team.plan, me);
  }
  peer_writes_end(team);
}

}  // namespace

// Two events, not one: a process may record `written` before another process has waited on its
// `ready`; with one event that wait would take the later record, after the very kernel it was to
// come before, and two processes doing so would wait for each other forever.
void peer_writes_begin(Team& team) {
  wait_for_every_rank(team, team.peers.ready);
}
void peer_writes_end(Team& team) {
  wait_for_every_rank(team, team.peers.written);
}

}  // namespace lab

const char* const kPeerSummary =
    "several GPUs: one kernel per GPU writes its transposed tiles into every GPU's band";
