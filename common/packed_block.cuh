// The N x N block of CUDA.v7_packed: N = 16 / sizeof(T) elements from each of N rows, one 16-byte
// vector a row, transposed in registers so that each register row then holds 16 bytes of one
// OUTPUT row. Shared by v7 (a matrix) and PERMUTE.v5_packed (a batch of planes): the same block,
// whatever tile and indexing surround it.
#pragma once

#include <vector_types.h>  // uint4

#include <cstdint>

constexpr int VECTOR_BYTES = 16;  // the widest load or store a thread makes
constexpr int WORDS = VECTOR_BYTES / 4;

// 16 bytes of one row, N = 16 / sizeof(T) elements: built or read an element at a time, moved as
// one 16-byte word where its address is aligned.
template <class T>
union VectorOf {
  uint4 word;
  T element[VECTOR_BYTES / sizeof(T)];
};

// The first `count` (at most N) elements of v to `target`, or from `source`: one 16-byte access
// where they are all N and the address is aligned, else an element at a time (a row's last
// elements, or a row that starts mid-vector).
template <class T>
__device__ __forceinline__ void store_elements(T* target, const VectorOf<T>& v, int count) {
  constexpr int N = VECTOR_BYTES / sizeof(T);
  if (count == N && reinterpret_cast<std::uintptr_t>(target) % VECTOR_BYTES == 0) {
    *reinterpret_cast<uint4*>(target) = v.word;
  } else {
#pragma unroll
    for (int i = 0; i < N; ++i)
      if (i < count) target[i] = v.element[i];
  }
}

template <class T>
__device__ __forceinline__ void load_elements(const T* source, VectorOf<T>& v, int count) {
  constexpr int N = VECTOR_BYTES / sizeof(T);
  if (count == N && reinterpret_cast<std::uintptr_t>(source) % VECTOR_BYTES == 0) {
    v.word = *reinterpret_cast<const uint4*>(source);
  } else {
#pragma unroll
    for (int i = 0; i < N; ++i)
      if (i < count) v.element[i] = source[i];
  }
}

// The N x N block of E-byte elements (row k in w[k]) transposed in place: round S swaps the
// elements of row i whose index has bit S set with those of row i + S whose index has it clear.
template <int E, int N>
__device__ void transpose_in_registers(std::uint32_t (&w)[N][WORDS]) {
#pragma unroll
  for (int S = 1; S < N; S *= 2) {
#pragma unroll
    for (int a = 0; a < N; ++a) {
      if (a & S) continue;
      const int b = a + S;
      if (S * E >= 4) {  // whole words: register renaming, no instructions
        const int ws = S * E / 4;
#pragma unroll
        for (int x = 0; x < WORDS; ++x) {
          if (x & ws) {
            const std::uint32_t t = w[a][x];
            w[a][x] = w[b][x - ws];
            w[b][x - ws] = t;
          }
        }
      } else {  // bytes or half words inside each word: one byte permute per word and row
        const unsigned keep_low = S * E == 1 ? 0x6240 : 0x5410;
        const unsigned keep_high = S * E == 1 ? 0x7351 : 0x7632;
#pragma unroll
        for (int x = 0; x < WORDS; ++x) {
          const std::uint32_t low = __byte_perm(w[a][x], w[b][x], keep_low);
          w[b][x] = __byte_perm(w[a][x], w[b][x], keep_high);
          w[a][x] = low;
        }
      }
    }
  }
}
