// PERMUTE.v5_packed: 16-byte accesses for every element size, in v3's batch of planes.
// v3 and v4 move one element per access: a warp's uint8 load is 32 bytes, a quarter of what a
// warp of 16-byte loads moves, and the small types stay far from the copy. CUDA.v7_packed fixed
// that for a matrix: each thread loads one 16-byte vector (N = 16 / sizeof(T) elements) from each
// of N input rows, transposes that N x N block in registers (common/packed_block.cuh), so that
// each register row is 16 bytes of one output row, and passes it through a shared tile of 16-byte
// cells to 16-byte stores. Here the matrix is v3's plane (rows along the output's innermost axis,
// columns along the input's) and every other axis is a digit of the batch index, as in v3.
// The launcher picks one kernel per fused problem (launch_permute, at the end):
// - permute_kernel, the tile: `groups` blocks of N rows by `chunks` blocks of N columns, a thread
//   a block: v7's 256 threads where they fill the plane, else a shape fitted to it (plane_tile:
//   64 x 64 planes of float16 take one tile of 8 x 8 blocks); a side that is not whole tiles first
//   borrows the batch axis lying right after it (borrow_axes: 16 x 16 planes become 256 x 256);
// - flat_kernel, no tile: a uint8 plane under one tile (64 x 64) or whose input rows fill half the
//   tile's columns or less (3136 x 64), and a wider type's plane with a side under 32 (16 x 16)
//   that borrows nothing;
//   each thread stores its block from registers, 2 x 2 lanes filling whole sectors;
// - short_register_kernel: a plane side under 8 (3 channels), 16-byte accesses on both sides, the
//   elements regrouped in registers (16-byte elements too, one to a vector);
// - unaligned_short_kernel: the same where 1- or 2-byte short rows are not whole vectors (3 x 1000
//   uint8, 2 x 50001), each row's 16 bytes cut from the two aligned vectors they straddle;
// - runs_kernel: the innermost axis stays, each plane a run copied in vectors;
// - staged_kernel: small dense planes laid one after another (17 x 19), staged a stretch of whole
//   planes at a time;
// - wide_tile_kernel: 16-byte elements (N = 1, nothing to pack) where a side borrows, v3's tile on
//   the borrowed plane;
// - v4's launcher (linked, STEP_KERNEL in the Makefile) for the rest: vectors not whole or not
//   aligned, a plane side of 8 to 31 otherwise, 16-byte elements' planes that borrow nothing.
#include <algorithm>
#include <cstdint>
#include <type_traits>

#include "../PERMUTE.v3_tiled/plan.hpp"
#include "../common/cuda_check.cuh"
#include "../common/packed_block.cuh"  // transpose_in_registers, VECTOR_BYTES, WORDS
#include "../common/permute_step.hpp"
#include "../common/short_rows.cuh"        // the K x N register transpose, the warp's stage
#include "../common/unaligned_vector.cuh"  // load_unaligned: 16 bytes from anywhere
#include "tile_shape.hpp"                  // plane_tile: the tile's shape for a plane

// PERMUTE.v4_small_planes's launch_permute, linked under this name (common/permute_step.mk).
template <class T>
LaunchShape launch_reused_permute(const T* in, T* out, const lab::Permutation& p,
                                  cudaStream_t stream);

