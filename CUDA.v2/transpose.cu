// CUDA.v2: a 2D grid of 2D blocks, one element per thread.
// Changed since v1: rows * cols threads instead of cols, so the GPU has plenty of work in flight.
// What is left: a warp (32 threads along x) reads 32 neighbouring floats of an input row, one
// 128-byte line (coalesced), but writes them down an output column, 32 floats `rows` apart:
// 32 separate 32-byte sectors for 128 useful bytes, 8 times the traffic a copy needs.
// --variant write-coalesced (variants.cu) is the mirror image, to compare.
#include "../common/cuda_step.cuh"

constexpr int TILE_DIM = 32;

template <class T>
__global__ void transpose_kernel(const T* in, T* out, int rows, int cols) {
  // LESSON: begin one element per thread: its (r, c) from the 2D block and thread indices
  const int c = blockIdx.x * TILE_DIM + threadIdx.x;
  const int r = blockIdx.y * TILE_DIM + threadIdx.y;
  if (r < rows && c < cols)
    out[static_cast<size_t>(c) * rows + r] = in[static_cast<size_t>(r) * cols + c];
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

const char* const kStepSummary = "2D grid, one element per thread: coalesced reads, strided writes";
