// The element types the lab transposes. A transpose moves bits and never looks at values, so every
// kernel is a template over a storage type of the element's size (1, 2, 4, 8 or 16 bytes); the
// user-facing name (float16, complex64, ...) is kept for the report and for library calls that
// need it (cuBLAS). Usable from host C++ and from CUDA.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace lab {

// Storage types, one per element size. Bytes16 is aligned like a float4, so a 16-byte element is
// one 128-bit load or store on the GPU.
using Bytes1 = std::uint8_t;
using Bytes2 = std::uint16_t;
using Bytes4 = std::uint32_t;
using Bytes8 = std::uint64_t;
struct alignas(16) Bytes16 {
  std::uint64_t lo, hi;
};

// Calls f.template operator()<T>() ... in C++17: f(T{}) with a value of the storage type for
// `elem_bytes`; returns what f returns.
template <class F>
auto with_storage_type(int elem_bytes, F&& f) {
  switch (elem_bytes) {
    case 1:
      return f(Bytes1{});
    case 2:
      return f(Bytes2{});
    case 4:
      return f(Bytes4{});
    case 8:
      return f(Bytes8{});
    default:
      return f(Bytes16{});
  }
}

// One element type. The fill gives each element a value that is a "safe" bit pattern of the type:
// any pattern for integers; for floats a normal number (never a NaN, infinity, zero or subnormal),
// so that a library computing 1 * x + 0 * y (cuBLAS geam) returns the same bits.
struct Dtype {
  const char* name;   // what --dtype takes, as numpy and PyTorch spell it
  int bytes;          // element size: 1, 2, 4, 8, 16
  int parts;          // 2 for complex (real, imaginary), else 1
  int exponent_bits;  // of each part; 0 for integers
  int fraction_bits;  // of each part; for integers the number of bits
  // log2 of the number of fill values one part takes (a power of two of its safe patterns).
  int part_digit_bits;
};

// log2 of the number of distinct fill values of one element: each fill of the verification tells
// 2^digit_bits positions apart (common/matrix.hpp). At most 62, so shifts stay in range.
inline int digit_bits(const Dtype& type) {
  const int bits = type.parts * type.part_digit_bits;
  return bits < 62 ? bits : 62;
}

const std::vector<Dtype>& all_dtypes();
const Dtype* find_dtype(const std::string& name);  // nullptr when unknown
const Dtype& default_dtype();                      // float32
std::string dtype_names(const char* separator);    // "uint8, float16, ..."

}  // namespace lab