namespace {

using packed_tile::cell;
using packed_tile::THREADS;  // as v3's 32 x 8: each thread moves one N x N block a tile
using packed_tile::TileShape;
constexpr int SHORT_AXIS = 32;  // v4's kShortAxis: below it, v4's shaped tiles do better
constexpr int SHORT_SIDE = short_rows::MAX_SIDE + 1;  // a side under it: short_register_kernel
// Blocks launched at most along each grid axis (y and z allow no more); a block loops past that.
constexpr lab::Index kMaxBlocks = 65535;

unsigned blocks_for(lab::Index count, lab::Index per_block) {
  return static_cast<unsigned>(std::min(kMaxBlocks, (count + per_block - 1) / per_block));
}

// The 16 bytes at `at` and at each of the N - 1 rows `pitch` elements below it, w[k] from row k.
template <int N, class T>
__device__ void load_block(const T* at, lab::Index pitch, std::uint32_t (&w)[N][WORDS]) {
#pragma unroll
  for (int k = 0; k < N; ++k) {
    const uint4 v = *reinterpret_cast<const uint4*>(at + k * pitch);
    w[k][0] = v.x, w[k][1] = v.y, w[k][2] = v.z, w[k][3] = v.w;
  }
}

// Blocks a SM the compiler must leave registers for. Left alone it gives a uint8 thread (a 16 x 16
// block, 64 registers of data) 156 registers: one 256-thread block an SM, nothing loading while
// it stores. Two blocks (at most 128 registers) took uint8 NCHW to NHWC from 80% to 88% of the
// copy on an H200 and from 88% to 95% on an H100, the 512^3 reversal from 85% to 92% on the H200
// (93% before and after on the H100); float16, held to 64 or 80 registers, spilled and lost, so
// wider elements keep what the compiler gives them (tile_bounds.csv in docs/results/h100, h200).
template <class T>
constexpr int TILE_MIN_BLOCKS = sizeof(T) == 1 ? 2 : 1;
// ... and with the tile's shape fixed (permute_kernel's kGroups), whose indices take fewer
// registers: 2-byte elements then fit 80 without spilling, 3 blocks an SM.
template <class T>
constexpr int FIXED_MIN_BLOCKS = sizeof(T) == 1 ? 2 : 3;

// ---- Borrowed axes: a plane side that is not whole tiles (16 x 16 planes of a 6-d permutation,
// ---- 96 x 96 of a 4-d reversal) leaves threads idle or falls to flat_kernel's short runs. Where a
// batch axis lies right after that side, in the input after the columns (its input stride is the
// plane's columns) or in the output after the rows (its output stride is the plane's rows), the
// side takes it in: 16 columns of 16 planes in a row are 256 contiguous input elements. The tile
// reads and writes the borrowing side as before; only where the other side starts (an input row,
// an output row) is two pitches: the plane's own, then the borrowed axis's past its extent.
// Measured (borrowed_axes.csv in docs/results/h100, h200; % of the copy, 1- to 8-byte types): the
// 6-d case from 57-86% to 91-96% on an H100 and from 46-79% to 83-94% on an H200; the 96^4
// reversal's 1- to 4-byte types from 46-88% to 89-95% and 63-86% to 87-93% (8-byte elements'
// 96 x 96 planes are whole tiles and borrow nothing).
struct Borrowed {
  lab::FastDivision rows, cols;  // the plane's own extents
  lab::Index in_high = 0;   // the input stride of the axis the rows borrowed (row r to r + rows)
  lab::Index out_high = 0;  // the output stride of the axis the columns borrowed
};

// Where element i of a side starts: i * pitch, or past the side's own extent the borrowed axis.
template <bool kBorrowed>
__device__ lab::Index side_offset(lab::Index i, lab::Index pitch, const lab::FastDivision& own,
                                  lab::Index high) {
  if constexpr (kBorrowed) {
    const auto q = static_cast<lab::Index>(own.quotient(static_cast<std::uint64_t>(i)));
    return (i - q * static_cast<lab::Index>(own.divisor)) * pitch + q * high;
  } else {
    return i * pitch;
  }
}

// kGroups: the tile's shape fixed when compiled (kGroups groups of THREADS / kGroups chunks), or
// 0 for `shape`'s, read at run time. uint8 takes every shape of 256 threads fixed (it keeps v7's
// 2 to 16 groups), 2-byte elements v7's 16: each of their 16 or 8 passes a tile then finds its
// cell with shifts and constants, where a shape read at run time costs a multiply and a division
// a pass, and registers (uint8 spilled at the 128 that two blocks an SM leave; fixed, 2-byte
// elements fit 80 and a third block). Measured on an H200, % of the copy: uint8's 96^4 reversal
// from 86-88% to 90-91%, the 6-d case from 85% to 88-91% (16 groups, tile_constants.csv in
// docs/results/h200); then NCHW to NHWC uint8 (4 groups) from 87-88% to 93-95%, 2-byte elements'
// 6-d case from 89-91% to 92% (fixed_shapes.csv). Held to 80 registers for a third block, uint8's
// fixed tile spilled and fell to 78-82%.
// One tile after another, each loaded, transposed and stored before the next: a block whose next
// tile's loads left before its stores, with 2 or 4 planes a block (the grid's z cut to match), did
// not pay on an H200. float16's 64 x 64 planes and NHWC to NCHW gained under the memset flush in
// one process and not in the next (4096 x 64 x 64: 49 and 43% of the copy, pipelined with 4
// planes 67 and 43), and nothing under a read flush (90 against 90-91); float32 lost up to 5
// points, and uint8 NCHW to NHWC, whose 64 planes then filled 64 or 128 blocks, fell from 95% to
// 67-88% (pipelined_tiles.csv in docs/results/h200).
template <class T, bool kBorrowed, int kGroups>
__global__ void __launch_bounds__(THREADS, kGroups > 0 ? FIXED_MIN_BLOCKS<T> : TILE_MIN_BLOCKS<T>)
    permute_kernel(const T* __restrict__ in, T* __restrict__ out, lab::Plan plan, TileShape shape,
                   Borrowed borrowed) {
  constexpr int N = VECTOR_BYTES / sizeof(T);
  extern __shared__ uint4 tile[];  // a thread's N cells: its block, N output rows of it
  const int groups = kGroups > 0 ? kGroups : shape.groups;
  const int chunks = kGroups > 0 ? THREADS / kGroups : shape.chunks;
  // Consecutive threads take consecutive vectors of a row: coalesced loads; and consecutive cells
  // of an output row: coalesced stores, a pass of chunks output rows at a time.
  const int group = threadIdx.x / chunks, chunk = threadIdx.x - group * chunks;
  const int out_row = threadIdx.x / groups, out_group = threadIdx.x - out_row * groups;
  const int tile_rows = groups * N, tile_cols = chunks * N;
  for (lab::Index b = blockIdx.z; b < plan.batch.count; b += gridDim.z) {
    lab::Index in_base, out_base;
    plan.batch.offsets(b, in_base, out_base);
    for (lab::Index tile_r = lab::Index{blockIdx.y} * tile_rows; tile_r < plan.rows;
         tile_r += lab::Index{gridDim.y} * tile_rows) {
      for (lab::Index tile_c = lab::Index{blockIdx.x} * tile_cols; tile_c < plan.cols;
           tile_c += lab::Index{gridDim.x} * tile_cols) {
        // This thread's block: N rows from r, N columns from c; whole or absent (extents % N == 0).
        const lab::Index r = tile_r + group * N, c = tile_c + chunk * N;
        std::uint32_t w[N][WORDS] = {};
        if (r < plan.rows && c < plan.cols)  // N rows within one plane: rows % N == 0
          load_block<N>(
              in + in_base +
                  side_offset<kBorrowed>(r, plan.in_pitch, borrowed.rows, borrowed.in_high) + c,
              plan.in_pitch, w);
        transpose_in_registers<sizeof(T), N>(w);  // w[j]: 16 bytes of output row c + j
#pragma unroll
        for (int j = 0; j < N; ++j)
          tile[cell<N>(chunk * N + j, group, groups)] =
              make_uint4(w[j][0], w[j][1], w[j][2], w[j][3]);
        __syncthreads();  // outside any bounds check: every thread of the block must reach it
                          // The output tile: tile_r and tile_c swap roles.
#pragma unroll
        for (int pass = 0; pass < N; ++pass) {
          const int row = out_row + pass * chunks;
          const lab::Index out_r = tile_c + row, out_c = tile_r + out_group * N;
          if (out_r < plan.cols && out_c < plan.rows)
            *reinterpret_cast<uint4*>(
                out + out_base +
                side_offset<kBorrowed>(out_r, plan.out_pitch, borrowed.cols, borrowed.out_high) +
                out_c) = tile[cell<N>(row, out_group, groups)];
        }
        __syncthreads();  // the tile is read whole before the next one overwrites it
      }
    }
  }
}

bool aligned(const void* p) {
  return reinterpret_cast<std::uintptr_t>(p) % VECTOR_BYTES == 0;
}

// Every batch stride, input and output, a multiple of `bytes` in bytes (E: the element's).
bool batch_strides_whole(const lab::Plan& plan, lab::Index element_bytes, lab::Index bytes) {
  for (int i = 0; i < plan.batch.axes; ++i)
    if (plan.batch.in_stride[i] * element_bytes % bytes != 0 ||
        plan.batch.out_stride[i] * element_bytes % bytes != 0)
      return false;
  return true;
}

// The tile for the plan's plane (tile_shape.hpp); uint8 keeps v7's.
packed_tile::PlaneTile plane_tile(const lab::Plan& plan, int n) {
  return packed_tile::plane_tile(plan.rows / n, plan.cols / n, n, n == VECTOR_BYTES);
}

// Which packed kernel takes the plan, if any. Every vector of every plane must be whole and 16-byte
// aligned: both extents of the plane, its pitches and every batch stride multiples of N elements,
// and so the two pointers' addresses in bytes; no runs. The tile takes a plane with both axes at
// least SHORT_AXIS (a longer plane with a shorter axis stays on v4's tiles, which fit it), in the
// shape that fits it (plane_tile); a plane under one 256-thread tile only where that shape leaves
// at most a quarter of the threads idle. flat_kernel takes, as measured on an H100 (% of the
// copy): for 1-byte elements, the planes under one tile (4096 planes of 64 x 64: 98% against v4's
// 32%) and those whose input rows fill half of a 16-group tile's columns or less (3136 x 64: 94%
// against the tile's 56%, which idled half its threads there); for wider elements only the planes
// under one tile with a side under SHORT_AXIS, where v4's tiles are mostly empty (16 x 16 planes of
// float16: 60% against 15%). Wider elements lost on the rest (float16, 64 x 64: 47% against v4's
// 49%; 3136 x 64: 43% against a 16 x 16 block tile's 63%).
enum class Packed { kNone, kTile, kFlat };
constexpr int NARROW_BLOCKS = 8;  // input rows of at most 8 blocks: half of 16 chunks

Packed packed_path(const lab::Plan& plan, int n, const void* in, const void* out) {
  const bool whole = !plan.runs && plan.rows % n == 0 && plan.cols % n == 0 &&
                     plan.in_pitch % n == 0 && plan.out_pitch % n == 0 && aligned(in) &&
                     aligned(out) && batch_strides_whole(plan, VECTOR_BYTES / n, VECTOR_BYTES);
  const lab::Index shorter = std::min(plan.rows, plan.cols);
  if (!whole || shorter < SHORT_SIDE) return Packed::kNone;
  const bool small = plan.rows * plan.cols < lab::Index{THREADS} * n * n;
  const bool narrow = plan.cols <= lab::Index{n} * NARROW_BLOCKS;
  const bool flat = n == VECTOR_BYTES ? small || (narrow && shorter >= SHORT_AXIS)
                                      : small && shorter < SHORT_AXIS;
  if (flat) return Packed::kFlat;
  if (shorter < SHORT_AXIS) return Packed::kNone;
  return !small || plane_tile(plan, n).fill >= packed_tile::MIN_TILE_FILL ? Packed::kTile
                                                                          : Packed::kNone;
}

// The plan with each plane side that is not whole tiles (tile_side elements: v7's 16 blocks, or
// wide_tile_kernel's side) widened by the batch axis right after it, where there is one whose
// strides keep every vector of n elements whole; `any` false where no side borrows. An axis right
// after both sides (the middle axis of a 3-d reversal) goes to the columns.
struct BorrowedPlan {
  lab::Plan plan;
  Borrowed borrowed;
  bool any = false;
};

BorrowedPlan borrow_axes(const lab::Plan& plan, int n, lab::Index tile_side) {
  BorrowedPlan wide{plan,
                    {lab::FastDivision(static_cast<std::uint64_t>(plan.rows)),
                     lab::FastDivision(static_cast<std::uint64_t>(plan.cols))}};
  if (plan.runs) return wide;
  const lab::Batch& batch = plan.batch;
  int rows_axis = -1, cols_axis = -1;
  for (int i = 0; i < batch.axes; ++i) {
    const bool whole = batch.in_stride[i] % n == 0 && batch.out_stride[i] % n == 0;
    if (whole && plan.cols % tile_side != 0 && batch.in_stride[i] == plan.cols) cols_axis = i;
    if (whole && plan.rows % tile_side != 0 && batch.out_stride[i] == plan.rows && i != cols_axis)
      rows_axis = i;
  }
  if (rows_axis < 0 && cols_axis < 0) return wide;
  wide.any = true;
  lab::Batch& rest = wide.plan.batch;
  rest = lab::Batch{};
  for (int i = 0; i < batch.axes; ++i) {
    const lab::Index extent = static_cast<lab::Index>(batch.extent[i].divisor);
    if (i == rows_axis) {
      wide.plan.rows *= extent;
      wide.borrowed.in_high = batch.in_stride[i];
    } else if (i == cols_axis) {
      wide.plan.cols *= extent;
      wide.borrowed.out_high = batch.out_stride[i];
    } else {
      rest.extent[rest.axes] = batch.extent[i];
      rest.in_stride[rest.axes] = batch.in_stride[i];
      rest.out_stride[rest.axes] = batch.out_stride[i];
      rest.count *= extent;
      ++rest.axes;
    }
  }
  return wide;
}

// ---- 16-byte elements: one to a vector already, nothing to pack, but a plane side that is not
// ---- whole tiles borrows all the same. v4's tile takes 16 x 16 planes of the 6-d permutation 4
// planes at a time: input runs of 256 bytes, each a DRAM page of its own, since the 16 rows of a
// plane lie 128 KiB apart. Borrowed, the plane is 256 x 256 and its input rows are whole 4-KiB
// runs. This is v3's tile on that plane: WIDE_SIDE x WIDE_SIDE elements, WIDE_SIDE x
// (WIDE_THREADS / WIDE_SIDE) threads, each moving a column of elements through a shared tile whose
// rows are padded by one element (a 16-byte element spans 4 banks, and 8 lanes reading down a
// column then meet all 32 once).
constexpr int WIDE_SIDE = 32;
constexpr int WIDE_THREADS = 256;

template <class T, int S>
__global__ void __launch_bounds__(WIDE_THREADS)
    wide_tile_kernel(const T* __restrict__ in, T* __restrict__ out, lab::Plan plan,
                     Borrowed borrowed) {
  static_assert(sizeof(T) == VECTOR_BYTES && WIDE_THREADS % S == 0);
  constexpr int kRowsApart = WIDE_THREADS / S, kPerThread = S / kRowsApart;
  extern __shared__ uint4 wide_tile[];  // S rows of S + 1 elements
  const auto at = [](int row, int col) { return row * (S + 1) + col; };
  const int x = static_cast<int>(threadIdx.x), y = static_cast<int>(threadIdx.y);
  for (lab::Index b = blockIdx.z; b < plan.batch.count; b += gridDim.z) {
    lab::Index in_base, out_base;
    plan.batch.offsets(b, in_base, out_base);
    for (lab::Index tile_r = lab::Index{blockIdx.y} * S; tile_r < plan.rows;
         tile_r += lab::Index{gridDim.y} * S) {
      for (lab::Index tile_c = lab::Index{blockIdx.x} * S; tile_c < plan.cols;
           tile_c += lab::Index{gridDim.x} * S) {
        const lab::Index c = tile_c + x;
#pragma unroll
        for (int k = 0; k < kPerThread; ++k) {
          const lab::Index r = tile_r + y + k * kRowsApart;
          if (r < plan.rows && c < plan.cols)
            wide_tile[at(y + k * kRowsApart, x)] = *reinterpret_cast<const uint4*>(
                in + in_base +
                side_offset<true>(r, plan.in_pitch, borrowed.rows, borrowed.in_high) + c);
        }
        __syncthreads();  // outside any bounds check: every thread of the block must reach it
        const lab::Index out_c = tile_r + x;  // the output tile: tile_r and tile_c swap roles
#pragma unroll
        for (int k = 0; k < kPerThread; ++k) {
          const lab::Index out_r = tile_c + y + k * kRowsApart;
          if (out_r < plan.cols && out_c < plan.rows)
            *reinterpret_cast<uint4*>(
                out + out_base +
                side_offset<true>(out_r, plan.out_pitch, borrowed.cols, borrowed.out_high) +
                out_c) = wide_tile[at(x, y + k * kRowsApart)];
        }
        __syncthreads();  // the tile is read whole before the next one overwrites it
      }
    }
  }
}

template <class T>
LaunchShape launch_wide_tile(const T* in, T* out, const lab::Plan& plan, const Borrowed& borrowed,
                             cudaStream_t stream) {
  constexpr int S = WIDE_SIDE;
  const int shared_bytes = S * (S + 1) * VECTOR_BYTES;
  lab::allow_shared_bytes(wide_tile_kernel<T, S>, shared_bytes);
  const dim3 block(S, WIDE_THREADS / S);
  const dim3 grid(blocks_for(plan.cols, S), blocks_for(plan.rows, S),
                  blocks_for(plan.batch.count, 1));
  wide_tile_kernel<T, S><<<grid, block, shared_bytes, stream>>>(in, out, plan, borrowed);
  return {grid, block};
}

// ---- Small planes: no tile. A thread loads one N x N block, transposes it and stores it straight
// ---- from its registers; the blocks of all planes form one flat index, so that a block of
// threads takes several planes (16 of 64 x 64 uint8) and no thread idles. Four neighbouring lanes
// take 2 x 2 blocks: the two side by side load 32 adjacent bytes of one input row, the two one
// above the other store 32 adjacent bytes of one output row, whole sectors both ways without
// shared memory. A side with an odd count of blocks pairs nothing, and its accesses fill half
// sectors (16 x 16 uint8: one block a plane).

// 1 where a side of the plane has an even count of blocks: a lane bit then steps along it.
__host__ __device__ int paired(lab::Index blocks) {
  return blocks % 2 == 0;
}

template <class T>
__global__ void __launch_bounds__(THREADS)
    flat_kernel(const T* __restrict__ in, T* __restrict__ out, lab::Plan plan,
                lab::FastDivision units_across, lab::FastDivision units_down) {
  constexpr int N = VECTOR_BYTES / sizeof(T);
  // A unit: 2 x 2 blocks, bit 0 of q along the columns and the next along the rows (fewer where a
  // side pairs nothing); units run along the plane's rows of units, then down it, then over planes.
  const int col_bit = paired(plan.cols / N), row_bit = paired(plan.rows / N);
  const int unit_bits = col_bit + row_bit;
  const lab::Index blocks = plan.batch.count * (plan.rows / N) * (plan.cols / N);
  for (lab::Index q = lab::Index{blockIdx.x} * THREADS + threadIdx.x; q < blocks;
       q += lab::Index{gridDim.x} * THREADS) {
    const auto unit = static_cast<std::uint64_t>(q >> unit_bits);
    const std::uint64_t line = units_across.quotient(unit), b = units_down.quotient(line);
    const int slot = static_cast<int>(q) & ((1 << unit_bits) - 1);
    const auto r = static_cast<lab::Index>(
        (((line - b * units_down.divisor) << row_bit) | (slot >> col_bit)) * N);
    const auto c = static_cast<lab::Index>(
        (((unit - line * units_across.divisor) << col_bit) | (slot & col_bit)) * N);
    lab::Index in_base, out_base;
    plan.batch.offsets(static_cast<lab::Index>(b), in_base, out_base);
    std::uint32_t w[N][WORDS];
    load_block<N>(in + in_base + r * plan.in_pitch + c, plan.in_pitch, w);
    transpose_in_registers<sizeof(T), N>(w);  // w[j]: 16 bytes of output row c + j
    T* to = out + out_base + c * plan.out_pitch + r;
#pragma unroll
    for (int j = 0; j < N; ++j)
      *reinterpret_cast<uint4*>(to + j * plan.out_pitch) =
          make_uint4(w[j][0], w[j][1], w[j][2], w[j][3]);
  }
}

template <class T>
LaunchShape launch_flat(const T* in, T* out, const lab::Plan& plan, cudaStream_t stream) {
  constexpr int N = VECTOR_BYTES / sizeof(T);
  const lab::Index across = plan.cols / N, down = plan.rows / N;  // blocks of the plane
  const lab::FastDivision units_across(static_cast<std::uint64_t>(across >> paired(across)));
  const lab::FastDivision units_down(static_cast<std::uint64_t>(down >> paired(down)));
  const dim3 block(THREADS), grid(blocks_for(plan.batch.count * across * down, THREADS));
  flat_kernel<T><<<grid, block, 0, stream>>>(in, out, plan, units_across, units_down);
  return {grid, block};
}

// Which short-plane kernel takes the plan, if any: the short side's rows adjacent where they
// interleave (the output's stride of the long side is K) or spread (the input's is K), the long
// side and every other stride whole vectors, both pointers aligned.
enum class ShortPath { kNone, kInterleave, kSpread };

ShortPath short_path(const lab::Plan& plan, int n, const void* in, const void* out) {
  if (plan.runs || !aligned(in) || !aligned(out) ||
      !batch_strides_whole(plan, VECTOR_BYTES / n, VECTOR_BYTES))
    return ShortPath::kNone;
  if (plan.rows < SHORT_SIDE && plan.out_pitch == plan.rows && plan.cols % n == 0 &&
      plan.in_pitch % n == 0)
    return ShortPath::kInterleave;
  if (plan.cols < SHORT_SIDE && plan.in_pitch == plan.cols && plan.rows % n == 0 &&
      plan.out_pitch % n == 0)
    return ShortPath::kSpread;
  return ShortPath::kNone;
}

// ---- Short planes: a side of K < SHORT_SIDE elements (3 channels). v4 takes such a side whole
// ---- with a stretch of the long one, one element an access. Interleaving (the short side is the
// output's innermost, NCHW to NHWC), K input rows become one output run; spreading (the short side
// is the input's innermost, the way back), one input run becomes K rows. Each thread moves N
// elements of the long side in all K short rows, transposed in registers, the runs through the
// warp's stage (common/short_rows.cuh).
// Measured (short_planes.csv in docs/results/h100, h200; NCHW to NHWC and back with 3 channels,
// 4096 planes of 3 x 1000 but uint8's, which are not whole vectors): 1- and 2-byte elements from
// 66-88% of the copy to 90-103% on an H100 and from 53-73% to 91-100% on an H200, where each
// element was gathered from a shared stage; 4- to 16-byte ones lose at most a point on the H100
// (NHWC to NCHW, 8 and 16 bytes) and gain up to 13 (float32, 3 x 1000), and 4 to 24 on the H200.
using short_rows::WARP_SIZE;

template <class T, int K, bool kInterleave>
__global__ void __launch_bounds__(THREADS)
    short_register_kernel(const T* __restrict__ in, T* __restrict__ out, lab::Plan plan,
                          lab::FastDivision plane_vectors) {
  constexpr int N = VECTOR_BYTES / sizeof(T);
  __shared__ uint4 stages[THREADS / WARP_SIZE][WARP_SIZE * K];
  uint4* stage = stages[threadIdx.x / WARP_SIZE];
  const int lane = static_cast<int>(threadIdx.x % WARP_SIZE);
  const auto per_plane = static_cast<lab::Index>(plane_vectors.divisor);
  const lab::Index total = plan.batch.count * per_plane;
  // Whole warps iterate together (the stage's exchanges need every lane); lanes past the end idle.
  for (lab::Index warp_first = lab::Index{blockIdx.x} * THREADS + (threadIdx.x - lane);
       warp_first < total; warp_first += lab::Index{gridDim.x} * THREADS) {
    const lab::Index i = warp_first + lane;
    lab::Index in_base = 0, out_base = 0, first = 0;  // first: along the long side
    if (i < total) {
      const auto b = static_cast<lab::Index>(plane_vectors.quotient(static_cast<std::uint64_t>(i)));
      first = (i - b * per_plane) * N;
      plan.batch.offsets(b, in_base, out_base);
    }
    // Where this lane's run starts (nullptr: the lane is past the end).
    const T* run_in = i < total ? in + in_base + first * K : nullptr;
    T* run_out = i < total ? out + out_base + first * K : nullptr;
    VectorOf<T> rows[K], run[K];  // rows[k]: short row k's N elements; run: them interleaved
    if constexpr (kInterleave) {
      if (i < total)
#pragma unroll
        for (int k = 0; k < K; ++k)
          rows[k].word = *reinterpret_cast<const uint4*>(in + in_base + k * plan.in_pitch + first);
      short_rows::interleave<T, K>(rows, run);
      short_rows::scatter_runs<T, K>(stage, run_out, lane, run);
    } else {
      short_rows::gather_runs<T, K>(stage, run_in, lane, run);
      short_rows::spread<T, K>(run, rows);
      if (i < total)
#pragma unroll
        for (int k = 0; k < K; ++k)
          *reinterpret_cast<uint4*>(out + out_base + k * plan.out_pitch + first) = rows[k].word;
    }
    __syncwarp();  // the stage is read whole before the next round overwrites it
  }
}

template <class T, int K>
LaunchShape launch_short_registers(const T* in, T* out, const lab::Plan& plan, bool interleave,
                                   cudaStream_t stream) {
  constexpr int N = VECTOR_BYTES / sizeof(T);
  const lab::Index per_plane = (interleave ? plan.cols : plan.rows) / N;
  const lab::FastDivision plane_vectors(static_cast<std::uint64_t>(per_plane));
  const dim3 block(THREADS), grid(blocks_for(plan.batch.count * per_plane, THREADS));
  if (interleave)
    short_register_kernel<T, K, true><<<grid, block, 0, stream>>>(in, out, plan, plane_vectors);
  else
    short_register_kernel<T, K, false><<<grid, block, 0, stream>>>(in, out, plan, plane_vectors);
  return {grid, block};
}

template <class T>
LaunchShape launch_short(const T* in, T* out, const lab::Plan& plan, ShortPath path,
                         cudaStream_t stream) {
  const bool interleave = path == ShortPath::kInterleave;
  // K: 2 to SHORT_SIDE - 1 (a side of 1 is fused)
  return short_rows::with_side(interleave ? plan.rows : plan.cols, [&](auto k) {
    return launch_short_registers<T, decltype(k)::value>(in, out, plan, interleave, stream);
  });
}

// f(batch, division by `divisor`), the batch's digits and the division in 32 bits where every
// index the kernel divides is below 2^32 (`indices` of them: lab::NarrowBatch,
// lab::FastDivision32), else in 64: the kernels below take either, and the 32-bit ones cost a
// fraction of the instructions.
template <class F>
LaunchShape with_digits(const lab::Batch& batch, lab::Index divisor, lab::Index indices, F&& f) {
  if (indices <= lab::Index{UINT32_MAX})
    return f(lab::NarrowBatch(batch), lab::FastDivision32(static_cast<std::uint32_t>(divisor)));
  return f(batch, lab::FastDivision(static_cast<std::uint64_t>(divisor)));
}

// ---- Short rows that are not whole vectors (4096 planes of 3 x 1000 uint8, 64 of 2 x 50001):
// ---- short_register_kernel needs whole aligned vectors on both sides. staged_kernel takes planes
// a stage holds, gathering each element of a vector from the stage (16 loads a vector for uint8);
// v4's tiles took the longer ones, an element an access. But where the planes lie one after another
// in the output, the runs of all planes form one stream: index t = b * cols + c (plane b, column c)
// is the run at t * K, so N consecutive indices are K whole, aligned vectors of the stream whatever
// the plane. Only the short rows are misaligned, and each row's 16 bytes are cut from the two
// aligned vectors they straddle (load_unaligned, as CUDA.v7_packed's thin matrices). Where a
// thread's N indices run into the next plane, the rest comes from there the same way, merged by
// byte masks; the stream's last indices (fewer than N, or a vector that would be read past the
// tensor) go element by element.
// Measured (unaligned_short.csv in docs/results/h100, h200; this kernel on every such plan against
// the paths before it): 64 planes of 2 x 50001 from a fifth or a quarter of the copy to past it
// (the copy of those 6 MB is slow), 3 x 1000 uint8 from 77% to 79% on an H100 and from 64% to 73%
// on an H200. Where a stage holds the planes it lost otherwise, by up to 18 points: for 2-byte
// elements, whose 8 gathers a vector the stage does well, and for rows of 333 bytes, where almost
// every warp has a lane that merges two planes. So uint8 is cut where a warp's 32 x 16 indices meet
// at most one plane's end (rows of 512 or more), and every 1- or 2-byte plane that no stage holds.

// Bytes [0, bytes) of lo, the rest of hi.
__device__ __forceinline__ uint4 merge_at(uint4 lo, uint4 hi, int bytes) {
  const std::uint32_t l[WORDS] = {lo.x, lo.y, lo.z, lo.w}, h[WORDS] = {hi.x, hi.y, hi.z, hi.w};
  std::uint32_t v[WORDS];
#pragma unroll
  for (int x = 0; x < WORDS; ++x) {
    const int from_lo = bytes - 4 * x;  // of this word's 4 bytes
    const std::uint32_t mask = from_lo >= 4 ? ~0u : (from_lo <= 0 ? 0u : (1u << (8 * from_lo)) - 1);
    v[x] = (l[x] & mask) | (h[x] & ~mask);
  }
  return make_uint4(v[0], v[1], v[2], v[3]);
}

// Batch and Division as runs_kernel's: the planes' digits in 32 bits where every index is (3 x 1000
// uint8 on an H200 from 78% of the copy to 83-84%, float16 unchanged: narrow_short_rows.csv).
// P: the pieces of N indices a thread takes a round, the loads of all of them in flight before
// the first is interleaved (the launcher says when two).
template <class T, int K, int P, class Batch, class Division>
__global__ void __launch_bounds__(THREADS)
    unaligned_short_kernel(const T* __restrict__ in, T* __restrict__ out, lab::Plan plan,
                           Batch batch, Division plane_cols, lab::Index in_bytes) {
  using Word = decltype(plane_cols.divisor);
  static_assert(sizeof(T) <= 2, "wider elements keep staged_kernel and v4's tiles");
  constexpr int N = VECTOR_BYTES / sizeof(T);
  __shared__ uint4 stages[THREADS / WARP_SIZE][WARP_SIZE * K];
  uint4* stage = stages[threadIdx.x / WARP_SIZE];
  const int lane = static_cast<int>(threadIdx.x % WARP_SIZE);
  const lab::Index cols = plan.cols, total = plan.batch.count * cols;   // indices t of the stream
  const lab::Index piece_stride = lab::Index{gridDim.x} * THREADS * N;  // between a thread's pieces
  // The end of the aligned pair load_unaligned reads for the element at `offset`, in bytes.
  auto pair_end = [](lab::Index offset) {
    return offset * lab::Index{sizeof(T)} / VECTOR_BYTES * VECTOR_BYTES + 2 * VECTOR_BYTES;
  };
  // Whole warps iterate together (the stage's exchanges need every lane).
  for (lab::Index warp_first = (lab::Index{blockIdx.x} * THREADS + (threadIdx.x - lane)) * N;
       warp_first < total; warp_first += P * piece_stride) {
    VectorOf<T> rows[P][K];  // rows[p][k]: short row k's N elements of piece p
    bool whole[P];
    lab::Index t0[P];
#pragma unroll
    for (int p = 0; p < P; ++p) {
      t0[p] = warp_first + p * piece_stride + lane * N;
      whole[p] = t0[p] + N <= total;
      if (whole[p]) {
        const Word b = plane_cols.quotient(static_cast<Word>(t0[p]));
        const lab::Index c = t0[p] - static_cast<lab::Index>(b) * cols,
                         last_row = (K - 1) * plan.in_pitch;
        lab::Index in_base, out_base, next_base = 0, next_out;
        batch.offsets(b, in_base, out_base);
        const int left = static_cast<int>(cols - c < N ? cols - c : N);  // indices in plane b
        if (left < N) batch.offsets(b + 1, next_base, next_out);
        whole[p] = pair_end(in_base + last_row + c) <= in_bytes &&
                   (left == N || pair_end(next_base + last_row - left) <= in_bytes);
        if (whole[p]) {
          // Every row's vectors asked for before any is merged: with a branch a row, a lane that
          // meets the next plane held its warp's later rows' loads back until its own had arrived
          // (3 x 1000 uint8 from 75-76% of the copy to 78-79% on an H200: merged_loads.csv).
          uint4 next[K];
#pragma unroll
          for (int k = 0; k < K; ++k)
            rows[p][k].word = load_unaligned(in + in_base + k * plan.in_pitch + c);
          if (left < N) {  // element j >= left is the next plane's j - left
#pragma unroll
            for (int k = 0; k < K; ++k)
              next[k] = load_unaligned(in + next_base + k * plan.in_pitch - left);
#pragma unroll
            for (int k = 0; k < K; ++k)
              rows[p][k].word =
                  merge_at(rows[p][k].word, next[k], left * static_cast<int>(sizeof(T)));
          }
        }
      }
    }
#pragma unroll
    for (int p = 0; p < P; ++p) {
      VectorOf<T> run[K];  // the piece's rows interleaved
      short_rows::interleave<T, K>(rows[p], run);
      short_rows::scatter_runs<T, K>(stage, whole[p] ? out + t0[p] * K : nullptr, lane, run);
      if (!whole[p])
        for (lab::Index t = t0[p]; t < t0[p] + N && t < total; ++t) {
          const Word b = plane_cols.quotient(static_cast<Word>(t));
          lab::Index in_base, out_base;
          batch.offsets(b, in_base, out_base);
          const lab::Index c = t - static_cast<lab::Index>(b) * cols;
#pragma unroll
          for (int k = 0; k < K; ++k) out[t * K + k] = in[in_base + k * plan.in_pitch + c];
        }
      __syncwarp();  // the stage is read whole before the next piece overwrites it
    }
  }
}

// Whether the planes lie one after another in the output and, with `input_too`, in the input: no
// batch axis, or one whose strides are the plane's elements.
bool planes_in_a_row(const lab::Plan& plan, bool input_too) {
  const lab::Index plane = plan.rows * plan.cols;
  return plan.batch.axes == 0 || (plan.batch.axes == 1 && plan.batch.out_stride[0] == plane &&
                                  (!input_too || plan.batch.in_stride[0] == plane));
}

// Short rows (2 to 7) of 1- or 2-byte elements, interleaved into an output whose planes lie one
// after another, both pointers aligned (the caller has found the rows not whole vectors), rows of
// N elements or more (a thread's indices then meet at most two planes). Wider elements keep
// staged_kernel and v4's tiles: on CUDA.v7_packed's thin matrices the same cut lost to its element
// kernels for them.
template <class T>
bool unaligned_short_fits(const lab::Plan& plan, const T* in, const T* out) {
  constexpr int N = VECTOR_BYTES / sizeof(T);
  return !plan.runs && plan.rows >= 2 && plan.rows < SHORT_SIDE && plan.cols >= N &&
         plan.out_pitch == plan.rows && planes_in_a_row(plan, false) && aligned(in) && aligned(out);
}

template <class T, class Batch, class Division>
LaunchShape launch_unaligned_short(const T* in, T* out, const lab::Plan& plan, const Batch& batch,
                                   const Division& plane_cols, lab::Index in_bytes,
                                   lab::Index needed, cudaStream_t stream) {
  // Even rounds: where the blocks needed are more than the GPU holds at once, each thread takes
  // the same count of pieces, so that every round keeps as many blocks busy (1000 blocks of
  // 3 x 1000 uint8 on 792 places: two rounds of 500, not 792 then 208). Measured (even_rounds.csv
  // in docs/results/h100, h200): 3 x 1000 uint8 from 80% to 82% of the copy on an H100, from 72%
  // to 75% on an H200; where one round holds every block, nothing changes.
  const auto places_for = [](auto kernel) {  // blocks the GPU holds at once
    int per_sm = 0;
    CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, kernel, THREADS, 0));
    return std::max(lab::Index{1}, lab::Index{per_sm} * lab::multiprocessors());
  };
  const auto launch = [&](auto kernel, lab::Index places) {
    const lab::Index rounds = (needed + places - 1) / places;
    const dim3 block(THREADS), grid(blocks_for((needed + rounds - 1) / rounds, 1));
    kernel<<<grid, block, 0, stream>>>(in, out, plan, batch, plane_cols, in_bytes);
    return LaunchShape{grid, block};
  };
  return short_rows::with_side(static_cast<int>(plan.rows), [&](auto k) {
    constexpr int K = decltype(k)::value;
    const auto one_piece = unaligned_short_kernel<T, K, 1, Batch, Division>;
    const lab::Index places = places_for(one_piece);
    // uint8 of 2 or 3 rows where each thread has two or three pieces: two a round, so that it
    // waits out the memory's latency once, not twice. Measured on an H200 against one a round
    // (two_pieces.csv in docs/results/h200): 3 x 1000 from 82-85% of the copy to 89-90%, 6000
    // planes of them from 96-101% to 100-104%. Two pieces take 56 or 64 registers, not 40 or 44
    // (4 rows: 76, not 60), and so fewer blocks an SM: uint8 lost up to 4 points with one piece a
    // thread (64 planes of 2 x 50001, which two pieces made two rounds) and with eight (16384
    // planes of 3 x 1000), 4 rows (3000 planes of 4 x 1001, two pieces a thread) moved from -5 to
    // +2, and float16 lost up to 6 and gained nothing: those take one, as do 5 rows or more (100
    // registers).
    if constexpr (sizeof(T) == 1 && K <= 3) {
      const lab::Index pieces = (needed + places - 1) / places;  // a thread's, one a round
      if (pieces == 2 || pieces == 3) {
        const auto two_pieces = unaligned_short_kernel<T, K, 2, Batch, Division>;
        return launch(two_pieces, places_for(two_pieces));
      }
    }
    return launch(one_piece, places);
  });
}

