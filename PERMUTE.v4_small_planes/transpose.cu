// PERMUTE.v4_small_planes: a tile shaped to the plane when an axis of the plane is short.
// v3 moves every plane through 32 x 32 tiles. Where an axis of the plane is short, most of each
// tile is empty: a plane of 3 x 50176 (NCHW to NHWC with 3 channels) fills 3 of its 32 rows, a
// plane of 17 x 19 a third of it. This step keeps v3's 1024 elements a tile and 4 a thread, but
// shapes the tile to the plane (small_planes.hpp): a short axis is taken whole with a chunk of
// the long one (3 rows x 320 columns: its output is 960 contiguous elements), and a plane that
// fits whole comes with its neighbours along the batch axis innermost in the output (3 planes of
// 17 x 19).
// Loads walk the tile in the input's order and stores in the output's, both as contiguous as the
// layout allows. Every tile has the same shape, so each thread works out once, before the loop,
// where its 4 elements sit in any tile; a tile then costs an add per element. Planes long both
// ways, and runs, are v3's: its launcher is linked (STEP_KERNEL in the Makefile), not copied.
#include <algorithm>

#include "../common/permute_step.hpp"
#include "small_planes.hpp"

// PERMUTE.v3_tiled's launch_permute, linked under this name (common/permute_step.mk).
template <class T>
LaunchShape launch_reused_permute(const T* in, T* out, const lab::Permutation& p,
                                  cudaStream_t stream);

namespace {

constexpr int TILE_DIM = 32;
constexpr int BLOCK_ROWS = 8;
constexpr int kThreads = TILE_DIM * BLOCK_ROWS;
constexpr int kPerThread = lab::kTileElements / kThreads;  // 4, as v3
// Blocks launched at most along each grid axis (y and z allow no more); a block loops past that.
constexpr lab::Index kMaxBlocks = 65535;

unsigned blocks_for(lab::Index count, lab::Index per_block) {
  return static_cast<unsigned>(std::min(kMaxBlocks, (count + per_block - 1) / per_block));
}

template <class T>
__global__ void __launch_bounds__(kThreads)
    permute_kernel(const T* __restrict__ in, T* __restrict__ out, lab::SmallPlanes plan) {
  __shared__ T tile[lab::kSharedElements];
  // Where this thread's elements sit in every tile: in the input and the output (from the
  // tile's first element), in the shared tile, and along the axis that moves from tile to tile.
  lab::Index load_offset[kPerThread], store_offset[kPerThread];
  int load_shared[kPerThread], store_shared[kPerThread], load_at[kPerThread], store_at[kPerThread];
#pragma unroll
  for (int k = 0; k < kPerThread; ++k) {
    plan.load_place(threadIdx.x + k * kThreads, load_offset[k], load_shared[k], load_at[k]);
    plan.store_place(threadIdx.x + k * kThreads, store_offset[k], store_shared[k], store_at[k]);
  }
  const lab::Index in_step = plan.in_stride[plan.along], out_step = plan.out_stride[plan.along];
  const lab::Index per_tile = plan.box[plan.along];
  for (lab::Index b = blockIdx.y; b < plan.batch.count; b += gridDim.y) {
    lab::Index in_base, out_base;
    plan.batch.offsets(b, in_base, out_base);
    for (lab::Index t = blockIdx.x; t < plan.tiles; t += gridDim.x) {
      const lab::Index first = t * per_tile;  // the tile's first index along plan.along
      const lab::Index left = plan.extent - first;
      const int inside = static_cast<int>(left < per_tile ? left : per_tile);  // the last: fewer
      const T* tile_in = in + in_base + first * in_step;
      T* tile_out = out + out_base + first * out_step;
#pragma unroll
      for (int k = 0; k < kPerThread; ++k)
        if (load_at[k] < inside) tile[load_shared[k]] = tile_in[load_offset[k]];
      __syncthreads();  // outside any bounds check: every thread of the block must reach it
#pragma unroll
      for (int k = 0; k < kPerThread; ++k)
        if (store_at[k] < inside) tile_out[store_offset[k]] = tile[store_shared[k]];
      __syncthreads();  // the tile is read whole before the next one overwrites it
    }
  }
}

}  // namespace

template <class T>
LaunchShape launch_permute(const T* in, T* out, const lab::Permutation& p, cudaStream_t stream) {
  const lab::SmallPlanes plan = lab::small_planes_of(p);
  if (!plan.used) return launch_reused_permute<T>(in, out, p, stream);  // v3's tiles or runs
  const dim3 block(kThreads);
  const dim3 grid(blocks_for(plan.tiles, 1), blocks_for(plan.batch.count, 1));
  permute_kernel<T><<<grid, block, 0, stream>>>(in, out, plan);
  return {grid, block};
}

const char* const kStepSummary =
    "a tile shaped to the plane: a short axis whole, small planes several a tile";
