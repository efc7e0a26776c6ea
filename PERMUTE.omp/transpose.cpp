// PERMUTE.omp: any permutation of a tensor's axes on the CPU, with OpenMP.
// The problem is fused first (common/permute.hpp: axes of extent 1 dropped, neighbours that stay
// neighbours merged), so a (64, 3, 224, 224) tensor to NHWC is a batch of 64 transposes of
// 3 x 50176. After fusion two axes decide the memory traffic: a, the input's innermost axis
// (contiguous in the input), and b, the input axis that is innermost in the output (contiguous in
// the output).
// - b == a: the innermost axis stays innermost, and each output row is one contiguous run of the
//   input, copied whole (a rank-1 problem is one plain copy).
// - b != a: the matrix steps' blocking, between those two axes: a tile of kTile x kTile elements
//   of (b, a) is read along a (whole lines of the input) and written along b (whole lines of the
//   output), small enough that both stay in L1 while it moves. Every other axis is a batch index.
//   The threads share out the (batch, tile of b, tile of a) triples, the tiles of a innermost, so
//   the threads running at the same time read neighbouring lines of the same input rows.
//   In a tensor past the last-level cache, the tile's output lines of 4-byte and larger elements
//   are written with streaming stores (write_tile_streamed), as the ceiling copy's are: a plain
//   store would first read each line from memory only to overwrite it.
#include <algorithm>
#include <cstdint>
#include <cstring>

#include "../common/permute_step.hpp"
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
// A cache line: the unit memory is read and written in.
constexpr Index kLineBytes = 64;
constexpr int kLineFloats = kLineBytes / sizeof(float);
// The smallest element whose output lines stream past the cache (write_tile_streamed). Streaming
// costs a second pass over the tile in L1, element by element: for 1- and 2-byte elements that pass
// costs more than the memory reads it saves.
constexpr Index kMinStreamedElementBytes = 4;
// An L1 of 32 KiB in 8 ways repeats its sets every 4 KiB: input rows a multiple of this apart all
// fall into one set, and take the buffered tile (move_tile_buffered).
constexpr Index kCacheSetPeriodBytes = 4096;
// Elements each thread copies at a time when whole runs move (rank 1).
constexpr Index kCopyChunk = Index{1} << 16;

// The batch axes (every axis but a and b), in output order: a batch index decomposed into where
// its tile starts in the input and in the output.
struct Batch {
  int axes = 0;
  Index extent[lab::kMaxPermuteRank], in_stride[lab::kMaxPermuteRank],
      out_stride[lab::kMaxPermuteRank];
  Index count = 1;

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
    if (axis == skip_a || axis == skip_b) continue;
    batch.extent[batch.axes] = p.shape[axis];
    batch.in_stride[batch.axes] = p.in_stride(axis);
    batch.out_stride[batch.axes] = p.out_stride(axis);
    batch.count *= p.shape[axis];
    ++batch.axes;
  }
  return batch;
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
  const Batch rows = batch_axes(p, a, a);
#pragma omp parallel for schedule(static)
  for (Index r = 0; r < rows.count; ++r) {
    Index from, to;
    rows.offsets(r, &from, &to);
    std::memcpy(out + to, in + from, run * sizeof(T));
  }
}

// Where a tile's elements come from: the input itself, or the buffer its input rows were read
// into (move_tile_buffered). Element (ib, ia) of the tile is at at[ib * stride_b + ia].
template <class T>
struct TileSource {
  const T* at;
  Index stride_b;
  T operator()(Index ib, Index ia) const { return at[ib * stride_b + ia]; }
};
// A square tile's buffer: its rows kTile apart, a constant the compiler unrolls the gather by.
template <class T>
struct SquareTileSource {
  const T* at;
  T operator()(Index ib, Index ia) const { return at[ib * kTile<T> + ia]; }
};

// One output line of 64 bytes, from `line` (in L1) straight to memory.
inline void stream_line(void* dst, const void* line) {
  for (int i = 0; i < kLineFloats; i += lab::kStreamFloats)
    lab::stream_vector(static_cast<float*>(dst) + i, static_cast<const float*>(line) + i);
}

// The tile's output rows, each written along b, with streaming stores: every whole 64-byte line
// of an output row is stored past the cache, so memory is not read for a line that is then
// overwritten whole; the ragged ends of a row, plain. Out of line: its buffer would otherwise
// weigh on every plain tile's call (tiles of 17 x 19 are many).
template <class T, class Source>
[[gnu::noinline]] void write_tile_streamed(const Source& src, T* out, Index out_stride_a,
                                           Index b_count, Index a_count) {
  constexpr Index kLine = kLineBytes / Index{sizeof(T)};
  // The whole tile transposed in L1 first, then streamed: a line gathered and at once loaded
  // again as vectors would wait on its own element stores.
  alignas(kLineBytes) T rows[kTileElements<T>];
  for (Index ia = 0; ia < a_count; ++ia)
    for (Index ib = 0; ib < b_count; ++ib) rows[ia * b_count + ib] = src(ib, ia);
  for (Index ia = 0; ia < a_count; ++ia) {
    T* row = out + ia * out_stride_a;
    const T* from = rows + ia * b_count;
    const Index misaligned = reinterpret_cast<std::uintptr_t>(row) % kLineBytes / sizeof(T);
    Index ib = std::min(b_count, (kLine - misaligned) % kLine);
    std::copy(from, from + ib, row);
    for (; ib + kLine <= b_count; ib += kLine) stream_line(row + ib, from + ib);
    std::copy(from + ib, from + b_count, row + ib);
  }
}

