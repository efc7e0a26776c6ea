// CUDA.copy's second kernel (--variant vector): the lab's best copy, the one every kernel step's
// driver also times as a ceiling beside cudaMemcpy (common/vector_copy.cuh). Each thread moves
// several 16-byte vectors, all loaded before any is stored, whatever the element size; the plain
// copy of transpose.cu moves one element per access.
#include "../common/vector_copy.cuh"

template <class T>
LaunchShape launch_vector_copy(const T* in, T* out, int rows, int cols, cudaStream_t stream) {
  const std::size_t bytes = static_cast<std::size_t>(rows) * static_cast<std::size_t>(cols) *
                            sizeof(T);  // past 2^31 elements: 64 bits
  return lab::launch_vector_copy(in, out, bytes, stream);
}

// The first entry is the default and must be launch_transpose (what the other kinds of step reuse).
const lab::KernelVariant kKernelVariants[] = {
    LAB_KERNEL_VARIANT(lab::kOneKernelVariant, kStepSummary, launch_transpose),
    LAB_KERNEL_VARIANT("vector", "the vector copy: 16-byte accesses, several in flight a thread",
                       launch_vector_copy)};
