// Step 0: the transpose on the CPU with OpenMP.
// naive:   one `omp parallel for` over input rows. Reads walk a row (contiguous), writes walk an
//          output column: every element lands on another cache line and, every 1024 floats
//          apart, another 4 KiB page.
// blocked: each thread takes bands of 32 input rows and walks along them, one vector width
//          (16 floats with AVX-512, 8 with AVX) of columns at a time:
//          - it loads the 32 rows' pieces of those columns as vectors, transposes them in
//            registers with shuffles, and holds 16 (or 8) output rows of 32 floats: 128 bytes,
//            two whole cache lines each;
//          - it writes each of those lines whole, with streaming stores where they are faster:
//            a plain store would first read the line from memory only to overwrite all of it, 3
//            bytes over the memory bus for every 2 a transpose needs, but in cache it is the
//            cheaper one. Which wins depends on the host, so the first run of a shape measures
//            both and keeps the faster (a plan, common/streaming_copy.hpp); the ceiling is the
//            faster of a plain and a streaming copy. LAB_STREAMING_STORES=off runs both plainly.
//          Every line is read whole and written whole, once, and reads and writes overlap in
//          every step: no second pass over memory. Each input row is one long run, 32 at a time:
//          more than some cores' hardware prefetchers follow (AMD Zen 4 follows about 16), so
//          the loop asks for each row's line 4 lines ahead itself, into L2. Bands are dealt to
//          the threads round robin, so the threads running at the same time fill neighbouring
//          pieces of the same output rows (except where plain stores meet rows that are not a
//          multiple of a line: transpose_bands_simd says why).
//          Why 32 rows and not more? Each row is one more stream to fetch ahead, and 32 rows
//          32 KiB apart already fall into one L1 set. Why not 16? Then each output row gets one
//          line at a time, and memory writes single lines less well than pairs.
//          Other element sizes take the same design counted in bytes (Layout below): 128 bytes
//          of each output row per band, blocks of one vector per input row, 8-byte elements as
//          64-bit lanes, a 16-byte element as two 64-bit lanes moved together. 1- and 2-byte
//          elements are transposed in blocks of 16 bytes of each output row (16 input rows of
//          bytes, 8 of 2-byte elements): too little for a streaming store, which would leave its
//          line partly written while the core writes the block's other output rows (63 for bytes
//          with AVX-512), more lines than its write-combining buffers hold, and a line flushed
//          partly costs memory as much as a whole one or more. So a band's blocks are gathered on
//          the stack (in L1, at most 8 KiB a step), and every output row leaves that tile as whole
//          lines, as the other sizes' rows do; with two such tiles, one step's output rows leave
//          while the next step's blocks are read, so reads and writes overlap there too.
//          Rows not a multiple of a line (8191 x 8193) put output rows anywhere in a line: there
//          the work turns around (Stores::kOutputBands): each thread takes 128 bytes of every
//          input row, so that its output rows lie in one piece that starts and ends on a line,
//          and every line is written whole by one thread and can still stream.
#include <algorithm>
#include <cstdint>
#include <cstring>
#include <string>
#include <type_traits>
#include <utility>

#include "../common/cpu_step.hpp"
#include "../common/prefetch.hpp"
#include "../common/streaming_copy.hpp"

using lab::Index;

