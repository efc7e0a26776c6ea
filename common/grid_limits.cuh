// The device's grid limits, checked by every kernel step's launcher before it launches
// (lab::require_grid): a shape the grid cannot cover is refused in one line that names the limit,
// the largest shape the step handles and a step that handles this one; never a raw CUDA error.
#pragma once

#include <cuda_runtime.h>

#include <cinttypes>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>

#include "config.hpp"

#ifndef STEP_NAME
#define STEP_NAME "this step"
#endif
// The last step of the progression, passed by common/step.mk from the top Makefile: the one a
// refusal points to, since it covers every shape (empty: not known, the refusal names none).
#ifndef LAB_LAST_STEP
#define LAB_LAST_STEP ""
#endif

namespace lab {

// Which matrix extent grid x walks: the columns (v1 to v5, the copy) or the rows (v6 on). Grid y
// walks the other one, continued in grid z where a step splits it (v7).
enum class GridAxes { kColsInX, kRowsInX };

// Blocks along x, and along y and z: the device's limits (every GPU since compute capability 3.0).
constexpr std::int64_t kMaxGridX = 2147483647, kMaxGridYZ = 65535;
// The kernels compute element indices in int from blockIdx * tile: one tile beyond the grid (a
// tile reads a few rows past its own, v6) must still stay below 2^31.
constexpr std::int64_t kIntIndexLimit = std::int64_t{1} << 31;

// The largest extent an axis of at most `device_blocks` blocks of `tile` elements covers.
inline std::int64_t largest_extent(std::int64_t device_blocks, std::int64_t tile) {
  const std::int64_t by_index = kIntIndexLimit / tile - 1;
  return (device_blocks < by_index ? device_blocks : by_index) * tile;
}

// Exits with kExitUsage and one line on stderr unless `grid` covers the rows x cols matrix within
// the limits. A block covers tile_rows x tile_cols input elements; tile_rows 0: every row (a
// thread loops down the rows, v1). Each launcher calls it before its launch.
inline void require_grid(const dim3& grid, GridAxes axes, int tile_rows, int tile_cols, int rows,
                         int cols) {
  const bool rows_in_x = axes == GridAxes::kRowsInX;
  const std::int64_t tile_r = tile_rows == 0 ? rows : tile_rows;
  // Rows and cols each: blocks given, blocks allowed by the device, elements per block.
  struct Axis {
    const char* what;
    std::int64_t extent, tile, blocks, device_blocks;
    const char* limit;
    bool within_device;  // the blocks along its grid dimensions are within the device's limits
  };
  const std::int64_t other_blocks = std::int64_t{grid.y} * grid.z;
  const bool x_ok = grid.x <= kMaxGridX, yz_ok = grid.y <= kMaxGridYZ && grid.z <= kMaxGridYZ;
  const std::int64_t other_limit = grid.z > 1 ? kMaxGridYZ * kMaxGridYZ : kMaxGridYZ;
  const Axis row_axis{"rows",
                      rows,
                      tile_r,
                      rows_in_x ? grid.x : other_blocks,
                      rows_in_x ? kMaxGridX : other_limit,
                      rows_in_x ? "grid x" : "grid y",
                      rows_in_x ? x_ok : yz_ok};
  const Axis col_axis{"cols",
                      cols,
                      tile_cols,
                      rows_in_x ? other_blocks : grid.x,
                      rows_in_x ? other_limit : kMaxGridX,
                      rows_in_x ? "grid y" : "grid x",
                      rows_in_x ? yz_ok : x_ok};
  for (const Axis* each : {&row_axis, &col_axis}) {
    const Axis& axis = *each;
    if (tile_rows == 0 && each == &row_axis && axis.blocks == 1) continue;  // a loop: any rows
    const std::int64_t largest = largest_extent(axis.device_blocks, axis.tile);
    const bool covered = axis.blocks * axis.tile >= axis.extent;
    if (axis.within_device && covered && axis.extent <= largest &&
        axis.blocks * axis.tile <= largest + axis.tile)
      continue;
    const std::int64_t limit = axis.device_blocks == kMaxGridX ? kMaxGridX : kMaxGridYZ;
    const bool by_index = largest < axis.device_blocks * axis.tile;
    const std::string last = LAB_LAST_STEP;
    // The last step walks the rows in grid x, as far as int indices go: it handles any rows. Its
    // columns go through v6's grid y for some element sizes, so a refusal of the columns names
    // no other step.
    const bool rows_refused = each == &row_axis;
    const std::string elsewhere = last.empty() || last == STEP_NAME || !rows_refused
                                      ? ""
                                      : "; " + last + " handles this shape";
    std::fprintf(stderr,
                 "%s: error: cannot launch for %d x %d: %" PRId64 " %s in tiles of %" PRId64
                 " need more than the %s of %" PRId64
                 " blocks%s; this step handles at most "
                 "%" PRId64 " %s%s\n",
                 STEP_NAME, rows, cols, axis.extent, axis.what, axis.tile, axis.limit, limit,
                 by_index ? " (and int indices below 2^31)" : "", largest, axis.what,
                 elsewhere.c_str());
    std::exit(kExitUsage);
  }
}

}  // namespace lab
