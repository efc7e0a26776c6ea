// CUDA.v7_packed: every global access is 16 bytes, whatever the element size.
// Changed since v6_locality: a warp of 1-byte loads moves 32 bytes per instruction, a quarter of
// what a warp of 16-byte loads moves, and v6 reaches only two thirds of the copy for uint8. So each
// thread now loads 16 bytes (N = 16 / sizeof(T) elements) from each of N consecutive input rows:
// an N x N block of elements. It transposes that block in registers (swapping sub-blocks: whole
// 32-bit words where they are word-sized or larger, byte permutes below that), so that each of its
// N registers holds 16 bytes of one OUTPUT row. The block goes through shared memory, 16 bytes a
// cell, with the cell index swizzled (XOR) instead of padded so that 16-byte accesses are
// conflict-free, and every output row is written 16 bytes a thread, 256 bytes a tile row, as in v6.
// Shapes whose rows or cols are not a multiple of N cannot use aligned 16-byte accesses as they
// are: the second half of this file ("what real shapes need") keeps them fast.
#include <cstddef>
#include <cstdint>
#include <type_traits>

#include "../common/cuda_check.cuh"
#include "../common/cuda_step.cuh"

constexpr int CHUNKS = 16;  // 16-byte chunks of an input row per tile: 256 bytes, as in v6
constexpr int GROUPS = 16;  // groups of N input rows per tile: 256 bytes of each output row
constexpr int THREADS = CHUNKS * GROUPS;
constexpr int VECTOR_BYTES = 16;
constexpr int WORDS = VECTOR_BYTES / 4;
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

// The N x N block of E-byte elements (row k in w[k]) transposed in place: round S swaps the
// elements of row i whose index has bit S set with those of row i + S whose index has it clear.
template <int E, int N>
__device__ void transpose_in_registers(std::uint32_t (&w)[N][WORDS]) {
  // LESSON: begin swap off-diagonal S x S sub-blocks, S = 1, 2, 4, ... (__byte_perm in a word)
#pragma unroll
  for (int S = 1; S < N; S *= 2) {
#pragma unroll
    for (int a = 0; a < N; ++a) {
      if (a & S) continue;
      const int b = a + S;
      if (S * E >= 4) {  // whole words: register renaming, no instructions
        const int ws = S * E / 4;
#pragma unroll
        for (int x = 0; x < WORDS; ++x) {
          if (x & ws) {
            const std::uint32_t t = w[a][x];
            w[a][x] = w[b][x - ws];
            w[b][x - ws] = t;
          }
        }
      } else {  // bytes or half words inside each word: one byte permute per word and row
        const unsigned keep_low = S * E == 1 ? 0x6240 : 0x5410;
        const unsigned keep_high = S * E == 1 ? 0x7351 : 0x7632;
#pragma unroll
        for (int x = 0; x < WORDS; ++x) {
          const std::uint32_t low = __byte_perm(w[a][x], w[b][x], keep_low);
          w[b][x] = __byte_perm(w[a][x], w[b][x], keep_high);
          w[a][x] = low;
        }
      }
    }
  }
  // LESSON: end
}

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
  transpose_in_registers<sizeof(T), N>(w);  // w[j]: 16 bytes of one output row, rows first_row..
#pragma unroll
  for (int j = 0; j < N; ++j)
    tile[cell<N>(chunk * N + j, group)] = make_uint4(w[j][0], w[j][1], w[j][2], w[j][3]);
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

// Above 48 KiB of shared memory a kernel must ask for it, on every GPU it runs on (the attribute
// belongs to the device it was set on): asked at each launch, a call of about a microsecond.
template <class Kernel>
void allow_shared_bytes(Kernel kernel, int bytes) {
  CUDA_CHECK(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, bytes));
}

template <class T>
LaunchShape launch_packed(const T* in, T* out, int rows, int cols, cudaStream_t stream) {
  constexpr int TILE_DIM = CHUNKS * (VECTOR_BYTES / sizeof(T));
  constexpr int SHARED_BYTES = TILE_DIM * GROUPS * VECTOR_BYTES;  // 64 KiB for 1-byte elements
  allow_shared_bytes(transpose_kernel<T>, SHARED_BYTES);
  const dim3 block(THREADS), grid = tile_grid(rows, cols, TILE_DIM);
  transpose_kernel<T><<<grid, block, SHARED_BYTES, stream>>>(in, out, rows, cols);
  return {grid, block};
}

