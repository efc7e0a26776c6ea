// PERMUTE.omp: any permutation of a tensor's axes on the CPU, with OpenMP.
// The problem is fused first (common/permute.hpp: axes of extent 1 dropped, neighbours that stay
// neighbours merged), so a (64, 3, 224, 224) tensor to NHWC is a batch of 64 transposes of
// 3 x 50176. After fusion two axes decide the memory traffic: a, the input's innermost axis
// (contiguous in the input), and b, the input axis that is innermost in the output (contiguous in
// the output).
// - b == a: the innermost axis stays innermost, and each output row is one contiguous run of the
//   input, copied whole (a rank-1 problem is one plain copy), its whole lines with streaming stores
//   where the store plan finds them faster: a plain store reads each output line first.
// - b != a: the matrix steps' blocking, between those two axes: a tile of kTile x kTile elements
//   of (b, a) is read along a (whole lines of the input) and written along b (whole lines of the
//   output), small enough that both stay in L1 while it moves. Every other axis is a batch index.
//   The threads share out the (batch, tile of b, tile of a) triples, the tiles of a innermost, so
//   the threads running at the same time read neighbouring lines of the same input rows.
//   Elements of up to 4 bytes move in blocks transposed in vector registers (transpose_block):
//   a 1- or 2-byte element moved on its own costs a load and a store for one or two bytes.
//   Where the store plan finds it faster, the tile's output lines are written with streaming
//   stores (write_tile_streamed): a plain store would first read each line from memory only to
//   overwrite it. Where the input rows lie a multiple of 4 KiB apart, and so share cache sets
//   (a 512^3 reversal), a tile is read into a buffer first (move_tile_buffered), each row's lines
//   asked for some rows ahead.
// - b != a, and the innermost axes of the input, together, the innermost of the output (a batch of
//   17 x 19 planes of 1- or 2-byte elements): the small planes, units contiguous in both, move in
//   groups, transposed twice in registers through a buffer (moved_units). A unit is a few lines,
//   too short a run for the hardware prefetcher: each group's lines are asked for a group ahead.
// - b != a, and a or b short (16 elements, 96 bytes): tiles of runs (transpose_runs_tiles). The
//   axes just outside a in the input, and just outside b in the output, join the tile, so that it
//   reads and writes runs of whole lines rather than pieces of them.
#include <algorithm>
#include <cstdint>
#include <cstring>
#include <map>
#include <string>
#include <vector>

#include <omp.h>

#include "../common/permute_step.hpp"
#include "../common/prefetch.hpp"
#include "../common/streaming_copy.hpp"

using lab::Index;

namespace {

// Elements along each side of a tile: about 16 KiB of input, and the same of output, in L1.
template <class T>
constexpr Index kTile = sizeof(T) == 1   ? 128
                        : sizeof(T) <= 4 ? 64
                                         : 32;
template <class T>
constexpr Index kTileElements = kTile<T>* kTile<T>;
// A long run: four lines, what float32's square tile reads of each row. Where a tile's rows lie
// far apart in memory, each is read or written as a run of at least this many bytes, whatever the
// element: the buffered tile's sides (move_tile_buffered; runs of 128 bytes, a square L1 tile of
// bytes, made a 512^3 uint8 reversal slower: docs/results/h100/buffered_tiles.csv, though the tile
// of bytes, 64 KiB and as much again for its transposed rows, then moves through L2), and the
// side a split axis brings a tile of runs to (joining_part; the 6-d float16 case ran slower at a
// square tile's 128 bytes). A buffered tile of 256 bytes of each input row by 128 of each output
// row (32 KiB for uint8) ran the 512^3 uint8 reversal at 36-41% of the copy against 35-38% on a
// 16-core host, where the same code ran 5 points apart from one run to the next: not kept
// (buffered_shapes.csv in docs/results/h200).
constexpr Index kLongRunBytes = 256;
// The buffered tile cuts a 512^3 uint8 reversal's 512-byte runs in halves moved apart in time. A
// tile of whole runs (all of a by all of b, 256 KiB through L2) gained uint8 only 2-4 points of
// the copy and lost others up to 2.3 on a 16-core host (docs/results/h200/whole_runs.csv): not
// kept.
template <class T>
constexpr Index kBufferedTile = std::max<Index>(kTile<T>, kLongRunBytes / sizeof(T));
// A cache line: the unit memory is read and written in.
constexpr Index kLineBytes = lab::kCacheLineBytes;
// An L1 of 32 KiB in 8 ways repeats its sets every 4 KiB: input rows a multiple of this apart all
// fall into one set, and take the buffered tile (move_tile_buffered).
constexpr Index kCacheSetPeriodBytes = 4096;
// Rows move_tile_buffered asks for ahead of the one it reads: 8 to 24 ran alike (512^3 reversal, 16
// threads); as many lines as the L2 sets the rows share hold (4 lines a row of 256 bytes, 16 ways).
constexpr Index kPrefetchRows = 16;
// Elements each thread copies at a time when whole runs move (rank 1).
constexpr Index kCopyChunk = Index{1} << 16;

// The batch axes (every axis but a and b), in output order: a batch index decomposed into where
// its tile starts in the input and in the output.
struct Batch {
  int axes = 0;
  Index extent[lab::kMaxPermuteRank], in_stride[lab::kMaxPermuteRank],
      out_stride[lab::kMaxPermuteRank];
  Index count = 1;

  // Axis `axis` of p, after those already in the batch (inside them).
  void add(const lab::Permutation& p, int axis) {
    extent[axes] = p.shape[axis];
    in_stride[axes] = p.in_stride(axis);
    out_stride[axes] = p.out_stride(axis);
    count *= p.shape[axis];
    ++axes;
  }

