// CUDA.v7_packed: every global access is 16 bytes, whatever the element size.
// Changed since v6_locality: a warp of 1-byte loads moves 32 bytes per instruction, a quarter of
// what a warp of 16-byte loads moves, and v6 reaches only two thirds of the copy for uint8. So each
// thread now loads 16 bytes (N = 16 / sizeof(T) elements) from each of N consecutive input rows:
// an N x N block of elements. It transposes that block in registers (common/packed_block.cuh:
// swapping sub-blocks, whole 32-bit words where they are word-sized or larger, byte permutes below
// that), so that each of its N registers holds 16 bytes of one OUTPUT row. The block goes through
// shared memory, 16 bytes a cell, with the cell index swizzled (XOR) instead of padded so that
// 16-byte accesses are conflict-free, and every output row is written 16 bytes a thread, 256 bytes
// a tile row, as in v6.
// Shapes whose rows or cols are not a multiple of N cannot use aligned 16-byte accesses as they
// are: ragged.cu keeps them fast, beyond the lesson.
#include "../common/cuda_step.cuh"
#include "../common/packed_block.cuh"  // transpose_in_registers, VECTOR_BYTES, WORDS
// This step's other sources, reached through common/ as ragged.cu is (see the end of this file).
#include "../common/../CUDA.v7_packed/grid.cu"  // tile_column, launch_tiles

constexpr int CHUNKS = 16;  // 16-byte chunks of an input row per tile: 256 bytes, as in v6
constexpr int GROUPS = 16;  // groups of N input rows per tile: 256 bytes of each output row
constexpr int THREADS = CHUNKS * GROUPS;

// Which 16-byte cell of a tile row holds group g: XOR with the row's chunk spreads the 8 cells a
// quarter warp touches over all 32 banks, in both phases.
template <int N>
__device__ int cell(int out_row_local, int g) {
  const int chunk = out_row_local / N;
  return out_row_local * GROUPS + (g ^ (chunk % GROUPS));
}

// Rows and cols are multiples of N, so every 16 bytes of a row are one aligned vector.
template <class T>
__global__ void __launch_bounds__(THREADS)
    transpose_kernel(const T* in, T* out, int rows, int cols) {
  constexpr int N = VECTOR_BYTES / sizeof(T);
  constexpr int TILE_DIM = CHUNKS * N;  // a tile is TILE_DIM x TILE_DIM elements
  extern __shared__ uint4 tile[];       // [TILE_DIM output rows][GROUPS] cells of 16 bytes
  const int group = threadIdx.x / CHUNKS, chunk = threadIdx.x % CHUNKS;
  const int tile_r = blockIdx.x * TILE_DIM;  // blockIdx.x walks down the rows, as in v6
  const int tile_c = tile_column(cols, TILE_DIM);
  const int first_row = tile_r + group * N, first_col = tile_c + chunk * N;

  std::uint32_t w[N][WORDS] = {};
#pragma unroll
  for (int k = 0; k < N; ++k) {
    const T* row = in + static_cast<size_t>(first_row + k) * cols;
    if (first_row + k >= rows) continue;
    if (first_col < cols) {
      const uint4 v = *reinterpret_cast<const uint4*>(row + first_col);
      w[k][0] = v.x, w[k][1] = v.y, w[k][2] = v.z, w[k][3] = v.w;
    }
  }
  // LESSON: begin transpose the block in registers, then write each w[j] to its cell of the tile
  transpose_in_registers<sizeof(T), N>(w);  // w[j]: 16 bytes of one output row, rows first_row..
#pragma unroll
  for (int j = 0; j < N; ++j)
    tile[cell<N>(chunk * N + j, group)] = make_uint4(w[j][0], w[j][1], w[j][2], w[j][3]);
  // LESSON: end
  __syncthreads();  // outside any bounds check: every thread of the block must reach it

#pragma unroll
  for (int pass = 0; pass < N; ++pass) {  // CHUNKS output rows a pass, a cell a thread
    const int out_row_local = pass * CHUNKS + threadIdx.x / GROUPS, g = threadIdx.x % GROUPS;
    const int out_row = tile_c + out_row_local, out_col = tile_r + g * N;
    if (out_row >= cols || out_col >= rows) continue;
    *reinterpret_cast<uint4*>(out + static_cast<size_t>(out_row) * rows + out_col) =
        tile[cell<N>(out_row_local, g)];
  }
}

template <class T>
LaunchShape launch_packed(const T* in, T* out, int rows, int cols, cudaStream_t stream) {
  constexpr int TILE_DIM = CHUNKS * (VECTOR_BYTES / sizeof(T));
  constexpr int SHARED_BYTES = TILE_DIM * GROUPS * VECTOR_BYTES;  // 64 KiB for 1-byte elements
  return launch_tiles(transpose_kernel<T>, in, out, rows, cols, TILE_DIM, THREADS, SHARED_BYTES,
                      stream);
}

// launch_transpose, which takes the packed kernel where the shape allows it, is in ragged.cu:
// reached through common/ (a link in exercises/ and in the grader's scratch folders) so that an
// exercise gets the step's own ragged.cu and, through it, v6's kernel, not their exercise copies.
#include "../common/../CUDA.v7_packed/ragged.cu"

const char* const kStepSummary =
    "16-byte accesses for every element size: N x N blocks transposed in registers";
