// Division by a number known before the launch, as a multiply and two shifts (Granlund and
// Montgomery, "Division by invariant integers using multiplication", 1994, figure 4.1). A GPU has
// no integer divide instruction: a 64-bit `/` is a call of some hundred instructions, while this
// is one high multiply, an add and two shifts. The host computes the multiplier and the shifts
// once per divisor; every thread then divides by them. Exact for every dividend below 2^64 and
// every divisor from 1 to 2^64 - 1 (tests/permute_plan_probe.cpp checks it against `/`).
#pragma once

#include <cstdint>

#if defined(__CUDACC__)
#define LAB_HOST_DEVICE __host__ __device__
#else
#define LAB_HOST_DEVICE
#endif
#if defined(__CUDA_ARCH__)
#define LAB_UNROLL _Pragma("unroll")  // constant indices: the arrays stay in registers
#else
#define LAB_UNROLL  // the host compiler has no such pragma and would warn
#endif

namespace lab {

struct FastDivision {
  std::uint64_t divisor = 1;
  std::uint64_t multiplier = 0;  // m' = floor(2^64 * (2^l - d) / d) + 1, l = ceil(log2 d)
  int shift1 = 0, shift2 = 0;    // min(l, 1) and max(l - 1, 0)

  FastDivision() = default;
  explicit FastDivision(std::uint64_t d) : divisor(d) {
    int l = 0;
    while (l < 64 && (std::uint64_t{1} << l) < d) ++l;
    using Wide = unsigned __int128;
    const Wide two_to_l = Wide{1} << l;
    multiplier = static_cast<std::uint64_t>((Wide{1} << 64) * (two_to_l - d) / d + 1);
    shift1 = l < 1 ? l : 1;
    shift2 = l > 1 ? l - 1 : 0;
  }

  LAB_HOST_DEVICE std::uint64_t quotient(std::uint64_t n) const {
#if defined(__CUDA_ARCH__)
    const std::uint64_t t = __umul64hi(multiplier, n);
#else
    const std::uint64_t t =
        static_cast<std::uint64_t>((static_cast<unsigned __int128>(multiplier) * n) >> 64);
#endif
    return (t + ((n - t) >> shift1)) >> shift2;  // t <= n: neither step overflows
  }
};

}  // namespace lab
