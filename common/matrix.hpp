// The problem itself: the input fill, the serial reference and the exact verifier.
// Layout everywhere: input row-major rows x cols, output row-major cols x rows,
// out[c * rows + r] = in[r * cols + c]. Sizes are 64-bit: rows * cols may exceed 2^31.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string>

namespace lab {

using Index = std::int64_t;

// Bytes of one rows x cols fp32 matrix.
inline std::size_t matrix_bytes(Index rows, Index cols) {
  return static_cast<std::size_t>(rows) * static_cast<std::size_t>(cols) * sizeof(float);
}

// Element i of the input is the i-th normal float in the order +[2^-126, 2^128), then the same
// negated: 2 * 254 * 2^23 (about 4.26e9) distinct values, so a misplaced element never equals the
// wanted one. Larger inputs (over 17 GB a matrix) would repeat values: distinct up to that size.
inline float fill_value(Index i) {
  constexpr std::uint64_t kPositiveNormals = 254ull << 23;
  const std::uint64_t k = static_cast<std::uint64_t>(i) % (2 * kPositiveNormals);
  const std::uint32_t sign = k >= kPositiveNormals ? 0x80000000u : 0u;
  const std::uint32_t bits = sign | static_cast<std::uint32_t>(k % kPositiveNormals + (1u << 23));
  float value;
  std::memcpy(&value, &bits, sizeof value);
  return value;
}

void fill_input(float* in, Index rows, Index cols);  // parallel: it is not what is measured
void poison(float* data, Index count);               // 0xFF bytes: a NaN no fill value equals
void reference_transpose(const float* in, float* out, Index rows, Index cols);  // serial

struct Verification {
  Index checked = 0;
  Index wrong = 0;
  Index first_row = -1;  // position of the first wrong element in the OUTPUT (cols x rows)
  Index first_col = -1;
  float got = 0.0f;
  float want = 0.0f;
  bool ok() const { return wrong == 0; }
  std::string describe() const;  // one line: "verified ..." or "FAILED: ..."
};

// Bitwise comparison of a transposed output (cols x rows) with the reference.
Verification verify_transpose(const float* out, const float* reference, Index rows, Index cols);

}  // namespace lab
