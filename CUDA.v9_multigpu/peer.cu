// --exchange peer: the transpose without NCCL. Where every GPU can write into every other GPU's
// memory (peer access over NVLink within one process, CUDA IPC between processes), the exchange
// needs no buffers of its own: one kernel per GPU reads its input band and writes each transposed
// tile straight into the output band of the rank that owns the tile's columns. Every byte is read
// once on its source GPU and written once on its destination: no local transpose pass, no
// placement pass, no NCCL buffer. Virtual ranks write into each other's bands on one GPU.
// Included by transpose.cu; the driver sets up the bands (PeerBands in distributed.cuh).
#include <cuda_runtime.h>

#include <algorithm>
#include <vector>

#include "distributed.cuh"

namespace lab {
namespace {

// The plain tiled transpose: a tile padded by a column (v4), each thread moving TILE_DIM /
// BLOCK_ROWS elements of it (v5). The lesson here is where a tile goes, not how it is made.
constexpr int TILE_DIM = 32;
constexpr int BLOCK_ROWS = 8;

// Rank me's input band (band_rows x cols) into the output bands of its owners: output row c (input
// column c) is row c - col_begin(owner) of bands[owner], whose rows hold `rows` elements; input row
// r of the band is column row_begin(me) + r there.
template <class T>
__global__ void peer_transpose_kernel(const T* in, T* const* bands, Decomposition plan, int me) {
  __shared__ T tile[TILE_DIM][TILE_DIM + 1];
  const Index band_rows = plan.band_rows(me), first_row = plan.row_begin(me);
  const Index tile_r = Index{blockIdx.x} * TILE_DIM;  // blockIdx.x walks down the band, as in v6
  // Grid y has at most 65535 blocks: wider bands are walked in strides of the grid.
  for (Index tile_c = Index{blockIdx.y} * TILE_DIM; tile_c < plan.cols;
       tile_c += Index{gridDim.y} * TILE_DIM) {
    for (int j = threadIdx.y; j < TILE_DIM; j += BLOCK_ROWS) {
      const Index r = tile_r + j, c = tile_c + threadIdx.x;
      if (r < band_rows && c < plan.cols) tile[j][threadIdx.x] = in[r * plan.cols + c];
    }
    __syncthreads();  // outside any bounds check: every thread of the block must reach it
    for (int j = threadIdx.y; j < TILE_DIM; j += BLOCK_ROWS) {
      const Index c = tile_c + j, r = tile_r + threadIdx.x;
      if (c >= plan.cols || r >= band_rows) continue;
      // A tile's output rows belong to one rank, or to two where a band ends inside the tile; the
      // store crosses NVLink when that rank is another GPU.
      const int owner = plan.owner_of_col(c);
      bands[owner][(c - plan.col_begin(owner)) * plan.rows + first_row + r] = tile[threadIdx.x][j];
    }
    __syncthreads();  // the tile is read out before the next stride fills it again
  }
}

template <class T>
LaunchShape launch_peer_transpose(const Decomposition& plan, const Rank& me) {
  const Index band_rows = plan.band_rows(me.rank);
  if (band_rows == 0) return {};  // an empty band sends nothing
  const Index col_tiles = (plan.cols + TILE_DIM - 1) / TILE_DIM;
  const dim3 block(TILE_DIM, BLOCK_ROWS);
  const dim3 grid(static_cast<unsigned>((band_rows + TILE_DIM - 1) / TILE_DIM),
                  static_cast<unsigned>(std::min<Index>(col_tiles, kMaxGridYZ)));
  peer_transpose_kernel<<<grid, block, 0, me.compute>>>(
      reinterpret_cast<const T*>(me.in), reinterpret_cast<T* const*>(me.bands), plan, me.rank);
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
