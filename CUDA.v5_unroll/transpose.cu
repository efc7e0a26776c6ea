// CUDA.v5_unroll: each thread moves several elements of the tile.
// Changed since v4: the block is TILE_DIM x BLOCK_ROWS threads instead of TILE_DIM x TILE_DIM, and
// each thread walks the tile's rows BLOCK_ROWS apart in an unrolled loop. Its TILE_DIM / BLOCK_ROWS
// loads are independent, all in flight before the first returns: more bytes in flight per thread.
#include "../common/cuda_step.cuh"

constexpr int TILE_DIM = 32;
constexpr int BLOCK_ROWS = 8;

template <class T>
__global__ void transpose_kernel(const T* in, T* out, int rows, int cols) {
  __shared__ T tile[TILE_DIM][TILE_DIM + 1];  // +1: a column spans all 32 banks
  const int tile_r = blockIdx.y * TILE_DIM, tile_c = blockIdx.x * TILE_DIM;  // the input tile
  // y, x: a thread's place in the tile; r, c: the same place in the input.
  // LESSON: begin load the tile: each thread takes TILE_DIM / BLOCK_ROWS rows, in an unrolled loop
#pragma unroll
  for (int j = 0; j < TILE_DIM; j += BLOCK_ROWS) {
    const int y = threadIdx.y + j, x = threadIdx.x, r = tile_r + y, c = tile_c + x;
    if (r < rows && c < cols) tile[y][x] = in[static_cast<size_t>(r) * cols + c];
  }
  // LESSON: end
  __syncthreads();  // outside any bounds check: every thread of the block must reach it
  // The block's output tile: tile_r and tile_c swap roles; r, c: a place in the output.
  // LESSON: begin store the transposed tile the same way: TILE_DIM / BLOCK_ROWS rows per thread
#pragma unroll
  for (int j = 0; j < TILE_DIM; j += BLOCK_ROWS) {
    const int r = tile_c + threadIdx.y + j, c = tile_r + threadIdx.x;
    if (r < cols && c < rows) out[static_cast<size_t>(r) * rows + c] = tile[c - tile_r][r - tile_c];
  }
  // LESSON: end
}

template <class T>
LaunchShape launch_transpose(const T* in, T* out, int rows, int cols, cudaStream_t stream) {
  const dim3 block(TILE_DIM, BLOCK_ROWS);
  const dim3 grid((cols + TILE_DIM - 1) / TILE_DIM, (rows + TILE_DIM - 1) / TILE_DIM);
  lab::require_grid(grid, lab::GridAxes::kColsInX, TILE_DIM, TILE_DIM, rows, cols);
  transpose_kernel<<<grid, block, 0, stream>>>(in, out, rows, cols);
  return {grid, block};
}

const char* const kStepSummary = "unrolled tile: each thread moves TILE_DIM / BLOCK_ROWS elements";
