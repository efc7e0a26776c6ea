// CUDA.v6_vector: 16-byte accesses and a larger tile.
// Changed since v5_unroll: each global load and store moves a float4 (16 bytes) instead of a
// float, so a warp moves 512 bytes per instruction and a quarter of the memory instructions
// carry the same bytes. The tile grows to TILE_DIM = 64 so a block still has 16 elements per
// thread in flight. A warp covers 4 tile rows of 8 float4s (4 x 128-byte lines): with the +1
// padding, both the scattered writes into the tile and the column reads out of it stay free of
// bank conflicts. float4 needs 16-byte alignment: when rows or cols is not a multiple of 4, the
// same kernel moves the 4 floats one by one (still coalesced, fewer bytes per instruction).
#include "../common/cuda_step.cuh"

constexpr int TILE_DIM = 64;
constexpr int BLOCK_ROWS = 32;
constexpr int VECTOR = 4;                     // floats per 16-byte access
constexpr int TILE_VECTORS = 8;               // threads across a tile row: 8 x 16 B = 128 B
constexpr int ROW_STEP = TILE_VECTORS * VECTOR;  // floats a warp row covers per access

// Reads the VECTOR floats at in[r][c..c+3] (the caller has checked r < rows).
template <bool kVectorized>
__device__ void load_vector(const float* __restrict__ in, int r, int c, int cols, float (&v)[VECTOR]) {
  const float* source = in + static_cast<size_t>(r) * cols + c;
  if constexpr (kVectorized) {
    if (c < cols) {
      const float4 loaded = *reinterpret_cast<const float4*>(source);
      v[0] = loaded.x, v[1] = loaded.y, v[2] = loaded.z, v[3] = loaded.w;
    }
  } else {
#pragma unroll
    for (int k = 0; k < VECTOR; ++k)
      if (c + k < cols) v[k] = source[k];
  }
}

// Writes out[r][c..c+3] (the caller has checked r < out_rows).
template <bool kVectorized>
__device__ void store_vector(float* __restrict__ out, int r, int c, int out_cols, const float (&v)[VECTOR]) {
  float* target = out + static_cast<size_t>(r) * out_cols + c;
  if constexpr (kVectorized) {
    if (c < out_cols) *reinterpret_cast<float4*>(target) = make_float4(v[0], v[1], v[2], v[3]);
  } else {
#pragma unroll
    for (int k = 0; k < VECTOR; ++k)
      if (c + k < out_cols) target[k] = v[k];
  }
}

template <bool kVectorized>
__global__ void __launch_bounds__(TILE_VECTORS * BLOCK_ROWS)
    transpose_kernel(const float* __restrict__ in, float* __restrict__ out, int rows, int cols) {
  __shared__ float tile[TILE_DIM][TILE_DIM + 1];  // +1: a column spans all 32 banks
  const int tile_r = blockIdx.y * TILE_DIM, tile_c = blockIdx.x * TILE_DIM;
#pragma unroll
  for (int j = 0; j < TILE_DIM; j += BLOCK_ROWS) {
#pragma unroll
    for (int i = 0; i < TILE_DIM; i += ROW_STEP) {
      const int y = threadIdx.y + j, x = i + threadIdx.x * VECTOR;
      float v[VECTOR] = {};
      if (tile_r + y < rows) load_vector<kVectorized>(in, tile_r + y, tile_c + x, cols, v);
#pragma unroll
      for (int k = 0; k < VECTOR; ++k) tile[y][x + k] = v[k];
    }
  }
  __syncthreads();  // outside any bounds check: every thread of the block must reach it
#pragma unroll
  for (int j = 0; j < TILE_DIM; j += BLOCK_ROWS) {
#pragma unroll
    for (int i = 0; i < TILE_DIM; i += ROW_STEP) {
      const int y = threadIdx.y + j, x = i + threadIdx.x * VECTOR;  // y: output row in the tile
      float v[VECTOR];
#pragma unroll
      for (int k = 0; k < VECTOR; ++k) v[k] = tile[x + k][y];
      if (tile_c + y < cols) store_vector<kVectorized>(out, tile_c + y, tile_r + x, rows, v);
    }
  }
}

LaunchShape launch_transpose(const float* in, float* out, int rows, int cols, cudaStream_t stream) {
  const dim3 block(TILE_VECTORS, BLOCK_ROWS);
  const dim3 grid((cols + TILE_DIM - 1) / TILE_DIM, (rows + TILE_DIM - 1) / TILE_DIM);
  // A float4 at in[r][c] is 16-byte aligned for every r only when cols is a multiple of 4 (and
  // likewise rows for the output); cudaMalloc'd bases are aligned.
  const bool aligned = rows % VECTOR == 0 && cols % VECTOR == 0;
  if (aligned)
    transpose_kernel<true><<<grid, block, 0, stream>>>(in, out, rows, cols);
  else
    transpose_kernel<false><<<grid, block, 0, stream>>>(in, out, rows, cols);
  return {grid, block};
}

const char* const kStepSummary = "16-byte accesses (float4), 64x64 tile, no bank conflicts";