template <class T>
LaunchShape launch_unaligned_short(const T* in, T* out, const lab::Plan& plan,
                                   cudaStream_t stream) {
  constexpr int N = VECTOR_BYTES / sizeof(T);
  // The kernel never takes runs: the tensor is the batch's planes, rows x cols each.
  const lab::Index in_bytes = plan.batch.count * plan.rows * plan.cols * lab::Index{sizeof(T)};
  const lab::Index indices = plan.batch.count * plan.cols;
  const lab::Index needed = (indices + THREADS * N - 1) / (THREADS * N);
  return with_digits(plan.batch, plan.cols, indices, [&](const auto& batch, const auto& by_cols) {
    return launch_unaligned_short(in, out, plan, batch, by_cols, in_bytes, needed, stream);
  });
}

// ---- Runs: the innermost axis stays innermost, so each plane is one run copied whole. v3 copies
// ---- it one element a thread (a warp of uint8 moves 32 bytes an instruction); here each thread
// copies one vector V, the widest that divides the run, every batch stride and both addresses, so
// a warp moves up to 512 bytes. Consecutive threads take consecutive vectors of consecutive runs,
// and consecutive runs are consecutive in the output (the batch's output-innermost digit first).
constexpr int RUN_UNROLL = 4;  // vectors in flight a thread: a copy is bound by bytes in flight

