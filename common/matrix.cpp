#include "matrix.hpp"

#include <omp.h>

#include <algorithm>
#include <cinttypes>
#include <cstdio>
#include <cstring>

namespace lab {
namespace {

constexpr Index kBlock = 64;  // the verifier walks 64 x 64 blocks: both matrices stay in cache

std::uint64_t low_bits(int bits) {
  return bits >= 64 ? ~std::uint64_t{0} : (std::uint64_t{1} << bits) - 1;
}

// One part (a real, an imaginary, or the whole element) with digit p: the integer itself, or
// for floats a normal number: the low bits pick the fraction and the lowest exponents (from 1,
// never the zero/subnormal exponent), the top bit of the digit the sign.
std::uint64_t part_pattern(const Dtype& type, std::uint64_t p) {
  if (type.exponent_bits == 0) return p;
  const int width = type.bytes * 8 / type.parts;
  const std::uint64_t magnitude =
      (p & low_bits(type.part_digit_bits - 1)) + (std::uint64_t{1} << type.fraction_bits);
  const std::uint64_t sign = (p >> (type.part_digit_bits - 1)) & 1;
  return magnitude | sign << (width - 1);
}

// The two parts of a complex element from one digit d: the real part carries the low digits,
// the imaginary part the high ones mixed with the low ones and offset by half, so that the two
// halves of an element never hold the same bits (a kernel that swaps them is caught too).
void part_digits(const Dtype& type, std::uint64_t d, std::uint64_t* real, std::uint64_t* imag) {
  const int bits = type.part_digit_bits;
  *real = d & low_bits(bits);
  *imag = ((bits < 64 ? d >> bits : 0) + d + (std::uint64_t{1} << (bits - 1))) & low_bits(bits);
}

std::string hex(const void* bits, int bytes) {
  std::string text = "0x";
  const auto* b = static_cast<const unsigned char*>(bits);
  char two[3];
  for (int i = bytes - 1; i >= 0; --i) {  // most significant byte first (little-endian storage)
    std::snprintf(two, sizeof two, "%02x", b[i]);
    text += two;
  }
  return text;
}

}  // namespace

int fills_needed(const Dtype& type, Index count) {
  int position_bits = 0;
  for (std::uint64_t last = count > 1 ? static_cast<std::uint64_t>(count - 1) : 0; last != 0;
       last >>= 1)
    ++position_bits;
  const int per_fill = digit_bits(type);
  return std::max(1, (position_bits + per_fill - 1) / per_fill);
}

template <class T>
T fill_value(const Dtype& type, int fill, Index i) {
  const int bits = digit_bits(type);
  const int shift = fill * bits;
  const std::uint64_t d =
      shift >= 64 ? 0 : (static_cast<std::uint64_t>(i) >> shift) & low_bits(bits);
  T value{};
  if (type.parts == 1) {
    const std::uint64_t pattern = part_pattern(type, d);
    if constexpr (sizeof(T) <= sizeof pattern) std::memcpy(&value, &pattern, sizeof(T));
  } else {
    std::uint64_t real, imag;
    part_digits(type, d, &real, &imag);
    const std::uint64_t halves[2] = {part_pattern(type, real), part_pattern(type, imag)};
    auto* bytes = reinterpret_cast<unsigned char*>(&value);
    std::memcpy(bytes, &halves[0], sizeof(T) / 2);  // little-endian: the low bytes of each
    std::memcpy(bytes + sizeof(T) / 2, &halves[1], sizeof(T) / 2);
  }
  return value;
}

template <class T>
void fill_input(T* in, Index rows, Index cols, const Dtype& type, int fill) {
  const Index count = rows * cols;
#pragma omp parallel for schedule(static)
  for (Index i = 0; i < count; ++i) in[i] = fill_value<T>(type, fill, i);
}

template <class T>
T poison_value(const Dtype& type, int fill, Index i) {
  T value = fill_value<T>(type, fill, i);
  auto* bytes = reinterpret_cast<unsigned char*>(&value);
  for (std::size_t b = 0; b < sizeof(T); ++b) bytes[b] = static_cast<unsigned char>(~bytes[b]);
  return value;
}

template <class T>
void poison_output(T* out, Index rows, Index cols, const Dtype& type, int fill,
                   Operation operation) {
  if (operation == Operation::kCopy) {
    const Index count = rows * cols;
#pragma omp parallel for schedule(static)
    for (Index i = 0; i < count; ++i) out[i] = poison_value<T>(type, fill, i);
    return;
  }
  // Output row c holds input column c: written in order, the input index computed, not read.
#pragma omp parallel for collapse(2) schedule(static)
  for (Index c = 0; c < cols; ++c)
    for (Index r = 0; r < rows; ++r) out[c * rows + r] = poison_value<T>(type, fill, r * cols + c);
}

template <class T>
Verification verify_transpose(const T* out, const T* in, Index rows, Index cols) {
  Verification result;
  result.checked = rows * cols;
  const Index row_blocks = (rows + kBlock - 1) / kBlock, col_blocks = (cols + kBlock - 1) / kBlock;
  Index wrong = 0, first = result.checked;  // first: the lowest wrong output index
#pragma omp parallel for collapse(2) schedule(dynamic, 16) reduction(+ : wrong) reduction(min : first)
  for (Index cb = 0; cb < col_blocks; ++cb) {
    for (Index rb = 0; rb < row_blocks; ++rb) {
      const Index c_end = std::min(cols, (cb + 1) * kBlock),
                  r_end = std::min(rows, (rb + 1) * kBlock);
      for (Index c = cb * kBlock; c < c_end; ++c) {
        for (Index r = rb * kBlock; r < r_end; ++r) {
          const Index o = c * rows + r;
          if (std::memcmp(out + o, in + r * cols + c, sizeof(T)) == 0) continue;
          ++wrong;
          first = std::min(first, o);
        }
      }
    }
  }
  result.wrong = wrong;
  if (wrong != 0) {
    result.first_row = first / rows;  // the output is cols x rows
    result.first_col = first % rows;
    result.got = hex(out + first, sizeof(T));
    result.want = hex(in + result.first_col * cols + result.first_row, sizeof(T));
  }
  return result;
}

template <class T>
Verification verify_copy(const T* out, const T* in, Index rows, Index cols) {
  Verification result;
  result.checked = rows * cols;
  Index wrong = 0, first = result.checked;  // first: the lowest wrong index
#pragma omp parallel for schedule(static) reduction(+ : wrong) reduction(min : first)
  for (Index i = 0; i < result.checked; ++i) {
    if (std::memcmp(out + i, in + i, sizeof(T)) == 0) continue;
    ++wrong;
    first = std::min(first, i);
  }
  result.wrong = wrong;
  if (wrong != 0) {
    result.first_row = first / cols;  // the output is rows x cols, like the input
    result.first_col = first % cols;
    result.got = hex(out + first, sizeof(T));
    result.want = hex(in + first, sizeof(T));
  }
  return result;
}

std::string Verification::describe() const {
  char line[400];
  const std::string over = fills == 1 ? std::string() : " over " + std::to_string(fills) + " fills";
  if (ok()) {
    std::snprintf(line, sizeof line,
                  "verified: all %" PRId64 " elements bitwise equal to the reference%s", checked,
                  over.c_str());
  } else {
    std::snprintf(line, sizeof line,
                  "verification FAILED (fill %d of %d): %" PRId64 " of %" PRId64
                  " elements wrong; first at output row %" PRId64 ", col %" PRId64
                  ": got %s, want %s",
                  fill + 1, fills, wrong, checked, first_row, first_col, got.c_str(), want.c_str());
  }
  return line;
}

#define LAB_INSTANTIATE(T)                                                        \
  template T fill_value<T>(const Dtype&, int, Index);                             \
  template T poison_value<T>(const Dtype&, int, Index);                           \
  template void fill_input<T>(T*, Index, Index, const Dtype&, int);               \
  template void poison_output<T>(T*, Index, Index, const Dtype&, int, Operation); \
  template Verification verify_transpose<T>(const T*, const T*, Index, Index);    \
  template Verification verify_copy<T>(const T*, const T*, Index, Index);
LAB_INSTANTIATE(Bytes1)
LAB_INSTANTIATE(Bytes2)
LAB_INSTANTIATE(Bytes4)
LAB_INSTANTIATE(Bytes8)
LAB_INSTANTIATE(Bytes16)
#undef LAB_INSTANTIATE

}  // namespace lab