// ================================================================================================
// What real shapes need: rows or cols that are not a multiple of N (8191 x 8193). The rows of the
// input, or of the output, then start anywhere inside a 16-byte vector, and the kernel above cannot
// run. Two kernels keep such shapes at least as fast as v6:
// - 4-, 8- and 16-byte elements: v6's own kernel (element_kernel; 16-byte ones on every shape).
//   Its accesses are already 4 to 16 bytes a thread, whole sectors per warp, and it cuts output
//   rows where their sectors begin; 16-byte vectors would only add a realignment.
// - 1- and 2-byte elements: the packed kernel, with each row realigned on its way in and out
//   (realign_kernel): 16-byte accesses despite the misalignment.
// ================================================================================================

constexpr int SECTOR_BYTES = 32;  // DRAM and L2 move whole 32-byte sectors

// ---- 4-, 8- and 16-byte elements: v6_locality's kernel (see its README for the three ideas) ----
// Rows of threads a block: 16 for 8-byte elements, whose 64 x 64 tile otherwise gives each thread
// 18 loads and 16 or more stores (H200, 8191 x 8193 float64: 93.2% of the copy with 16, 83.2%
// with 8; float32 and complex128 lose 0.5-1% with 16: docs/results/session3/v7probe2.csv; make
// probes PROBES="v7_element_rows_8 v7_element_rows_16" measures both again).
template <class T>
constexpr int BLOCK_ROWS = sizeof(T) == 8 ? 16 : 8;
constexpr int WARP_SIZE = 32;
template <class T>
constexpr int ELEMENT_TILE = sizeof(T) <= 8 ? 64 : 32;  // 64 x 65 x 16 bytes would not fit

