// CUDA.v7_packed, plumbing of its kernels, beyond the lesson: the grid of tiles past 65535 tile
// columns, and the launch with shared memory past 48 KiB.
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

// A kernel over tile_dim x tile_dim tiles on that grid, `threads` a block, with shared_bytes of
// shared memory (past 48 KiB allowed: common/cuda_check.cuh).
template <class T>
LaunchShape launch_tiles(void (*kernel)(const T*, T*, int, int), const T* in, T* out, int rows,
                         int cols, int tile_dim, int threads, int shared_bytes,
                         cudaStream_t stream) {
  const dim3 block(threads), grid = tile_grid(rows, cols, tile_dim);
  lab::require_grid(grid, lab::GridAxes::kRowsInX, tile_dim, tile_dim, rows, cols);
  lab::allow_shared_bytes(kernel, shared_bytes);
  kernel<<<grid, block, shared_bytes, stream>>>(in, out, rows, cols);
  return {grid, block};
}