// Batch and Division: lab::Batch and lab::FastDivision, or where every index of the launch is
// below 2^32 lab::NarrowBatch and lab::FastDivision32. Each vector's run and digits come from
// divisions, one a digit, before its load can leave: a 64-bit one is a dozen instructions, a
// 32-bit one a high multiply and two shifts. On the attention swap of uint8 (64-byte runs, one
// round) the kernel ran 4.9 million instructions with 64-bit digits and 2.9 million with 32-bit
// ones, and went from 85% of the copy to 87-89% on an H200 (narrow_digits.csv in docs/results).
template <class T, class V, class Batch, class Division>
__global__ void __launch_bounds__(THREADS)
    runs_kernel(const T* __restrict__ in, T* __restrict__ out, Batch batch, Division run_vectors,
                lab::Index total) {
  using Word = decltype(run_vectors.divisor);
  constexpr int PER = sizeof(V) / sizeof(T);  // elements a vector
  for (lab::Index first = lab::Index{blockIdx.x} * THREADS * RUN_UNROLL; first < total;
       first += lab::Index{gridDim.x} * THREADS * RUN_UNROLL) {
    V v[RUN_UNROLL];
    lab::Index to[RUN_UNROLL];
#pragma unroll
    for (int k = 0; k < RUN_UNROLL; ++k) {  // every load issued before the first store
      const lab::Index i = first + k * THREADS + threadIdx.x;
      if (i >= total) continue;
      const auto w = static_cast<Word>(i);
      const Word b = run_vectors.quotient(w);
      const auto j = static_cast<lab::Index>(w - b * run_vectors.divisor) * PER;
      lab::Index in_base;
      batch.offsets(b, in_base, to[k]);
      v[k] = *reinterpret_cast<const V*>(in + in_base + j);
      to[k] += j;
    }
#pragma unroll
    for (int k = 0; k < RUN_UNROLL; ++k)
      if (first + k * THREADS + threadIdx.x < total) *reinterpret_cast<V*>(out + to[k]) = v[k];
  }
}

