// The interface every CUDA step implements; common/cuda_driver.cu owns main() and does the rest
// (allocation, fill, verification, timing, the copy ceiling, the report).
#pragma once

#include <cuda_runtime.h>

// What the step launched, for the report. A library call (cuBLAS) leaves grid.x == 0.
struct LaunchShape {
  dim3 grid{0, 0, 0};
  dim3 block{0, 0, 0};
};

// Defined by the step: in is rows x cols row-major on the device, out is cols x rows row-major,
// out[c * rows + r] = in[r * cols + c]. Enqueues the work on `stream` and returns at once.
LaunchShape launch_transpose(const float* in, float* out, int rows, int cols, cudaStream_t stream);
extern const char* const kStepSummary;
