// Division by a number known before the launch, as a multiply and two shifts (Granlund and
// Montgomery, "Division by invariant integers using multiplication", 1994, figure 4.1). A GPU has
// no integer divide instruction: a 64-bit `/` is a call of some hundred instructions, while this
// is one high multiply, an add and two shifts. The host computes the multiplier and the shifts
// once per divisor; every thread then divides by them. Exact for every dividend below 2^N and
// every divisor from 1 to 2^N - 1, N = 64 or 32 (tests/permute_plan_probe.cpp checks both
// against `/`).
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

// Word: the width of the dividends, std::uint64_t or std::uint32_t. A 32-bit division is one
// 32-bit high multiply where the 64-bit one is a dozen instructions: kernels whose every index
// stays below 2^32 take FastDivision32.
template <class Word>
struct BasicFastDivision {
  static constexpr int kBits = 8 * sizeof(Word);
  Word divisor = 1;
  Word multiplier = 0;         // m' = floor(2^N * (2^l - d) / d) + 1, l = ceil(log2 d), N = kBits
  int shift1 = 0, shift2 = 0;  // min(l, 1) and max(l - 1, 0)

  BasicFastDivision() = default;
  explicit BasicFastDivision(Word d) : divisor(d) {
    int l = 0;
    while (l < kBits && (Word{1} << l) < d) ++l;
    using Wide = unsigned __int128;
    const Wide two_to_l = Wide{1} << l;
    multiplier = static_cast<Word>((Wide{1} << kBits) * (two_to_l - d) / d + 1);
    shift1 = l < 1 ? l : 1;
    shift2 = l > 1 ? l - 1 : 0;
  }

  LAB_HOST_DEVICE Word quotient(Word n) const {
    Word t;
    if constexpr (kBits == 64) {
#if defined(__CUDA_ARCH__)
      t = __umul64hi(multiplier, n);
#else
      t = static_cast<Word>((static_cast<unsigned __int128>(multiplier) * n) >> 64);
#endif
    } else {
#if defined(__CUDA_ARCH__)
      t = __umulhi(multiplier, n);
#else
      t = static_cast<Word>((static_cast<std::uint64_t>(multiplier) * n) >> 32);
#endif
    }
    return (t + ((n - t) >> shift1)) >> shift2;  // t <= n: neither step overflows
  }
};
using FastDivision = BasicFastDivision<std::uint64_t>;
using FastDivision32 = BasicFastDivision<std::uint32_t>;

}  // namespace lab
