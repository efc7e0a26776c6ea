// CUDA.v7_packed, plumbing of its kernels, beyond the lesson: the grid of tiles past 65535 tile
// columns, and shared memory past 48 KiB.
#pragma once

#include "../common/cuda_check.cuh"
#include "../common/cuda_step.cuh"

constexpr int MAX_GRID_Y = 65535;  // gridDim.y and gridDim.z are at most 65535

// The first column of this block's tile. A wide matrix can need more than 65535 tile columns: the
// ones beyond continue in blockIdx.z. The few blocks past the last tile (when y * z overshoots) get
// the column just past it, where every row and column check fails.
__device__ int tile_column(int cols, int tile_dim) {
  const int past_last = (cols - 1) / tile_dim + 1;
  return min(static_cast<int>(blockIdx.z * gridDim.y + blockIdx.y), past_last) * tile_dim;
}

// Tiles down the rows in x (as in v6), tile columns in y, and in z when y would pass 65535.
inline dim3 tile_grid(int rows, int cols, int tile_dim) {
  const int tiles_c = (cols - 1) / tile_dim + 1;
  const int z = (tiles_c - 1) / MAX_GRID_Y + 1;
  return dim3((rows - 1) / tile_dim + 1, (tiles_c - 1) / z + 1, z);
}

using lab::allow_shared_bytes;  // shared memory past 48 KiB (common/cuda_check.cuh)
