#include "matrix.hpp"

#include <omp.h>

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <type_traits>
#include <vector>

namespace lab {
namespace {

constexpr Index kBlock = 64;    // the verifier walks 64 x 64 blocks: both matrices stay in cache
constexpr Index kChunk = 4096;  // the copy verifier compares runs of this many elements at once
// Types with at most this many digit bits (1- and 2-byte types) have their fill values tabulated.
constexpr int kTabulatedDigitBits = 16;

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

// The digit of position i in one fill: (i >> shift) & mask, 0 once the shift passes 64 bits.
struct Digit {
  int shift;
  std::uint64_t mask;
  std::uint64_t operator()(Index i) const {
    return shift >= 64 ? 0 : (static_cast<std::uint64_t>(i) >> shift) & mask;
  }
};

Digit digit_of_fill(const Dtype& type, int fill) {
  const int bits = digit_bits(type);
  return {fill * bits, low_bits(bits)};
}

// The element whose digit is d.
template <class T>
T digit_value(const Dtype& type, std::uint64_t d) {
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
T complement(T value) {
  if constexpr (std::is_integral_v<T>) {
    return static_cast<T>(~value);
  } else {
    auto* bytes = reinterpret_cast<unsigned char*>(&value);
    for (std::size_t b = 0; b < sizeof(T); ++b) bytes[b] = static_cast<unsigned char>(~bytes[b]);
    return value;
  }
}

// Nonzero where a and b differ in any bit (a memcmp without the call, so loops stay tight).
template <class T>
std::uint64_t bits_differ(const T& a, const T& b) {
  if constexpr (std::is_integral_v<T>) {
    return static_cast<std::uint64_t>(a ^ b);
  } else {
    std::uint64_t x[sizeof(T) / 8], y[sizeof(T) / 8], d = 0;
    std::memcpy(x, &a, sizeof(T));
    std::memcpy(y, &b, sizeof(T));
    for (std::size_t w = 0; w < sizeof(T) / 8; ++w) d |= x[w] ^ y[w];
    return d;
  }
}

// Calls body(value_of), where value_of(i) is element i's value in fill `fill`. A 1- or 2-byte type
// has at most 2^15 values: they are built once into a table, so that filling, poisoning and
// checking 2^32 elements costs a lookup each, not the bit pattern's construction.
template <class T, class Body>
void with_fill_values(const Dtype& type, int fill, Body&& body) {
  const Digit digit = digit_of_fill(type, fill);
  if (digit_bits(type) <= kTabulatedDigitBits) {
    std::vector<T> table(std::size_t{1} << digit_bits(type));
    for (std::uint64_t d = 0; d < table.size(); ++d) table[d] = digit_value<T>(type, d);
    const T* values = table.data();
    body([=](Index i) { return values[digit(i)]; });
  } else {
    const Dtype local = type;  // a copy the loops can keep in registers
    body([=](Index i) { return digit_value<T>(local, digit(i)); });
  }
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
  return digit_value<T>(type, digit_of_fill(type, fill)(i));
}

// The loops below work on private copies of what they read: the stores of a 1-byte T may alias
// anything, so a shared pointer or closure would be read again after every element.
template <class T>
void fill_input(T* in, Index rows, Index cols, const Dtype& type, int fill) {
  with_fill_values<T>(type, fill, [&](auto value_of) {
#pragma omp parallel
    {
      const auto value = value_of;
      T* const dst = in;
      const Index count = rows * cols;
#pragma omp for schedule(static)
      for (Index i = 0; i < count; ++i) dst[i] = value(i);
    }
  });
}

template <class T>
T poison_value(const Dtype& type, int fill, Index i) {
  return complement(fill_value<T>(type, fill, i));
}

template <class T>
void poison_output(T* out, Index rows, Index cols, const Dtype& type, int fill,
                   Operation operation) {
  with_fill_values<T>(type, fill, [&](auto value_of) {
#pragma omp parallel
    {
      const auto value = value_of;
      T* const dst = out;
      const Index n_rows = rows, n_cols = cols;
      if (operation == Operation::kCopy) {
#pragma omp for schedule(static)
        for (Index i = 0; i < n_rows * n_cols; ++i) dst[i] = complement(value(i));
      } else {
        // Output row c holds input column c: written in order, the input index computed, not read.
#pragma omp for collapse(2) schedule(static)
        for (Index c = 0; c < n_cols; ++c)
          for (Index r = 0; r < n_rows; ++r)
            dst[c * n_rows + r] = complement(value(r * n_cols + c));
      }
    }
  });
}

// Block by block, in three passes that each keep many loads in flight: the block's input rows
// are copied out whole (a miss per row, all of them at once, instead of one row's miss at a time
// while its elements are walked), transposed into a tile in the cache, and each output row segment
// is compared with its tile row by memcmp. Only a block with a difference is walked element by
// element, to count its wrong elements and find the first.
template <class T>
Verification verify_transpose(const T* out, const T* in, Index rows, Index cols) {
  Verification result;
  result.checked = rows * cols;
  const Index row_blocks = (rows + kBlock - 1) / kBlock, col_blocks = (cols + kBlock - 1) / kBlock;
  Index wrong = 0, first = result.checked;  // first: the lowest wrong output index
#pragma omp parallel reduction(+ : wrong) reduction(min : first)
  {
    std::vector<T> block(kBlock * kBlock);  // block[r * kBlock + c]: the input block's (r, c)
    std::vector<T> tile(kBlock * kBlock);   // tile[c * kBlock + r]: the same, transposed
#pragma omp for collapse(2) schedule(dynamic, 16)
    for (Index cb = 0; cb < col_blocks; ++cb) {
      for (Index rb = 0; rb < row_blocks; ++rb) {
        const Index c0 = cb * kBlock, r0 = rb * kBlock;
        const Index width = std::min(cols, c0 + kBlock) - c0;
        const Index height = std::min(rows, r0 + kBlock) - r0;
        T* const b = block.data();
        T* const t = tile.data();
        for (Index r = 0; r < height; ++r)
          std::memcpy(b + r * kBlock, in + (r0 + r) * cols + c0, width * sizeof(T));
        for (Index r = 0; r < height; ++r)
          for (Index c = 0; c < width; ++c) t[c * kBlock + r] = b[r * kBlock + c];
        bool differ = false;
        for (Index c = 0; c < width; ++c)
          differ |=
              std::memcmp(out + (c0 + c) * rows + r0, t + c * kBlock, height * sizeof(T)) != 0;
        if (!differ) continue;
        for (Index c = 0; c < width; ++c) {
          for (Index r = 0; r < height; ++r) {
            const Index o = (c0 + c) * rows + r0 + r;
            if (bits_differ(out[o], t[c * kBlock + r]) == 0) continue;
            ++wrong;
            first = std::min(first, o);
          }
        }
      }
    }
  }
  result.wrong = wrong;
  if (wrong != 0) {
    result.first_row = first / rows;  // the output is cols x rows
    result.first_col = first % rows;
    result.got = bits_in_hex(out + first, sizeof(T));
    result.want = bits_in_hex(in + result.first_col * cols + result.first_row, sizeof(T));
  }
  return result;
}

template <class T>
Verification verify_copy(const T* out, const T* in, Index rows, Index cols) {
  Verification result;
  result.checked = rows * cols;
  const Index chunks = (result.checked + kChunk - 1) / kChunk;
  Index wrong = 0, first = result.checked;  // first: the lowest wrong index
#pragma omp parallel for schedule(static) reduction(+ : wrong) reduction(min : first)
  for (Index chunk = 0; chunk < chunks; ++chunk) {
    const Index begin = chunk * kChunk, end = std::min(result.checked, begin + kChunk);
    if (std::memcmp(out + begin, in + begin, (end - begin) * sizeof(T)) == 0) continue;
    for (Index i = begin; i < end; ++i) {
      if (bits_differ(out[i], in[i]) == 0) continue;
      ++wrong;
      first = std::min(first, i);
    }
  }
  result.wrong = wrong;
  if (wrong != 0) {
    result.first_row = first / cols;  // the output is rows x cols, like the input
    result.first_col = first % cols;
    result.got = bits_in_hex(out + first, sizeof(T));
    result.want = bits_in_hex(in + first, sizeof(T));
  }
  return result;
}

std::string bits_in_hex(const void* bits, int bytes) {
  std::string text = "0x";
  const auto* b = static_cast<const unsigned char*>(bits);
  char two[3];
  for (int i = bytes - 1; i >= 0; --i) {  // most significant byte first (little-endian storage)
    std::snprintf(two, sizeof two, "%02x", b[i]);
    text += two;
  }
  return text;
}

std::string describe_verification(Index checked, Index wrong, int fill, int fills,
                                  const char* against, const std::string& where,
                                  const std::string& got, const std::string& want) {
  if (wrong == 0) {
    const std::string over = fills == 1 ? "" : " over " + std::to_string(fills) + " fills";
    return "verified: all " + std::to_string(checked) + " elements bitwise equal to " + against +
           over;
  }
  return "verification FAILED (fill " + std::to_string(fill + 1) + " of " + std::to_string(fills) +
         "): " + std::to_string(wrong) + " of " + std::to_string(checked) +
         " elements wrong; first at output " + where + ": got " + got + ", want " + want;
}

std::string Verification::describe() const {
  const std::string where =
      "row " + std::to_string(first_row) + ", col " + std::to_string(first_col);
  return describe_verification(checked, wrong, fill, fills, "the reference", where, got, want);
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