// The widest vector of 16, 8 or 4 bytes that every run of the plan is made of on both sides (the
// run's bytes, each batch stride's and both addresses are multiples of it), or 0 for none.
template <class T>
int run_vector_bytes(const lab::Plan& plan, const T* in, const T* out) {
  auto fits = [&](int bytes) {
    return plan.cols * lab::Index{sizeof(T)} % bytes == 0 &&
           reinterpret_cast<std::uintptr_t>(in) % bytes == 0 &&
           reinterpret_cast<std::uintptr_t>(out) % bytes == 0 &&
           batch_strides_whole(plan, sizeof(T), bytes);
  };
  for (int bytes = VECTOR_BYTES; bytes >= 4; bytes /= 2)
    if (fits(bytes)) return bytes;
  return 0;
}

// Consecutive runs are consecutive in the output, but in the input those of the output-innermost
// digit lie apart (the attention swap: 64-byte runs 1 KiB apart), and the input's neighbouring
// runs belong to another digit, moved by far-off blocks. A run shorter than a cache line leaves
// the rest of its line to one of those. So such runs go in tiles, as a matrix's elements do: T
// runs of the output-innermost digit (y) by T of the input-innermost one (x), RUN_TILE_BYTES of
// each side contiguous, the batch's digits reordered (y's low part, x's low part, y's high part,
// the rest with x's high part in its place) where both extents divide by T. Measured on an H200
// (run_tiles.csv in docs/results), the attention swap: uint8 (64-byte runs) from 88% of the copy
// to 90-91%; float16 and float32, whose runs fill their lines, lost 1.6 to 3.5 points in tiles
// (two more digits a vector) and keep the output's order.
constexpr lab::Index RUN_TILE_BYTES = 1024;
constexpr lab::Index GPU_LINE_BYTES = 128;  // L1's and L2's line: four 32-byte sectors

