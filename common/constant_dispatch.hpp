// A value known only at run time made a template argument: f(std::integral_constant<int, v>{})
// for v = value, kFirst <= v <= kLast (a value outside takes kLast). Each value gets code of its
// own in which every index built from it is known to the compiler (the short sides of
// common/short_rows.cuh, the row shifts of CUDA.v7_packed/ragged.cu).
#pragma once

#include <type_traits>

namespace lab {

template <int kFirst, int kLast, class F>
decltype(auto) with_constant(int value, F&& f) {
  static_assert(kFirst <= kLast, "a range of at least one value");
  if constexpr (kFirst < kLast)
    if (value != kFirst) return with_constant<kFirst + 1, kLast>(value, f);
  return f(std::integral_constant<int, kFirst>{});
}

}  // namespace lab