namespace {

constexpr int kLineBytes = static_cast<int>(lab::kCacheLineBytes);  // what memory moves at a time
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
constexpr int kVectorBytes = kLanes * sizeof(float);  // one vector register
static_assert(kBandRows % kLanes == 0 && kLanes % lab::kStreamFloats == 0);

// The same design for every element size, counted in bytes where the float figures above are:
// each output row gets kBandRows * 4 = 128 bytes per band (two whole lines), each input row is
// fetched kPrefetchFloats * 4 = 256 bytes ahead, a piece of work is kChunkCols * 4 = 8 KiB of
// each input row. Counting the band in bytes also keeps what it asks of the L2 cache the same for
// every size: its rows are 128 bytes * cols apart in all, so with a power-of-two row length its
// lines crowd into as few L2 sets for bytes as for floats (8 lines a set at 8192 columns on a 2 MiB
// 16-way L2). A band of 256 bytes would fill every way of those sets, and the lines fetched ahead
// would be evicted before they are read. A block is one vector per input row, transposed in
// registers:
//   4-byte: 16 x 16, float lanes;  8-byte: 8 x 8, 64-bit lanes;
//   16-byte: 4 x 4, each element two 64-bit lanes that move together (128-bit shuffles);
//   1-byte: 16 rows x 64 columns (AVX-512; x 32 with AVX, x 16 with SSE), 2-byte: 8 rows x 32:
//   16 bytes of each output row per block (transpose_small_block below).
// A band is at least one block tall: 128 rows of bytes and 64 of 2-byte elements (eight blocks
// each), 32 of floats, 16 of 8-byte and 8 of 16-byte elements (two blocks each).
template <class T>
struct Layout {
  static constexpr int kLaneBytes = sizeof(T) < 8 ? sizeof(T) : 8;
  static constexpr int kLanesPerElement = sizeof(T) / kLaneBytes;  // 2 for 16-byte elements
  static constexpr int kVectorLanes = kVectorBytes / kLaneBytes;
  static constexpr int kElements = kVectorLanes / kLanesPerElement;  // per vector
  static constexpr bool kSmall = sizeof(T) < 4;  // 1- and 2-byte: 16 bytes of each output row
  static constexpr int kBlockCols = kElements;   // a block: one vector of each input row ...
  static constexpr int kBlockRows = kSmall ? 16 / sizeof(T) : kElements;  // ... of these rows
  static constexpr int kBandRows =
      std::max<int>(kBlockRows, ::kBandRows * sizeof(float) / sizeof(T));
  static constexpr int kChunkCols = ::kChunkCols * sizeof(float) / sizeof(T);
  static constexpr int kPrefetchElements = kPrefetchFloats * sizeof(float) / sizeof(T);
  static_assert(kBandRows % kBlockRows == 0 && sizeof(T) % kLaneBytes == 0);
  // A step that fetches its input ahead has a next step: its output lines are in the matrix.
  static_assert(kPrefetchElements >= kBlockCols);
};

// The band a store kind moves: Layout's, but 64 rows of bytes under streaming stores (one line of
// each output row a band, not two). On a 2-core Xeon 8192 x 8192 uint8 went from 43-45% of the
// copy to 55-58% with one thread, from 42-45% to 53-70% with two, and sides of 4096 and 16384
// gained as much. On the 16-core host of an H200: 38-42% to 57-77% with one thread, 38-39% to
// 65-70% with two, 37-43% to 50-57% with four; at 8 and 16 threads, where memory is the limit, the
// two stay within that host's noise (8191 x 8193, whose code is the same in both builds, moved 3
// points between them). With plain stores 64 rows lost (46% to 35-37%): they keep 128
// (cpu_bands.csv in docs/results/cpu-dev and docs/results/h200).
template <class T, bool kStreaming>
constexpr int kBandRowsFor = sizeof(T) == 1 && kStreaming ? 64 : Layout<T>::kBandRows;

template <class T>
void transpose_naive(const T* in, T* out, Index rows, Index cols) {
  // LESSON: begin share the input rows out among the threads; out[c * rows + r] = in[r * cols + c]
#pragma omp parallel for schedule(static)
  for (Index r = 0; r < rows; ++r)
    for (Index c = 0; c < cols; ++c) out[c * rows + r] = in[r * cols + c];
  // LESSON: end
}

#if defined(__GNUC__)
#define LAB_VECTOR_BLOCKS 1
// GCC and Clang: vector types and shuffles that compile to any CPU's vector instructions (AVX,
// SSE, NEON). The shuffle indices pick from a's lanes (0..lanes-1), then b's (lanes..).
// A 4-byte element is a float lane (any 4-byte type: a transpose moves bits), 1-, 2- and 8-byte
// elements are unsigned lanes of their size, a 16-byte element two 64-bit lanes.
template <int kBytes>
struct LaneOf;
template <>
struct LaneOf<1> {
  using Type = std::uint8_t;
  using Index = std::int8_t;
};
template <>
struct LaneOf<2> {
  using Type = std::uint16_t;
  using Index = std::int16_t;
};
template <>
struct LaneOf<4> {
  using Type = float;
  using Index = std::int32_t;
};
template <>
struct LaneOf<8> {
  using Type = std::uint64_t;
  using Index = std::int64_t;
};

// Vector<T>::Row: one vector register of T's lanes, a row of a block.
template <class T>
struct Vector {
  using Lane = typename LaneOf<Layout<T>::kLaneBytes>::Type;
  typedef Lane Row __attribute__((vector_size(kVectorBytes)));
  typedef typename LaneOf<Layout<T>::kLaneBytes>::Index Indices
      __attribute__((vector_size(kVectorBytes)));
};
#if defined(__clang__) || __GNUC__ >= 12
#define LAB_SHUFFLE(Indices, a, b, ...) __builtin_shufflevector(a, b, __VA_ARGS__)
#else
#define LAB_SHUFFLE(Indices, a, b, ...) __builtin_shuffle(a, b, Indices{__VA_ARGS__})
#endif

// Rows a and b of a block swap their off-diagonal sub-blocks S lanes wide: a gives b the lanes
// whose index has bit S set and takes b's lanes whose index has it clear.
template <class T, int S, int... J>
inline void swap_sub_blocks(typename Vector<T>::Row& a, typename Vector<T>::Row& b,
                            std::integer_sequence<int, J...>) {
  using Row = typename Vector<T>::Row;
  constexpr int kN = Layout<T>::kVectorLanes;
  const Row new_a = LAB_SHUFFLE(typename Vector<T>::Indices, a, b, ((J & S) ? kN + J - S : J)...);
  const Row new_b = LAB_SHUFFLE(typename Vector<T>::Indices, a, b, ((J & S) ? kN + J : J + S)...);
  a = new_a;
  b = new_b;
}

// One round: rows s = S / (lanes per element) apart swap their S-lane sub-blocks; then the next
// round, twice as wide, up to half a vector.
template <class T, int S>
inline void swap_rounds(typename Vector<T>::Row (&v)[Layout<T>::kElements]) {
  using L = Layout<T>;
  if constexpr (S < L::kVectorLanes) {
    constexpr int s = S / L::kLanesPerElement;
#pragma GCC unroll 64
    for (int i = 0; i < L::kElements; ++i)
      if (!(i & s))
        swap_sub_blocks<T, S>(v[i], v[i + s], std::make_integer_sequence<int, L::kVectorLanes>{});
    swap_rounds<T, 2 * S>(v);
  }
}

// A block of kElements x kElements elements in registers, transposed in place: swapping the
// 1x1, then 2x2, 4x4, ... off-diagonal sub-blocks (for floats with AVX-512: 1, 2, 4, 8). One
// vector load and one vector store per row and a few shuffles, where the plain loop moves every
// element on its own. A 16-byte element starts at 2-lane sub-blocks: it never comes apart.
template <class T>
inline void transpose_lanes(typename Vector<T>::Row (&v)[Layout<T>::kElements]) {
  swap_rounds<T, Layout<T>::kLanesPerElement>(v);
}
#endif

// Where lines are asked for ahead (common/prefetch.hpp: a hint, no fault, no wait): L2, not L1,
// whose set the 32 rows already crowd. Asked for owned by this core (prefetchw), an output line is
// ready to be written: a plain store to a line that is not in cache waits for that line, one line
// after another, in store order; asked for ahead, the lines come together.
constexpr int kPrefetchLocality = 2;

#if defined(LAB_VECTOR_BLOCKS)
// How a band writes its output rows. kStreaming: every output row's piece starts on a line (rows
// a multiple of a line), so its lines stream whole. kOutputBands (8191 x 8193): rows start
// anywhere in a line, so a band's rectangle of rows would share a line with the band above and
// the band below in every output row; those halves, written with plain stores by two threads,
// cost a read for ownership and a second write of the line each (it ran slower than plain stores
// throughout). Bands of output rows instead (transpose_output_band), whole lines in one piece.
enum class Stores { kPlain, kStreaming, kOutputBands };

// One vector of an output row. Streaming needs dst aligned to the vector. The streaming store
// moves the vector's bytes as floats, whatever the element: a transpose moves bits.
template <class T, bool kStreaming>
inline void store_row(T* dst, const typename Vector<T>::Row& v) {
  if constexpr (kStreaming && lab::kStreamFloats > 1) {
    for (int k = 0; k < kLanes; k += lab::kStreamFloats)
      lab::stream_vector(reinterpret_cast<float*>(dst) + k, reinterpret_cast<const float*>(&v) + k);
  } else {
    std::memcpy(dst, &v, sizeof v);
  }
}

// kBlocks blocks of kElements input rows x kElements columns (in, row stride cols) -> kElements
// output rows x kBlocks * kElements (out, row stride rows): every output row is written as whole
// vectors, one after the other (whole lines when the band is whole). With kPrefetch, each input
// row's line kPrefetchElements ahead is requested too; the caller keeps that inside the row.
template <class T, int kBlocks, bool kStreaming, bool kPrefetch>
inline void transpose_band_block(const T* in, Index cols, T* out, Index rows) {
  using L = Layout<T>;
  using Row = typename Vector<T>::Row;
  Row block[kBlocks][L::kElements];
#pragma GCC unroll 8
  for (int b = 0; b < kBlocks; ++b) {
#pragma GCC unroll 64
    for (int i = 0; i < L::kElements; ++i) {
      const T* row = in + (b * L::kElements + i) * cols;
      std::memcpy(&block[b][i], row, sizeof(Row));
      if constexpr (kPrefetch)
        lab::prefetch_line<false, kPrefetchLocality>(row + L::kPrefetchElements);
    }
    transpose_lanes<T>(block[b]);
  }
#pragma GCC unroll 64
  for (int j = 0; j < L::kElements; ++j)
#pragma GCC unroll 8
    for (int b = 0; b < kBlocks; ++b)
      store_row<T, kStreaming>(out + j * rows + b * L::kElements, block[b][j]);
}

// 1- and 2-byte elements. A block as tall as the vector is wide (64 rows of 64 bytes) is twice
// what the 32 AVX-512 registers hold, and byte and 16-bit shuffles across a whole vector are
// dearer than 32-bit ones on some cores. So a block is 16 bytes of each output row: 16 input
// rows of bytes, or 8 of 2-byte elements, one vector each. It moves with the float shuffles
// above and one byte shuffle that stays inside each 16-byte lane (x86 pshufb). Reading a byte's
// place as bits: it starts at register r (its input row), byte c (its column) and must end at
// byte r of a 16-byte lane. Two rounds swap the row's low bits with the 32-bit lane bits, the
// byte shuffle moves the bits that are left inside each 32-bit lane (uint8: a 4 x 4 byte
// transpose in each lane; 2-byte: the same with 2-byte elements), and one or two more rounds
// swap the row's high bits in. Each 16-byte lane is then 16 bytes of one output row.
template <int kBytes>
constexpr int in_lane_source(int j) {
  const int lane = j & ~15, q = j & 15;  // q: the byte's place in its 16-byte lane
  if constexpr (kBytes == 1) {
    return lane + ((q & 3) << 2 | q >> 2);  // 4 x 4 bytes: bits [r1 r0 c1 c0] -> [c1 c0 r1 r0]
  } else {
    const int w = q >> 1;  // 8 2-byte elements: bits [r1 r0 c0] -> [c0 r1 r0]
    return lane + (((w & 3) << 1 | w >> 2) << 1) + (q & 1);
  }
}

using FloatRow = Vector<float>::Row;
using ByteRow = Vector<std::uint8_t>::Row;

template <int kBytes, int... J>
inline FloatRow shuffle_in_lanes(const FloatRow& v, std::integer_sequence<int, J...>) {
  const ByteRow b = (ByteRow)v;
  return (FloatRow)LAB_SHUFFLE(Vector<std::uint8_t>::Indices, b, b, in_lane_source<kBytes>(J)...);
}

// Rows kDistance apart swap their float lanes whose index has bit S set (swap_sub_blocks).
template <int kDistance, int S, int kRows>
inline void swap_rows_apart(FloatRow (&v)[kRows]) {
#pragma GCC unroll 16
  for (int i = 0; i < kRows; ++i)
    if (!(i & kDistance))
      swap_sub_blocks<float, S>(v[i], v[i + kDistance], std::make_integer_sequence<int, kLanes>{});
}

template <class T>
inline void transpose_small_block(FloatRow (&v)[Layout<T>::kBlockRows]) {
  constexpr auto bytes = std::make_integer_sequence<int, kVectorBytes>{};
  swap_rows_apart<1, 1>(v);
  swap_rows_apart<2, 2>(v);
#pragma GCC unroll 16
  for (auto& row : v) row = shuffle_in_lanes<sizeof(T)>(row, bytes);
  if constexpr (sizeof(T) == 1) {
    swap_rows_apart<4, 1>(v);
    swap_rows_apart<8, 2>(v);
  } else {
    swap_rows_apart<4, 2>(v);
  }
}

// Which output row (column of the block) register g's 16-byte lane l then holds.
template <class T>
constexpr int small_block_column(int g, int l) {
  if constexpr (sizeof(T) == 1) return l * 16 + (g & 3) * 4 + (g >> 2);
  return l * 8 + (g >> 1 & 1) * 4 + (g & 1) * 2 + (g >> 2);
}

// One block (kBlockRows input rows at in, row stride cols, one vector each) transposed into
// elements [first, first + kBlockRows) of each of the kBlockCols output rows in stage.
template <class T, bool kPrefetch, int kStageRows>
inline void stage_block(const T* in, Index cols, T (&stage)[Layout<T>::kBlockCols][kStageRows],
                        int first) {
  using L = Layout<T>;
  using Row = std::conditional_t<L::kSmall, FloatRow, typename Vector<T>::Row>;
  Row v[L::kBlockRows];
#pragma GCC unroll 16
  for (int i = 0; i < L::kBlockRows; ++i) {
    std::memcpy(&v[i], in + i * cols, sizeof(Row));
    if constexpr (kPrefetch)
      lab::prefetch_line<false, kPrefetchLocality>(in + i * cols + L::kPrefetchElements);
  }
  if constexpr (L::kSmall) {
    transpose_small_block<T>(v);
#pragma GCC unroll 16
    for (int g = 0; g < L::kBlockRows; ++g)
#pragma GCC unroll 4
      for (int l = 0; l < kVectorBytes / 16; ++l)
        std::memcpy(&stage[small_block_column<T>(g, l)][first],
                    reinterpret_cast<const unsigned char*>(&v[g]) + l * 16, 16);
  } else {
    transpose_lanes<T>(v);
#pragma GCC unroll 16
    for (int j = 0; j < L::kBlockCols; ++j) std::memcpy(&stage[j][first], &v[j], sizeof(Row));
  }
}

// Output rows [c0, c1) of a full stage (kRowBytes of each) leave as whole vectors, as
// transpose_band_block writes them (whole lines when the band is whole).
template <class T, bool kStreaming, int kRowBytes, int kStageRows>
inline void write_stage_rows(const T (&stage)[Layout<T>::kBlockCols][kStageRows], T* out,
                             Index rows, int c0, int c1) {
  using L = Layout<T>;
  static_assert(kRowBytes % kVectorBytes == 0);
#pragma GCC unroll 1
  for (int c = c0; c < c1; ++c) {
#pragma GCC unroll 8
    for (int k = 0; k < kRowBytes / kVectorBytes; ++k) {
      typename Vector<T>::Row x;
      std::memcpy(&x, &stage[c][k * L::kElements], sizeof x);
      store_row<T, kStreaming>(out + c * rows + k * L::kElements, x);
    }
  }
}

// A whole band of 1- or 2-byte elements, every step of it: each step's blocks (kBandRows * size
// bytes of each output row) are gathered by output row on the stack (in L1), and each output row
// leaves as whole vectors. Two stages: while one step's blocks fill one, the step before leaves
// the other, a few output rows after each block. With one stage, a step would first only read
// (its blocks) and then only write (its rows), and memory would see reads and writes take turns
// instead of overlapping, as the float blocks overlap them.
// With plain stores, each block also asks for the lines of the output rows it fills (prefetchw),
// a step before they are written: each output line is a read for ownership that would otherwise
// wait on its own, when it is written, behind the others.
template <class T, bool kStreaming>
void transpose_band_small(const T* in, Index cols, T* out, Index rows, int whole_cols,
                          int prefetch_end) {
  using L = Layout<T>;
  constexpr int kBandRows = kBandRowsFor<T, kStreaming>;
  constexpr int kBlocks = kBandRows / L::kBlockRows;
  constexpr int kRowBytes = kBlocks * 16;                 // of each output row, per step
  constexpr int kRowsPerBlock = L::kBlockCols / kBlocks;  // output rows leaving per block
  static_assert(L::kBlockCols % kBlocks == 0);
  alignas(kLineBytes) T stage[2][L::kBlockCols][kBandRows];
  for (int c = 0, step = 0; c <= whole_cols; c += L::kBlockCols, ++step) {
    auto& fill = stage[step & 1];
    const auto& filled = stage[(step - 1) & 1];
    const bool prefetch = c + L::kBlockCols <= prefetch_end;
    // One block at a time: a band's eight blocks unrolled are many KiB of code.
#pragma GCC unroll 1
    for (int b = 0; b < kBlocks; ++b) {
      const int first = b * kRowsPerBlock, last = first + kRowsPerBlock;
      if (c < whole_cols) {
        if constexpr (!kStreaming) {
          // Every line the piece touches: where rows are not a multiple of a line, its kRowBytes
          // start anywhere in a line and reach into one line more.
          for (int j = first; j < last; ++j)
            lab::prefetch_lines<true, kPrefetchLocality>(out + (c + j) * rows, kRowBytes);
        }
        const T* block_in = in + b * L::kBlockRows * cols + c;
        if (prefetch)
          stage_block<T, true>(block_in, cols, fill, b * L::kBlockRows);
        else
          stage_block<T, false>(block_in, cols, fill, b * L::kBlockRows);
      }
      if (c > 0)
        write_stage_rows<T, kStreaming, kRowBytes>(filled, out + (c - L::kBlockCols) * rows, rows,
                                                   first, last);
    }
  }
}

// One small block (the bottom edge of the matrix): its 16 bytes of each output row with plain
// stores, since a streaming store must never leave a line partly written.
template <class T>
inline void transpose_small_edge_block(const T* in, Index cols, T* out, Index rows) {
  using L = Layout<T>;
  alignas(kLineBytes) T stage[L::kBlockCols][L::kBlockRows];
  stage_block<T, false>(in, cols, stage, 0);
#pragma GCC unroll 64
  for (int c = 0; c < L::kBlockCols; ++c) std::memcpy(out + c * rows, stage[c], sizeof stage[c]);
}

// One piece of work: input rows r0.. and columns c0.., clipped at the matrix edge.
struct Tile {
  Index r0, c0;
  int r_count, c_count;
};

template <class T, bool kStreaming>
void transpose_tile(const T* in, T* out, Index rows, Index cols, const Tile& tile) {
  using L = Layout<T>;
  const T* tile_in = in + tile.r0 * cols + tile.c0;
  T* tile_out = out + tile.c0 * rows + tile.r0;
  const int whole_cols = tile.c_count / L::kBlockCols * L::kBlockCols;
  int r = 0;
  constexpr int kBand = kBandRowsFor<T, kStreaming>;
  constexpr int kBlocksPerBand = kBand / L::kBlockRows;  // blocks stacked in a band
  if (tile.r_count == kBand) {
    // Fetch ahead while the line ahead is still in the row; the last few steps go without.
    const Index ahead_in_row = cols - tile.c0 - L::kPrefetchElements;
    const int prefetch_end = static_cast<int>(std::min<Index>(tile.c_count, ahead_in_row));
    if constexpr (L::kSmall) {
      transpose_band_small<T, kStreaming>(tile_in, cols, tile_out, rows, whole_cols, prefetch_end);
    } else {
      int c = 0;
      for (; c + L::kBlockCols <= prefetch_end; c += L::kBlockCols)
        transpose_band_block<T, kBlocksPerBand, kStreaming, true>(tile_in + c, cols,
                                                                  tile_out + c * rows, rows);
      for (; c < whole_cols; c += L::kBlockCols)
        transpose_band_block<T, kBlocksPerBand, kStreaming, false>(tile_in + c, cols,
                                                                   tile_out + c * rows, rows);
    }
    r = kBand;
  } else {
    // A band cut short by the bottom edge: its whole blocks one at a time.
    for (; r + L::kBlockRows <= tile.r_count; r += L::kBlockRows)
      for (int c = 0; c < whole_cols; c += L::kBlockCols) {
        const T* block_in = tile_in + r * cols + c;
        T* block_out = tile_out + c * rows + r;
        if constexpr (L::kSmall)
          transpose_small_edge_block<T>(block_in, cols, block_out, rows);
        else
          transpose_band_block<T, 1, kStreaming, false>(block_in, cols, block_out, rows);
      }
  }
  // What is left, one by one: columns past the last whole vector, and the rows below the last
  // whole block.
  for (int rr = 0; rr < tile.r_count; ++rr)
    for (int c = rr < r ? whole_cols : 0; c < tile.c_count; ++c)
      tile_out[c * rows + rr] = tile_in[rr * cols + c];
}
// kOutputBands (above): rows not a multiple of a line, so output rows start anywhere in a line.
// Each band is kRows output rows (128 bytes of each input row), all of them along their whole
// length: 128 x rows bytes of the output in one piece, which starts and ends on a line, so no line
// has two bands. Step by step, kChunk input rows move into a stage in L1 (a block transpose per
// vector of kBlockRows rows), and each output row leaves as the whole lines it then holds,
// streamed; the elements short of the next line boundary (fewer than a line's) carry over to the
// next step, in front of its elements. Where an output row ends, its last line is finished with
// the next row's first elements (its head, kept from the first step). The input is walked down
// its rows, 128 bytes of each, fetched kPrefetchChunks steps ahead: one stream a thread.
template <class T>
struct OutputBands {
  using L = Layout<T>;
  static constexpr int kLine = kLineBytes / static_cast<int>(sizeof(T));  // elements a line
  static constexpr int kVectors = 128 / kVectorBytes;     // 128 bytes of each input row ...
  static constexpr int kRows = kVectors * L::kBlockCols;  // ... the band's output rows
  // Elements of each output row a step: 512 bytes (128 elements for 1- and 2-byte elements,
  // whose band has more rows), the stage 5 to 24 KiB. Against 256 bytes, 8191 x 8193 float64 went
  // from 45% to 52% of the copy, float32 from 52% to 56% (16-core host of an H200,
  // output_bands.csv). 2-byte elements at 256 bytes rather than 128 (a 20 KiB stage): 8191 x 8193
  // float16 from 47-48 to 57-60% (2-core Xeon, 1 and 2 threads); uint8 at 256 bytes (40 KiB)
  // gained nothing there, nor 8- and 16-byte elements at 128 elements.
  static constexpr int kChunk =
      std::max<int>(L::kBlockRows, L::kSmall ? 128 : 512 / static_cast<int>(sizeof(T)));
  static constexpr int kPrefetchChunks = 2;
  static constexpr Index kRowBytes = kRows * static_cast<Index>(sizeof(T));  // of each input row
  static_assert(kChunk % L::kBlockRows == 0 && kChunk % kLine == 0);
};

// Whether output bands can take the matrix: output rows of a line or more, so that a line holds
// pieces of two output rows at most, and a whole band (128 bytes of each input row).
template <class T>
bool output_bands_fit(Index rows, Index cols) {
  return rows >= OutputBands<T>::kLine && cols >= OutputBands<T>::kRows;
}

// Output rows [j0, j0 + kRows): input columns j0.., every input row.
template <class T>
void transpose_output_band(const T* in, T* out, Index rows, Index cols, Index j0) {
  using L = Layout<T>;
  using B = OutputBands<T>;
  constexpr int kLine = B::kLine, kChunk = B::kChunk, kStage = kLine + kChunk;
  // stage[v][j][kLine + k]: element k of this step of output row v * kBlockCols + j; the carry
  // sits just before kLine.
  alignas(kLineBytes) T stage[B::kVectors][L::kBlockCols][kStage];
  T heads[B::kRows][kLine];  // each row's elements before its first line boundary
  int head[B::kRows];
  Index done[B::kRows];  // elements of each output row written (the head: by the row before)
  for (int jj = 0; jj < B::kRows; ++jj) {
    const auto start = reinterpret_cast<std::uintptr_t>(out + (j0 + jj) * rows);
    head[jj] = static_cast<int>((0 - start) % kLineBytes / sizeof(T));
    done[jj] = head[jj];
  }
  for (Index c0 = 0; c0 < rows; c0 += kChunk) {
    const int n = static_cast<int>(std::min<Index>(kChunk, rows - c0));
    const int whole = n / L::kBlockRows * L::kBlockRows;
    const Index ahead = c0 + B::kPrefetchChunks * kChunk;
    const Index ahead_end = std::min(rows, ahead + kChunk);
    // Block by block down the step, each block's rows read across the whole band (all kVectors
    // vectors of a row one after the other, while its 2 or 3 lines are in L1), and the rows
    // kPrefetchChunks steps below asked for a block at a time. Asked for all at once at the top
    // of the step, the 3 lines of every row of a step stalled the core until its fill buffers,
    // which the streaming stores need too, drained; walked vector by vector, each row's lines were
    // read once per vector, from L2 (rows 8193 bytes apart fall into the same L1 sets). With the
    // 2-byte steps above, on the 16-core host of an H200 at 8191 x 8193 (output_band_order.csv):
    // uint8 from 44-48% of the copy to 49-50%, float16 40-46% to 52-58%, float64 47% to 53%.
#pragma GCC unroll 1
    for (int rb = 0; rb < whole; rb += L::kBlockRows) {
      for (Index r = ahead + rb; r < std::min(ahead_end, ahead + rb + L::kBlockRows); ++r)
        lab::prefetch_lines<false, kPrefetchLocality>(in + r * cols + j0, B::kRowBytes);
#pragma GCC unroll 1
      for (int v = 0; v < B::kVectors; ++v)
        stage_block<T, false>(in + (c0 + rb) * cols + j0 + v * L::kBlockCols, cols, stage[v],
                              kLine + rb);
    }
    for (int v = 0; v < B::kVectors; ++v) {
      for (int r = whole; r < n; ++r)  // the rows below the last whole block
        for (int j = 0; j < L::kBlockCols; ++j)
          stage[v][j][kLine + r] = in[(c0 + r) * cols + j0 + v * L::kBlockCols + j];
    }
    if (c0 == 0)  // every row's head, before any row's last line needs the next row's
      for (int jj = 0; jj < B::kRows; ++jj)
        std::memcpy(heads[jj], stage[jj / L::kBlockCols][jj % L::kBlockCols] + kLine,
                    head[jj] * sizeof(T));
    const bool last = c0 + n == rows;
    for (int jj = 0; jj < B::kRows; ++jj) {
      T* staged = stage[jj / L::kBlockCols][jj % L::kBlockCols];
      T* row = out + (j0 + jj) * rows;
      T* from = staged + kLine + (done[jj] - c0);  // element done[jj] of the row (or the carry)
      const Index lines_end = done[jj] + (c0 + n - done[jj]) / kLine * kLine;
      lab::stream_lines(row + done[jj], from, (lines_end - done[jj]) * sizeof(T));
      from += lines_end - done[jj];
      done[jj] = lines_end;
      const int rest = static_cast<int>(c0 + n - done[jj]);  // under a line
      if (!last) {  // the carry, to just before the next step's elements
        std::memmove(staged + kLine - rest, from, rest * sizeof(T));
        continue;
      }
      if (rest == 0) continue;            // the band's last row always: the band ends on a line
      alignas(kLineBytes) T line[kLine];  // this row's last elements, then the next row's head
      std::memcpy(line, from, rest * sizeof(T));
      std::memcpy(line + rest, heads[jj + 1], (kLine - rest) * sizeof(T));
      lab::stream_lines(row + done[jj], line, sizeof line);
    }
  }
}

// Output rows [first, cols), past the last whole band (they start on a line), element by
// element with plain stores, the threads sharing out the input rows.
template <class T>
void transpose_output_rest(const T* in, T* out, Index rows, Index cols, Index first) {
#pragma omp for schedule(static)
  for (Index i = 0; i < rows; ++i)
    for (Index j = first; j < cols; ++j) out[j * rows + i] = in[i * cols + j];
}

#endif

// Without GCC or Clang vector types: the same bands, round robin, chunk by chunk, moved one
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
      // LESSON: begin this band's piece: column by column, each column down the band's rows
      for (Index c = chunk * kChunkCols; c < c_end; ++c)
        for (Index r = band * kBandRows; r < r_end; ++r) out[c * rows + r] = in[r * cols + c];
      // LESSON: end
    }
  }
}

