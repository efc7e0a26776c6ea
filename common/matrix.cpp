#include "matrix.hpp"

#include <algorithm>
#include <cinttypes>
#include <cstdio>

#include "config.hpp"

namespace lab {

void fill_input(float* in, Index rows, Index cols) {
  const Index count = rows * cols;
#pragma omp parallel for schedule(static)
  for (Index i = 0; i < count; ++i) in[i] = fill_value(i);
}

void poison(float* data, Index count) {
  auto* bytes = reinterpret_cast<unsigned char*>(data);
  const Index total = count * static_cast<Index>(sizeof(float));
  constexpr Index kChunk = Index{1} << 20;
#pragma omp parallel for schedule(static)
  for (Index start = 0; start < total; start += kChunk)
    std::memset(bytes + start, kPoisonByte, static_cast<size_t>(std::min(kChunk, total - start)));
}

void reference_transpose(const float* in, float* out, Index rows, Index cols) {
  // Serial and plain on purpose: it is the definition every step is checked against. The 32x32
  // blocks only keep it from taking minutes on large matrices; they change no value.
  constexpr Index kBlock = 32;
  for (Index r0 = 0; r0 < rows; r0 += kBlock)
    for (Index c0 = 0; c0 < cols; c0 += kBlock)
      for (Index r = r0; r < std::min(r0 + kBlock, rows); ++r)
        for (Index c = c0; c < std::min(c0 + kBlock, cols); ++c)
          out[c * rows + r] = in[r * cols + c];
}

Verification verify_transpose(const float* out, const float* reference, Index rows, Index cols) {
  Verification result;
  result.checked = rows * cols;
  for (Index i = 0; i < result.checked; ++i) {
    std::uint32_t got_bits, want_bits;
    std::memcpy(&got_bits, out + i, sizeof got_bits);
    std::memcpy(&want_bits, reference + i, sizeof want_bits);
    if (got_bits == want_bits) continue;
    if (result.wrong++ == 0) {
      result.first_row = i / rows;  // output is cols x rows
      result.first_col = i % rows;
      result.got = out[i];
      result.want = reference[i];
    }
  }
  return result;
}

std::string Verification::describe() const {
  char line[320];
  if (ok()) {
    std::snprintf(line, sizeof line,
                  "verified: all %" PRId64 " elements bitwise equal to the serial reference",
                  checked);
  } else {
    std::uint32_t got_bits, want_bits;
    std::memcpy(&got_bits, &got, sizeof got_bits);
    std::memcpy(&want_bits, &want, sizeof want_bits);
    std::snprintf(line, sizeof line,
                  "verification FAILED: %" PRId64 " of %" PRId64
                  " elements wrong; first at output row %" PRId64 ", col %" PRId64
                  ": got %.9g (0x%08x), want %.9g (0x%08x)",
                  wrong, checked, first_row, first_col, got, got_bits, want, want_bits);
  }
  return line;
}

}  // namespace lab
