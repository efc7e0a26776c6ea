// Step 0: the transpose on the CPU with OpenMP.
// naive:   one `omp parallel for` over input rows. Reads walk a row (contiguous), writes walk an
//          output column: every element lands on another cache line and, every 1024 floats
//          apart, another 4 KiB page.
// blocked: each thread takes bands of 32 input rows and walks along them, one vector width
//          (16 floats with AVX-512, 8 with AVX) of columns at a time:
//          - it loads the 32 rows' pieces of those columns as vectors, transposes them in
//            registers with shuffles, and holds 16 (or 8) output rows of 32 floats: 128 bytes,
//            two whole cache lines each;
//          - it writes each of those lines whole, with streaming stores when the matrix is
//            larger than the last-level cache (common/streaming_copy.hpp). A plain store would
//            first read the line from memory only to overwrite all of it: 3 bytes over the
//            memory bus for every 2 a transpose needs. The ceiling copy streams too, so the
//            comparison stays fair; LAB_STREAMING_STORES=off runs both with plain stores.
//          Every line is read whole and written whole, once, and reads and writes overlap in
//          every step: no buffer, no second pass. Each input row is one long run, 32 at a time:
//          more than some cores' hardware prefetchers follow (AMD Zen 4 follows about 16), so
//          the loop asks for each row's line 4 lines ahead itself, into L2. Bands are dealt to
//          the threads round robin, so the threads running at the same time fill neighbouring
//          pieces of the same output rows.
//          Why 32 rows and not more? Each row is one more stream to fetch ahead, and 32 rows
//          32 KiB apart already fall into one L1 set. Why not 16? Then each output row gets one
//          line at a time, and memory writes single lines less well than pairs.
#include <algorithm>
#include <cstdint>
#include <cstring>
#include <utility>

#include "../common/cpu_step.hpp"
#include "../common/streaming_copy.hpp"

using lab::Index;

