// Checks PERMUTE.v5_packed's tile on the host, where no GPU is needed: the shape its launcher picks
// for a plane and the swizzled cells its kernel uses (the step's own tile_shape.hpp).
//   permute_tile_probe shape ROW_BLOCKS COL_BLOCKS N KEEP_V7
//       the tile for a plane of ROW_BLOCKS x COL_BLOCKS blocks of N x N: "tile G x C, fill F"
//   permute_tile_probe check
//       every plane of 2 to 300 blocks a side, N = 2, 4, 8 (and 16 with v7's tile kept): the tile
//       is v7's or one the kernel may run, fills at least as many threads as v7's, and its cells
//       are a permutation of the tile's with no two of a quarter warp's stores or loads on one
//       group of banks where `chunks` is a multiple of 8
// Prints one line; exits 0 when everything held, 1 when not, 2 on bad arguments.
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "../PERMUTE.v5_packed/tile_shape.hpp"

namespace {

using packed_tile::TileShape;
constexpr int kQuarterWarp = 8;  // 16-byte accesses: a warp's are served 8 threads at a time

bool is_v7(TileShape t) {
  return t.groups * t.chunks == packed_tile::THREADS && (t.groups & (t.groups - 1)) == 0 &&
         t.groups <= packed_tile::V7_GROUPS;
}

// The kernel's two passes over the tile: thread i writes its block's N rows (chunk = i % chunks,
// group = i / chunks), then reads a cell of output row i / groups + pass * chunks. Every cell once
// each way; where chunks is a multiple of 8, a quarter warp's cells on 8 different bank groups.
template <int N>
std::string check_cells(TileShape t) {
  const int threads = t.groups * t.chunks, cells = threads * N;
  std::vector<int> written(cells, 0), read(cells, 0);
  const bool conflict_free = t.chunks % kQuarterWarp == 0;
  for (int j = 0; j < N; ++j) {
    for (int first = 0; first < threads; first += kQuarterWarp) {
      int banks = 0;
      for (int i = first; i < first + kQuarterWarp && i < threads; ++i) {
        const int c = packed_tile::cell<N>((i % t.chunks) * N + j, i / t.chunks, t.groups);
        if (c < 0 || c >= cells) return "a written cell outside the tile";
        ++written[c];
        banks |= 1 << (c % kQuarterWarp);
      }
      if (conflict_free && banks != 0xff) return "a quarter warp's stores share a bank group";
    }
  }
  for (int pass = 0; pass < N; ++pass) {
    for (int first = 0; first < threads; first += kQuarterWarp) {
      int banks = 0;
      for (int i = first; i < first + kQuarterWarp && i < threads; ++i) {
        const int c = packed_tile::cell<N>(i / t.groups + pass * t.chunks, i % t.groups, t.groups);
        if (c < 0 || c >= cells) return "a read cell outside the tile";
        ++read[c];
        banks |= 1 << (c % kQuarterWarp);
      }
      if (t.groups % kQuarterWarp == 0 && banks != 0xff)
        return "a quarter warp's loads share a bank group";
    }
  }
  for (int c = 0; c < cells; ++c)
    if (written[c] != 1 || read[c] != 1) return "cells not a permutation of the tile";
  return "";
}

std::string check_tile(TileShape t, int n) {
  switch (n) {
    case 2:
      return check_cells<2>(t);
    case 4:
      return check_cells<4>(t);
    case 8:
      return check_cells<8>(t);
    default:
      return check_cells<16>(t);
  }
}

int check_all() {
  long planes = 0, fitted = 0;
  for (const int n : {2, 4, 8, 16}) {
    const bool keep_v7 = n == 16;
    for (lab::Index rows = 2; rows <= 300; ++rows) {
      for (lab::Index cols = 2; cols <= 300; ++cols) {
        const packed_tile::PlaneTile p = packed_tile::plane_tile(rows, cols, n, keep_v7);
        const TileShape t = p.shape, v7 = packed_tile::plane_tile(rows, cols, n, true).shape;
        const double v7_fill = packed_tile::tile_fill(rows, cols, v7);
        std::string why;
        if (!is_v7(t) && !packed_tile::allowed(t, n)) why = "a tile the kernel may not run";
        if (keep_v7 && !is_v7(t)) why = "not v7's tile";
        if (p.fill != packed_tile::tile_fill(rows, cols, t)) why = "a fill not the tile's";
        if (p.fill <= 0 || p.fill > 1 || p.fill < v7_fill)
          why = "a fill below v7's or out of range";
        if (why.empty()) why = check_tile(t, n);
        if (!why.empty()) {
          std::printf("FAILED: %lld x %lld blocks, N = %d: tile %d x %d: %s\n",
                      static_cast<long long>(rows), static_cast<long long>(cols), n, t.groups,
                      t.chunks, why.c_str());
          return 1;
        }
        ++planes;
        fitted += !is_v7(t);
      }
    }
  }
  std::printf(
      "checked %ld planes (%ld of them fitted): every tile runs, fills at least v7's, "
      "and its cells are a permutation of the tile\n",
      planes, fitted);
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  const std::string mode = argc > 1 ? argv[1] : "";
  if (mode == "check" && argc == 2) return check_all();
  if (mode == "shape" && argc == 6) {
    const lab::Index rows = std::atoll(argv[2]), cols = std::atoll(argv[3]);
    const int n = std::atoi(argv[4]);
    if (rows < 2 || cols < 2 || (n != 2 && n != 4 && n != 8 && n != 16)) {
      std::fprintf(stderr, "permute_tile_probe: sides of at least 2 blocks, N of 2, 4, 8 or 16\n");
      return 2;
    }
    const packed_tile::PlaneTile p = packed_tile::plane_tile(rows, cols, n, std::atoi(argv[5]));
    std::printf("tile %d x %d, fill %.3f\n", p.shape.groups, p.shape.chunks, p.fill);
    return 0;
  }
  std::fprintf(stderr, "usage: permute_tile_probe check | shape ROW_BLOCKS COL_BLOCKS N KEEP_V7\n");
  return 2;
}
