// CUDA.v3: stage a TILE_DIM x TILE_DIM tile in shared memory.
// Changed since v2: the block reads its tile with coalesced row reads into shared memory, waits
// for the whole tile (__syncthreads), then writes the transposed tile with coalesced row writes:
// both global streams now move whole lines. The transpose itself happens inside shared memory.
// What is left: the write phase reads a tile column, tile[threadIdx.x][threadIdx.y]; its 32
// floats are TILE_DIM words apart, so all 32 fall in the same bank: a 32-way bank conflict.
#include "../common/cuda_step.cuh"

constexpr int TILE_DIM = 32;

template <class T>
__global__ void transpose_kernel(const T* in, T* out, int rows, int cols) {
  __shared__ T tile[TILE_DIM][TILE_DIM];
  int c = blockIdx.x * TILE_DIM + threadIdx.x;
  int r = blockIdx.y * TILE_DIM + threadIdx.y;
  // LESSON: begin load a tile row per warp, wait for the whole tile, store the transposed tile
  if (r < rows && c < cols) tile[threadIdx.y][threadIdx.x] = in[static_cast<size_t>(r) * cols + c];
  __syncthreads();  // outside any bounds check: every thread of the block must reach it
  c = blockIdx.y * TILE_DIM + threadIdx.x;  // the block's output tile: swapped block indices
  r = blockIdx.x * TILE_DIM + threadIdx.y;
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

const char* const kStepSummary =
    "shared-memory tile: both global streams coalesced, bank conflicts";
