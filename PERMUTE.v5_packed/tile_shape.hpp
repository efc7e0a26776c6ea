// The shape of PERMUTE.v5_packed's tile for a plane: host code, which the launcher runs and
// tests/permute_tile_probe.cpp checks without a GPU. A tile is `groups` blocks of N rows by
// `chunks` blocks of N columns, a thread a block (N x N elements, N = 16 / sizeof(T)).
#pragma once

#include <algorithm>
#include <cmath>
#include <tuple>

#include "../PERMUTE.v3_tiled/fast_division.hpp"  // LAB_HOST_DEVICE
#include "../common/permute.hpp"                  // lab::Index

namespace packed_tile {

constexpr int THREADS = 256;  // v7's tile, and the most threads of any block of the step
// A fitted tile: at least two warps; at least 4 blocks, 64 bytes, of every row it reads and writes.
constexpr int MIN_TILE_THREADS = 64;
constexpr int MIN_TILE_SIDE = 4, MAX_TILE_SIDE = 64;
// v7's tile stays where it keeps nine tenths of its threads busy; a plane under one 256-thread
// tile takes a tile only where it keeps three quarters busy (else v4's tiles, which fit it).
constexpr double KEEP_FILL = 0.9;
constexpr double MIN_TILE_FILL = 0.75;
constexpr int V7_GROUPS = 16;
// The swizzle XORs a cell index's low three bits: each block of N rows must be whole groups of 8
// cells (groups * N a multiple of 8).
constexpr int SWIZZLE_CELLS = 8;

struct TileShape {
  int groups = 0, chunks = 0;
};

// The tile's cell of output row `row` (a column of the plane), group g: each output row holds
// `groups` cells of 16 bytes. XOR with the row's block of N (as v7's swizzle) spreads the 8 cells
// a quarter warp touches over all 32 banks, in both phases. The XOR stays inside an aligned group
// of 8 cells, and each block of N rows is whole such groups (groups * N a multiple of 8): a
// permutation of the tile's cells.
template <int N>
LAB_HOST_DEVICE int cell(int row, int g, int groups) {
  return (row * groups + g) ^ ((row / N) & (SWIZZLE_CELLS - 1));
}

// The share of a tile's launched threads that move a block, for a plane of row_blocks x
// col_blocks blocks. A side takes whole tiles: 12 blocks fill 3 of 4 tiles of 16 with 256
// threads, 12 of 12 with 144 (of whose 5 warps one is half idle). Idle threads still hold their
// place on the SM, so fewer bytes are in flight.
inline double tile_fill(lab::Index row_blocks, lab::Index col_blocks, TileShape t) {
  const auto side_fill = [](lab::Index blocks, int per) {
    return static_cast<double>(blocks) / static_cast<double>((blocks + per - 1) / per * per);
  };
  const int threads = t.groups * t.chunks, warps = (threads + 31) / 32;
  return side_fill(row_blocks, t.groups) * side_fill(col_blocks, t.chunks) * threads /
         (32.0 * warps);
}

// Whether t is a tile the kernel may run: the limits above, and the swizzle's.
inline bool allowed(TileShape t, int n) {
  const int threads = t.groups * t.chunks;
  return t.groups >= MIN_TILE_SIDE && t.groups <= MAX_TILE_SIDE && t.chunks >= MIN_TILE_SIDE &&
         t.chunks <= MAX_TILE_SIDE && threads >= MIN_TILE_THREADS && threads <= THREADS &&
         t.groups * n % SWIZZLE_CELLS == 0;
}

struct PlaneTile {
  TileShape shape;
  double fill = 0;
};

// The tile that fits the plane best, and its fill: the best fill; then, at equal fill, the fewer
// idle threads in the tiles (idle lanes of a last warp cost less), the longer of the shorter runs a
// tile reads and writes (16 bytes a block), and more threads (more bytes in flight a block).
inline PlaneTile fitted_tile(lab::Index row_blocks, lab::Index col_blocks, int n) {
  const auto millionths = [](double x) { return std::llround(x * 1e6); };  // ties compare equal
  PlaneTile best;
  std::tuple<long long, long long, int, int> best_rank{-1, -1, 0, 0};
  for (int groups = MIN_TILE_SIDE; groups <= MAX_TILE_SIDE; ++groups) {
    for (int chunks = MIN_TILE_SIDE; chunks <= MAX_TILE_SIDE; ++chunks) {
      const TileShape t{groups, chunks};
      if (!allowed(t, n)) continue;
      const int threads = groups * chunks, warp_threads = (threads + 31) / 32 * 32;
      const double fill = tile_fill(row_blocks, col_blocks, t);
      const auto rank = std::make_tuple(millionths(fill), millionths(fill * warp_threads / threads),
                                        std::min(groups, chunks), threads);
      if (rank > best_rank) best_rank = rank, best = {t, fill};
    }
  }
  return best;
}

// v7's tile, 256 threads: the most groups, up to 16, that the plane's rows fill; unless it leaves
// more than a tenth of its threads idle and a fitted tile fills more. keep_v7: v7's tile whatever
// it fills (uint8: measured on an H200, NCHW to NHWC with 64 channels, a side of 196 blocks, took
// 59.6% of the copy in 4 x 40 blocks against 78.5% in 4 x 64, a grid of 320 blocks for 132 SMs).
// The plane is at least 2 blocks a side (both sides at least 32 elements, N at most 16).
inline PlaneTile plane_tile(lab::Index row_blocks, lab::Index col_blocks, int n, bool keep_v7) {
  int groups = 1;
  while (groups < V7_GROUPS && 2 * groups <= row_blocks) groups *= 2;
  const TileShape v7{groups, THREADS / groups};
  const PlaneTile usual{v7, tile_fill(row_blocks, col_blocks, v7)};
  if (keep_v7 || usual.fill >= KEEP_FILL) return usual;
  const PlaneTile fitted = fitted_tile(row_blocks, col_blocks, n);
  return fitted.fill > usual.fill ? fitted : usual;
}

}  // namespace packed_tile
