// The lab's best copy kernel: 16-byte loads and stores, several in flight per thread. Every kernel
// step's driver times it beside cudaMemcpy, and the faster of the two is the row's ceiling
// (docs/measuring.md); CUDA.copy --variant vector runs it as a row of its own. Defined in
// vector_copy_kernel.cuh, which common/step_instances.cu compiles for the GPU's architectures.
#pragma once

#include <cuda_runtime.h>

#include <cstddef>

#include "cuda_step.cuh"  // LaunchShape

namespace lab {

// Copies `bytes` bytes from in to out (device memory, not overlapping) on `stream`, for any byte
// count and any alignment of either end; returns at once. 16-byte accesses need in and out at the
// same offset from a 16-byte boundary (as cudaMalloc's are): where they are not, every byte is
// copied alone. The caller checks the launch (cudaGetLastError).
LaunchShape launch_vector_copy(const void* in, void* out, std::size_t bytes, cudaStream_t stream);

}  // namespace lab
