// A kernel step's transpose.cu, compiled once for each element size: its launcher is a template
// over the storage type, and the harness (common/cuda_driver.cu) calls the one the --dtype needs
// (and the --variant, where the step has several launchers). The lab's vector copy, which every
// kernel step's driver times beside cudaMemcpy as a ceiling, is compiled here too: this object is
// built for the GPU's architectures, the driver's is not.
#include "cuda_step.cuh"
#include "transpose.cu"  // the step's own file: common/step.mk compiles this in the step's folder
#include "vector_copy_kernel.cuh"

#include <iterator>

#if __has_include("variants.cu")
#include "variants.cu"  // a step's other launchers and its kKernelVariants (CUDA.v2)
#elif defined(LAB_LAUNCHER_TAKES_DTYPE)
const lab::KernelVariant kKernelVariants[] = {
    LAB_DTYPE_VARIANT(lab::kOneKernelVariant, kStepSummary, launch_transpose)};
#else
const lab::KernelVariant kKernelVariants[] = {
    LAB_KERNEL_VARIANT(lab::kOneKernelVariant, kStepSummary, launch_transpose)};
#endif
const int kKernelVariantCount = static_cast<int>(std::size(kKernelVariants));

// Every size emitted whole, not only inlined into the table: the host-pipeline and distributed
// steps link this object and call launch_transpose itself.
#ifndef LAB_LAUNCHER_TAKES_DTYPE
#define LAB_INSTANTIATE_LAUNCHER(T) \
  template LaunchShape launch_transpose<T>(const T*, T*, int, int, cudaStream_t);
LAB_INSTANTIATE_LAUNCHER(lab::Bytes1)
LAB_INSTANTIATE_LAUNCHER(lab::Bytes2)
LAB_INSTANTIATE_LAUNCHER(lab::Bytes4)
LAB_INSTANTIATE_LAUNCHER(lab::Bytes8)
LAB_INSTANTIATE_LAUNCHER(lab::Bytes16)
#endif
