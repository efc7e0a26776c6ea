// Where each block of PERMUTE.v4_small_planes reads and writes when an axis of the plane is short.
// PERMUTE.v3_tiled's plan (its plan.hpp) gives the plane: rows along the output's innermost axis,
// columns along the input's, and the batch of the other axes. Here a tile of kTileElements is a
// box of three axes: a few planes (consecutive values of the batch axis innermost in the output),
// rows and columns. A short axis (under kShortAxis) is taken whole; a long one is cut into
// chunks of whole warps; a tile that holds whole planes holds as many as fit. One axis of the box,
// `along`, moves from tile to tile; the batch axes outside the box are the tiles' batch, taken
// apart with FastDivision as v3's. Host and device code alike: tests/permute_plan_probe.cpp replays
// the kernel with it on the host.
#pragma once

#include <algorithm>

#include "../PERMUTE.v3_tiled/plan.hpp"

namespace lab {

constexpr int kTileElements = 32 * 32;  // as many as PERMUTE.v3_tiled's tile
constexpr int kShortAxis = 32;          // a plane axis shorter than a warp leaves its tile empty
// The shared tile: the box's elements in input order, each row padded to an odd length so that
// reads down a column meet every bank. Padding adds at most half (a row of 2 becomes 3).
constexpr int kSharedElements = kTileElements + kTileElements / 2;
constexpr int kOutsideTheBox = 1 << 30;  // the `along` of a slot past the box: never inside it

struct SmallPlanes {
  enum Axis { kPlanes = 0, kRows = 1, kCols = 2 };
  bool used = false;       // false: the plane is long both ways, or runs: v3's kernels move it
  int box[3] = {1, 1, 1};  // the tile's extent along the planes, the rows and the columns
  Index in_stride[3] = {}, out_stride[3] = {};
  int shared_stride[3] = {};              // where (p, r, c) sits in the shared tile
  int in_next = kRows, out_next = kCols;  // the axis next to the innermost, input and output
  int along = kCols;                      // the box axis that moves from tile to tile
  Index extent = 1;                       // that axis's full extent
  Index tiles = 1;                        // tiles along it: ceil(extent / box[along])
  Batch batch;                            // the batch axes outside the box

  // The slot-th element of the box in input order (columns innermost): its offset in the input
  // from the tile's first element, its place in the shared tile, and its index along `along`.
  LAB_HOST_DEVICE void load_place(int slot, Index& offset, int& shared, int& at) const {
    place(slot, kCols, in_next, in_stride, offset, shared, at);
  }
  // The slot-th element of the box in output order (rows innermost): the same for the output.
  LAB_HOST_DEVICE void store_place(int slot, Index& offset, int& shared, int& at) const {
    place(slot, kRows, out_next, out_stride, offset, shared, at);
  }

 private:
  // The slot taken apart as a number of three digits, `first` the fastest, then `next`.
  LAB_HOST_DEVICE void place(int slot, int first, int next, const Index* stride, Index& offset,
                             int& shared, int& at) const {
    int index[3];
    index[first] = slot % box[first];
    index[next] = slot / box[first] % box[next];
    index[3 - first - next] = slot / box[first] / box[next];  // the three axes are 0, 1, 2
    const int p = index[kPlanes], r = index[kRows], c = index[kCols];
    offset = p * stride[kPlanes] + r * stride[kRows] + c * stride[kCols];
    shared = p * shared_stride[kPlanes] + r * shared_stride[kRows] + c;
    const bool inside = p < box[kPlanes] && r < box[kRows] && c < box[kCols];  // slot < box
    at = inside ? index[along] : kOutsideTheBox;
  }
};

// How much of a long axis of `extent` a tile holds when `room` of it fit (room >= kShortAxis):
// chunks of whole warps, as even as such chunks can be (1000 columns beside 3 rows: 341 fit, so 4
// tiles of 256, the last 232, rather than 320, 320, 320 and 40).
inline Index chunk_of(Index extent, Index room) {
  const Index warps = room / kShortAxis * kShortAxis, tiles = (extent + warps - 1) / warps;
  return ((extent + tiles - 1) / tiles + kShortAxis - 1) / kShortAxis * kShortAxis;
}

// The plan for the problem p: used only where v3's plan has a plane with a short axis.
inline SmallPlanes small_planes_of(const Permutation& p) {
  const Plan tiled = plan_of(p);
  SmallPlanes s;
  if (tiled.runs || (tiled.rows >= kShortAxis && tiled.cols >= kShortAxis)) return s;
  using S = SmallPlanes;
  s.used = true;
  s.in_stride[S::kRows] = tiled.in_pitch;
  s.in_stride[S::kCols] = 1;
  s.out_stride[S::kRows] = 1;
  s.out_stride[S::kCols] = tiled.out_pitch;
  // The planes axis: the batch axis innermost in the output (v3's batch digit 0), if any.
  Index planes = 1;
  int first_outside = 0;
  if (tiled.batch.axes > 0) {
    planes = static_cast<Index>(tiled.batch.extent[0].divisor);
    s.in_stride[S::kPlanes] = tiled.batch.in_stride[0];
    s.out_stride[S::kPlanes] = tiled.batch.out_stride[0];
  }
  const Index plane = tiled.rows * tiled.cols;
  Index box_planes = 1, box_rows = tiled.rows, box_cols = tiled.cols;
  if (plane <= kTileElements) {  // whole planes, as many as fit
    box_planes = std::min<Index>(planes, kTileElements / plane);
    s.along = S::kPlanes;
    s.extent = planes;
    first_outside = tiled.batch.axes > 0 ? 1 : 0;
  } else if (tiled.rows < kShortAxis) {  // all the rows, a chunk of the columns
    box_cols = chunk_of(tiled.cols, kTileElements / tiled.rows);
    s.along = S::kCols;
    s.extent = tiled.cols;
  } else {  // all the columns, a chunk of the rows
    box_rows = chunk_of(tiled.rows, kTileElements / tiled.cols);
    s.along = S::kRows;
    s.extent = tiled.rows;
  }
  s.box[S::kPlanes] = static_cast<int>(box_planes);
  s.box[S::kRows] = static_cast<int>(box_rows);
  s.box[S::kCols] = static_cast<int>(box_cols);
  s.tiles = (s.extent + s.box[s.along] - 1) / s.box[s.along];
  // After the innermost axis, the one of smaller stride (the planes only where there are several).
  if (box_planes > 1 && s.in_stride[S::kPlanes] < s.in_stride[S::kRows]) s.in_next = S::kPlanes;
  if (box_planes > 1 && s.out_stride[S::kPlanes] < s.out_stride[S::kCols]) s.out_next = S::kPlanes;
  const int row = s.box[S::kCols] | 1;  // odd: a column of the tile spans every bank
  s.shared_stride[S::kRows] = row;
  s.shared_stride[S::kPlanes] = row * s.box[S::kRows];
  s.shared_stride[S::kCols] = 1;
  for (int i = first_outside; i < tiled.batch.axes; ++i) {
    Batch& b = s.batch;
    b.extent[b.axes] = tiled.batch.extent[i];
    b.in_stride[b.axes] = tiled.batch.in_stride[i];
    b.out_stride[b.axes] = tiled.batch.out_stride[i];
    b.count *= static_cast<Index>(tiled.batch.extent[i].divisor);
    ++b.axes;
  }
  return s;
}

}  // namespace lab