#if defined(LAB_VECTOR_BLOCKS)
// Whether output rows start anywhere in a line (rows not a multiple of a line's elements), so
// that a band's piece of an output row shares its first and last line with the bands beside it.
template <class T>
bool rows_share_lines(Index rows) {
  return rows * sizeof(T) % kLineBytes != 0;
}

// Streaming stores, where the store plan chose them, need the output 64-byte aligned (the harness
// allocates it so); whole pieces stream when every output row starts on a line, else output bands
// where they fit.
template <class T>
Stores stores_for(Index rows, Index cols, const void* out, bool streaming) {
  if (reinterpret_cast<std::uintptr_t>(out) % kLineBytes != 0 || !streaming) return Stores::kPlain;
  if (!rows_share_lines<T>(rows)) return Stores::kStreaming;
  return output_bands_fit<T>(rows, cols) ? Stores::kOutputBands : Stores::kPlain;
}

// What the store plan knows this transpose by.
std::string plan_work(Index rows, Index cols, std::size_t elem_bytes) {
  return std::to_string(rows) + " x " + std::to_string(cols) + ", " + std::to_string(elem_bytes) +
         "-byte";
}

template <class T>
bool streams_stores(Index rows, Index cols, const void* out) {
  return stores_for<T>(rows, cols, out, lab::planned_streaming(plan_work(rows, cols, sizeof(T)))) !=
         Stores::kPlain;
}

