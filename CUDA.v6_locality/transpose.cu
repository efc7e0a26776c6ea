// CUDA.v6_locality: arrange the work so DRAM sees whole sectors in long runs.
// Changed since v5_unroll, three changes with one aim (the README measures each):
// 1. TILE_DIM 64: each thread moves 16 elements, and each 256-byte piece of an output row is
//    written by one warp in two back-to-back 128-byte stores instead of by two blocks.
// 2. The roles of blockIdx.x and blockIdx.y are swapped, so blocks are dispatched down the
//    matrix: blocks running at the same time fill neighbouring pieces of the same output rows,
//    and DRAM gets long runs of writes instead of short ones scattered over many rows.
// 3. Output rows start at 32-byte sector boundaries only when rows is a multiple of a sector's
//    elements (8 floats). Otherwise a tile edge splits a sector between two blocks, and a partly
//    written sector costs DRAM a read too. So each output row is cut where ITS sectors begin: the
//    tile holds a sector's worth of extra input rows and every output row is written from its
//    first whole sector on (the first tile starts at 0).
#include "../common/cuda_step.cuh"

// Lesson (1): the 64 x 64 tile. The constants after it are plumbing.
// 16-byte elements take 32 x 32 tiles: 64 x 65 of them would not fit in 48 KiB of shared memory.
template <class T>
constexpr int TILE_DIM = sizeof(T) <= 8 ? 64 : 32;
constexpr int BLOCK_ROWS = 8;
template <class T>
constexpr int SECTOR_ELEMENTS = 32 / sizeof(T);  // a 32-byte DRAM sector holds 8 floats
constexpr int WARP_SIZE = 32;  // threadIdx.x spans one warp of consecutive columns

// Plumbing for (3). kRowsWholeSectors: every output row starts a sector and no row needs the
// extra input rows; the common case gets a kernel without them.
template <class T, bool kRowsWholeSectors>
__global__ void transpose_kernel(const T* in, T* out, int rows, int cols) {
  constexpr int TILE_DIM = ::TILE_DIM<T>, SECTOR_ELEMENTS = ::SECTOR_ELEMENTS<T>;
  // A whole number of BLOCK_ROWS passes, and at least the sector_shift below can reach.
  constexpr int EXTRA_ROWS =
      kRowsWholeSectors ? 0 : (SECTOR_ELEMENTS > BLOCK_ROWS ? SECTOR_ELEMENTS : BLOCK_ROWS);
  __shared__ T tile[TILE_DIM + EXTRA_ROWS][TILE_DIM + 1];  // +1: a column spans all banks
  // LESSON: begin the block roles: which block index walks down the rows? (see the grid, (2))
  // LESSON: stub const int tile_r = 0, tile_c = 0;  // every block on tile (0, 0)
  const int tile_r = blockIdx.x * TILE_DIM;  // blockIdx.x walks down the rows: see (2)
  const int tile_c = blockIdx.y * TILE_DIM;
  // LESSON: end
  // Lesson (1): the load covers the tile's two 32-column halves (i); for (3), EXTRA_ROWS more rows.
  const int c = tile_c + threadIdx.x;
#pragma unroll
  for (int j = 0; j < TILE_DIM + EXTRA_ROWS; j += BLOCK_ROWS) {
#pragma unroll
    for (int i = 0; i < TILE_DIM; i += WARP_SIZE) {
      const int r = tile_r + threadIdx.y + j;
      if (r < rows && c + i < cols)
        tile[threadIdx.y + j][threadIdx.x + i] = in[static_cast<size_t>(r) * cols + c + i];
    }
  }
  __syncthreads();  // outside any bounds check: every thread of the block must reach it
  // LESSON: begin write each output row of the tile from the first whole sector on: see (3)
#pragma unroll
  for (int j = 0; j < TILE_DIM; j += BLOCK_ROWS) {
    const int out_row = tile_c + threadIdx.y + j;
    if (out_row >= cols) continue;
    // First column of this output row that starts a sector; this tile writes 64 columns from
    // there (the first tile also writes the columns before it, the last one up to the end).
    const size_t row_start = static_cast<size_t>(out_row) * rows;
    const int sector_shift =
        kRowsWholeSectors
            ? 0
            : static_cast<int>((SECTOR_ELEMENTS - row_start % SECTOR_ELEMENTS) % SECTOR_ELEMENTS);
    const int first = blockIdx.x == 0 ? 0 : tile_r + sector_shift;
    const int last = min(rows, tile_r + TILE_DIM + sector_shift);
#pragma unroll
    for (int i = 0; i < TILE_DIM + EXTRA_ROWS; i += WARP_SIZE) {
      const int out_col = first + threadIdx.x + i;
      if (out_col < last) out[row_start + out_col] = tile[out_col - tile_r][threadIdx.y + j];
    }
  }
  // LESSON: end
}

template <class T>
LaunchShape launch_transpose(const T* in, T* out, int rows, int cols, cudaStream_t stream) {
  constexpr int TILE_DIM = ::TILE_DIM<T>;
  const dim3 block(WARP_SIZE, BLOCK_ROWS);
  // Lesson (2): grid x over tile rows, y over tile columns (v5: the other way round).
  const dim3 grid((rows + TILE_DIM - 1) / TILE_DIM, (cols + TILE_DIM - 1) / TILE_DIM);
  lab::require_grid(grid, lab::GridAxes::kRowsInX, TILE_DIM, TILE_DIM, rows, cols);
  if (rows % SECTOR_ELEMENTS<T> == 0)  // plumbing for (3): no extra rows needed
    transpose_kernel<T, true><<<grid, block, 0, stream>>>(in, out, rows, cols);
  else
    transpose_kernel<T, false><<<grid, block, 0, stream>>>(in, out, rows, cols);
  return {grid, block};
}

const char* const kStepSummary =
    "DRAM locality: 64x64 tiles dispatched down the columns, whole-sector writes";
