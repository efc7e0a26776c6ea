// The problem itself: the input fills and the exact verifier, for every element type.
// Layout everywhere: input row-major rows x cols, output row-major cols x rows,
// out[c * rows + r] = in[r * cols + c]. Sizes are 64-bit: rows * cols may exceed 2^31.
// A copy step (CUDA.copy, the reference a transpose is measured against) is verified as a copy:
// out is rows x cols, out[i] = in[i].
//
// How a misplaced element is always caught. One fill gives element i a value that depends on i,
// but a type has only so many values: uint8 has 256, so with one fill the elements 256 apart are
// equal and a kernel that swaps them would pass. So the verification runs the step several times,
// once per fill: fill f gives element i the f-th "digit" of i, in base 2^digit_bits(type)
// (uint8: base 256, float16: 2^15 normal numbers, float32: 2^31, the 8- and 16-byte types 2^62).
// Two positions differ in at least one digit, so any element read from the wrong place differs
// from the wanted one in at least one fill. A uint8 matrix of 2^26 elements takes 4 fills; a
// float32 matrix takes 1 up to 2^31 elements and 2 beyond; the 8- and 16-byte types always 1.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

#include "dtype.hpp"

namespace lab {

using Index = std::int64_t;

inline std::size_t matrix_bytes(Index rows, Index cols, int elem_bytes) {
  return static_cast<std::size_t>(rows) * static_cast<std::size_t>(cols) *
         static_cast<std::size_t>(elem_bytes);
}

// How many fills tell every position of a `count`-element matrix apart (at least 1).
int fills_needed(const Dtype& type, Index count);

// The bits of element i in fill `fill`, as the storage type T of the dtype (sizeof(T) ==
// type.bytes). Every value is a safe pattern of the type (dtype.hpp).
template <class T>
T fill_value(const Dtype& type, int fill, Index i);

template <class T>
void fill_input(T* in, Index rows, Index cols, const Dtype& type, int fill);  // parallel

// What a step computes: its Makefile says (STEP_OPERATION, default transpose).
enum class Operation { kTranspose, kCopy };

// The poison of an output element whose expected value is input element i in fill `fill`: the
// bitwise complement of that value. It differs from the expected value in every bit, so an element
// a step never writes is caught at every position, in every fill, for every type (a constant
// poison cannot do that: 0xFF is a real uint8 value, and every fill of the last element of a
// 256 x 256 uint8 matrix is 0xFF). The complement of a normal float is a normal float.
template <class T>
T poison_value(const Dtype& type, int fill, Index i);

// Every element of `out` (the output of `operation` on a rows x cols input) set to the poison of
// the value it must receive in fill `fill`. Parallel.
template <class T>
void poison_output(T* out, Index rows, Index cols, const Dtype& type, int fill,
                   Operation operation = Operation::kTranspose);

// Bytes in hex, most significant first: "0x3c00" for a float16 1.0.
std::string bits_in_hex(const void* bits, int bytes);

// The one line a verification prints: "verified: all N elements bitwise equal to <against>", or
// "verification FAILED ...", the first wrong element at `where` ("row 3, col 5") with its bits.
std::string describe_verification(Index checked, Index wrong, int fill, int fills,
                                  const char* against, const std::string& where,
                                  const std::string& got, const std::string& want);

struct Verification {
  Index checked = 0;
  Index wrong = 0;
  Index first_row = -1;  // position of the first wrong element in the OUTPUT (cols x rows for a
                         // transpose, rows x cols for a copy)
  Index first_col = -1;
  std::string got, want;  // their bits, in hex
  int fill = 0, fills = 1;
  bool ok() const { return wrong == 0; }
  std::string describe() const;  // one line: "verified ..." or "verification FAILED ..."
};

// Bitwise: every out[c * rows + r] against in[r * cols + c], the definition of the transpose.
template <class T>
Verification verify_transpose(const T* out, const T* in, Index rows, Index cols);

// Bitwise: every out[i] against in[i] (out is rows x cols, like in).
template <class T>
Verification verify_copy(const T* out, const T* in, Index rows, Index cols);

template <class T>
Verification verify_result(Operation operation, const T* out, const T* in, Index rows, Index cols) {
  return operation == Operation::kCopy ? verify_copy(out, in, rows, cols)
                                       : verify_transpose(out, in, rows, cols);
}

// Correct first: for each fill (the last one filled is fill 0, the one the timing then uses),
// fills `in`, poisons `out` (poison_output, the same fill), calls produce() to transpose (or copy)
// in into out, and verifies out. Stops at the first failing fill. produce() owns any device copies
// (a device output is poisoned by copying the poisoned `out` to it).
template <class T, class Produce>
Verification verify_every_fill(const Dtype& type, T* in, T* out, Index rows, Index cols,
                               Produce&& produce, Operation operation = Operation::kTranspose) {
  const int fills = fills_needed(type, rows * cols);
  Verification check;
  for (int fill = fills - 1; fill >= 0; --fill) {
    fill_input(in, rows, cols, type, fill);
    poison_output(out, rows, cols, type, fill, operation);
    produce();
    check = verify_result(operation, out, in, rows, cols);
    check.fill = fill;
    check.fills = fills;
    if (!check.ok()) break;
  }
  return check;
}

}  // namespace lab
