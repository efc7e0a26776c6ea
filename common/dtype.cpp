#include "dtype.hpp"

namespace lab {

const std::vector<Dtype>& all_dtypes() {
  // part_digit_bits: a sign bit plus the normal numbers with the lowest 2^k exponents (floats),
  // or every pattern (integers). float16: 2 x 16 exponents x 2^10 fractions = 2^15 values.
  static const std::vector<Dtype> types = {
      {"uint8", 1, 1, 0, 8, 8},          {"float16", 2, 1, 5, 10, 15},
      {"bfloat16", 2, 1, 8, 7, 15},      {"float32", 4, 1, 8, 23, 31},
      {"float64", 8, 1, 11, 52, 62},     {"complex64", 8, 2, 8, 23, 31},
      {"complex128", 16, 2, 11, 52, 62},
  };
  return types;
}

const Dtype* find_dtype(const std::string& name) {
  for (const Dtype& type : all_dtypes())
    if (name == type.name) return &type;
  return nullptr;
}

const Dtype& default_dtype() {
  return *find_dtype("float32");
}

std::string dtype_names(const char* separator) {
  std::string names;
  for (const Dtype& type : all_dtypes())
    names += (names.empty() ? "" : separator) + std::string(type.name);
  return names;
}

}  // namespace lab
