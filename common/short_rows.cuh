// K short rows (K < 8: 3 channels, a matrix of 3 rows) and their elements interleaved, element p
// of row k at place p * K + k of one run: NCHW to NHWC, or a 3 x 1000003 matrix transposed. Each
// thread takes N = 16 / sizeof(T) elements of every short row, K vectors of 16 bytes, and the same
// elements interleaved, K vectors of the run: a K x N transpose with every index known to the
// compiler, so the elements move between registers (byte and half-word permutes below 4 bytes).
// The short rows' vectors are coalesced as they are (consecutive threads, consecutive vectors);
// a thread's run is 16 * K contiguous bytes, so a warp's K accesses of the runs would each cover
// 32 pieces of 16 bytes, 16 * K bytes apart. They pass through the warp's own stage in shared
// memory instead: access s of the warp moves vector s * 32 + lane of the warp's 32 runs, 512
// contiguous bytes where the runs are adjacent. Shared by CUDA.v7_packed (thin matrices) and
// PERMUTE.v5_packed (short planes).
#pragma once

#include "constant_dispatch.hpp"  // lab::with_constant
#include "packed_block.cuh"       // VectorOf, VECTOR_BYTES

namespace short_rows {

constexpr int WARP_SIZE = 32;
constexpr int MAX_SIDE = 7;  // K: a short side of 2 to 7 elements (8 and more take a tile)

// f(std::integral_constant<int, K>{}) for K = side (2 to MAX_SIDE): K becomes a template argument,
// so that every index of the K x N transpose is known to the compiler.
template <class F>
decltype(auto) with_side(int side, F&& f) {
  return lab::with_constant<2, MAX_SIDE>(side, f);
}

// run element p * K + k is row k's element p
template <class T, int K>
__device__ __forceinline__ void interleave(const VectorOf<T> (&rows)[K], VectorOf<T> (&run)[K]) {
  constexpr int N = VECTOR_BYTES / sizeof(T);
#pragma unroll
  for (int p = 0; p < N; ++p)
#pragma unroll
    for (int k = 0; k < K; ++k) run[(p * K + k) / N].element[(p * K + k) % N] = rows[k].element[p];
}

template <class T, int K>
__device__ __forceinline__ void spread(const VectorOf<T> (&run)[K], VectorOf<T> (&rows)[K]) {
  constexpr int N = VECTOR_BYTES / sizeof(T);
#pragma unroll
  for (int p = 0; p < N; ++p)
#pragma unroll
    for (int k = 0; k < K; ++k) rows[k].element[p] = run[(p * K + k) / N].element[(p * K + k) % N];
}

// A pointer of lane `owner`, as every lane of the warp asks for one.
__device__ __forceinline__ unsigned long long lane_value(const void* pointer, int owner) {
  return __shfl_sync(~0u, reinterpret_cast<unsigned long long>(pointer), owner);
}

// Every lane of the warp calls these together (the stage's exchanges need all 32), each with the
// start of its run (16-byte aligned) or nullptr where it has none. `stage` is the warp's, 32 * K
// cells; the caller syncs the warp before the stage is written again.
template <class T, int K>
__device__ __forceinline__ void gather_runs(uint4* stage, const T* run_in, int lane,
                                            VectorOf<T> (&run)[K]) {
  constexpr int N = VECTOR_BYTES / sizeof(T);
#pragma unroll
  for (int s = 0; s < K; ++s) {
    const int v = s * WARP_SIZE + lane, owner = v / K;
    const auto* from = reinterpret_cast<const T*>(lane_value(run_in, owner));
    if (from) stage[v] = *reinterpret_cast<const uint4*>(from + (v - owner * K) * N);
  }
  __syncwarp();
#pragma unroll
  for (int s = 0; s < K; ++s) run[s].word = stage[lane * K + s];
}

template <class T, int K>
__device__ __forceinline__ void scatter_runs(uint4* stage, T* run_out, int lane,
                                             const VectorOf<T> (&run)[K]) {
  constexpr int N = VECTOR_BYTES / sizeof(T);
#pragma unroll
  for (int s = 0; s < K; ++s) stage[lane * K + s] = run[s].word;
  __syncwarp();
#pragma unroll
  for (int s = 0; s < K; ++s) {
    const int v = s * WARP_SIZE + lane, owner = v / K;
    auto* to = reinterpret_cast<T*>(lane_value(run_out, owner));
    if (to) *reinterpret_cast<uint4*>(to + (v - owner * K) * N) = stage[v];
  }
}

}  // namespace short_rows
