// A GPU step of chapter 3, compiled once for each element size: common/permute_step.mk compiles
// this file in the step's folder, so "transpose.cu" is the step's own.
#include "permute_step.hpp"
#include "transpose.cu"

#define LAB_INSTANTIATE_PERMUTE(T) \
  template LaunchShape launch_permute<T>(const T*, T*, const lab::Permutation&, cudaStream_t);
LAB_PERMUTE_FOR_EVERY_SIZE(LAB_INSTANTIATE_PERMUTE)
