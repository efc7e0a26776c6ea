// Step 0: the transpose on the CPU with OpenMP.
// naive:   one `omp parallel for` over input rows. Reads walk a row (contiguous), writes walk an
//          output column: every element lands on another cache line and, every 1024 floats
//          apart, another 4 KiB page.
// blocked: the matrix is cut into kTile x kTile tiles. A tile is read row by row into a small
//          buffer that stays in L1, then written out row by row, so both streams move whole
//          cache lines and the inner loops are unit-stride (the compiler vectorises them).
#include <algorithm>

#include "../common/cpu_step.hpp"

using lab::Index;

namespace {

constexpr Index kTile = 64;  // 64 x 64 floats = 16 KiB: the buffer and the lines in flight fit L1

void transpose_naive(const float* in, float* out, Index rows, Index cols) {
#pragma omp parallel for schedule(static)
  for (Index r = 0; r < rows; ++r)
    for (Index c = 0; c < cols; ++c) out[c * rows + r] = in[r * cols + c];
}

void transpose_blocked(const float* in, float* out, Index rows, Index cols) {
  const Index tile_rows = (rows + kTile - 1) / kTile, tile_cols = (cols + kTile - 1) / kTile;
#pragma omp parallel for collapse(2) schedule(static)
  for (Index tr = 0; tr < tile_rows; ++tr) {
    for (Index tc = 0; tc < tile_cols; ++tc) {
      const Index r0 = tr * kTile, c0 = tc * kTile;
      const Index r_count = std::min(kTile, rows - r0), c_count = std::min(kTile, cols - c0);
      // The buffer is the CPU twin of the GPU's shared-memory tile: [c][r], padded by one
      // element so its columns do not all fall in the same cache set.
      alignas(64) float tile[kTile][kTile + 1];
      for (Index r = 0; r < r_count; ++r)
        for (Index c = 0; c < c_count; ++c) tile[c][r] = in[(r0 + r) * cols + c0 + c];
      for (Index c = 0; c < c_count; ++c)
        for (Index r = 0; r < r_count; ++r) out[(c0 + c) * rows + r0 + r] = tile[c][r];
    }
  }
}

}  // namespace

const char* const kStepSummary = "OpenMP on the CPU: naive row loop vs cache-blocked tiles";
const lab::CpuVariant kCpuVariants[] = {
    {"naive", "omp parallel for over rows", transpose_naive},
    {"blocked", "omp tiles 64x64 (collapse 2)", transpose_blocked},
};
const int kCpuVariantCount = sizeof kCpuVariants / sizeof kCpuVariants[0];
