// 16 bytes that start anywhere, read with aligned 16-byte loads: the two aligned vectors they
// straddle, shifted together in registers. Shared by CUDA.v7_packed (rows that start inside a
// vector: 8191 x 8193) and PERMUTE.v5_packed (short rows that are not whole vectors: 3 x 1000
// uint8).
#pragma once

#include <cstdint>

#include "packed_block.cuh"  // VECTOR_BYTES, WORDS

using Address = std::uintptr_t;  // alignment is a property of the address, not of the index

// The 16 bytes that start `shift` bytes (0..15) into lo and run on into hi. kGrain: what `shift` is
// always a multiple of (the element's size): for 4-byte elements no funnel shifts, for 8-byte
// elements one choice of words.
template <int kGrain = 1>
__device__ inline void extract(const std::uint32_t (&lo)[WORDS], const std::uint32_t (&hi)[WORDS],
                               int shift, std::uint32_t (&out)[WORDS]) {
  static_assert(kGrain == 1 || kGrain == 2 || kGrain == 4 || kGrain == 8,
                "a power of two below 16");
  std::uint32_t v[2 * WORDS] = {lo[0], lo[1], lo[2], lo[3], hi[0], hi[1], hi[2], hi[3]};
  // Whole words by selects (constant indices keep v in registers), the rest by funnel shifts.
  if (shift & 8) {
#pragma unroll
    for (int x = 0; x < 6; ++x) v[x] = v[x + 2];
  }
  if (kGrain < 8 && (shift & 4)) {
#pragma unroll
    for (int x = 0; x < 5; ++x) v[x] = v[x + 1];
  }
#pragma unroll
  for (int x = 0; x < WORDS; ++x)
    out[x] = kGrain >= 4 ? v[x] : __funnelshift_r(v[x], v[x + 1], 8 * (shift & 3));
}

// The 16 bytes at `at`, from the aligned vector they start in and the one after it (read even
// where `at` is aligned: the caller makes sure both lie in the allocation). The second is
// usually a neighbouring thread's first, which L1 serves.
template <class T>
__device__ __forceinline__ uint4 load_unaligned(const T* at) {
  const int shift = static_cast<int>(reinterpret_cast<Address>(at) % VECTOR_BYTES);
  const auto* pair =
      reinterpret_cast<const uint4*>(reinterpret_cast<const std::uint8_t*>(at) - shift);
  const uint4 a = pair[0], b = pair[1];
  const std::uint32_t lo[WORDS] = {a.x, a.y, a.z, a.w}, hi[WORDS] = {b.x, b.y, b.z, b.w};
  std::uint32_t v[WORDS];
  extract(lo, hi, shift, v);
  return make_uint4(v[0], v[1], v[2], v[3]);
}
