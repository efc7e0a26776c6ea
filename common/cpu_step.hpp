// The interface a CPU step implements; common/cpu_driver.cpp owns main() and does the rest.
#pragma once

#include "matrix.hpp"

namespace lab {

struct CpuVariant {
  const char* name;    // what --variant selects
  const char* launch;  // how the work is split, for the table
  void (*transpose)(const float* in, float* out, Index rows, Index cols);
};

}  // namespace lab

// Defined by the step.
extern const char* const kStepSummary;
extern const lab::CpuVariant kCpuVariants[];
extern const int kCpuVariantCount;
