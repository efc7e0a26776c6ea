// Every CUDA call is checked: a failure names the call, the file and line, and exits non-zero.
#pragma once

#include <cuda_runtime.h>

#include <cstdio>
#include <cstdlib>

#include "config.hpp"

#define CUDA_CHECK(call)                                                              \
  do {                                                                                \
    const cudaError_t cuda_check_status = (call);                                     \
    if (cuda_check_status != cudaSuccess) {                                           \
      std::fprintf(stderr, "CUDA error: %s\n  at %s:%d in %s\n",                      \
                   cudaGetErrorString(cuda_check_status), __FILE__, __LINE__, #call); \
      std::exit(lab::kExitFailed);                                                    \
    }                                                                                 \
  } while (0)
