// Where each block of PERMUTE.v3_tiled reads and writes: the fused problem seen as a batch of
// planes. A plane is a matrix transpose between the input's innermost axis (its columns, stride 1
// in the input) and the input axis that becomes the output's innermost (its rows, stride 1 in the
// output); where the innermost axis stays innermost, a plane is one run copied whole. Every other
// axis is a digit of the batch index, whose digits the kernel takes apart with FastDivision.
// Host and device code alike, so tests/permute_division_probe.cpp checks the plan on the host.
#pragma once

#include "../common/permute.hpp"
#include "fast_division.hpp"

namespace lab {

// The batch: the axes outside the plane, the output's innermost first, as a mixed-radix number.
// Its digits come apart by Division (FastDivision; FastDivision32 where every batch index is below
// 2^32: NarrowBatch).
template <class Division>
struct BasicBatch {
  using Word = decltype(Division::divisor);
  int axes = 0;
  Index count = 1;  // the product of their extents: how many planes
  Division extent[kMaxPermuteRank];
  Index in_stride[kMaxPermuteRank] = {}, out_stride[kMaxPermuteRank] = {};

  BasicBatch() = default;
  template <class Other>
  explicit BasicBatch(const BasicBatch<Other>& other) : axes(other.axes), count(other.count) {
    for (int i = 0; i < axes; ++i) {
      extent[i] = Division(static_cast<Word>(other.extent[i].divisor));
      in_stride[i] = other.in_stride[i];
      out_stride[i] = other.out_stride[i];
    }
  }

  // Where plane b starts in the input and in the output.
  LAB_HOST_DEVICE void offsets(Word b, Index& in_base, Index& out_base) const {
    in_base = out_base = 0;
    Word rest = b;
    LAB_UNROLL
    for (int i = 0; i < kMaxPermuteRank; ++i) {
      if (i == axes) break;
      const Word next = extent[i].quotient(rest);
      const auto digit = static_cast<Index>(rest - next * extent[i].divisor);
      in_base += digit * in_stride[i];
      out_base += digit * out_stride[i];
      rest = next;
    }
  }
};
using Batch = BasicBatch<FastDivision>;
using NarrowBatch = BasicBatch<FastDivision32>;

struct Plan {
  bool runs = false;  // the innermost axis stays innermost: each plane is one run, copied whole
  Index rows = 1;     // plane rows: along the output's innermost axis (1 for runs)
  Index cols = 1;     // plane columns: along the input's innermost axis
  Index in_pitch = 0, out_pitch = 0;  // input elements between rows, output elements between cols
  Batch batch;
};

// The plan of the problem p (fused first, as PERMUTE.v2_fused).
inline Plan plan_of(const Permutation& p) {
  const Permutation f = fuse_axes(p);
  const int cols_axis = f.rank - 1, rows_axis = f.perm[f.rank - 1];
  Plan plan;
  plan.runs = rows_axis == cols_axis;
  plan.cols = f.shape[cols_axis];
  if (!plan.runs) {
    plan.rows = f.shape[rows_axis];
    plan.in_pitch = f.in_stride(rows_axis);
    plan.out_pitch = f.out_stride(cols_axis);
  }
  for (int k = f.rank - 1; k >= 0; --k) {
    const int a = f.perm[k];
    if (a == cols_axis || a == rows_axis) continue;
    Batch& b = plan.batch;
    b.extent[b.axes] = FastDivision(static_cast<std::uint64_t>(f.shape[a]));
    b.in_stride[b.axes] = f.in_stride(a);
    b.out_stride[b.axes] = f.out_stride(a);
    b.count *= f.shape[a];
    ++b.axes;
  }
  return plan;
}

}  // namespace lab