// The tile's output rows, each written along b; streamed where `streaming` and a row holds a
// whole line (never for elements smaller than kMinStreamedElementBytes).
template <class T, class Source>
inline void write_tile(const Source& src, T* out, Index out_stride_a, Index b_count, Index a_count,
                       bool streaming) {
  if constexpr (Index{sizeof(T)} >= kMinStreamedElementBytes) {
    if (streaming && b_count * Index{sizeof(T)} >= kLineBytes) {
      write_tile_streamed(src, out, out_stride_a, b_count, a_count);
      return;
    }
  }
  for (Index ia = 0; ia < a_count; ++ia)
    for (Index ib = 0; ib < b_count; ++ib) out[ia * out_stride_a + ib] = src(ib, ia);
}

// A tile through a buffer of its own, as a GPU tile passes through shared memory: each input
// row's piece is read whole into it, then the output rows written from it. Where the tile's input
// rows are a multiple of kCacheSetPeriodBytes apart (1 MiB in a 512^3 float32 (2, 1, 0)), walking
// straight across them keeps every row in flight in one cache set, and they evict each other
// before the tile is done.
template <class T>
void move_tile_buffered(const T* in, T* out, Index in_stride_b, Index out_stride_a, Index b_count,
                        Index a_count, bool streaming) {
  alignas(kLineBytes) T tile[kTileElements<T>];
  for (Index ib = 0; ib < b_count; ++ib)
    for (Index ia = 0; ia < a_count; ++ia) tile[ib * kTile<T> + ia] = in[ib * in_stride_b + ia];
  write_tile(SquareTileSource<T>{tile}, out, out_stride_a, b_count, a_count, streaming);
}

template <class T>
void transpose_tiles(const T* in, T* out, const lab::Permutation& p) {
  const int a = p.rank - 1, b = p.perm[p.rank - 1];
  const Index extent_a = p.shape[a], extent_b = p.shape[b];
  const Index in_stride_b = p.in_stride(b), out_stride_a = p.out_stride(a);
  const bool rows_share_sets = in_stride_b * Index{sizeof(T)} % kCacheSetPeriodBytes == 0;
  // The rule and the setting the ceiling copy follows (common/streaming_copy.hpp).
  const bool streaming =
      Index{sizeof(T)} >= kMinStreamedElementBytes &&
      lab::use_streaming_stores(2 * static_cast<std::size_t>(p.elements()) * sizeof(T));
  const Batch batch = batch_axes(p, a, b);
  const Index tiles_a = (extent_a + kTile<T> - 1) / kTile<T>;
  const Index tiles_b = (extent_b + kTile<T> - 1) / kTile<T>;
#pragma omp parallel
  {
#pragma omp for collapse(3) schedule(static)
    for (Index n = 0; n < batch.count; ++n) {
      for (Index tb = 0; tb < tiles_b; ++tb) {
        for (Index ta = 0; ta < tiles_a; ++ta) {
          Index from, to;
          batch.offsets(n, &from, &to);
          const Index b0 = tb * kTile<T>, a0 = ta * kTile<T>;
          const T* tile_in = in + from + b0 * in_stride_b + a0;
          T* tile_out = out + to + a0 * out_stride_a + b0;
          const Index b_count = std::min(extent_b - b0, kTile<T>);
          const Index a_count = std::min(extent_a - a0, kTile<T>);
          if (rows_share_sets)
            move_tile_buffered(tile_in, tile_out, in_stride_b, out_stride_a, b_count, a_count,
                               streaming);
          else
            write_tile(TileSource<T>{tile_in, in_stride_b}, tile_out, out_stride_a, b_count,
                       a_count, streaming);
        }
      }
    }
    if (streaming) lab::stream_fence();  // each thread's own stores, before the others read
  }
}

}  // namespace

template <class T>
void permute_on_cpu(const T* in, T* out, const lab::Permutation& problem) {
  const lab::Permutation p = lab::fuse_axes(problem);
  if (p.perm[p.rank - 1] == p.rank - 1)
    copy_runs(in, out, p);
  else
    transpose_tiles(in, out, p);
}

const char* const kStepSummary =
    "OpenMP on the CPU: axes fused, tiles between the input's and the output's innermost axes";
const char* const kStepLaunch = "omp tiles of (b, a) x batch";
