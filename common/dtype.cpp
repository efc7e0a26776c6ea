#include "dtype.hpp"

namespace lab {

const std::vector<Dtype>& all_dtypes() {
  static const std::vector<Dtype> types = {
#define LAB_DTYPE(name, bytes, parts, exponent_bits, fraction_bits, part_digit_bits) \
  {#name, bytes, parts, exponent_bits, fraction_bits, part_digit_bits},
#include "dtypes.def"
#undef LAB_DTYPE
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
