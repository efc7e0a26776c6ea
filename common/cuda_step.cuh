// The interface every kernel step implements; common/cuda_driver.cu owns main() and does the rest
// (allocation, fills, verification, timing, the copy ceiling, the report).
#pragma once

#include <cuda_runtime.h>

#include "cli.hpp"  // lab::requested_dtype(), for steps that call a library
#include "dtype.hpp"

// What the step launched, for the report. A library call (cuBLAS) leaves grid.x == 0.
struct LaunchShape {
  dim3 grid{0, 0, 0};
  dim3 block{0, 0, 0};
};

// Defined by the step, for T any storage type of dtype.hpp (Bytes1 ... Bytes16): in is rows x cols
// row-major on the device, out is cols x rows row-major, out[c * rows + r] = in[r * cols + c].
// Enqueues the work on `stream` and returns at once. A transpose moves bits: the kernels never
// need to know whether the bytes are a float16 or a uint16.
template <class T>
LaunchShape launch_transpose(const T* in, T* out, int rows, int cols, cudaStream_t stream);
extern const char* const kStepSummary;
