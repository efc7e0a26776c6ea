// Step 0: the transpose on the CPU with OpenMP.
// naive:   one `omp parallel for` over input rows. Reads walk a row (contiguous), writes walk an
//          output column: every element lands on another cache line and, every 1024 floats
//          apart, another 4 KiB page.
// blocked: each thread takes tiles of 128 input rows x 512 input columns and moves each one
//          through a private buffer in two passes, so that every cache line is moved whole and
//          every access to memory is part of a long run:
//          1. in:  8 rows x 8 floats at a time are loaded as vectors, transposed in registers
//                  with shuffles, and stored into the buffer. The next 8x8 block takes the other
//                  half of the same eight 64-byte lines, so each line fetched is used entirely
//                  while it is still in L1; each input row is read as one 2 KiB run, which the
//                  hardware prefetcher streams.
//          2. out: the buffer now holds the tile's 512 output rows, 128 floats (512 B, eight whole
//                  lines) each. They are copied out with streaming stores when the matrix is
//                  larger than the last-level cache (common/streaming_copy.hpp): a plain store
//                  would first read each output line from memory, only to overwrite all of it,
//                  so plain stores move 3 bytes through the memory bus for every 2 a transpose
//                  needs. The ceiling copy streams too, so the comparison stays fair;
//                  LAB_STREAMING_STORES=off runs both with plain stores.
//          Why not a small square tile kept in L1? Rows 8192 floats long lie 32 KiB apart, and
//          addresses a power of two >= 4 KiB apart fall in the same L1 set (8 ways): the 64
//          input lines of a 64x64 tile fight for 8 places, and so do its 64 output lines. Here
//          only 8 lines of one set are live on the input side (8-row blocks), the buffer is
//          contiguous (no aliasing), and each output line is written whole at once. The buffer
//          (256 KiB) lives in L2. A tile touches 128 input rows and 512 output rows: with the
//          2 MiB huge pages the harness asks for, a handful of TLB entries.
#include <algorithm>
#include <cstring>
#include <memory>
#include <utility>

#include "../common/cpu_step.hpp"
#include "../common/streaming_copy.hpp"

using lab::Index;

namespace {

constexpr int kTileRows = 128;  // input rows per tile: each output row gets a 512 B run
constexpr int kTileCols = 512;  // input columns per tile: each input row gives a 2 KiB run
constexpr int kBlock = 8;       // rows x floats transposed in registers at a time
#if defined(__AVX__)
constexpr int kLanes = 8;  // floats per vector register: 256-bit AVX
#else
constexpr int kLanes = 4;  // 128-bit SSE, NEON, ...: an 8x8 block is four 4x4 blocks
#endif

void transpose_naive(const float* in, float* out, Index rows, Index cols) {
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
    for (int i = 0; i < kLanes; ++i)
      if (!(i & S)) swap_sub_blocks<S>(v[i], v[i + S], std::make_integer_sequence<int, kLanes>{});
  }
}

// A kLanes x kLanes block in registers: in[i * in_stride + j] -> out[j * out_stride + i].
// Swapping the 1x1, then 2x2, then (with 8 lanes) 4x4 off-diagonal sub-blocks transposes it:
// one vector load and one vector store per row and a few shuffles, where the plain loop moves
// every float on its own (on AVX: 8 loads, 24 to 32 shuffles, 8 stores for 64 floats).
inline void transpose_lanes(const float* __restrict__ in, Index in_stride, float* __restrict__ out,
                            Index out_stride) {
  Row v[kLanes];
#pragma GCC unroll 8
  for (int i = 0; i < kLanes; ++i) std::memcpy(&v[i], in + i * in_stride, sizeof(Row));
  swap_round<1>(v);
  swap_round<2>(v);
  swap_round<4>(v);
#pragma GCC unroll 8
  for (int i = 0; i < kLanes; ++i) std::memcpy(out + i * out_stride, &v[i], sizeof(Row));
}
#else
inline void transpose_lanes(const float* __restrict__ in, Index in_stride, float* __restrict__ out,
                            Index out_stride) {
  for (int i = 0; i < kLanes; ++i)
    for (int j = 0; j < kLanes; ++j) out[j * out_stride + i] = in[i * in_stride + j];
}
#endif