namespace {

constexpr int kBandRows = 32;     // input rows moved together: 128 B, two lines, per output row
constexpr int kChunkCols = 2048;  // input columns per piece of work: 8 KiB runs of each input row
constexpr int kPrefetchFloats = 64;  // how far ahead each input row is fetched: 4 cache lines
#if defined(__AVX512F__)
constexpr int kLanes = 16;  // floats per vector register: 512-bit AVX-512, one cache line
#elif defined(__AVX__)
constexpr int kLanes = 8;  // 256-bit AVX
#else
constexpr int kLanes = 4;  // 128-bit SSE, NEON, ...
#endif
constexpr int kBlocksPerBand = kBandRows / kLanes;  // kLanes x kLanes blocks stacked in a band
static_assert(kBandRows % kLanes == 0 && kLanes % lab::kStreamFloats == 0);

template <class T>
void transpose_naive(const T* in, T* out, Index rows, Index cols) {
#pragma omp parallel for schedule(static)
  for (Index r = 0; r < rows; ++r)
    for (Index c = 0; c < cols; ++c) out[c * rows + r] = in[r * cols + c];
}

#if defined(__GNUC__)
// GCC and Clang: vector types and shuffles that compile to any CPU's vector instructions (AVX,
// SSE, NEON). The shuffle indices pick from a's lanes (0..kLanes-1), then b's (kLanes..).
typedef float Row __attribute__((vector_size(kLanes * sizeof(float))));
#if defined(__clang__) || __GNUC__ >= 12
#define LAB_SHUFFLE(a, b, ...) __builtin_shufflevector(a, b, __VA_ARGS__)
#else
typedef int RowIndices __attribute__((vector_size(kLanes * sizeof(int))));
#define LAB_SHUFFLE(a, b, ...) __builtin_shuffle(a, b, RowIndices{__VA_ARGS__})
#endif

// Rows a and b, S apart in a block, swap their off-diagonal S x S sub-blocks: a gives b the
// elements whose column has bit S set and takes b's elements whose column has it clear.
template <int S, int... J>
inline void swap_sub_blocks(Row& a, Row& b, std::integer_sequence<int, J...>) {
  const Row new_a = LAB_SHUFFLE(a, b, ((J & S) ? kLanes + J - S : J)...);
  const Row new_b = LAB_SHUFFLE(a, b, ((J & S) ? kLanes + J : J + S)...);
  a = new_a;
  b = new_b;
}

template <int S>
inline void swap_round(Row (&v)[kLanes]) {
  if constexpr (S < kLanes) {
#pragma GCC unroll 16
    for (int i = 0; i < kLanes; ++i)
      if (!(i & S)) swap_sub_blocks<S>(v[i], v[i + S], std::make_integer_sequence<int, kLanes>{});
  }
}

// A kLanes x kLanes block in registers, transposed in place: swapping the 1x1, then 2x2, 4x4
// and 8x8 off-diagonal sub-blocks. One vector load and one vector store per row and a few
// shuffles, where the plain loop moves every float on its own.
inline void transpose_lanes(Row (&v)[kLanes]) {
  swap_round<1>(v);
  swap_round<2>(v);
  swap_round<4>(v);
  swap_round<8>(v);
}
#else
struct Row {
  float at[kLanes];
};
inline void transpose_lanes(Row (&v)[kLanes]) {
  for (int i = 0; i < kLanes; ++i)
    for (int j = 0; j < i; ++j) std::swap(v[i].at[j], v[j].at[i]);
}
#endif

// Asks for the line at p to be brought into L2 (a hint: no fault, no wait). Locality 2 is
// prefetcht1 on x86: L2, not L1, whose set the 32 rows already crowd.
inline void prefetch_to_l2(const float* p) {
#if defined(__GNUC__)
  __builtin_prefetch(p, 0, 2);
#else
  (void)p;
#endif
}

// One vector of an output row. Streaming needs dst aligned to the vector.
template <bool kStreaming>
inline void store_row(float* dst, const Row& v) {
  if constexpr (kStreaming) {
    for (int k = 0; k < kLanes; k += lab::kStreamFloats)
      lab::stream_vector(dst + k, reinterpret_cast<const float*>(&v) + k);
  } else {
    std::memcpy(dst, &v, sizeof v);
  }
}

// kBandRows input rows x kLanes columns (in, row stride cols) -> kLanes output rows x kBandRows
// (out, row stride rows): every output row is written as whole lines, one after the other.
// With kPrefetch, each input row's line kPrefetchFloats ahead is requested too; the caller
// keeps that inside the row.
template <bool kStreaming, bool kPrefetch>
inline void transpose_band_block(const float* in, Index cols, float* out, Index rows) {
  Row block[kBlocksPerBand][kLanes];
#pragma GCC unroll 8
  for (int b = 0; b < kBlocksPerBand; ++b) {
#pragma GCC unroll 16
    for (int i = 0; i < kLanes; ++i) {
      const float* row = in + (b * kLanes + i) * cols;
      std::memcpy(&block[b][i], row, sizeof(Row));
      if constexpr (kPrefetch) prefetch_to_l2(row + kPrefetchFloats);
    }
    transpose_lanes(block[b]);
  }
#pragma GCC unroll 16
  for (int j = 0; j < kLanes; ++j)
#pragma GCC unroll 8
    for (int b = 0; b < kBlocksPerBand; ++b)
      store_row<kStreaming>(out + j * rows + b * kLanes, block[b][j]);
}

// One piece of work: input rows r0.. and columns c0.., clipped at the matrix edge.
struct Tile {
  Index r0, c0;
  int r_count, c_count;
};

template <bool kStreaming>
void transpose_tile(const float* in, float* out, Index rows, Index cols, const Tile& tile) {
  const float* tile_in = in + tile.r0 * cols + tile.c0;
  float* tile_out = out + tile.c0 * rows + tile.r0;
  int c = 0;
  if (tile.r_count == kBandRows) {
    // Fetch ahead while the line ahead is still in the row; the last few steps go without.
    const Index ahead_in_row = cols - tile.c0 - kPrefetchFloats;
    const int prefetch_end = static_cast<int>(std::min<Index>(tile.c_count, ahead_in_row));
    for (; c + kLanes <= prefetch_end; c += kLanes)
      transpose_band_block<kStreaming, true>(tile_in + c, cols, tile_out + c * rows, rows);
    for (; c + kLanes <= tile.c_count; c += kLanes)
      transpose_band_block<kStreaming, false>(tile_in + c, cols, tile_out + c * rows, rows);
  }
  // What is left, one by one: columns past the last whole vector, or the band cut short by the
  // bottom edge.
  for (int r = 0; r < tile.r_count; ++r)
    for (int rest = c; rest < tile.c_count; ++rest)
      tile_out[rest * rows + r] = tile_in[r * cols + rest];
}

// Elements of other sizes than a float: the same bands, round robin, chunk by chunk, moved one
// element at a time (each output row still gets 32 neighbouring elements in a row).
template <class T>
void transpose_bands_scalar(const T* in, T* out, Index rows, Index cols) {
  const Index bands = (rows + kBandRows - 1) / kBandRows;
  const Index chunks = (cols + kChunkCols - 1) / kChunkCols;
#pragma omp parallel for collapse(2) schedule(static, 1)
  for (Index chunk = 0; chunk < chunks; ++chunk) {
    for (Index band = 0; band < bands; ++band) {
      const Index r_end = std::min(rows, (band + 1) * kBandRows);
      const Index c_end = std::min(cols, (chunk + 1) * kChunkCols);
      for (Index c = chunk * kChunkCols; c < c_end; ++c)
        for (Index r = band * kBandRows; r < r_end; ++r) out[c * rows + r] = in[r * cols + c];
    }
  }
}

void transpose_bands_simd(const float* in, float* out, Index rows, Index cols) {
  const Index bands = (rows + kBandRows - 1) / kBandRows;
  const Index chunks = (cols + kChunkCols - 1) / kChunkCols;
  // Streaming stores need every output row's vectors aligned: the output 64-byte aligned (the
  // harness allocates it so) and rows a multiple of the vector. Otherwise plain stores.
  const bool aligned =
      rows % kLanes == 0 && reinterpret_cast<std::uintptr_t>(out) % (kLanes * sizeof(float)) == 0;
  const bool streaming =
      aligned && lab::use_streaming_stores(2 * lab::matrix_bytes(rows, cols, sizeof(float)));
#pragma omp parallel
  {
    // Round robin, chunk by chunk: band b goes to thread b % threads, so the threads working at
    // the same time write neighbouring 128 B pieces of the same output rows, and memory sees
    // long runs instead of lines scattered a power of two apart (CUDA.v6 makes the same move).
#pragma omp for collapse(2) schedule(static, 1)
    for (Index chunk = 0; chunk < chunks; ++chunk) {
      for (Index band = 0; band < bands; ++band) {
        const Tile tile{band * kBandRows, chunk * kChunkCols,
                        static_cast<int>(std::min<Index>(kBandRows, rows - band * kBandRows)),
                        static_cast<int>(std::min<Index>(kChunkCols, cols - chunk * kChunkCols))};
        if (streaming)
          transpose_tile<true>(in, out, rows, cols, tile);
        else
          transpose_tile<false>(in, out, rows, cols, tile);
      }
    }
    lab::stream_fence();
  }
}

}  // namespace

template <class T>
void transpose_blocked(const T* in, T* out, Index rows, Index cols) {
  if constexpr (sizeof(T) == sizeof(float))  // a transpose moves bits: any 4-byte type is floats
    transpose_bands_simd(reinterpret_cast<const float*>(in), reinterpret_cast<float*>(out), rows,
                         cols);
  else
    transpose_bands_scalar(in, out, rows, cols);
}

const char* const kStepSummary = "OpenMP on the CPU: naive row loop vs cache-blocked tiles";
const lab::CpuVariant kCpuVariants[] = {
    LAB_CPU_VARIANT("naive", "omp parallel for over rows", transpose_naive),
    LAB_CPU_VARIANT("blocked", "omp bands of 32 rows, SIMD, prefetch, streaming (4-byte types)",
                    transpose_blocked),
};
const int kCpuVariantCount = sizeof kCpuVariants / sizeof kCpuVariants[0];
