// Every CUDA call is checked: a failure names the call, the file and line, and exits non-zero.
#pragma once

#include <cuda_runtime.h>

#include <cstdio>
#include <cstdlib>

#include "config.hpp"

namespace lab {

// Shared by CUDA_CHECK and the checks of the libraries a step calls (cuBLAS).
[[noreturn]] inline void fail_call(const char* library, const char* error, const char* file,
                                   int line, const char* call) {
  std::fprintf(stderr, "%s error: %s\n  at %s:%d in %s\n", library, error, file, line, call);
  std::exit(kExitFailed);
}

}  // namespace lab

#define CUDA_CHECK(call)                                                                        \
  do {                                                                                          \
    const cudaError_t cuda_check_status = (call);                                               \
    if (cuda_check_status != cudaSuccess)                                                       \
      lab::fail_call("CUDA", cudaGetErrorString(cuda_check_status), __FILE__, __LINE__, #call); \
  } while (0)

namespace lab {

// Above 48 KiB of shared memory a kernel must ask for it, on every GPU it runs on (the attribute
// belongs to the device it was set on): asked at each launch, a call of about a microsecond.
template <class Kernel>
void allow_shared_bytes(Kernel kernel, int bytes) {
  CUDA_CHECK(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, bytes));
}

// The current GPU's SM count: what a grid sized to fill the GPU once counts in.
inline int multiprocessors() {
  int device = 0, sms = 0;
  CUDA_CHECK(cudaGetDevice(&device));
  CUDA_CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device));
  return sms;
}

}  // namespace lab

// A cuBLAS or cuBLASLt call (both return cublasStatus_t; include their header first);
// `status_string` is the library's own function that names a status.
#define LAB_CUBLAS_CHECK(call, status_string)                                                  \
  do {                                                                                         \
    const auto cublas_check_status = (call);                                                   \
    if (cublas_check_status != CUBLAS_STATUS_SUCCESS)                                          \
      lab::fail_call("cuBLAS", status_string(cublas_check_status), __FILE__, __LINE__, #call); \
  } while (0)