lab::Batch runs_in_tiles(const lab::Batch& batch, lab::Index run_bytes) {
  if (run_bytes >= GPU_LINE_BYTES || batch.axes < 2 || batch.axes + 2 > lab::kMaxPermuteRank)
    return batch;
  int x = 0;  // the input-innermost digit
  for (int i = 1; i < batch.axes; ++i)
    if (batch.in_stride[i] < batch.in_stride[x]) x = i;
  const auto extent = [&](int i) { return static_cast<lab::Index>(batch.extent[i].divisor); };
  lab::Index t = 1;
  while (2 * t * run_bytes <= RUN_TILE_BYTES && extent(0) % (2 * t) == 0 &&
         extent(x) % (2 * t) == 0)
    t *= 2;
  if (x == 0 || t == 1) return batch;
  lab::Batch tiled;
  const auto add = [&](lab::Index e, lab::Index in_stride, lab::Index out_stride) {
    tiled.extent[tiled.axes] = lab::FastDivision(static_cast<std::uint64_t>(e));
    tiled.in_stride[tiled.axes] = in_stride;
    tiled.out_stride[tiled.axes] = out_stride;
    ++tiled.axes;
  };
  add(t, batch.in_stride[0], batch.out_stride[0]);
  add(t, batch.in_stride[x], batch.out_stride[x]);
  add(extent(0) / t, batch.in_stride[0] * t, batch.out_stride[0] * t);
  for (int i = 1; i < batch.axes; ++i)
    if (i == x)
      add(extent(x) / t, batch.in_stride[x] * t, batch.out_stride[x] * t);
    else
      add(extent(i), batch.in_stride[i], batch.out_stride[i]);
  tiled.count = batch.count;
  return tiled;
}

