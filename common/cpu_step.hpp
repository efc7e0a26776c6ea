// The interface a CPU step implements; common/cpu_driver.cpp owns main() and does the rest.
#pragma once

#include "dtype.hpp"
#include "matrix.hpp"

namespace lab {

template <class T>
using CpuTranspose = void (*)(const T* in, T* out, Index rows, Index cols);

// One variant: a function template instantiated for every element size (LAB_CPU_VARIANT).
struct CpuVariant {
  const char* name;    // what --variant selects
  const char* launch;  // how the work is split, for the table
  CpuTranspose<Bytes1> transpose1;
  CpuTranspose<Bytes2> transpose2;
  CpuTranspose<Bytes4> transpose4;
  CpuTranspose<Bytes8> transpose8;
  CpuTranspose<Bytes16> transpose16;
  // Whether the variant's stores stream for this matrix (its output at `out`), for a variant that
  // decides by size; null for one that never streams. The driver adds the answer to the launch
  // column, so a row says which kind of store it timed.
  bool (*streams)(Index rows, Index cols, std::size_t elem_bytes, const void* out) = nullptr;

  template <class T>
  CpuTranspose<T> transpose() const {
    if constexpr (sizeof(T) == 1) return transpose1;
    if constexpr (sizeof(T) == 2) return transpose2;
    if constexpr (sizeof(T) == 4) return transpose4;
    if constexpr (sizeof(T) == 8) return transpose8;
    if constexpr (sizeof(T) == 16) return transpose16;
  }
};

}  // namespace lab

// {name, launch, function template, streams}: the variant with `function` instantiated for every
// size; `streams` as in CpuVariant (nullptr: never streams, LAB_CPU_VARIANT).
#define LAB_CPU_VARIANT_STORES(name, launch, function, streams)                        \
  lab::CpuVariant {                                                                    \
    name, launch, function<lab::Bytes1>, function<lab::Bytes2>, function<lab::Bytes4>, \
        function<lab::Bytes8>, function<lab::Bytes16>, streams                         \
  }
#define LAB_CPU_VARIANT(name, launch, function) \
  LAB_CPU_VARIANT_STORES(name, launch, function, nullptr)

// Defined by the step.
extern const char* const kStepSummary;
extern const lab::CpuVariant kCpuVariants[];
extern const int kCpuVariantCount;