  void offsets(Index batch, Index* in_offset, Index* out_offset) const {
    *in_offset = *out_offset = 0;
    for (int k = axes - 1; k >= 0; --k) {
      const Index i = batch % extent[k];
      batch /= extent[k];
      *in_offset += i * in_stride[k];
      *out_offset += i * out_stride[k];
    }
  }
};

// Every axis but those in `skip`, in output order.
Batch batch_axes(const lab::Permutation& p, int skip_a, int skip_b) {
  Batch batch;
  for (int k = 0; k < p.rank; ++k) {
    const int axis = p.perm[k];
    if (axis != skip_a && axis != skip_b) batch.add(p, axis);
  }
  return batch;
}

// The batch walked in order from index `first`: one division per axis at the start, then one add
// per step (and a carry every extent steps). A division per batch index cost more than copying a
// run of 64 bytes.
struct BatchWalk {
  const Batch& batch;
  Index index[lab::kMaxPermuteRank] = {};
  Index in = 0, out = 0;  // where the current batch index starts in the input and the output

  BatchWalk(const Batch& b, Index first) : batch(b) {
    for (int k = batch.axes - 1; k >= 0; --k) {
      index[k] = first % batch.extent[k];
      first /= batch.extent[k];
      in += index[k] * batch.in_stride[k];
      out += index[k] * batch.out_stride[k];
    }
  }
  void next() {
    for (int k = batch.axes - 1; k >= 0; --k) {
      in += batch.in_stride[k];
      out += batch.out_stride[k];
      if (++index[k] < batch.extent[k]) return;
      in -= batch.extent[k] * batch.in_stride[k];
      out -= batch.extent[k] * batch.out_stride[k];
      index[k] = 0;
    }
  }
};

// [begin, end) of count items: this thread's even share, as schedule(static) deals them out.
inline void thread_share(Index count, Index* begin, Index* end) {
  const Index threads = omp_get_num_threads(), thread = omp_get_thread_num();
  *begin = count * thread / threads;
  *end = count * (thread + 1) / threads;
}

// Inside a parallel region: this thread's even share of the (batch index, tile row, tile column)
// triples, columns fastest, walked in order, move(in, out, row, col) for each with the offsets of
// its batch index: no division per tile, which 17 x 19 planes felt.
template <class Move>
void for_each_tile(const Batch& batch, Index tile_rows, Index tile_cols, Move move) {
  Index begin, end;
  thread_share(batch.count * tile_rows * tile_cols, &begin, &end);
  BatchWalk walk(batch, begin / (tile_rows * tile_cols));
  Index row = begin / tile_cols % tile_rows, col = begin % tile_cols;
  for (Index tile = begin; tile < end; ++tile) {
    move(walk.in, walk.out, row, col);
    if (++col < tile_cols) continue;
    col = 0;
    if (++row < tile_rows) continue;
    row = 0;
    walk.next();
  }
}

template <class T>
void copy_runs(const T* in, T* out, const lab::Permutation& p) {
  const int a = p.rank - 1;
  const Index run = p.shape[a];
  if (p.rank == 1) {
    const Index chunks = (run + kCopyChunk - 1) / kCopyChunk;
#pragma omp parallel for schedule(static)
    for (Index c = 0; c < chunks; ++c)
      std::memcpy(out + c * kCopyChunk, in + c * kCopyChunk,
                  std::min(kCopyChunk, run - c * kCopyChunk) * sizeof(T));
    return;
  }
  // The runs in input order: each thread reads its share of the input straight through, and its
  // writes jump instead. A load that misses holds the thread up until its line comes, a store
  // does not (streamed, or its line read while the thread goes on). In output order the attention
  // swap's reads jumped 1 KiB (16 heads x 64 bytes) from run to run, each a miss of its own.
  Batch rows;
  for (int axis = 0; axis < a; ++axis) rows.add(p, axis);
  const bool streaming = lab::use_streaming_stores();
#pragma omp parallel
  {
    Index begin, end;
    thread_share(rows.count, &begin, &end);
    BatchWalk walk(rows, begin);
    for (Index r = begin; r < end; ++r, walk.next())
      lab::copy_lines(out + walk.out, in + walk.in, run * sizeof(T), streaming);
    if (streaming) lab::stream_fence();
  }
}

// Where a tile's elements come from: the input itself, or the buffer its input rows were read
// into (move_tile_buffered). Element (ib, ia) of the tile is at at[ib * stride_b + ia].
template <class T>
struct TileSource {
  const T* at;
  Index stride_b;
  const T* row(Index ib) const { return at + ib * stride_b; }
  T operator()(Index ib, Index ia) const { return row(ib)[ia]; }
};
// A square tile's buffer: its rows kSide apart, a constant the compiler unrolls the gather by.
template <class T, Index kSide>
struct SquareTileSource {
  const T* at;
  const T* row(Index ib) const { return at + ib * kSide; }
  T operator()(Index ib, Index ia) const { return row(ib)[ia]; }
};

#if defined(__SSE2__)
// Elements of up to 4 bytes move in blocks transposed in vector registers (x86: SSE2 everywhere,
// AVX2 where the build targets it); 8- and 16-byte elements, element by element, already move
// 8 or 16 bytes an access. A block is 16 / size input rows (16 of bytes, 8 of 2-byte elements)
// of one vector each; log2(rows) rounds of unpacks turn it into 16 bytes of each of the vector's
// elements' output rows. One load and a few shuffles per input row, one 16-byte store per output
// row, where the plain loop moves every element, one or two bytes, on its own.
constexpr Index kMaxBlockElementBytes = 4;
#if defined(__AVX2__)
using WideVector = __m256i;  // a block of 32 bytes of each input row
#else
using WideVector = __m128i;
#endif

// a, b = the low halves of a and b interleaved element by element, then the high halves, inside
// each 16-byte lane (punpckl/punpckh).
template <int kBytes, class V>
inline void interleave(V& a, V& b) {
  const V x = a;
#if defined(__AVX2__)
  if constexpr (sizeof(V) == 32) {
    a = kBytes == 1 ? _mm256_unpacklo_epi8(x, b)
                    : (kBytes == 2 ? _mm256_unpacklo_epi16 : _mm256_unpacklo_epi32)(x, b);
    b = kBytes == 1 ? _mm256_unpackhi_epi8(x, b)
                    : (kBytes == 2 ? _mm256_unpackhi_epi16 : _mm256_unpackhi_epi32)(x, b);
  } else  // a 16-byte block
#endif
  {
    a = kBytes == 1 ? _mm_unpacklo_epi8(x, b)
                    : (kBytes == 2 ? _mm_unpacklo_epi16 : _mm_unpacklo_epi32)(x, b);
    b = kBytes == 1 ? _mm_unpackhi_epi8(x, b)
                    : (kBytes == 2 ? _mm_unpackhi_epi16 : _mm_unpackhi_epi32)(x, b);
  }
}

// v[0..kRows) as kRows rows of kRows elements in each 16-byte lane, transposed in place, lane by
// lane. Read the place of an element of a lane as bits, its row's then its column's: interleaving
// row i with row i + kRows / 2 rotates those bits by one, so log2(kRows) rounds swap row and
// column. Register j then holds, in lane l, what column l * kRows + j of the rows held.
template <class T, class V>
inline void transpose_lanes(V (&v)[16 / sizeof(T)]) {
  constexpr int kRows = 16 / sizeof(T);
  for (int round = 1; round < kRows; round *= 2) {
    V next[kRows];
#pragma GCC unroll 16
    for (int i = 0; i < kRows / 2; ++i) {
      next[2 * i] = v[i];
      next[2 * i + 1] = v[i + kRows / 2];
      interleave<sizeof(T)>(next[2 * i], next[2 * i + 1]);
    }
    std::memcpy(v, next, sizeof v);
  }
}

// A block of kRows input rows (b) x sizeof(V) bytes of a (source rows ib.., elements ia..) into
// kRows elements of each of its output rows (out, rows out_stride apart): register j ends up
// holding, in lane l, output row l * kRows + j.
template <class T, class V, class Source>
inline void transpose_block(const Source& src, Index ib, Index ia, T* out, Index out_stride) {
  constexpr int kRows = 16 / sizeof(T), kLanes = sizeof(V) / 16;
  V v[kRows];
#pragma GCC unroll 16
  for (int i = 0; i < kRows; ++i) std::memcpy(&v[i], src.row(ib + i) + ia, sizeof(V));
  transpose_lanes<T>(v);
#pragma GCC unroll 16
  for (int j = 0; j < kRows; ++j)
#pragma GCC unroll 4
    for (int l = 0; l < kLanes; ++l)
      std::memcpy(out + (l * kRows + j) * out_stride, reinterpret_cast<const char*>(&v[j]) + 16 * l,
                  16);
}

// Output rows [ia0, a_count) of the tile, elements [0, b_count): the whole blocks of V wide (kCols
// elements of a, kRows of b) in registers; returns where the blocks ended along a.
template <class T, class V, class Source>
inline Index transpose_blocks(const Source& src, T* out, Index out_stride_a, Index b_count,
                              Index ia0, Index a_count) {
  constexpr Index kRows = 16 / sizeof(T), kCols = sizeof(V) / sizeof(T);
  const Index whole_b = b_count / kRows * kRows;
  Index ia = ia0;
  // Past the last whole block of b, one more block ends at b_count: it overlaps the one before and
  // writes some elements twice, the same values, where the rows' last elements one by one made a
  // 17 x 19 plane of bytes cost twice as much.
  const Index last_b = b_count - kRows;
  for (; ia + kCols <= a_count; ia += kCols) {
    for (Index ib = 0; ib < whole_b; ib += kRows)
      transpose_block<T, V>(src, ib, ia, out + ia * out_stride_a + ib, out_stride_a);
    if (whole_b < b_count)
      transpose_block<T, V>(src, last_b, ia, out + ia * out_stride_a + last_b, out_stride_a);
  }
  return ia;
}

// The tile's whole blocks, wide ones, then 16-byte ones for the rest of a; returns where they
// ended along a. Out of line, as write_tile_streamed: its unrolled blocks are kilobytes of code,
// which would otherwise weigh on the tiles too short along b for a block (3 channels).
template <class T, class Source>
[[gnu::noinline]] Index transpose_tile_blocks(const Source& src, T* out, Index out_stride_a,
                                              Index b_count, Index a_count) {
  Index ia = transpose_blocks<T, WideVector>(src, out, out_stride_a, b_count, 0, a_count);
  if constexpr (sizeof(WideVector) > 16)
    ia = transpose_blocks<T, __m128i>(src, out, out_stride_a, b_count, ia, a_count);
  // The last columns the same way: one 16-byte block that ends at a_count.
  if (ia < a_count)
    ia = transpose_blocks<T, __m128i>(src, out, out_stride_a, b_count, a_count - 16 / sizeof(T),
                                      a_count);
  return ia;
}
#endif

// out[ia * out_stride_a + ib] = src(ib, ia) for the whole tile: in register blocks where the
// element is small enough and the tile holds them (wide ones, then 16-byte ones for the rest of
// a), and element by element for the edges. A tile narrower than a 16-byte block along a (3
// channels) never calls the blocks: on the 2-core machine the call alone, which finds no block,
// made 256x224x224x3 uint8 to NCHW take twice as long.
template <class T, class Source>
inline void transpose_elements(const Source& src, T* out, Index out_stride_a, Index b_count,
                               Index a_count) {
  Index ia = 0;
#if defined(__SSE2__)
  if constexpr (Index{sizeof(T)} <= kMaxBlockElementBytes)
    if (b_count >= 16 / Index{sizeof(T)} && a_count * Index{sizeof(T)} >= 16)
      ia = transpose_tile_blocks(src, out, out_stride_a, b_count, a_count);
#endif
  for (; ia < a_count; ++ia)
    for (Index ib = 0; ib < b_count; ++ib) out[ia * out_stride_a + ib] = src(ib, ia);
}

// The tile's output rows, each written along b, with streaming stores: every whole 64-byte line
// of an output row is stored past the cache, so memory is not read for a line that is then
// overwritten whole; the ragged ends of a row, plain. Out of line: its buffer would otherwise
// weigh on every plain tile's call (tiles of 17 x 19 are many).
template <class T, class Source>
[[gnu::noinline]] void write_tile_streamed(const Source& src, T* out, Index out_stride_a,
                                           Index b_count, Index a_count) {
  // The whole tile transposed in L1 first, then streamed: a line gathered and at once loaded
  // again as vectors would wait on its own element stores.
  alignas(kLineBytes) T rows[kBufferedTile<T> * kBufferedTile<T>];
  transpose_elements(src, rows, b_count, b_count, a_count);
  for (Index ia = 0; ia < a_count; ++ia)
    lab::stream_lines(out + ia * out_stride_a, rows + ia * b_count, b_count * sizeof(T));
}

// The tile's output rows, each written along b; streamed where `streaming` and a row holds a
// whole line. Streaming takes a second pass over the tile, through a buffer in L1: cheap where the
// tile moves in register blocks, but for 1- and 2-byte elements moved one by one (a tile 3 wide
// along a) dearer than the memory reads it saves.
template <class T, class Source>
inline void write_tile(const Source& src, T* out, Index out_stride_a, Index b_count, Index a_count,
                       bool streaming) {
  const bool cheap_pass = sizeof(T) >= 4 || a_count * Index{sizeof(T)} >= 16;
  if (streaming && cheap_pass && b_count * Index{sizeof(T)} >= kLineBytes) {
    write_tile_streamed(src, out, out_stride_a, b_count, a_count);
    return;
  }
  transpose_elements(src, out, out_stride_a, b_count, a_count);
}

// A plane with a side of fewer than kShortSide elements (3 channels) moves in tiles that are
// that side whole by a stretch of the other, through loops in which that side is a constant K:
// the loop along the long side then moves vectors, K input rows interleaved into one output run
// (NCHW to NHWC) or one input run spread over K output rows (the way back). Left to the square
// tiles' loop, with K unknown, each element was a load and a store of its own.
constexpr int kShortSide = 8;

template <class T, int K>
void interleave_rows(const T* in, Index in_stride_b, T* out, Index a_count) {
  for (Index ia = 0; ia < a_count; ++ia)
    for (int ib = 0; ib < K; ++ib) out[ia * K + ib] = in[ib * in_stride_b + ia];
}

template <class T, int K>
void spread_run(const T* in, T* out, Index out_stride_a, Index b_count) {
  for (Index ib = 0; ib < b_count; ++ib)
    for (int ia = 0; ia < K; ++ia) out[ia * out_stride_a + ib] = in[ib * K + ia];
}

// The tile by one of the loops above: K input rows into one output run (kInterleave: b_count is
// K, and out_stride_a), or one input run into K output rows (a_count is K, and in_stride_b).
// Streaming: through a buffer in L1, then streamed.
template <class T, int K, bool kInterleave>
void move_short_tile(const T* in, T* out, Index in_stride_b, Index out_stride_a, Index b_count,
                     Index a_count, bool streaming) {
  alignas(kLineBytes) T buffer[kTileElements<T>];
  if constexpr (kInterleave) {
    interleave_rows<T, K>(in, in_stride_b, streaming ? buffer : out, a_count);
    if (streaming) lab::stream_lines(out, buffer, a_count * K * sizeof(T));
  } else {
    spread_run<T, K>(in, streaming ? buffer : out, streaming ? b_count : out_stride_a, b_count);
    if (streaming)
      for (int ia = 0; ia < K; ++ia)
        lab::stream_lines(out + ia * out_stride_a, buffer + ia * b_count, b_count * sizeof(T));
  }
}

// move_short_tile with K the tile's short side; false where it has none, or its runs are apart.
template <class T, int K = 2>
bool moved_short_tile(const T* in, T* out, Index in_stride_b, Index out_stride_a, Index b_count,
                      Index a_count, bool streaming) {
  if constexpr (K < kShortSide) {
    if (b_count == K && out_stride_a == K) {
      move_short_tile<T, K, true>(in, out, in_stride_b, out_stride_a, b_count, a_count, streaming);
      return true;
    }
    if (a_count == K && in_stride_b == K) {
      move_short_tile<T, K, false>(in, out, in_stride_b, out_stride_a, b_count, a_count, streaming);
      return true;
    }
    return moved_short_tile<T, K + 1>(in, out, in_stride_b, out_stride_a, b_count, a_count,
                                      streaming);
  }
  return false;
}

// Where the tile after this one starts, for move_tile_buffered to ask for its first rows ahead.
template <class T>
struct NextTile {
  const T* in = nullptr;  // none (the walk leaves the batch index) where null
  Index b_count = 0, a_count = 0;
};

// The lines of an input row (a_count elements from `row`), asked for into L2 (prefetcht1): in L1
// the rows still to come would evict each other, all in the few sets the tile's rows share.
template <class T>
inline void prefetch_row(const T* row, Index a_count) {
  const auto* at = reinterpret_cast<const char*>(row);
  for (Index byte = 0; byte < a_count * Index{sizeof(T)}; byte += kLineBytes)
    lab::prefetch_line<false, 2>(at + byte);
}

// A tile through a buffer of its own, as a GPU tile passes through shared memory: each input
// row's piece is read whole into it, then the output rows written from it. Where the tile's input
// rows are a multiple of kCacheSetPeriodBytes apart (1 MiB in a 512^3 float32 (2, 1, 0)), walking
// straight across them keeps every row in flight in one cache set, and they evict each other
// before the tile is done. Each row's lines are asked for kPrefetchRows rows ahead, those of the
// next tile's first rows too: a row is a run of a few lines, too short for the hardware prefetcher,
// and read one after another each waited on memory (a 512^3 reversal, 16 threads: 33% of the copy
// for uint8, 42% for float16). The tiles go in each thread's share in order, the batch index
// outermost: dealt to the threads in turn, or each share with the batch index innermost (both
// without the next tile's prefetch), the reversal lost: uint8 from 38-39% of the copy to 34-37%,
// float32 from 54-56% to 44-47% (16 threads; tile_orders.csv in docs/results/h200).
template <class T>
void move_tile_buffered(const T* in, T* out, Index in_stride_b, Index out_stride_a, Index b_count,
                        Index a_count, bool streaming, const NextTile<T>& next) {
  constexpr Index kSide = kBufferedTile<T>;
  alignas(kLineBytes) T tile[kSide * kSide];
  for (Index ib = 0; ib < b_count; ++ib) {
    const Index ahead = ib + kPrefetchRows;
    if (ahead < b_count)
      prefetch_row(in + ahead * in_stride_b, a_count);
    else if (next.in != nullptr && ahead - b_count < next.b_count)
      prefetch_row(next.in + (ahead - b_count) * in_stride_b, next.a_count);
    for (Index ia = 0; ia < a_count; ++ia) tile[ib * kSide + ia] = in[ib * in_stride_b + ia];
  }
  write_tile(SquareTileSource<T, kSide>{tile}, out, out_stride_a, b_count, a_count, streaming);
}

template <class T>
void transpose_tiles(const T* in, T* out, const lab::Permutation& p) {
  const int a = p.rank - 1, b = p.perm[p.rank - 1];
  const Index extent_a = p.shape[a], extent_b = p.shape[b];
  const Index in_stride_b = p.in_stride(b), out_stride_a = p.out_stride(a);
  const bool short_side = extent_a < kShortSide || extent_b < kShortSide;
  const bool rows_share_sets =
      !short_side && in_stride_b * Index{sizeof(T)} % kCacheSetPeriodBytes == 0;
  // As the store plan says (permute_on_cpu, common/streaming_copy.hpp).
  const bool streaming = lab::use_streaming_stores();
  const Batch batch = batch_axes(p, a, b);
  // A short side is whole in every tile, and the other side as long as a square tile's elements
  // allow (whole multiples of kTile): tiles of 3 x 128 would cost more to start than to move.
  const Index tile_a = extent_b < kShortSide   ? kTileElements<T> / extent_b / kTile<T> * kTile<T>
                       : extent_a < kShortSide ? extent_a
                       : rows_share_sets       ? kBufferedTile<T>
                                               : kTile<T>;
  const Index tile_b = extent_a < kShortSide   ? kTileElements<T> / extent_a / kTile<T> * kTile<T>
                       : extent_b < kShortSide ? extent_b
                       : rows_share_sets       ? kBufferedTile<T>
                                               : kTile<T>;
  const Index tiles_a = (extent_a + tile_a - 1) / tile_a;
  const Index tiles_b = (extent_b + tile_b - 1) / tile_b;
#pragma omp parallel
  {
    for_each_tile(batch, tiles_b, tiles_a, [&](Index in_base, Index out_base, Index tb, Index ta) {
      const Index b0 = tb * tile_b, a0 = ta * tile_a;
      const T* tile_in = in + in_base + b0 * in_stride_b + a0;
      T* tile_out = out + out_base + a0 * out_stride_a + b0;
      const Index b_count = std::min(extent_b - b0, tile_b);
      const Index a_count = std::min(extent_a - a0, tile_a);
      if (short_side && moved_short_tile(tile_in, tile_out, in_stride_b, out_stride_a, b_count,
                                         a_count, streaming))
        return;
      if (rows_share_sets) {
        // The next tile in the walk, where it is in the same batch index.
        NextTile<T> next;
        if (ta + 1 < tiles_a) {
          next = {tile_in + tile_a, b_count, std::min(extent_a - a0 - tile_a, tile_a)};
        } else if (tb + 1 < tiles_b) {
          next = {in + in_base + (b0 + tile_b) * in_stride_b,
                  std::min(extent_b - b0 - tile_b, tile_b), std::min(extent_a, tile_a)};
        }
        move_tile_buffered(tile_in, tile_out, in_stride_b, out_stride_a, b_count, a_count,
                           streaming, next);
      } else {
        write_tile(TileSource<T>{tile_in, in_stride_b}, tile_out, out_stride_a, b_count, a_count,
                   streaming);
      }
    });
    if (streaming) lab::stream_fence();  // each thread's own stores, before the others read
  }
}

// Tiles of runs. Where the input's innermost axis is short (16 elements of the 6-d case, 96 bytes
// of a 96^4 reversal), a tile of (b, a) reads pieces of input rows shorter than a line, or pieces
// that straddle lines whose rest another tile reads from memory again later; the same holds for b
// and the output. The input axes just outside a lie right after it in memory, so a tile that takes
// some of them too reads longer runs, as HPTT blocks over more than two axes: its columns are (axes
// just outside a, a), one run of the input, and its rows (axes just outside b, b), one run of the
// output. An axis that would make the side too long joins in part: it is split in two (extent =
// outer x inner, inner a divisor), and its inner part joins.

// The longest side of a tile of runs: two square tiles' sides, so that 96-byte rows can join in
// pairs (192 bytes: whole lines) rather than not at all.
template <class T>
constexpr Index kMaxRunsSide = 2 * kTile<T>;

// p with input axis x split in two neighbours: (extent / inner, inner), in both orders.
lab::Permutation split_axis(const lab::Permutation& p, int x, Index inner) {
  lab::Permutation q;
  q.rank = p.rank + 1;
  for (int i = 0, j = 0; i < p.rank; ++i) {
    if (i == x) q.shape[j++] = p.shape[i] / inner;
    q.shape[j++] = i == x ? inner : p.shape[i];
  }
  for (int k = 0, j = 0; k < p.rank; ++k) {
    const int axis = p.perm[k];
    if (axis == x) q.perm[j++] = x;
    q.perm[j++] = axis >= x ? axis + 1 : axis;
  }
  return q;
}

// How much of an axis of `extent` elements joins a side of `side`: all of it where the side stays
// within kMaxRunsSide (256 x 256 bytes of the 6-d case, past L1: its longer runs still won over
// tiles of 128 x 128); else the smallest divisor of the extent that brings the side to
// kLongRunBytes, or the largest that keeps it under; 1 for none.
template <class T>
Index joining_part(Index side, Index extent) {
  if (side * extent <= kMaxRunsSide<T>) return extent;
  Index part = 1;
  for (Index k = 2; side * k <= kMaxRunsSide<T>; ++k) {
    if (extent % k != 0) continue;
    part = k;
    if (side * k * Index{sizeof(T)} >= kLongRunBytes) break;
  }
  return part;
}

// The problem with its tile's sides grown: columns the a_axes innermost input axes (cols elements,
// contiguous in the input), rows the b_axes innermost output axes (rows elements, contiguous in
// the output).
struct RunsTile {
  lab::Permutation q;
  int a_axes = 1, b_axes = 1;
  Index cols = 1, rows = 1;
  bool grown() const { return a_axes > 1 || b_axes > 1; }
};

template <class T>
RunsTile grow_tile(const lab::Permutation& p) {
  RunsTile t;
  t.q = p;
  lab::Permutation& q = t.q;
  t.cols = q.shape[q.rank - 1];
  t.rows = q.shape[q.perm[q.rank - 1]];
  // Columns: the input axis just outside them joins while the side is short, unless it is b.
  while (t.cols < kTile<T> && t.a_axes < q.rank) {
    const int next = q.rank - 1 - t.a_axes;
    if (next == q.perm[q.rank - 1]) break;
    const Index part = joining_part<T>(t.cols, q.shape[next]);
    if (part == 1 || (part < q.shape[next] && q.rank == lab::kMaxPermuteRank)) break;
    const bool split = part < q.shape[next];
    if (split) q = split_axis(q, next, part);
    t.cols *= part;
    ++t.a_axes;
    if (split) break;  // a split axis ends the side: its outer part lies apart
  }
  // Rows: the output axis just outside them, unless it is one of the columns'.
  while (t.rows < kTile<T> && t.b_axes < q.rank) {
    const int next = q.perm[q.rank - 1 - t.b_axes];
    if (next >= q.rank - t.a_axes) break;
    const Index part = joining_part<T>(t.rows, q.shape[next]);
    if (part == 1 || (part < q.shape[next] && q.rank == lab::kMaxPermuteRank)) break;
    const bool split = part < q.shape[next];
    if (split) q = split_axis(q, next, part);
    t.rows *= part;
    ++t.b_axes;
    if (split) break;
  }
  return t;
}

template <class T>
void transpose_runs_tiles(const T* in, T* out, const RunsTile& t) {
  const lab::Permutation& q = t.q;
  // Where each row's input run starts (rows walk the row axes, b fastest) and each column's output
  // run (columns walk the column axes, a fastest).
  std::vector<Index> row_in(t.rows), col_out(t.cols);
  for (Index r = 0; r < t.rows; ++r) {
    Index rest = r;
    for (int k = q.rank - 1; k >= q.rank - t.b_axes; --k) {
      row_in[r] += rest % q.out_extent(k) * q.in_stride(q.perm[k]);
      rest /= q.out_extent(k);
    }
  }
  for (Index c = 0; c < t.cols; ++c) {
    Index rest = c;
    for (int axis = q.rank - 1; axis >= q.rank - t.a_axes; --axis) {
      col_out[c] += rest % q.shape[axis] * q.out_stride(axis);
      rest /= q.shape[axis];
    }
  }
  Batch batch;
  for (int k = 0; k < q.rank - t.b_axes; ++k) {
    const int axis = q.perm[k];
    if (axis < q.rank - t.a_axes) batch.add(q, axis);
  }
  // The batch axes ordered by how far a step moves both tiles, the shortest innermost: the tiles
  // one thread moves in turn then share pages, in the input and the output alike. Left in output
  // order, the 6-d case's innermost batch axis stepped 32 MiB through the input.
  for (int i = 1; i < batch.axes; ++i)
    for (int k = i; k > 0; --k) {
      const auto reach = [&](int j) { return batch.in_stride[j] + batch.out_stride[j]; };
      if (reach(k - 1) >= reach(k)) break;
      std::swap(batch.extent[k - 1], batch.extent[k]);
      std::swap(batch.in_stride[k - 1], batch.in_stride[k]);
      std::swap(batch.out_stride[k - 1], batch.out_stride[k]);
    }
  const bool streaming = lab::use_streaming_stores();
  const Index tile_r = t.rows <= kMaxRunsSide<T> ? t.rows : kTile<T>;
  const Index tile_c = t.cols <= kMaxRunsSide<T> ? t.cols : kTile<T>;
  const Index tiles_r = (t.rows + tile_r - 1) / tile_r, tiles_c = (t.cols + tile_c - 1) / tile_c;
#pragma omp parallel
  {
    alignas(kLineBytes) T gathered[kMaxRunsSide<T> * kMaxRunsSide<T>];
    alignas(kLineBytes) T moved[kMaxRunsSide<T> * kMaxRunsSide<T>];
    for_each_tile(batch, tiles_r, tiles_c, [&](Index in_base, Index out_base, Index tr, Index tc) {
      const Index r0 = tr * tile_r, c0 = tc * tile_c;
      const Index r_count = std::min(tile_r, t.rows - r0), c_count = std::min(tile_c, t.cols - c0);
      const T* from = in + in_base + c0;
      for (Index r = 0; r < r_count; ++r)
        std::memcpy(gathered + r * c_count, from + row_in[r0 + r], c_count * sizeof(T));
      transpose_elements(TileSource<T>{gathered, c_count}, moved, r_count, r_count, c_count);
      T* to = out + out_base + r0;
      for (Index c = 0; c < c_count; ++c)
        lab::copy_lines(to + col_out[c0 + c], moved + c * r_count, r_count * sizeof(T), streaming);
    });
    if (streaming) lab::stream_fence();
  }
}

// Units. Where the input's innermost axes, taken together, are the output's innermost axes too
// (a batch of 17 x 19 planes), each unit (one plane) lies whole and contiguous in both tensors,
// and the units are the work: tiles of (b, a) there are one small plane each, mostly ragged
// edges, where the register blocks overlap and move each byte several times over. A group of
// kRows units moves at once, in two register passes through a buffer in L1:
// - gather: the units' first vectors side by side are kRows rows of a block, so transposing it
//   leaves, for each element e of a unit, one 16-byte vector of element e of every unit of the
//   group; each register is stored whole, two such vectors in a 32-byte one (gathered_at).
// - scatter: the buffer's vectors taken in output order (the source table says which input
//   element each output element is) are again rows of a block; transposed, each register holds
//   one unit's next output elements, a whole vector of its output run.
// Every access is a whole vector, whatever the shape of the unit; the last vector of a unit
// starts where it ends, overlapping the one before (the same values written twice).

// The number of innermost axes that make up a unit (the fewest, at least 2), or 0 where there is
// no unit smaller than the whole tensor.
int unit_axes(const lab::Permutation& p) {
  for (int m = 2; m < p.rank; ++m) {
    bool inner = true;
    for (int k = p.rank - m; k < p.rank; ++k) inner = inner && p.perm[k] >= p.rank - m;
    if (inner) return m;
  }
  return 0;
}

#if defined(__SSE2__)
// The largest unit, in bytes: a group of 16 / element size units, 16 x this in the buffer, stays
// in L1 beside the input and the output.
constexpr Index kMaxUnitBytes = 1024;
// Units move for elements of up to this many bytes: 4-byte ones, 4 units a group, ran slower
// this way than in tiles (17 x 19 float32).
constexpr Index kMaxUnitElementBytes = 2;
// Groups whose lines moved_units asks for ahead of the one it moves: one group's work (about a
// microsecond) covers a miss to memory, and more ahead ran no faster (17 x 19 bytes, 16 threads).
constexpr Index kPrefetchGroups = 1;

// The lines of a unit (`bytes` from `in`, and as many to `out`), asked for into L1: the input to be
// read, the output to be written (prefetchw: the line owned by this core, ready for the stores).
template <class T>
inline void prefetch_run(const T* in, T* out, Index bytes) {
  // Every line, the last one too where the unit starts part-way into one.
  lab::prefetch_lines<false, 3>(in, bytes);
  lab::prefetch_lines<true, 3>(out, bytes);
}

// Where the gather leaves element e's vector in the buffer, in bytes: register j of the gather's
// block c (the one that starts at min(c * kCols, unit - kCols)) is stored whole, at slot
// c * kRows + j, and its lane l holds element start + l * kRows + j. An element in the last
// block and the one before is taken from the last.
template <class T, class V>
std::uint32_t gathered_at(Index e, Index unit) {
  constexpr Index kRows = 16 / sizeof(T), kLanes = sizeof(V) / 16, kCols = sizeof(V) / sizeof(T);
  const Index last = (unit - 1) / kCols;
  const Index c = e >= unit - kCols ? last : e / kCols;
  const Index r = e - std::min(c * kCols, unit - kCols);
  return static_cast<std::uint32_t>(((c * kRows + r % kRows) * kLanes + r / kRows) * 16);
}

// A vector of V joined from its 16-byte lanes, lane l from base + at[l * stride], in registers:
// assembled in memory instead (a 16-byte store a lane, then a load of the whole vector), the load
// cannot take its bytes from the stores still in flight and waits for them to retire.
template <class V>
inline V joined(const unsigned char* base, const std::uint32_t* at, Index stride) {
  const auto lane = [&](Index l) {
    return _mm_loadu_si128(reinterpret_cast<const __m128i*>(base + at[l * stride]));
  };
#if defined(__AVX2__)
  if constexpr (sizeof(V) == 32)
    return _mm256_inserti128_si256(_mm256_castsi128_si256(lane(0)), lane(1), 1);
  else
#endif
    return lane(0);
}

template <class T, class V>
void move_unit_group(const T* in, T* out, const Index (&in_at)[16 / sizeof(T)],
                     const Index (&out_at)[16 / sizeof(T)], Index unit, const std::uint32_t* source,
                     unsigned char* gathered) {
  constexpr int kRows = 16 / sizeof(T);
  constexpr Index kCols = sizeof(V) / sizeof(T);
  unsigned char* slot = gathered;
  for (Index c = 0;; c += kCols, slot += sizeof(V) * kRows) {
    const Index start = std::min(c, unit - kCols);
    V v[kRows];
#pragma GCC unroll 16
    for (int i = 0; i < kRows; ++i) std::memcpy(&v[i], in + in_at[i] + start, sizeof(V));
    transpose_lanes<T>(v);
    std::memcpy(slot, v, sizeof v);
    if (start + kCols >= unit) break;
  }
  for (Index c = 0;; c += kCols) {
    const Index start = std::min(c, unit - kCols);
    V v[kRows];
#pragma GCC unroll 16
    for (int k = 0; k < kRows; ++k) v[k] = joined<V>(gathered, source + start + k, kRows);
    transpose_lanes<T>(v);
#pragma GCC unroll 16
    for (int u = 0; u < kRows; ++u) std::memcpy(out + out_at[u] + start, &v[u], sizeof(V));
    if (start + kCols >= unit) break;
  }
}

// A unit's tables: from[o], the element of its input that its output element o is; source[o],
// where the gather leaves that element. Worked out on a problem's first call and kept for its
// later ones, as the store plan is: a division or two an element of one unit, they cost as much as
// moving dozens of units, a batch of small planes' whole time where the batch is short.
struct UnitTables {
  std::vector<Index> from;
  std::vector<std::uint32_t> source;
};

template <class T>
const UnitTables& unit_tables(const Batch& unit_order, bool wide) {
  static std::map<std::string, UnitTables> kept;  // by the unit's axes, in output order
  std::string key = wide ? "wide" : "narrow";
  for (int k = 0; k < unit_order.axes; ++k)
    key +=
        " " + std::to_string(unit_order.extent[k]) + ":" + std::to_string(unit_order.in_stride[k]);
  auto found = kept.find(key);
  if (found != kept.end()) return found->second;
  const Index unit = unit_order.count;
  UnitTables tables;
  BatchWalk walk(unit_order, 0);  // output order: walk.out is o
  for (Index o = 0; o < unit; ++o, walk.next()) {
    tables.from.push_back(walk.in);
    tables.source.push_back(wide ? gathered_at<T, WideVector>(walk.in, unit)
                                 : gathered_at<T, __m128i>(walk.in, unit));
  }
  return kept.emplace(key, std::move(tables)).first->second;
}

// The units of p, its `axes` innermost axes; false (nothing moved) where they are too large or
// too small for the groups, too few to fill one, or planes the tiles move as well.
template <class T>
bool moved_units(const T* in, T* out, const lab::Permutation& p, int axes) {
  constexpr int kRows = 16 / sizeof(T);
  if (Index{sizeof(T)} > kMaxUnitElementBytes || axes == 0) return false;
  Batch batch, unit_order;  // the axes outside the unit; the unit's own, in output order
  for (int k = 0; k < p.rank; ++k) (k < p.rank - axes ? batch : unit_order).add(p, p.perm[k]);
  const Index unit = unit_order.count, unit_bytes = unit * Index{sizeof(T)};
  if (unit_bytes > kMaxUnitBytes || unit_bytes < 16 || batch.count < kRows) return false;
  // A plane whose sides are whole register blocks (32 x 32 bytes) moves in tiles with no overlap,
  // each element transposed once: there the tiles ran faster than the units' two passes.
  constexpr Index kWideCols = sizeof(WideVector) / sizeof(T);
  if (axes == 2 && p.shape[p.rank - 2] % kRows == 0 && p.shape[p.rank - 1] % kWideCols == 0)
    return false;
  const bool wide = unit_bytes >= Index{sizeof(WideVector)};
  const UnitTables& tables = unit_tables<T>(unit_order, wide);
  const std::vector<Index>& from = tables.from;
  const Index groups = (batch.count + kRows - 1) / kRows;
#pragma omp parallel
  {
    // A 16-byte vector per element, the last block's overlap included.
    alignas(kLineBytes) unsigned char gathered[16 * (kMaxUnitBytes + sizeof(WideVector))];
    Index begin, end;
    thread_share(groups, &begin, &end);
    BatchWalk walk(batch, begin * kRows), ahead = walk;
    Index ahead_unit = begin * kRows;
    const Index share_end = std::min(batch.count, end * kRows);
    for (Index g = begin; g < end; ++g) {
      // The lines of this group and the next kPrefetchGroups, asked for before they are needed: a
      // unit spans a few lines only, too short a run for the hardware prefetcher to follow, and
      // each of its lines came as a miss of its own while the group's work waited.
      for (const Index ahead_end = std::min(share_end, (g + 1 + kPrefetchGroups) * kRows);
           ahead_unit < ahead_end; ++ahead_unit, ahead.next())
        prefetch_run(in + ahead.in, out + ahead.out, unit_bytes);
      Index in_at[kRows], out_at[kRows];
      const Index units = std::min<Index>(kRows, batch.count - g * kRows);
      for (Index i = 0; i < units; ++i, walk.next()) {
        in_at[i] = walk.in;
        out_at[i] = walk.out;
      }
      if (units < kRows) {  // the batch's last few units, one element at a time
        for (Index i = 0; i < units; ++i)
          for (Index o = 0; o < unit; ++o) out[out_at[i] + o] = in[in_at[i] + from[o]];
      } else if (wide) {
        move_unit_group<T, WideVector>(in, out, in_at, out_at, unit, tables.source.data(),
                                       gathered);
      } else {
        move_unit_group<T, __m128i>(in, out, in_at, out_at, unit, tables.source.data(), gathered);
      }
    }
  }
  return true;
}
#else
template <class T>
bool moved_units(const T*, T*, const lab::Permutation&, int) {
  return false;
}
#endif

}  // namespace

template <class T>
void permute_on_cpu(const T* in, T* out, const lab::Permutation& problem) {
  const lab::Permutation p = lab::fuse_axes(problem);
  // Plain or streaming stores, whichever the first run of this permutation measures faster.
  const std::string work =
      p.shape_text() + " perm " + p.perm_text() + ", " + std::to_string(sizeof(T)) + "-byte";
  lab::run_with_planned_stores(work, [&] {
    if (p.perm[p.rank - 1] == p.rank - 1) {
      copy_runs(in, out, p);
      return;
    }
    if (moved_units(in, out, p, unit_axes(p))) return;
    const RunsTile grown = grow_tile<T>(p);
    if (grown.grown())
      transpose_runs_tiles(in, out, grown);
    else
      transpose_tiles(in, out, p);
  });
}

const char* const kStepSummary =
    "OpenMP on the CPU: axes fused, tiles between the input's and the output's innermost axes";
const char* const kStepLaunch = "omp tiles of (b, a) x batch";
