// The interface every step of chapter 3 implements; common/permute_cpu_driver.cpp and
// common/permute_cuda_driver.cu own main() and do the rest (parsing, fills, poison, verification,
// timing against the copy ceiling, the report). A step's file holds its lesson only.
#pragma once

#include "dtype.hpp"
#include "permute.hpp"

// Defined by every step: its one-line lesson, for the table and the CSV.
extern const char* const kStepSummary;

// A CPU step: out = the permutation p of in, both host arrays of p.elements() elements, for T
// any storage type of dtype.hpp. Runs on every OpenMP thread and returns when done.
template <class T>
void permute_on_cpu(const T* in, T* out, const lab::Permutation& p);
// How a CPU step splits the work, for the launch column.
extern const char* const kStepLaunch;

#if defined(__CUDACC__)
#include <cuda_runtime.h>

#include "cuda_step.cuh"  // LaunchShape

// A GPU step: the same on device arrays; enqueues the work on `stream` and returns at once.
template <class T>
LaunchShape launch_permute(const T* in, T* out, const lab::Permutation& p, cudaStream_t stream);
#endif

// Both compiled once per element size (common/permute_instances.cpp, .cu).
#define LAB_PERMUTE_FOR_EVERY_SIZE(INSTANTIATE) \
  INSTANTIATE(lab::Bytes1)                      \
  INSTANTIATE(lab::Bytes2)                      \
  INSTANTIATE(lab::Bytes4)                      \
  INSTANTIATE(lab::Bytes8)                      \
  INSTANTIATE(lab::Bytes16)
