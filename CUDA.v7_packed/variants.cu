// CUDA.v7_packed's second kernel (--variant tma), beyond the lesson: the packed kernel's tiles
// moved by Hopper's bulk copies (tma.cu). Only on sm_90 and later, and only for rows and cols of
// whole 16-byte units: elsewhere it is refused (common/cuda_step.cuh says how).
#include "../common/../CUDA.v7_packed/tma.cu"  // through common/, as ragged.cu is

// The first entry is the default and must be launch_transpose (what v8 and v9 reuse).
const lab::KernelVariant kKernelVariants[] = {
    LAB_KERNEL_VARIANT(lab::kOneKernelVariant, kStepSummary, launch_transpose),
    lab::refusing(LAB_KERNEL_VARIANT("tma", kTmaSummary, launch_tma), tma_refuses_shape,
                  tma_refuses_device)};