template <class T>
void transpose_bands_simd(const T* in, T* out, Index rows, Index cols) {
  using L = Layout<T>;
  const Index chunks = (cols + L::kChunkCols - 1) / L::kChunkCols;
  const Stores stores = stores_for<T>(rows, cols, out, lab::use_streaming_stores());
  if (stores == Stores::kOutputBands) {
    constexpr Index kRows = OutputBands<T>::kRows;
    const Index output_bands = cols / kRows;
#pragma omp parallel
    {
      // Round robin: the threads working at the same time read neighbouring pieces of the same
      // input rows.
#pragma omp for schedule(static, 1) nowait
      for (Index band = 0; band < output_bands; ++band)
        transpose_output_band(in, out, rows, cols, band * kRows);
      transpose_output_rest(in, out, rows, cols, output_bands * kRows);
      lab::stream_fence();
    }
    return;
  }
  const Index band_rows =
      stores == Stores::kStreaming ? kBandRowsFor<T, true> : kBandRowsFor<T, false>;
  const Index bands = (rows + band_rows - 1) / band_rows;
  const auto move = [&](Index chunk, Index band) {
    const Tile tile{band * band_rows, chunk * L::kChunkCols,
                    static_cast<int>(std::min<Index>(band_rows, rows - band * band_rows)),
                    static_cast<int>(std::min<Index>(L::kChunkCols, cols - chunk * L::kChunkCols))};
    if (stores == Stores::kStreaming)
      transpose_tile<T, true>(in, out, rows, cols, tile);
    else
      transpose_tile<T, false>(in, out, rows, cols, tile);
  };
  // Plain stores on rows that are not a multiple of a line (8191 x 8193).
  const bool shared_lines = stores == Stores::kPlain && rows_share_lines<T>(rows);
#pragma omp parallel
  {
    if (shared_lines) {
      // Round robin would put neighbouring bands on two threads writing the same output rows at
      // the same moment, and each shared line would move between their cores on every write. So
      // each thread takes consecutive bands: only the bands at the ends of its share meet another
      // thread's (16 threads, plain stores, median of three runs: 10% less time at 8191 x 8193
      // uint8, 20 to 31% at 4097 x 4099, 15% more at 8191 x 8193 float32; h100/shared_lines.csv).
#pragma omp for schedule(static)
      for (Index band = 0; band < bands; ++band)
        for (Index chunk = 0; chunk < chunks; ++chunk) move(chunk, band);
    } else {
      // Round robin, chunk by chunk: band b goes to thread b % threads, so the threads working at
      // the same time write neighbouring 128 B pieces of the same output rows, and memory sees
      // long runs instead of lines scattered a power of two apart (CUDA.v6 makes the same move).
#pragma omp for collapse(2) schedule(static, 1)
      for (Index chunk = 0; chunk < chunks; ++chunk)
        for (Index band = 0; band < bands; ++band) move(chunk, band);
    }
    lab::stream_fence();
  }
}
#endif

}  // namespace

