// PERMUTE.v3_tiled: the fused problem as a batch of tiled matrix transposes.
// v2's warps store contiguous output but load a whole input stride apart wherever the output's
// innermost axis is not the input's: 32 sectors for one warp's load. Chapter 1 fixed that for a
// matrix with a shared-memory tile, and after fusion every permutation holds a matrix: the
// input's innermost axis (stride 1 in the input) against the input axis that becomes the
// output's innermost (stride 1 in the output). Each block loads a TILE_DIM x TILE_DIM tile with
// reads along the first, and stores it transposed with writes along the second: both coalesced,
// the tile padded by one element so its columns span every bank, each thread moving
// TILE_DIM / BLOCK_ROWS elements as CUDA.v5_unroll. Every other axis is a digit of the batch
// index (plan.hpp): once per tile, not once per element, and with a multiply instead of a divide
// (fast_division.hpp). Where the innermost axis stays innermost ((8, 512, 16, 64) perm 0,2,1,3)
// there is nothing to transpose: each warp copies a run whole. Grids past 65535 blocks in y or z
// loop; the indices are 64-bit.
#include <algorithm>

#include "../common/permute_step.hpp"
#include "plan.hpp"

namespace {

constexpr int TILE_DIM = 32;
constexpr int BLOCK_ROWS = 8;
// Blocks launched at most along each grid axis (y and z allow no more); a block loops past that.
constexpr lab::Index kMaxBlocks = 65535;

unsigned blocks_for(lab::Index count, lab::Index per_block) {
  return static_cast<unsigned>(std::min(kMaxBlocks, (count + per_block - 1) / per_block));
}

template <class T>
__global__ void permute_kernel(const T* __restrict__ in, T* __restrict__ out, lab::Plan plan) {
  __shared__ T tile[TILE_DIM][TILE_DIM + 1];  // +1: a column spans all 32 banks
  for (lab::Index b = blockIdx.z; b < plan.batch.count; b += gridDim.z) {
    lab::Index in_base, out_base;
    plan.batch.offsets(b, in_base, out_base);
    for (lab::Index tile_r = lab::Index{blockIdx.y} * TILE_DIM; tile_r < plan.rows;
         tile_r += lab::Index{gridDim.y} * TILE_DIM) {
      for (lab::Index tile_c = lab::Index{blockIdx.x} * TILE_DIM; tile_c < plan.cols;
           tile_c += lab::Index{gridDim.x} * TILE_DIM) {
        // y, x: a thread's place in the tile; r, c: the same place in the plane.
#pragma unroll
        for (int j = 0; j < TILE_DIM; j += BLOCK_ROWS) {
          const int y = threadIdx.y + j, x = threadIdx.x;
          const lab::Index r = tile_r + y, c = tile_c + x;
          if (r < plan.rows && c < plan.cols) tile[y][x] = in[in_base + r * plan.in_pitch + c];
        }
        __syncthreads();  // outside any bounds check: every thread of the block must reach it
                          // The output tile: tile_r and tile_c swap roles.
#pragma unroll
        for (int j = 0; j < TILE_DIM; j += BLOCK_ROWS) {
          const int y = threadIdx.y + j, x = threadIdx.x;
          const lab::Index r = tile_c + y, c = tile_r + x;
          if (r < plan.cols && c < plan.rows) out[out_base + r * plan.out_pitch + c] = tile[x][y];
        }
        __syncthreads();  // the tile is read whole before the next one overwrites it
      }
    }
  }
}

// The innermost axis stays innermost: plane b is one run of plan.cols elements, input and output
// contiguous alike. Each warp copies a run, TILE_DIM / BLOCK_ROWS elements per thread.
template <class T>
__global__ void runs_kernel(const T* __restrict__ in, T* __restrict__ out, lab::Plan plan) {
  constexpr int kPiece = TILE_DIM * (TILE_DIM / BLOCK_ROWS);  // a block's elements of a run
  for (lab::Index b = lab::Index{blockIdx.y} * BLOCK_ROWS + threadIdx.y; b < plan.batch.count;
       b += lab::Index{gridDim.y} * BLOCK_ROWS) {
    lab::Index in_base, out_base;
    plan.batch.offsets(b, in_base, out_base);
    for (lab::Index piece = lab::Index{blockIdx.x} * kPiece; piece < plan.cols;
         piece += lab::Index{gridDim.x} * kPiece) {
#pragma unroll
      for (int j = 0; j < kPiece; j += TILE_DIM) {
        const lab::Index c = piece + j + threadIdx.x;
        if (c < plan.cols) out[out_base + c] = in[in_base + c];
      }
    }
  }
}

}  // namespace

template <class T>
LaunchShape launch_permute(const T* in, T* out, const lab::Permutation& p, cudaStream_t stream) {
  const lab::Plan plan = lab::plan_of(p);
  const dim3 block(TILE_DIM, BLOCK_ROWS);
  if (plan.runs) {
    const dim3 grid(blocks_for(plan.cols, TILE_DIM * (TILE_DIM / BLOCK_ROWS)),
                    blocks_for(plan.batch.count, BLOCK_ROWS));
    runs_kernel<T><<<grid, block, 0, stream>>>(in, out, plan);
    return {grid, block};
  }
  const dim3 grid(blocks_for(plan.cols, TILE_DIM), blocks_for(plan.rows, TILE_DIM),
                  blocks_for(plan.batch.count, 1));
  permute_kernel<T><<<grid, block, 0, stream>>>(in, out, plan);
  return {grid, block};
}

const char* const kStepSummary = "a batch of padded-tile transposes, batch index by fast division";
