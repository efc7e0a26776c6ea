// CUDA.copy: the reference row every transpose lab starts from, a plain copy. Not a step of the
// progression: it shows what a kernel reaches when both global streams are coalesced and nothing
// is reordered, next to cudaMemcpy (the ceiling of every row). A transpose moves the same bytes,
// so this is the target before any transpose. The kernel is the copy of NVIDIA's "An Efficient
// Matrix Transpose in CUDA C/C++": a block of TILE_DIM x BLOCK_ROWS threads per TILE_DIM x
// TILE_DIM tile, each thread copying TILE_DIM / BLOCK_ROWS elements, read and written in the same
// order. The Makefile's STEP_OPERATION := copy makes the driver verify out == in (rows x cols);
// the launcher keeps the one interface's name, launch_transpose.
#include "../common/cuda_step.cuh"

constexpr int TILE_DIM = 32;
constexpr int BLOCK_ROWS = 8;

template <class T>
__global__ void copy_kernel(const T* in, T* out, int rows, int cols) {
  const int c = blockIdx.x * TILE_DIM + threadIdx.x;
  const int r = blockIdx.y * TILE_DIM + threadIdx.y;
  if (c >= cols) return;
  // LESSON: begin copy this thread's TILE_DIM / BLOCK_ROWS elements of column c, BLOCK_ROWS rows
  // apart
  for (int j = 0; j < TILE_DIM && r + j < rows; j += BLOCK_ROWS) {
    const size_t i = static_cast<size_t>(r + j) * cols + c;  // past 2^31 elements: 64 bits
    out[i] = in[i];
  }
  // LESSON: end
}

template <class T>
LaunchShape launch_transpose(const T* in, T* out, int rows, int cols, cudaStream_t stream) {
  const dim3 block(TILE_DIM, BLOCK_ROWS);
  const dim3 grid((cols + TILE_DIM - 1) / TILE_DIM, (rows + TILE_DIM - 1) / TILE_DIM);
  lab::require_grid(grid, lab::GridAxes::kColsInX, TILE_DIM, TILE_DIM, rows, cols);
  copy_kernel<<<grid, block, 0, stream>>>(in, out, rows, cols);
  return {grid, block};
}

const char* const kStepSummary =
    "reference: the plain copy kernel (32 x 8 threads a 32 x 32 tile, no transpose)";