template <class T, class V>
LaunchShape launch_runs(const T* in, T* out, const lab::Plan& plan, cudaStream_t stream) {
  const lab::Index run_vectors = plan.cols * lab::Index{sizeof(T)} / lab::Index{sizeof(V)};
  const lab::Index total = plan.batch.count * run_vectors;
  const lab::Batch batch = runs_in_tiles(plan.batch, plan.cols * lab::Index{sizeof(T)});
  const dim3 block(THREADS), grid(blocks_for(total, lab::Index{THREADS} * RUN_UNROLL));
  return with_digits(batch, run_vectors, total, [&](const auto& digits, const auto& by_run) {
    runs_kernel<T, V><<<grid, block, 0, stream>>>(in, out, digits, by_run, total);
    return LaunchShape{grid, block};
  });
}

// 16 bytes of N elements, the k-th read from stage[at(k)] (at called once for each k, in order),
// assembled in registers: bytes and half words shifted into words, as a local array of them
// would go to local memory.
template <class T, class At>
__device__ uint4 gather(const T* stage, At at) {
  constexpr int N = VECTOR_BYTES / sizeof(T);
  if constexpr (sizeof(T) >= 4) {
    alignas(VECTOR_BYTES) T element[N];
#pragma unroll
    for (int k = 0; k < N; ++k) element[k] = stage[at(k)];
    return *reinterpret_cast<const uint4*>(element);
  } else {
    using Bits = std::conditional_t<sizeof(T) == 1, std::uint8_t, std::uint16_t>;
    const Bits* bits = reinterpret_cast<const Bits*>(stage);
    std::uint32_t w[WORDS] = {};
#pragma unroll
    for (int k = 0; k < N; ++k)
      w[k * sizeof(T) / 4] |= std::uint32_t{bits[at(k)]} << (8 * (k * sizeof(T) % 4));
    return make_uint4(w[0], w[1], w[2], w[3]);
  }
}

// ---- Whole planes in a row (4096 matrices of 17 x 19; short rows of 333 bytes, and 2-byte ones,
// ---- where unaligned_short_kernel loses): no plane row is whole vectors, but where each plane is
// dense and the batch lays them one after the other on both sides, P planes are one stretch of
// input and one of output, starting at the same offset. A block copies the aligned vectors that
// cover its input stretch into shared memory with 16-byte loads and writes the whole vectors of its
// output stretch with 16-byte stores, each gathered element by element (`gather`); the few elements
// at the stretch's two ends, in vectors it shares with its neighbours, go one by one. P is chosen
// on the host (staged_stretch): as many planes as the stage holds, fewer where that would leave the
// GPU with less than STAGED_BLOCKS_PER_SM blocks an SM.
constexpr int STAGE_BYTES = 16384;
// 1 (all a stage holds) or 16 lost for 17 x 19 planes (staged_planes.csv in docs/results/h*).
constexpr int STAGED_BLOCKS_PER_SM = 4;
constexpr int STAGED_LOADS = 4;  // vectors a thread loads before it stores any to the stage

template <class T>
__global__ void __launch_bounds__(THREADS)
    staged_kernel(const T* __restrict__ in, T* __restrict__ out, lab::Index total, int rows,
                  int cols, int stretch, lab::FastDivision32 by_plane,
                  lab::FastDivision32 by_rows) {
  constexpr int N = VECTOR_BYTES / sizeof(T);
  extern __shared__ uint4 stage_vectors[];
  T* stage = reinterpret_cast<T*>(stage_vectors);
  const uint4* in_vectors = reinterpret_cast<const uint4*>(in);
  const lab::Index whole = total / N;  // vectors wholly inside the tensor
  const int plane = rows * cols;
  // A stretch's offsets o are below 2^31: o / plane and o / rows as 32-bit fast divisions, not the
  // twenty-odd instructions of an int `/`, twice for every vector. 17 x 19 planes on an H200, % of
  // the copy: uint8 79-81 to 83-84, float16 88-89 to 91-94, float64 92-94 to 99-100
  // (staged_division.csv in docs/results).
  const auto quotient = [](const lab::FastDivision32& d, int o) {
    return static_cast<int>(d.quotient(static_cast<std::uint32_t>(o)));
  };
  for (lab::Index first = lab::Index{blockIdx.x} * stretch; first < total;
       first += lab::Index{gridDim.x} * stretch) {
    const lab::Index end = total - first < stretch ? total : first + stretch;
    const lab::Index base = first / N * N;  // the stage's element 0: the first vector's start
    const int lead = static_cast<int>(first - base);
    // Output element e of the stretch is in plane p at (c, r): input element (r, c) of that plane.
    auto source = [=](lab::Index e) {
      const int o = static_cast<int>(e - first), p = quotient(by_plane, o), q = o - p * plane,
                c = quotient(by_rows, q);
      return lead + p * plane + (q - c * rows) * cols + c;
    };
    const int vectors = static_cast<int>((end < whole * N ? (end + N - 1) / N : whole) - base / N);
    for (int v = threadIdx.x; v < vectors; v += STAGED_LOADS * THREADS) {
      uint4 loaded[STAGED_LOADS];
#pragma unroll
      for (int k = 0; k < STAGED_LOADS; ++k)
        if (v + k * THREADS < vectors) loaded[k] = in_vectors[base / N + v + k * THREADS];
#pragma unroll
      for (int k = 0; k < STAGED_LOADS; ++k)
        if (v + k * THREADS < vectors) stage_vectors[v + k * THREADS] = loaded[k];
    }
    for (lab::Index e = (base / N + vectors) * N + threadIdx.x; e < end; e += THREADS)
      stage[e - base] = in[e];  // past the tensor's last whole vector
    __syncthreads();
    // Output vectors wholly inside the stretch: [head, tail) in elements; the rest one by one.
    const lab::Index head = (first + N - 1) / N * N, tail = end / N * N;
    for (lab::Index at = head + lab::Index{threadIdx.x} * N; at < tail; at += THREADS * N) {
      const int o = static_cast<int>(at - first);
      int p = quotient(by_plane, o), q = o - p * plane, c = quotient(by_rows, q), r = q - c * rows;
      uint4& to = reinterpret_cast<uint4*>(out)[at / N];
      // Rows of N or more: the vector's elements lie in one column, or in two, one address each.
      // It took 17 x 19 planes of 1- and 2-byte elements (8 or 16 gathers a vector) from 79 to
      // 85% (uint8) and 86 to 90% (float16) of the copy on an H100; 4- to 16-byte elements tied
      // or lost up to 2 points, and keep the stepping (gathers.csv in docs/results/h100).
      if (sizeof(T) <= 2 && rows >= N) {
        const int before = rows - r, start = lead + p * plane + r * cols + c;
        const int next = (c + 1 < cols ? lead + p * plane + c + 1 : lead + (p + 1) * plane);
        const int second = next - before * cols;  // the next column's start, less `before` rows
        to = gather(stage, [&](int k) { return (k < before ? start : second) + k * cols; });
      } else {  // fewer rows, or wider elements: step (r, c, p) element by element
        to = gather(stage, [&](int) {
          const int from = lead + p * plane + r * cols + c;
          if (++r == rows) {
            r = 0;
            if (++c == cols) c = 0, ++p;
          }
          return from;
        });
      }
    }
    const int ends = static_cast<int>(head < tail ? head - first : end - first);
    const int after = static_cast<int>(head < tail ? end - tail : 0);
    for (int k = threadIdx.x; k < ends + after; k += THREADS) {
      const lab::Index e = k < ends ? first + k : tail + (k - ends);
      out[e] = stage[source(e)];
    }
    __syncthreads();  // the stage is read whole before the next stretch overwrites it
  }
}