// Every element size takes the vector blocks; without GCC or Clang vector types, the scalar bands.
template <class T>
void transpose_blocked(const T* in, T* out, Index rows, Index cols) {
#if defined(LAB_VECTOR_BLOCKS)
  lab::run_with_planned_stores(plan_work(rows, cols, sizeof(T)),
                               [&] { transpose_bands_simd(in, out, rows, cols); });
#else
  transpose_bands_scalar(in, out, rows, cols);
#endif
}

// Which stores transpose_blocked uses for this matrix (the launch column says it).
bool blocked_streams(Index rows, Index cols, std::size_t elem_bytes, const void* out) {
#if defined(LAB_VECTOR_BLOCKS)
  switch (elem_bytes) {
    case 1:
      return streams_stores<lab::Bytes1>(rows, cols, out);
    case 2:
      return streams_stores<lab::Bytes2>(rows, cols, out);
    case 4:
      return streams_stores<lab::Bytes4>(rows, cols, out);
    case 8:
      return streams_stores<lab::Bytes8>(rows, cols, out);
    default:
      return streams_stores<lab::Bytes16>(rows, cols, out);
  }
#else
  (void)rows, (void)cols, (void)elem_bytes, (void)out;
  return false;  // the scalar bands store plainly
#endif
}

const char* const kStepSummary = "OpenMP on the CPU: naive row loop vs cache-blocked tiles";
const lab::CpuVariant kCpuVariants[] = {
    LAB_CPU_VARIANT("naive", "omp parallel for over rows", transpose_naive),
    LAB_CPU_VARIANT_STORES("blocked", "omp bands of 32 rows, SIMD, prefetch", transpose_blocked,
                           blocked_streams),
};
const int kCpuVariantCount = sizeof kCpuVariants / sizeof kCpuVariants[0];
