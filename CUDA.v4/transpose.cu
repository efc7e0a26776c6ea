// CUDA.v4: pad the shared-memory tile by one column.
// Changed since v3: tile[TILE_DIM][TILE_DIM + 1]. Row i now starts at word i * 33, so the 32
// floats of a tile column land in 32 different banks and the transposed read is conflict-free.
// Nothing else changes: the same global accesses, one element per thread.
#include "../common/cuda_step.cuh"

constexpr int TILE_DIM = 32;

template <class T>
__global__ void transpose_kernel(const T* in, T* out, int rows, int cols) {
  // LESSON: begin declare the tile so that the 32 elements of a tile column sit in 32 banks
  // LESSON: stub __shared__ T tile[TILE_DIM][TILE_DIM];
  __shared__ T tile[TILE_DIM][TILE_DIM + 1];  // +1: a column spans all 32 banks
  // LESSON: end
  int c = blockIdx.x * TILE_DIM + threadIdx.x;
  int r = blockIdx.y * TILE_DIM + threadIdx.y;
  if (r < rows && c < cols) tile[threadIdx.y][threadIdx.x] = in[static_cast<size_t>(r) * cols + c];
  __syncthreads();  // outside any bounds check: every thread of the block must reach it
  c = blockIdx.y * TILE_DIM + threadIdx.x;  // the block's output tile: swapped block indices
  r = blockIdx.x * TILE_DIM + threadIdx.y;
  // LESSON: begin store the output tile, reading the tile down a column
  if (r < cols && c < rows) out[static_cast<size_t>(r) * rows + c] = tile[threadIdx.x][threadIdx.y];
  // LESSON: end
}

template <class T>
LaunchShape launch_transpose(const T* in, T* out, int rows, int cols, cudaStream_t stream) {
  const dim3 block(TILE_DIM, TILE_DIM);
  const dim3 grid((cols + TILE_DIM - 1) / TILE_DIM, (rows + TILE_DIM - 1) / TILE_DIM);
  lab::require_grid(grid, lab::GridAxes::kColsInX, TILE_DIM, TILE_DIM, rows, cols);
  transpose_kernel<<<grid, block, 0, stream>>>(in, out, rows, cols);
  return {grid, block};
}

const char* const kStepSummary = "padded tile [TILE_DIM][TILE_DIM + 1]: no bank conflicts";