// The elements of a stretch of whole planes in a row, or 0 where the planes do not lie so, where a
// stage cannot hold one plane, or where the plane's rows are whole vectors of an even count of
// elements: the packed kernels or v4's tiles take those, and the gathers, which step down a column
// of the stage, would meet on one shared-memory bank.
template <class T>
lab::Index staged_stretch(const lab::Plan& plan, const T* in, const T* out) {
  const lab::Index plane = plan.rows * plan.cols;
  const bool ragged = plan.cols % 2 == 1 || plan.cols * lab::Index{sizeof(T)} % VECTOR_BYTES != 0;
  if (plan.runs || plan.in_pitch != plan.cols || plan.out_pitch != plan.rows ||
      !planes_in_a_row(plan, true) || !ragged || !aligned(in) || !aligned(out))
    return 0;
  const lab::Index fit = STAGE_BYTES / (plane * lab::Index{sizeof(T)});
  if (fit == 0) return 0;
  const lab::Index blocks = lab::Index{lab::multiprocessors()} * STAGED_BLOCKS_PER_SM;
  const lab::Index spread = (plan.batch.count + blocks - 1) / blocks;  // planes a block, at most
  return std::max(lab::Index{1}, std::min(fit, spread)) * plane;
}

template <class T>
LaunchShape launch_staged(const T* in, T* out, const lab::Plan& plan, lab::Index stretch,
                          cudaStream_t stream) {
  constexpr int N = VECTOR_BYTES / sizeof(T);
  const lab::Index total = plan.batch.count * plan.rows * plan.cols;
  const int shared_bytes = static_cast<int>((stretch + 2 * N) / N * VECTOR_BYTES);
  const dim3 block(THREADS), grid(blocks_for(total, stretch));
  staged_kernel<T><<<grid, block, shared_bytes, stream>>>(
      in, out, total, static_cast<int>(plan.rows), static_cast<int>(plan.cols),
      static_cast<int>(stretch),
      lab::FastDivision32(static_cast<std::uint32_t>(plan.rows * plan.cols)),
      lab::FastDivision32(static_cast<std::uint32_t>(plan.rows)));
  return {grid, block};
}

// permute_kernel with `groups` groups of 256 threads fixed, for G and each power of two below it
// down to 2; `otherwise` for any other count.
template <class T, bool kBorrowed, int G = packed_tile::V7_GROUPS, class Kernel>
Kernel fixed_shape_kernel(int groups, Kernel otherwise) {
  if (groups == G) return permute_kernel<T, kBorrowed, G>;
  if constexpr (G > 2) return fixed_shape_kernel<T, kBorrowed, G / 2>(groups, otherwise);
  return otherwise;
}

template <class T, bool kBorrowed>
LaunchShape launch_tile(const T* in, T* out, const lab::Plan& plan, const Borrowed& borrowed,
                        cudaStream_t stream) {
  constexpr int N = VECTOR_BYTES / sizeof(T);
  const TileShape shape = plane_tile(plan, N).shape;
  const int threads = shape.groups * shape.chunks;
  const int shared_bytes = threads * N * VECTOR_BYTES;  // up to 64 KiB for 1-byte elements
  auto kernel = permute_kernel<T, kBorrowed, 0>;
  if (threads == THREADS) {  // the shapes fixed when compiled (kGroups)
    if constexpr (sizeof(T) == 1) kernel = fixed_shape_kernel<T, kBorrowed>(shape.groups, kernel);
    if constexpr (sizeof(T) == 2)
      if (shape.groups == packed_tile::V7_GROUPS)
        kernel = permute_kernel<T, kBorrowed, packed_tile::V7_GROUPS>;
  }
  lab::allow_shared_bytes(kernel, shared_bytes);
  const dim3 block(threads);
  const dim3 grid(blocks_for(plan.cols, shape.chunks * N), blocks_for(plan.rows, shape.groups * N),
                  blocks_for(plan.batch.count, 1));
  kernel<<<grid, block, shared_bytes, stream>>>(in, out, plan, shape, borrowed);
  return {grid, block};
}

}  // namespace

template <class T>
LaunchShape launch_permute(const T* in, T* out, const lab::Permutation& p, cudaStream_t stream) {
  constexpr int N = VECTOR_BYTES / sizeof(T);
  const lab::Plan plan = lab::plan_of(p);
  if (plan.runs) {
    const int bytes = run_vector_bytes(plan, in, out);
    if (bytes == 16) return launch_runs<T, uint4>(in, out, plan, stream);
    if (bytes == 8 && sizeof(T) <= 8) return launch_runs<T, uint2>(in, out, plan, stream);
    if (bytes == 4 && sizeof(T) <= 4) return launch_runs<T, std::uint32_t>(in, out, plan, stream);
  }
  // 16-byte elements are one vector each already (N = 1): nothing to pack, but sides to borrow.
  if constexpr (N == 1) {
    const BorrowedPlan wide = borrow_axes(plan, 1, WIDE_SIDE);
    const bool fills = std::min(wide.plan.rows, wide.plan.cols) >= WIDE_SIDE &&
                       std::min(plan.rows, plan.cols) >= SHORT_SIDE;  // short sides: short_path
    if (wide.any && fills && aligned(in) && aligned(out))
      return launch_wide_tile(in, out, wide.plan, wide.borrowed, stream);
  } else {
    const BorrowedPlan wide = borrow_axes(plan, N, lab::Index{packed_tile::V7_GROUPS} * N);
    if (wide.any && packed_path(wide.plan, N, in, out) == Packed::kTile)
      return launch_tile<T, true>(in, out, wide.plan, wide.borrowed, stream);
  }
  const Packed packed = N > 1 ? packed_path(plan, N, in, out) : Packed::kNone;
  if constexpr (N > 1)
    if (packed == Packed::kFlat) return launch_flat(in, out, plan, stream);
  const ShortPath path = short_path(plan, N, in, out);  // a side under SHORT_SIDE: never packed
  if (path != ShortPath::kNone) return launch_short(in, out, plan, path, stream);
  if (packed != Packed::kTile) {
    const lab::Index stretch = staged_stretch(plan, in, out);
    // uint8 rows of a warp's indices or more are cut, not staged (see unaligned_short_kernel).
    if constexpr (sizeof(T) <= 2)
      if (unaligned_short_fits(plan, in, out) &&
          (stretch == 0 || (sizeof(T) == 1 && plan.cols >= WARP_SIZE * N)))
        return launch_unaligned_short(in, out, plan, stream);
    if (stretch > 0) return launch_staged(in, out, plan, stretch, stream);
    return launch_reused_permute<T>(in, out, p, stream);
  }
  return launch_tile<T, false>(in, out, plan, {}, stream);
}

const char* const kStepSummary = "16-byte accesses for every element size: v7's packed blocks";
