// CUDA.v1: the OpenMP loop moved to the GPU as directly as possible.
// Changed since CPU.omp: a 1D grid of threads replaces the OpenMP team; each thread owns one
// output row (one input column) and loops along it, like one iteration of the CPU's outer loop.
// Why it is slow: there is one thread per output row, only `cols` threads in all, while a GPU
// needs tens of thousands of threads in flight to hide memory latency.
#include "../common/cuda_step.cuh"

constexpr int kThreadsPerBlock = 256;

template <class T>
__global__ void transpose_kernel(const T* in, T* out, int rows, int cols) {
  // LESSON: begin one thread per input column c (an output row): loop down the rows, copy each
  const int c = blockIdx.x * blockDim.x + threadIdx.x;  // this thread's input column
  if (c >= cols) return;
  // Neighbouring threads read neighbouring input columns (coalesced); each thread writes its own
  // output row, so one warp writes 32 rows far apart.
  for (int r = 0; r < rows; ++r)
    out[static_cast<size_t>(c) * rows + r] = in[static_cast<size_t>(r) * cols + c];
  // LESSON: end
}

template <class T>
LaunchShape launch_transpose(const T* in, T* out, int rows, int cols, cudaStream_t stream) {
  const dim3 block(kThreadsPerBlock);
  const dim3 grid((cols + kThreadsPerBlock - 1) / kThreadsPerBlock);
  lab::require_grid(grid, lab::GridAxes::kColsInX, 0, kThreadsPerBlock, rows, cols);
  transpose_kernel<<<grid, block, 0, stream>>>(in, out, rows, cols);
  return {grid, block};
}

const char* const kStepSummary = "1D grid: one thread per output row, a loop inside the thread";
