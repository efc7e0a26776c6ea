// A CPU step of chapter 3, compiled once for each element size: common/permute_step.mk compiles
// this file in the step's folder, so "transpose.cpp" is the step's own.
#include "permute_step.hpp"
#include "transpose.cpp"

#define LAB_INSTANTIATE_PERMUTE(T) \
  template void permute_on_cpu<T>(const T*, T*, const lab::Permutation&);
LAB_PERMUTE_FOR_EVERY_SIZE(LAB_INSTANTIATE_PERMUTE)
