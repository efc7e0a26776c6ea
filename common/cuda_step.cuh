// The interface every kernel step implements; common/cuda_driver.cu owns main() and does the rest
// (allocation, fills, verification, timing, the copy ceiling, the report).
#pragma once

#include <cuda_runtime.h>

#include <string>

#include "dtype.hpp"
#include "grid_limits.cuh"  // lab::require_grid, which every launcher calls before launching

// What the step launched, for the report. A library call (cuBLAS) leaves grid.x == 0.
struct LaunchShape {
  dim3 grid{0, 0, 0};
  dim3 block{0, 0, 0};
};

// Defined by the step, for T any storage type of dtype.hpp (Bytes1 ... Bytes16): in is rows x cols
// row-major on the device, out is cols x rows row-major, out[c * rows + r] = in[r * cols + c].
// Enqueues the work on `stream` and returns at once. A transpose moves bits: the kernels never
// need to know whether the bytes are a float16 or a uint16.
// A copy step (STEP_OPERATION := copy in its Makefile) keeps the same launcher and name, with
// out rows x cols and out[i] = in[i].
// A step that calls a library which computes (cuBLAS's geam: Dgeam and Cgeam both take 8-byte
// elements) needs the real element type: its launch_transpose takes `const lab::Dtype&` as a last
// parameter instead, and its transpose.cu says so with `#define LAB_LAUNCHER_TAKES_DTYPE`.
template <class T>
LaunchShape launch_transpose(const T* in, T* out, int rows, int cols, cudaStream_t stream);
extern const char* const kStepSummary;

namespace lab {

// What the drivers call: every launcher, given the element type the command line chose.
template <class T>
using KernelLauncher = LaunchShape (*)(const T* in, T* out, int rows, int cols, cudaStream_t stream,
                                       const Dtype& dtype);
// What a kernel step writes: a launcher that moves storage types and never needs the type.
template <class T>
using StorageLauncher = LaunchShape (*)(const T* in, T* out, int rows, int cols,
                                        cudaStream_t stream);

// A kernel step's launcher as a KernelLauncher: the element type is not its business.
template <class T, StorageLauncher<T> launch>
LaunchShape ignoring_dtype(const T* in, T* out, int rows, int cols, cudaStream_t stream,
                           const Dtype&) {
  return launch(in, out, rows, cols, stream);
}

// The name a step with one launcher reports in the CSV's variant column.
inline constexpr const char* kOneKernelVariant = "kernel";

// Why a variant that takes only some shapes or GPUs (CUDA.v7_packed's tma) cannot run here; empty
// when it can. Named by --variant, a shape it refuses is bad input (one line, exit 2, before the
// GPU is looked for) and a GPU it refuses is a skip (exit 77); --variant all leaves it out in one
// line.
using ShapeRefusal = std::string (*)(int rows, int cols, int elem_bytes);
using DeviceRefusal = std::string (*)(const cudaDeviceProp& device);

// A launcher that --variant can pick, instantiated for every element size (LAB_KERNEL_VARIANT).
struct KernelVariant {
  const char* name;     // what --variant selects
  const char* summary;  // what it does, for the table and the CSV
  KernelLauncher<Bytes1> launch1;
  KernelLauncher<Bytes2> launch2;
  KernelLauncher<Bytes4> launch4;
  KernelLauncher<Bytes8> launch8;
  KernelLauncher<Bytes16> launch16;
  ShapeRefusal refuses_shape = nullptr;    // none: every shape
  DeviceRefusal refuses_device = nullptr;  // none: every GPU

  template <class T>
  KernelLauncher<T> launcher() const {
    if constexpr (sizeof(T) == 1) return launch1;
    if constexpr (sizeof(T) == 2) return launch2;
    if constexpr (sizeof(T) == 4) return launch4;
    if constexpr (sizeof(T) == 8) return launch8;
    if constexpr (sizeof(T) == 16) return launch16;
  }
};

// The variant, refusing what it cannot run.
inline KernelVariant refusing(KernelVariant variant, ShapeRefusal shape, DeviceRefusal device) {
  variant.refuses_shape = shape;
  variant.refuses_device = device;
  return variant;
}

}  // namespace lab

// {name, summary, launcher template}: the variant with `launcher`, a template like the
// five-parameter launch_transpose, instantiated for every size.
#define LAB_KERNEL_VARIANT(name, summary, launcher)                         \
  lab::KernelVariant {                                                      \
    name, summary, lab::ignoring_dtype<lab::Bytes1, launcher<lab::Bytes1>>, \
        lab::ignoring_dtype<lab::Bytes2, launcher<lab::Bytes2>>,            \
        lab::ignoring_dtype<lab::Bytes4, launcher<lab::Bytes4>>,            \
        lab::ignoring_dtype<lab::Bytes8, launcher<lab::Bytes8>>,            \
        lab::ignoring_dtype<lab::Bytes16, launcher<lab::Bytes16>>           \
  }

// The same for a launcher that takes the element type as its last parameter (a library step).
#define LAB_DTYPE_VARIANT(name, summary, launcher)                                      \
  lab::KernelVariant {                                                                  \
    name, summary, launcher<lab::Bytes1>, launcher<lab::Bytes2>, launcher<lab::Bytes4>, \
        launcher<lab::Bytes8>, launcher<lab::Bytes16>                                   \
  }

// The launchers --variant chooses from, the first the default. A step with several keeps the others
// and kKernelVariants itself in its variants.cu (common/step_instances.cu includes it after
// transpose.cu), and its first entry must be launch_transpose (what the chapter 2 steps reuse); for
// every other step common/step_instances.cu defines the one entry {"kernel", kStepSummary,
// launch_transpose}.
extern const lab::KernelVariant kKernelVariants[];
extern const int kKernelVariantCount;