template <class T, bool kRowsWholeSectors>
__global__ void element_kernel(const T* in, T* out, int rows, int cols) {
  constexpr int TILE_DIM = ELEMENT_TILE<T>, SECTOR_ELEMENTS = SECTOR_BYTES / sizeof(T);
  constexpr int ROWS_STEP = BLOCK_ROWS<T>;
  constexpr int EXTRA_ROWS =
      kRowsWholeSectors ? 0 : (SECTOR_ELEMENTS > ROWS_STEP ? SECTOR_ELEMENTS : ROWS_STEP);
  __shared__ T tile[TILE_DIM + EXTRA_ROWS][TILE_DIM + 1];
  const int tile_r = blockIdx.x * TILE_DIM, tile_c = tile_column(cols, TILE_DIM);
  const int c = tile_c + threadIdx.x;
#pragma unroll
  for (int j = 0; j < TILE_DIM + EXTRA_ROWS; j += ROWS_STEP) {
#pragma unroll
    for (int i = 0; i < TILE_DIM; i += WARP_SIZE) {
      const int r = tile_r + threadIdx.y + j;
      if (r < rows && c + i < cols)
        tile[threadIdx.y + j][threadIdx.x + i] = in[static_cast<size_t>(r) * cols + c + i];
    }
  }
  __syncthreads();
#pragma unroll
  for (int j = 0; j < TILE_DIM; j += ROWS_STEP) {
    const int out_row = tile_c + threadIdx.y + j;
    if (out_row >= cols) continue;
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
}

template <class T>
LaunchShape launch_elements(const T* in, T* out, int rows, int cols, cudaStream_t stream) {
  const dim3 block(WARP_SIZE, BLOCK_ROWS<T>), grid = tile_grid(rows, cols, ELEMENT_TILE<T>);
  if (rows % (SECTOR_BYTES / sizeof(T)) == 0)
    element_kernel<T, true><<<grid, block, 0, stream>>>(in, out, rows, cols);
  else
    element_kernel<T, false><<<grid, block, 0, stream>>>(in, out, rows, cols);
  return {grid, block};
}

// ---- 1- and 2-byte elements: 16-byte accesses on misaligned rows ----
// The wide accesses stay aligned; the data is moved to fit them, in registers:
// - In: the 16 bytes a thread wants from an input row straddle two aligned vectors. It loads both
//   (the second is its neighbour's first: L1 or L2 serves it, not DRAM) and shifts the pair by
//   the row's offset: a choice of whole words, then one funnel shift per word (`extract`). Then
//   the block is exactly the aligned kernel's, and so are the register transpose and the tile.
// - Out: each aligned 16-byte vector of an output row is cut the same way from two tile cells.
//   The vectors at the two ends of a row's piece are shared with the neighbouring tiles: only the
//   bytes this tile owns are written there, as aligned 8-, 4-, 2- and 1-byte stores.
// - As in v6, every piece of an output row starts where a 32-byte sector starts, so no sector is
//   written by two blocks: the tile holds two more groups of rows (up to 31 more bytes of each
//   output row). Where the output rows start on sectors already, it is the plain 16 groups.
// Why shifts in registers: the other way, reading aligned words into shared memory and building
// each output word from single bytes there (__byte_perm), costs a shared-memory load per byte. Here
// every 16 bytes cost two global loads, one shared store, two shared loads and one global store
// (v6: 16 of each for uint8, 8 for float16) and about 15 integer instructions at each end.
using Address = std::uintptr_t;  // alignment is a property of the address, not of the index

// The aligned 16 bytes at address x of the input, which starts at `in` (address begin) and ends at
// address end. kGuarded: the vector may cross an end, so it is read a byte at a time and nothing
// outside is touched. (Pointers are formed from `in`, not from x: that keeps them global loads.)
template <bool kGuarded>
__device__ void load_vector(const std::uint8_t* in, Address begin, Address end, Address x,
                            std::uint32_t (&v)[WORDS]) {
  const std::uint8_t* at = in + static_cast<std::ptrdiff_t>(x - begin);
  if (!kGuarded || (x >= begin && x + VECTOR_BYTES <= end)) {
    const uint4 q = *reinterpret_cast<const uint4*>(at);
    v[0] = q.x, v[1] = q.y, v[2] = q.z, v[3] = q.w;
  } else {
#pragma unroll
    for (int i = 0; i < VECTOR_BYTES; ++i) {
      if (i % 4 == 0) v[i / 4] = 0;
      if (x + i >= begin && x + i < end) v[i / 4] |= std::uint32_t(at[i]) << (8 * (i % 4));
    }
  }
}

// The 16 bytes that start `shift` bytes (0..15) into lo and run on into hi.
__device__ void extract(const std::uint32_t (&lo)[WORDS], const std::uint32_t (&hi)[WORDS],
                        int shift, std::uint32_t (&out)[WORDS]) {
  std::uint32_t v[2 * WORDS] = {lo[0], lo[1], lo[2], lo[3], hi[0], hi[1], hi[2], hi[3]};
  // Whole words by selects (constant indices keep v in registers), the rest by funnel shifts.
  if (shift & 8) {
#pragma unroll
    for (int x = 0; x < 6; ++x) v[x] = v[x + 2];
  }
  if (shift & 4) {
#pragma unroll
    for (int x = 0; x < 5; ++x) v[x] = v[x + 1];
  }
#pragma unroll
  for (int x = 0; x < WORDS; ++x) out[x] = __funnelshift_r(v[x], v[x + 1], 8 * (shift & 3));
}

// Bytes [from, to) of v, the 16 bytes for the aligned address of `at`, in naturally aligned stores.
__device__ void store_bytes(std::uint8_t* at, const std::uint32_t (&v)[WORDS], int from, int to) {
  const std::uint64_t low = v[0] | std::uint64_t{v[1]} << 32,
                      high = v[2] | std::uint64_t{v[3]} << 32;
  for (int i = from; i < to;) {
    const std::uint64_t bits = (i < 8 ? low : high) >> (8 * (i % 8));
    if (i % 8 == 0 && i + 8 <= to) {
      *reinterpret_cast<std::uint64_t*>(at + i) = bits, i += 8;
    } else if (i % 4 == 0 && i + 4 <= to) {
      *reinterpret_cast<std::uint32_t*>(at + i) = static_cast<std::uint32_t>(bits), i += 4;
    } else if (i % 2 == 0 && i + 2 <= to) {
      *reinterpret_cast<std::uint16_t*>(at + i) = static_cast<std::uint16_t>(bits), i += 2;
    } else {
      *reinterpret_cast<std::uint8_t*>(at + i) = static_cast<std::uint8_t>(bits), i += 1;
    }
  }
}

// Row k of the block in w[k]: 16 bytes from column first_col of N input rows. Unguarded, rows and
// columns past the matrix are clamped (their bytes are never stored) so that the code has no
// branch and every load is issued before the first is used, as in the aligned kernel.
template <bool kGuarded, class T, int N>
__device__ void load_rows(const T* in, int rows, int cols, int first_row, int first_col,
                          std::uint32_t (&w)[N][WORDS]) {
  const Address begin = reinterpret_cast<Address>(in);
  const Address end = begin + static_cast<size_t>(rows) * cols * sizeof(T);
#pragma unroll
  for (int k = 0; k < N; ++k) {
    if (kGuarded && (first_row + k >= rows || first_col >= cols)) continue;
    const int r = min(first_row + k, rows - 1), c = min(first_col, cols - 1);
    const Address at = begin + (static_cast<size_t>(r) * cols + c) * sizeof(T);
    const int shift = static_cast<int>(at % VECTOR_BYTES);
    std::uint32_t lo[WORDS], hi[WORDS] = {};
    const auto* bytes = reinterpret_cast<const std::uint8_t*>(in);
    load_vector<kGuarded>(bytes, begin, end, at - shift, lo);
    if (shift != 0) load_vector<kGuarded>(bytes, begin, end, at - shift + VECTOR_BYTES, hi);
    extract(lo, hi, shift, w[k]);
  }
}

// kGroups rows of cells per output row: GROUPS, or GROUPS + 2 for the sector cut. One spare cell
// after the N rows a thread writes keeps those 16-byte writes in 8 bank groups (a swizzle would
// have to stay inside 18 cells); the reads are runs of consecutive cells.
template <int N, int kGroups>
__device__ int realign_cell(int out_row_local, int g) {
  return out_row_local * kGroups + out_row_local / N + g;
}

// At least two blocks an SM, one loading while the other stores; three for 2-byte elements, whose
// smaller tile leaves room for them (measured on an H200 at 8191 x 8193, float16: 80.4% of the copy
// at three, 75.9% at two; uint8 drops from 59.3% to 54.0% at three: docs/results/session3/; the
// v7_realign_* probes of make probes measure them again).
template <class T>
constexpr int REALIGN_MIN_BLOCKS = sizeof(T) == 1 ? 2 : 3;
template <class T, int kGroups>
__global__ void __launch_bounds__(CHUNKS* kGroups, REALIGN_MIN_BLOCKS<T>)
    realign_kernel(const T* in, T* out, int rows, int cols) {
  constexpr int E = sizeof(T), N = VECTOR_BYTES / E;
  constexpr int TILE_DIM = CHUNKS * N;  // output rows of a tile; 256 bytes of each are its own
  extern __shared__ uint4 tile[];
  const int group = threadIdx.x / CHUNKS, chunk = threadIdx.x % CHUNKS;
  const int tile_r = blockIdx.x * TILE_DIM, tile_c = tile_column(cols, TILE_DIM);
  const int first_row = tile_r + group * N, first_col = tile_c + chunk * N;
  // Only the matrix's first and last vectors can reach outside it: a thread whose vectors all lie
  // inside (all but a few) loads them without checks.
  const Address in_begin = reinterpret_cast<Address>(in);
  const Address in_end = in_begin + static_cast<size_t>(rows) * cols * E;
  const int c = min(first_col, cols - 1);
  const Address lowest = in_begin + (static_cast<size_t>(min(first_row, rows - 1)) * cols + c) * E;
  const Address highest =
      in_begin + (static_cast<size_t>(min(first_row + N - 1, rows - 1)) * cols + c) * E;
  const bool inside = lowest / VECTOR_BYTES * VECTOR_BYTES >= in_begin &&
                      highest / VECTOR_BYTES * VECTOR_BYTES + 2 * VECTOR_BYTES <= in_end;
  std::uint32_t w[N][WORDS] = {};
  if (inside)
    load_rows<false>(in, rows, cols, first_row, first_col, w);
  else
    load_rows<true>(in, rows, cols, first_row, first_col, w);
  transpose_in_registers<E, N>(w);  // from here on as in the aligned kernel
#pragma unroll
  for (int j = 0; j < N; ++j)
    tile[realign_cell<N, kGroups>(chunk * N + j, group)] =
        make_uint4(w[j][0], w[j][1], w[j][2], w[j][3]);
  __syncthreads();  // outside any bounds check: every thread of the block must reach it

  const Address out_begin = reinterpret_cast<Address>(out);
#pragma unroll
  for (int pass = 0; pass < N; ++pass) {  // CHUNKS output rows a pass, kGroups threads a row
    const int out_row_local = pass * CHUNKS + threadIdx.x / kGroups, slot = threadIdx.x % kGroups;
    const int out_row = tile_c + out_row_local;
    if (out_row >= cols) continue;
    const Address row_start = out_begin + static_cast<size_t>(out_row) * rows * E;
    const Address row_end = row_start + static_cast<size_t>(rows) * E;
    const Address piece = row_start + static_cast<size_t>(tile_r) * E;  // tile byte 0 goes here
    // This block writes [begin, end): from the first sector start at or after its piece, to the
    // next block's begin (the first block from the row's start, the last up to its end).
    const auto sector_up = [](Address a) {
      return (a + SECTOR_BYTES - 1) / SECTOR_BYTES * SECTOR_BYTES;
    };
    const Address begin = blockIdx.x == 0 ? row_start : sector_up(piece);
    const Address end = min(sector_up(piece + CHUNKS * VECTOR_BYTES), row_end);
    const Address x = begin / VECTOR_BYTES * VECTOR_BYTES + slot * VECTOR_BYTES;
    if (x >= end) continue;
    // The vector at x holds tile bytes from x - piece on (-15 .. 272): two cells of this row.
    const int from_piece = static_cast<int>(static_cast<std::intptr_t>(x - piece)) + VECTOR_BYTES;
    const int lo_cell = from_piece / VECTOR_BYTES - 1, shift = from_piece % VECTOR_BYTES;
    std::uint32_t lo[WORDS] = {}, hi[WORDS] = {}, v[WORDS];
    if (lo_cell >= 0) {
      const uint4 q = tile[realign_cell<N, kGroups>(out_row_local, lo_cell)];
      lo[0] = q.x, lo[1] = q.y, lo[2] = q.z, lo[3] = q.w;
    }
    if (shift != 0) {
      const uint4 q = tile[realign_cell<N, kGroups>(out_row_local, lo_cell + 1)];
      hi[0] = q.x, hi[1] = q.y, hi[2] = q.z, hi[3] = q.w;
    }
    extract(lo, hi, shift, v);
    std::uint8_t* at =
        reinterpret_cast<std::uint8_t*>(out) + static_cast<std::ptrdiff_t>(x - out_begin);
    const int from = x < begin ? static_cast<int>(begin - x) : 0;
    const int to = x + VECTOR_BYTES > end ? static_cast<int>(end - x) : VECTOR_BYTES;
    if (from == 0 && to == VECTOR_BYTES)
      *reinterpret_cast<uint4*>(at) = make_uint4(v[0], v[1], v[2], v[3]);
    else
      store_bytes(at, v, from, to);  // an end of this block's piece: only the bytes it owns
  }
}

template <class T>
LaunchShape launch_realigned(const T* in, T* out, int rows, int cols, cudaStream_t stream) {
  constexpr int TILE_DIM = CHUNKS * (VECTOR_BYTES / sizeof(T));
  const dim3 grid = tile_grid(rows, cols, TILE_DIM);
  // Every output row starts a sector: no block needs rows beyond its own.
  const bool whole_sectors = static_cast<size_t>(rows) * sizeof(T) % SECTOR_BYTES == 0 &&
                             reinterpret_cast<Address>(out) % SECTOR_BYTES == 0;
  const auto run = [&](auto groups) {
    constexpr int kGroups = decltype(groups)::value;
    constexpr int SHARED_BYTES = (TILE_DIM * kGroups + CHUNKS) * VECTOR_BYTES;  // 72 KiB: uint8
    allow_shared_bytes(realign_kernel<T, kGroups>, SHARED_BYTES);
    const dim3 block(CHUNKS * kGroups);
    realign_kernel<T, kGroups><<<grid, block, SHARED_BYTES, stream>>>(in, out, rows, cols);
    return LaunchShape{grid, block};
  };
  if (whole_sectors) return run(std::integral_constant<int, GROUPS>{});
  return run(std::integral_constant<int, GROUPS + 2>{});
}

template <class T>
LaunchShape launch_transpose(const T* in, T* out, int rows, int cols, cudaStream_t stream) {
  // 16-byte elements gain nothing from packing (N = 1): v6's kernel, with its sector cut, on every
  // shape (H200, complex128: 97.5% of the copy at 1024 x 65536 against 95.8% packed, within 0.6%
  // on the other aligned shapes; docs/results/session4/c128_probe.csv).
  if constexpr (sizeof(T) < 16) {
    constexpr int N = VECTOR_BYTES / sizeof(T);
    const bool vectors = reinterpret_cast<Address>(in) % VECTOR_BYTES == 0 &&
                         reinterpret_cast<Address>(out) % VECTOR_BYTES == 0;
    if (rows % N == 0 && cols % N == 0 && vectors)
      return launch_packed(in, out, rows, cols, stream);
  }
  if constexpr (sizeof(T) >= 4)
    return launch_elements(in, out, rows, cols, stream);
  else
    return launch_realigned(in, out, rows, cols, stream);
}

const char* const kStepSummary =
    "16-byte accesses for every element size: N x N blocks transposed in registers";