// An 8x8 block: eight rows of 32 bytes in, eight rows of 32 bytes out.
inline void transpose_block(const float* in, Index in_stride, float* out, Index out_stride) {
  for (int i = 0; i < kBlock; i += kLanes)
    for (int j = 0; j < kBlock; j += kLanes)
      transpose_lanes(in + i * in_stride + j, in_stride, out + j * out_stride + i, out_stride);
}

// One tile: input rows r0.. and columns c0.., clipped at the matrix edge.
struct Tile {
  Index r0, c0;
  int r_count, c_count;
};

// Pass 1: buffer[c][r] = in[r0 + r][c0 + c], whole 8x8 blocks in registers, row band by row
// band; ragged edges one by one.
void load_tile(const float* in, Index cols, const Tile& tile,
               float (&buffer)[kTileCols][kTileRows]) {
  const float* tile_in = in + tile.r0 * cols + tile.c0;
  const int r_blocks = tile.r_count / kBlock * kBlock, c_blocks = tile.c_count / kBlock * kBlock;
  for (int r = 0; r < r_blocks; r += kBlock) {
    for (int c = 0; c < c_blocks; c += kBlock)
      transpose_block(tile_in + r * cols + c, cols, &buffer[c][r], kTileRows);
    for (int c = c_blocks; c < tile.c_count; ++c)
      for (int i = r; i < r + kBlock; ++i) buffer[c][i] = tile_in[i * cols + c];
  }
  for (int r = r_blocks; r < tile.r_count; ++r)
    for (int c = 0; c < tile.c_count; ++c) buffer[c][r] = tile_in[r * cols + c];
}

struct alignas(64) TileBuffer {  // 64: each buffer row starts a cache line
  float at[kTileCols][kTileRows];
};

void transpose_blocked(const float* in, float* out, Index rows, Index cols) {
  const Index tile_rows = (rows + kTileRows - 1) / kTileRows;
  const Index tile_cols = (cols + kTileCols - 1) / kTileCols;
  const bool streaming = lab::use_streaming_stores(2 * lab::matrix_bytes(rows, cols));
#pragma omp parallel
  {
    // One per thread, reused; on the heap, since 256 KiB is more than some thread stacks.
    const auto buffer = std::make_unique<TileBuffer>();
    // Static and row-major: each thread gets a band of input rows and walks it left to right.
#pragma omp for collapse(2) schedule(static)
    for (Index tr = 0; tr < tile_rows; ++tr) {
      for (Index tc = 0; tc < tile_cols; ++tc) {
        const Tile tile{tr * kTileRows, tc * kTileCols,
                        static_cast<int>(std::min<Index>(kTileRows, rows - tr * kTileRows)),
                        static_cast<int>(std::min<Index>(kTileCols, cols - tc * kTileCols))};
        load_tile(in, cols, tile, buffer->at);
        // Pass 2: one contiguous run per output row, streamed past the cache.
        float* tile_out = out + tile.c0 * rows + tile.r0;
        for (int c = 0; c < tile.c_count; ++c)
          lab::copy_floats(tile_out + c * rows, buffer->at[c], tile.r_count, streaming);
      }
    }
    lab::stream_fence();
  }
}

}  // namespace

const char* const kStepSummary = "OpenMP on the CPU: naive row loop vs cache-blocked tiles";
const lab::CpuVariant kCpuVariants[] = {
    {"naive", "omp parallel for over rows", transpose_naive},
    {"blocked", "omp tiles 128x512, 8x8 SIMD, streaming", transpose_blocked},
};
const int kCpuVariantCount = sizeof kCpuVariants / sizeof kCpuVariants[0];
