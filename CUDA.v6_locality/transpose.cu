// CUDA.v6_locality: arrange the work so DRAM sees long runs of writes.
// Changed since v5_unroll, two changes with one aim (the README measures them):
// 1. TILE_DIM 64: each thread moves 16 elements, the tile's two 32-column halves of 8 rows, and
//    each 256-byte piece of an output row is written by one warp in two back-to-back 128-byte
//    stores instead of by two blocks.
// 2. The roles of blockIdx.x and blockIdx.y are swapped, so blocks are dispatched down the
//    matrix: blocks running at the same time fill neighbouring pieces of the same output rows,
//    and DRAM gets long runs of writes instead of short ones scattered over many rows.
// Where a row count splits the output's 32-byte sectors between tiles, CUDA.v7_packed's ragged.cu
// cuts each output row where its sectors begin.
#include "../common/cuda_step.cuh"

template <class T>  // 16-byte elements: a 64 x 65 tile would not fit in 48 KiB of shared memory
constexpr int TILE_DIM = sizeof(T) <= 8 ? 64 : 32;
constexpr int BLOCK_ROWS = 8;
constexpr int WARP_SIZE = 32;  // threadIdx.x spans one warp of consecutive columns

template <class T>
__global__ void transpose_kernel(const T* in, T* out, int rows, int cols) {
  constexpr int TILE_DIM = ::TILE_DIM<T>;
  __shared__ T tile[TILE_DIM][TILE_DIM + 1];  // +1: a column spans all 32 banks
  // LESSON: begin the block roles: which block index walks down the rows? (see the grid, (2))
  // LESSON: stub const int tile_r = 0, tile_c = 0;  // every block on tile (0, 0)
  const int tile_r = blockIdx.x * TILE_DIM, tile_c = blockIdx.y * TILE_DIM;  // (2): x walks rows
  // LESSON: end
  // y, x: a thread's place in the tile; r, c: the same place in the input.
#pragma unroll
  for (int j = 0; j < TILE_DIM; j += BLOCK_ROWS) {
    for (int i = 0; i < TILE_DIM; i += WARP_SIZE) {  // (1): the tile's 32-column halves
      const int y = threadIdx.y + j, x = threadIdx.x + i, r = tile_r + y, c = tile_c + x;
      if (r < rows && c < cols) tile[y][x] = in[static_cast<size_t>(r) * cols + c];
    }
  }
  __syncthreads();  // outside any bounds check: every thread of the block must reach it
  // The block's output tile: tile_r and tile_c swap roles; r, c: a place in the output.
  // LESSON: begin store the transposed tile: its 32-column halves of every 8th row, as the load
#pragma unroll
  for (int j = 0; j < TILE_DIM; j += BLOCK_ROWS) {
    const int r = tile_c + threadIdx.y + j;
    if (r >= cols) continue;  // a whole output row out: one branch for its two halves
    for (int i = 0; i < TILE_DIM; i += WARP_SIZE) {
      const int c = tile_r + threadIdx.x + i;
      if (c < rows) out[static_cast<size_t>(r) * rows + c] = tile[threadIdx.x + i][threadIdx.y + j];
    }
  }
  // LESSON: end
}

template <class T>
LaunchShape launch_transpose(const T* in, T* out, int rows, int cols, cudaStream_t stream) {
  const dim3 block(WARP_SIZE, BLOCK_ROWS);
  const dim3 grid((rows + TILE_DIM<T> - 1) / TILE_DIM<T>, (cols + TILE_DIM<T> - 1) / TILE_DIM<T>);
  lab::require_grid(grid, lab::GridAxes::kRowsInX, TILE_DIM<T>, TILE_DIM<T>, rows, cols);
  transpose_kernel<<<grid, block, 0, stream>>>(in, out, rows, cols);
  return {grid, block};
}

const char* const kStepSummary = "DRAM locality: 64x64 tiles dispatched down the columns";
