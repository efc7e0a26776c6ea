// CUDA.v7_packed, what real shapes need: rows or cols that are not a multiple of N (8191 x 8193).
// The rows of the input, or of the output, then start anywhere inside a 16-byte vector, and the
// packed kernel of transpose.cu cannot run. Two paths keep such shapes at least as fast as v6
// (launch_transpose, at the end, picks the kernel; a 1 x N or N x 1 matrix, its own transpose
// byte for byte, it copies, and a matrix of a few rows or columns goes through a thin kernel); they
// are beyond the lesson, not in the exercise:
// - 16-byte elements: v6's kernel (N = 1: nothing to pack, and a 16-byte element is aligned
//   wherever it starts), with each output row cut where its own 32-byte sectors begin
//   (sector_kernel) when rows splits them.
// - 1- to 8-byte elements: the packed kernel, with each row realigned on its way in and out
//   (realign_kernel): 16-byte accesses despite the misalignment. Only the blocks at the matrix's
//   edges check their accesses. 4- and 8-byte elements took v6's kernel while every tile was
//   checked; since the edge blocks were split off the realigned kernel is 1 to 5 points of the
//   copy faster for them (make probes: v7_sector_kernel_4_to_8_bytes measures v6's way again).
#include <cstddef>

#include "../common/short_rows.cuh"        // thin matrices: the K x N transpose, the warp's stage
#include "../common/unaligned_vector.cuh"  // extract, load_unaligned: 16 bytes from anywhere
#include "../common/vector_copy.cuh"       // lab::launch_vector_copy: 1 x N and N x 1 matrices

constexpr int SECTOR_BYTES = 32;  // DRAM and L2 move whole 32-byte sectors

// ---- 16-byte elements: v6_locality's kernel and launcher, linked, not copied ----
// Under names of their own: transpose_kernel and launch_transpose are this step's packed ones.
#define transpose_kernel element_kernel
#define launch_transpose launch_elements
#define kStepSummary kElementSummary
#include "../common/../CUDA.v6_locality/transpose.cu"
#undef transpose_kernel
#undef launch_transpose
#undef kStepSummary

// Whole-sector writes. Output row k starts at element k * rows, on a 32-byte sector only when rows
// is a multiple of a sector's elements (2 complex128). Otherwise a tile edge of v6 (a multiple of
// 64) splits a sector between two blocks, and a sector that reaches DRAM partly written costs a
// read too. So each output row is cut where ITS sectors begin: this block writes the row's columns
// tile_r + shift to tile_r + 64 + shift, shift 0 or 1 for that row (the first block from column 0).
// That takes up to a sector's worth of the next tile's input rows: EXTRA_ROWS more rows in the
// tile, mostly L2 hits, since the block below (dispatched next, as in v6) loads them too.
// Otherwise the kernel is v6's: the same tile, block, grid and load.
template <class T>
constexpr int SECTOR_ELEMENTS = SECTOR_BYTES / sizeof(T);

template <class T>
__global__ void sector_kernel(const T* in, T* out, int rows, int cols) {
  constexpr int TILE_DIM = ::TILE_DIM<T>, SECTOR_ELEMENTS = ::SECTOR_ELEMENTS<T>;
  // A whole number of BLOCK_ROWS passes, and at least the largest shift.
  constexpr int EXTRA_ROWS = SECTOR_ELEMENTS > BLOCK_ROWS ? SECTOR_ELEMENTS : BLOCK_ROWS;
  __shared__ T tile[TILE_DIM + EXTRA_ROWS][TILE_DIM + 1];  // +1: a column spans all 32 banks
  const int tile_r = blockIdx.x * TILE_DIM, tile_c = blockIdx.y * TILE_DIM;
#pragma unroll
  for (int j = 0; j < TILE_DIM + EXTRA_ROWS; j += BLOCK_ROWS) {
    for (int i = 0; i < TILE_DIM; i += WARP_SIZE) {
      const int y = threadIdx.y + j, x = threadIdx.x + i, r = tile_r + y, c = tile_c + x;
      if (r < rows && c < cols) tile[y][x] = in[static_cast<size_t>(r) * cols + c];
    }
  }
  __syncthreads();  // outside any bounds check: every thread of the block must reach it
#pragma unroll
  for (int j = 0; j < TILE_DIM; j += BLOCK_ROWS) {
    const int r = tile_c + threadIdx.y + j;  // an output row
    if (r >= cols) continue;
    const size_t row_start = static_cast<size_t>(r) * rows;
    const int shift =
        static_cast<int>((SECTOR_ELEMENTS - row_start % SECTOR_ELEMENTS) % SECTOR_ELEMENTS);
    const int first = blockIdx.x == 0 ? 0 : tile_r + shift;
    const int last = min(rows, tile_r + TILE_DIM + shift);
#pragma unroll
    for (int i = 0; i < TILE_DIM + EXTRA_ROWS; i += WARP_SIZE) {
      const int c = first + threadIdx.x + i;
      if (c < last) out[row_start + c] = tile[c - tile_r][threadIdx.y + j];
    }
  }
}

// v6's launcher where every output row starts a sector; else the same grid for sector_kernel.
template <class T>
LaunchShape launch_sectors(const T* in, T* out, int rows, int cols, cudaStream_t stream) {
  if (rows % SECTOR_ELEMENTS<T> == 0) return launch_elements(in, out, rows, cols, stream);
  const dim3 block(WARP_SIZE, BLOCK_ROWS);
  const dim3 grid((rows + TILE_DIM<T> - 1) / TILE_DIM<T>, (cols + TILE_DIM<T> - 1) / TILE_DIM<T>);
  lab::require_grid(grid, lab::GridAxes::kRowsInX, TILE_DIM<T>, TILE_DIM<T>, rows, cols);
  sector_kernel<<<grid, block, 0, stream>>>(in, out, rows, cols);
  return {grid, block};
}

// ---- 1- to 8-byte elements: 16-byte accesses on misaligned rows ----
// The wide accesses stay aligned; the data is moved to fit them, in registers:
// - In: the 16 bytes a thread wants from an input row start anywhere in an aligned vector. Rows
//   step by cols * sizeof(T) bytes, so a row's offset in its 8-byte word repeats with the row
//   index: a constant of the launch, made a template argument (load_octets). Each row is read
//   as the three aligned 8-byte words it lies in and shifted by constants (elements of up to 4
//   bytes; 8-byte elements, and any input that does not start on 8 bytes, load both aligned
//   vectors and choose words at run time: `extract`). Then the block is exactly the aligned
//   kernel's, and so are the register transpose and the tile. (uint8 shares each 16 x 16 block
//   between two lanes: transpose_to_tile says why.)
// - Out: each aligned 16-byte vector of an output row is cut the same way from two tile cells.
//   The vectors where an output row begins and ends are shared with the rows beside it: only the
//   row's own bytes are written there, as aligned 8-, 4-, 2- and 1-byte stores.
// - As in v6, every piece of an output row starts where a 32-byte sector starts, so no sector is
//   written by two blocks: the tile holds two more groups of rows (up to 31 more bytes of each
//   output row). Where the output rows start on sectors already, it is the plain 16 groups.
// Why shifts in registers: the other way, reading aligned words into shared memory and building
// each output word from single bytes there (__byte_perm), costs a shared-memory load per byte. Here
// every 16 bytes cost two global loads, one shared store, two shared loads and one global store
// (v6: 16 of each for uint8, 8 for float16) and about 15 integer instructions at each end.
// Nor by address: each 16 bytes read from shared memory as five 4-byte words from their byte
// offset, no selects. With the input rows staged there whole, every type up to 8 bytes lost on an
// H200 (uint8 1 to 5 points of the copy, wider types 5 to 12); with only the output read so, uint8
// and float16 lost up to 8 and 6 points, and 4- and 8-byte elements moved within the noise.
// Four-byte loads 16 bytes apart meet in 8 of the 32 banks (shared_shifts.csv in
// docs/results/h200; docs/element-types.md).
// Why bulk and edge blocks: with every access checked where the matrix may end, the kernel ran
// about three times the aligned kernel's instructions (ncu, H200, 8191 x 8193 uint8), most of them
// in tiles that never meet an edge (clamped rows, 64-bit address arithmetic per output vector, the
// sector cut worked out anew by every thread, a choice of store per vector). So a block decides
// once which it is: a bulk block (its tile and the rows it borrows lie inside the matrix) runs
// without a check, an edge block (a tile at the matrix's first rows, its last rows or its last
// columns) takes the checked path, out of line. The bulk code at the first and last rows of tiles
// too (the last rows clamped, the output cut at the rows' ends) was tried on an H200: uint8 lost 2
// to 4 points of the copy at 4097 x 4099 and 8193 x 8191, whose last row of tiles holds one row
// (the edge path skips the rows that do not exist), gained 1 at 16383 x 16385 and moved within the
// noise at 8191 x 8193; wider types moved within 1 point but float32 at 4097 x 4099 (93.1-93.6
// against 93.9-97.2; clamped_tiles.csv in docs/results/h200).
// extract and load_unaligned, the shifts, are in common/unaligned_vector.cuh (PERMUTE.v5_packed's
// short rows use them too).

// What extract is told a row's shift in a vector is a multiple of. 8-byte elements: 8, so one
// choice of words and no funnel shifts: from -0.04 to +0.5 points of the copy on an H200, 22 of 24
// runs ahead. 4-byte elements could drop the funnel shifts too, but the compiler then gave the
// kernel 58 registers, not 52, and they lost 0.3 to 3.7 points; 1- and 2-byte elements need every
// shift (realign_grain.csv in docs/results/h200).
template <class T>
constexpr int REALIGN_GRAIN = sizeof(T) == 8 ? 8 : 1;

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
    extract<REALIGN_GRAIN<T>>(lo, hi, shift, w[k]);
  }
}

// kGroups rows of cells per output row: GROUPS, or GROUPS + 2 for the sector cut. One spare cell
// after the N rows a thread writes keeps those 16-byte writes in 8 bank groups (a swizzle would
// have to stay inside 18 cells); the reads are runs of consecutive cells.
template <int N, int kGroups>
__device__ int realign_cell(unsigned out_row_local, int g) {  // unsigned: / N is a shift
  return static_cast<int>(out_row_local * kGroups + out_row_local / N) + g;
}

// Threads an SM holds, on the architecture this pass compiles for: 2048 on sm_80, sm_90 and
// sm_100, 1024 on sm_75, 1536 on the others (the host pass, which ignores launch bounds, 2048). A
// launch bound asking for more is ignored, with a warning.
#if !defined(__CUDA_ARCH__) || __CUDA_ARCH__ == 800 || __CUDA_ARCH__ == 900 || __CUDA_ARCH__ == 1000
constexpr int SM_THREADS = 2048;
#elif __CUDA_ARCH__ == 750
constexpr int SM_THREADS = 1024;
#else
constexpr int SM_THREADS = 1536;
#endif

// At least two blocks an SM, one loading while the other stores; three for wider elements, whose
// smaller tile leaves room for them (measured on an H200 at 8191 x 8193 when every tile was still
// checked, float16: 80.4% of the copy at three, 75.9% at two; with the edge tiles first, uint8
// drops from 78.6% to 66.7% at three, the bulk tile's registers squeezed; the v7_realign_* probes
// of make probes measure them again). An 8-byte thread holds only 2 rows of 16 bytes: at three
// blocks the compiler gave it 38 registers, five blocks of 288 threads an SM, the fewest bytes in
// flight of any type, and the H200 stayed at 86% of the copy; at seven (32 registers, as many
// threads as an SM holds) 92%, the H100 unchanged at 93% (realign_blocks.csv in docs/results).
// Seven on Hopper, as many as SM_THREADS allows elsewhere.
template <class T>
constexpr int REALIGN_MIN_BLOCKS = 3;
template <>
constexpr int REALIGN_MIN_BLOCKS<lab::Bytes1> =  // 2 of 576 threads, where an SM holds them
    SM_THREADS / (2 * CHUNKS * (GROUPS + 2)) < 2 ? 1 : 2;
template <>
constexpr int REALIGN_MIN_BLOCKS<lab::Bytes8> = SM_THREADS / (CHUNKS * (GROUPS + 2));  // 8 bytes

// uint8: two threads a 16 x 16 block, 8 rows each (transpose_to_tile says why).
template <class T>
constexpr int REALIGN_HALVES = sizeof(T) == 1 ? 2 : 1;
template <class T, int kGroups>
constexpr int REALIGN_THREADS = kGroups* CHUNKS* REALIGN_HALVES<T>;

// The tiles' shuffles: a tile is its whole block's, so every lane takes part.
constexpr unsigned ALL_LANES = 0xffffffffu;

// Which rows of which block a thread loads: its group of N input rows, its 16-byte chunk of them,
// and for uint8 its half of the group (lanes 0-15 and 16-31 of a warp hold the same chunks).
struct RealignPlace {
  int group, chunk, half;
};

template <class T>
__device__ RealignPlace realign_place() {
  constexpr int HALVES = REALIGN_HALVES<T>;
  static_assert(HALVES == 1 || WARP_SIZE == 2 * CHUNKS, "a block's halves share a warp");
  // Unsigned arithmetic on threadIdx.x: shifts and masks, not signed division.
  return {static_cast<int>(threadIdx.x / (CHUNKS * HALVES)), static_cast<int>(threadIdx.x % CHUNKS),
          static_cast<int>(threadIdx.x / CHUNKS % HALVES)};
}

// A thread's rows of its N x N block (w[k]: 16 bytes of input row k), transposed and written to
// their cells of the tile. uint8 splits each block between two threads, 8 rows each: the
// register transpose's last round, which swaps 8-byte halves between rows 8 apart, becomes an
// exchange of halves between the two lanes, and each finishes its 8 rows alone (the rounds
// commute: each swaps one bit of the row with one bit of the byte). Why: a whole uint8 block is
// 64 registers and its 16 pairs of loads 128 more, so the kernel ran at 2 blocks of 288 threads
// an SM, 18 warps, waiting on their loads for 44% of their cycles (realign_uint8.ncu.log in
// docs/results/h100). Two lanes a block: 576 threads, 36 warps an SM.
template <class T, int kGroups, int kRows>
__device__ __forceinline__ void transpose_to_tile(std::uint32_t (&w)[kRows][WORDS],
                                                  RealignPlace at) {
  constexpr int N = VECTOR_BYTES / sizeof(T);
  extern __shared__ uint4 tile[];
  if constexpr (kRows < N) {
    // Row a of the first half keeps its bytes 0-7 and takes row a + 8's; the second half keeps
    // its bytes 8-15 and takes row a's.
    // (Selects on constant indices: an index chosen at run time would put w in local memory.)
    const bool first_half = at.half == 0;
#pragma unroll
    for (int a = 0; a < kRows; ++a)
#pragma unroll
      for (int x = 0; x < WORDS / 2; ++x) {
        const std::uint32_t low = w[a][x], high = w[a][WORDS / 2 + x];
        const std::uint32_t got = __shfl_xor_sync(ALL_LANES, first_half ? high : low, CHUNKS);
        w[a][x] = first_half ? low : got;
        w[a][WORDS / 2 + x] = first_half ? got : high;
      }
  }
  transpose_in_registers<sizeof(T), kRows>(w);
#pragma unroll
  for (int j = 0; j < kRows; ++j)
    tile[realign_cell<N, kGroups>(at.chunk * N + at.half * kRows + j, at.group)] =
        make_uint4(w[j][0], w[j][1], w[j][2], w[j][3]);
}

// The tile of an edge block, every access checked where the matrix may end: rows and columns past
// it, input vectors that cross its first or last byte, output rows shorter than the piece. Each
// piece of an output row runs from sector start to sector start (kGroups = GROUPS + 2, or GROUPS
// where the rows start on sectors already). Out of line: its guarded loads need more registers
// than the bulk tile, and a call keeps the register allocation of the two apart (inlined, ptxas
// spills in the uint8 kernel for sm_90).
template <class T, int kGroups>
__device__ __noinline__ void realign_edge_tile(const T* in, T* out, int rows, int cols, int tile_r,
                                               int tile_c) {
  constexpr int E = sizeof(T), N = VECTOR_BYTES / E;  // CHUNKS * N output rows, 256 bytes each
  constexpr int ROWS = N / REALIGN_HALVES<T>;         // rows a thread loads
  extern __shared__ uint4 tile[];
  const RealignPlace place = realign_place<T>();
  const int first_row = tile_r + place.group * N + place.half * ROWS;
  const int first_col = tile_c + place.chunk * N;
  // Only the matrix's first and last vectors can reach outside it: a thread whose vectors all lie
  // inside (all but a few) loads them without checks.
  const Address in_begin = reinterpret_cast<Address>(in);
  const Address in_end = in_begin + static_cast<size_t>(rows) * cols * E;
  const int c = min(first_col, cols - 1);
  const Address lowest = in_begin + (static_cast<size_t>(min(first_row, rows - 1)) * cols + c) * E;
  const Address highest =
      in_begin + (static_cast<size_t>(min(first_row + ROWS - 1, rows - 1)) * cols + c) * E;
  const bool inside = lowest / VECTOR_BYTES * VECTOR_BYTES >= in_begin &&
                      highest / VECTOR_BYTES * VECTOR_BYTES + 2 * VECTOR_BYTES <= in_end;
  std::uint32_t w[ROWS][WORDS] = {};
  if (inside)
    load_rows<false>(in, rows, cols, first_row, first_col, w);
  else
    load_rows<true>(in, rows, cols, first_row, first_col, w);
  transpose_to_tile<T, kGroups>(w, place);  // from here on as in the aligned kernel
  __syncthreads();  // outside any bounds check: every thread of the block must reach it

  const Address out_begin = reinterpret_cast<Address>(out);
  constexpr int kRowsPerPass = REALIGN_THREADS<T, kGroups> / kGroups;  // kGroups threads a row
#pragma unroll
  for (int pass = 0; pass < CHUNKS * N / kRowsPerPass; ++pass) {
    const int out_row_local = pass * kRowsPerPass + threadIdx.x / kGroups;
    const int slot = threadIdx.x % kGroups;
    const int out_row = tile_c + out_row_local;
    if (out_row >= cols) continue;
    const Address row_start = out_begin + static_cast<size_t>(out_row) * rows * E;
    const Address row_end = row_start + static_cast<size_t>(rows) * E;
    const Address piece = row_start + static_cast<size_t>(tile_r) * E;  // tile byte 0 goes here
    // This block writes [begin, end): from the first sector start at or after its piece, to the
    // next block's begin (the first block from the row's start, the last up to its end). At most
    // kGroups vectors: one a thread.
    const auto sector_up = [](Address a) {
      return (a + SECTOR_BYTES - 1) / SECTOR_BYTES * SECTOR_BYTES;
    };
    const Address begin = tile_r == 0 ? row_start : sector_up(piece);
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
    extract<REALIGN_GRAIN<T>>(lo, hi, shift, v);
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

// Which tile a block moves, and whether it is a bulk tile: all the rows it loads (its kGroups
// groups, and one more row below them, so the second vector of a pair never passes the matrix's
// end) and all its columns exist, and it is not in the first row of tiles (whose output pieces
// start at the rows' starts, not at sectors). Edge tiles take about twice a bulk tile's time
// (H200, uint8: 18 us against 9); in grid order the last of them started in the last wave and ran
// on alone for 16 us after every bulk tile was done. So the first blocks take the edge tiles (the
// first row of tiles, the rows at the bottom, then the last, partial column), and the rest take
// the bulk tiles in v6's order, down the rows first.
struct TileOfBlock {
  int tile_r, tile_c;
  bool bulk;
};

template <class T, int kGroups>
__device__ TileOfBlock edge_tiles_first(int rows, int cols) {
  constexpr int N = VECTOR_BYTES / sizeof(T), TILE_DIM = CHUNKS * N;
  const int tiles_r = (rows - 1) / TILE_DIM + 1, tiles_c = (cols - 1) / TILE_DIM + 1;
  // Bulk tiles: tile rows [1, bulk_rows_end), tile columns [0, bulk_cols).
  const int below = rows - kGroups * N;  // a bulk tile starts above this row
  const int bulk_rows_end = max(1, below > 0 ? (below + TILE_DIM - 1) / TILE_DIM : 0);
  const int bulk_rows = bulk_rows_end - 1, bulk_cols = cols / TILE_DIM;
  const int edge_rows = 1 + tiles_r - bulk_rows_end;  // the first, and those from bulk_rows_end
  const int edge_cols = tiles_c - bulk_cols;          // 0, or 1: the partial last column
  int b = static_cast<int>(blockIdx.x + gridDim.x * (blockIdx.y + gridDim.y * blockIdx.z));
  if (b < edge_rows * tiles_c) {
    const int r = b % edge_rows;
    return {(r == 0 ? 0 : bulk_rows_end + r - 1) * TILE_DIM, b / edge_rows * TILE_DIM, false};
  }
  b -= edge_rows * tiles_c;
  if (b < bulk_rows * edge_cols)
    return {(1 + b % bulk_rows) * TILE_DIM, bulk_cols * TILE_DIM, false};
  b -= bulk_rows * edge_cols;
  if (b < bulk_rows * bulk_cols)
    return {(1 + b % bulk_rows) * TILE_DIM, b / bulk_rows * TILE_DIM, true};
  return {0, tiles_c * TILE_DIM, false};  // a block past the last tile: every check fails
}

// Row k of N rows of T in w[k]: 16 bytes from each, `first` the first row at this
// thread's 16 bytes, rows row_bytes apart. Each row's 16 bytes straddle two aligned vectors: both
// are loaded, and `extract` shifts the pair.
template <class T, int N>
__device__ __forceinline__ void load_pairs(const std::uint8_t* first, size_t row_bytes,
                                           std::uint32_t (&w)[N][WORDS]) {
  const std::uint8_t* at = first;
#pragma unroll
  for (int k = 0; k < N; ++k, at += row_bytes) {
    const int shift = static_cast<int>(reinterpret_cast<Address>(at) % VECTOR_BYTES);
    const uint4* pair = reinterpret_cast<const uint4*>(at - shift);
    const uint4 a = pair[0], b = pair[1];
    const std::uint32_t lo[WORDS] = {a.x, a.y, a.z, a.w}, hi[WORDS] = {b.x, b.y, b.z, b.w};
    extract<REALIGN_GRAIN<T>>(lo, hi, shift, w[k]);
  }
}

// The same rows (uint8 where the input does not start on 8 bytes), one aligned vector loaded a
// row: the second of the pair is the next chunk's first, taken from that lane by a shuffle (the
// lanes of a group's chunks are consecutive). The last chunk's second lies past the tile: thread
// `chunk` loads it for row `chunk` and hands it over the same way. For uint8 (transpose_to_tile's
// halves): with pairs, 8 rows of them (64 registers) could not all be in flight in the 56 registers
// that 2 blocks of 576 threads leave, and 16383 x 16385 fell from 82% to 76% of the copy on an
// H200; one vector a row (32) can (realign_halves.csv in docs/results/h100, h200). For wider
// elements, one thread a block, the shuffles gained 2-byte elements 2 points of the copy on an H200
// and lost them 0.7 on an H100, and lost 4- and 8-byte elements up to 1.3 (realign_shuffle.csv
// there): they keep the pairs.
template <int N>
__device__ __forceinline__ void load_by_shuffle(const std::uint8_t* first, size_t row_bytes,
                                                int chunk, std::uint32_t (&w)[N][WORDS]) {
  const int first_lane = static_cast<int>(threadIdx.x % WARP_SIZE) - chunk;  // chunk 0's lane
  // The aligned vector that row k's 16 bytes start in; the one past the last chunk's of that row
  // lies CHUNKS - chunk vectors on.
  const auto aligned = [&](int k) {
    const Address at = reinterpret_cast<Address>(first + k * row_bytes);
    return reinterpret_cast<const uint4*>(at & ~Address{VECTOR_BYTES - 1});
  };
  std::uint32_t past[WORDS] = {};
#pragma unroll
  for (int k = 0; k < N; ++k) {
    const uint4 a = *aligned(k);
    w[k][0] = a.x, w[k][1] = a.y, w[k][2] = a.z, w[k][3] = a.w;
  }
  if (chunk < N) {
    const uint4 a = aligned(chunk)[CHUNKS - chunk];
    past[0] = a.x, past[1] = a.y, past[2] = a.z, past[3] = a.w;
  }
#pragma unroll
  for (int k = 0; k < N; ++k) {
    const int shift =
        static_cast<int>(reinterpret_cast<Address>(first + k * row_bytes) % VECTOR_BYTES);
    std::uint32_t hi[WORDS], v[WORDS];
#pragma unroll
    for (int x = 0; x < WORDS; ++x) {
      const std::uint32_t next = __shfl_down_sync(ALL_LANES, w[k][x], 1);
      const std::uint32_t beyond = __shfl_sync(ALL_LANES, past[x], first_lane + k);
      hi[x] = chunk == CHUNKS - 1 ? beyond : next;
    }
    extract(w[k], hi, shift, v);
#pragma unroll
    for (int x = 0; x < WORDS; ++x) w[k][x] = v[x];
  }
}

// The same rows, each from the three aligned 8-byte words its 16 bytes lie in. A thread's first
// row lies a multiple of 8 rows down the tile, so where the input starts on 8 bytes, row k starts
// (k * kRowShift) % 8 bytes into its word, kRowShift being (cols * sizeof(T)) % 8: a constant of
// the launch. Made one when compiled (a kernel for each of its 8, 4 or 2 values), the shifts need
// no choice of words at run time and no shuffle: one funnel shift per word, none where the shift
// is whole words. Against load_by_shuffle and load_pairs (shifts chosen at run time) on an H200:
// uint8 ran 29% fewer instructions (ncu, 8191 x 8193) and gained 4 to 9 points of the copy from
// 6145 x 6147 up; float16 and bfloat16 gained 2.6 to 3.3 points (16383 x 16385: 0.4), float32
// moved within the noise. Only uint8 near 4097 x 4097 lost, 5 points, after either L2 flush; the
// fewer loads that win them back lose more everywhere else, and 8-byte elements gain nothing here
// (docs/element-types.md, "Ragged rows: the shift a constant of the launch"; octet_loads*.csv in
// docs/results/h200).
template <int kRows, int kRowShift>
__device__ __forceinline__ void load_octets(const std::uint8_t* first, size_t row_bytes,
                                            std::uint32_t (&w)[kRows][WORDS]) {
#pragma unroll
  for (int k = 0; k < kRows; ++k) {
    const int shift = k * kRowShift % 8;  // a constant once the loop is unrolled
    const auto* at = reinterpret_cast<const uint2*>(first + k * row_bytes - shift);
    const uint2 a = at[0], b = at[1], c = at[2];
    const std::uint32_t u[2 * WORDS - 2] = {a.x, a.y, b.x, b.y, c.x, c.y};
#pragma unroll
    for (int x = 0; x < WORDS; ++x)
      w[k][x] = shift % 4 == 0
                    ? u[x + shift / 4]
                    : __funnelshift_r(u[x + shift / 4], u[x + shift / 4 + 1], 8 * (shift % 4));
  }
}

// Which element sizes load their rows by load_octets: the shift a constant of the kernel.
template <class T>
constexpr bool OCTET_LOADS = sizeof(T) <= 4;
// No row shift fixed when compiled: the shifts of load_by_shuffle and load_pairs.
constexpr int ANY_ROW_SHIFT = -1;

// The tile of a bulk block, with no bounds to check: rows follow each other by a pointer increment
// and every load is unconditional (load_octets, or the pairs or shuffles of the others); the output
// is dealt out as whole vectors, CHUNKS a row, so every thread stores in every round but the last.
// The row's shift and cut come from the low bits of its address in 32-bit arithmetic.
template <class T, int kGroups, int kRowShift>
__device__ __forceinline__ void realign_bulk_tile(const T* in, T* out, int rows, int cols,
                                                  int tile_r, int tile_c) {
  constexpr int E = sizeof(T), N = VECTOR_BYTES / E, TILE_DIM = CHUNKS * N;
  constexpr int ROWS = N / REALIGN_HALVES<T>;  // rows a thread loads
  extern __shared__ uint4 tile[];
  const RealignPlace place = realign_place<T>();
  const size_t row_bytes = static_cast<size_t>(cols) * E;
  const std::uint8_t* first =
      reinterpret_cast<const std::uint8_t*>(in) +
      static_cast<size_t>(tile_r + place.group * N + place.half * ROWS) * row_bytes +
      static_cast<size_t>(tile_c + place.chunk * N) * E;
  std::uint32_t w[ROWS][WORDS];
  if constexpr (kRowShift != ANY_ROW_SHIFT)
    load_octets<ROWS, kRowShift>(first, row_bytes, w);
  else if constexpr (REALIGN_HALVES<T> == 2)
    load_by_shuffle<ROWS>(first, row_bytes, place.chunk, w);
  else
    load_pairs<T, ROWS>(first, row_bytes, w);
  transpose_to_tile<T, kGroups>(w, place);
  __syncthreads();  // every thread of the block is here: the bulk test is the block's

  // A thread stores the same vector s of a row in every round (kThreads is whole rows of CHUNKS),
  // kRowsPerRound rows further each round: its pointer steps, its cut comes from the low bits. With
  // each row's aligned vector taken straight from its address on the way in, the uint8 kernel ran
  // 7% fewer instructions than with the thread's index divided anew every round (ncu, H200,
  // 8191 x 8193); on the copy: uint8 from -2 to +2 points, float16 +0 to +2, wider types within
  // the noise (realign_arithmetic.csv in docs/results/h200).
  constexpr int kThreads = REALIGN_THREADS<T, kGroups>, kRowsPerRound = kThreads / CHUNKS;
  static_assert(kThreads % CHUNKS == 0, "a round stores whole rows");
  const unsigned s = threadIdx.x % CHUNKS, first_row_local = threadIdx.x / CHUNKS;
  const size_t out_row_bytes = static_cast<size_t>(rows) * E;
  // Where tile byte 0 of the thread's first output row goes.
  std::uint8_t* const first_piece = reinterpret_cast<std::uint8_t*>(out) +
                                    static_cast<size_t>(tile_c + first_row_local) * out_row_bytes +
                                    static_cast<size_t>(tile_r) * E;
#pragma unroll
  for (int round = 0; round < (TILE_DIM + kRowsPerRound - 1) / kRowsPerRound; ++round) {
    const unsigned out_row_local = round * kRowsPerRound + first_row_local;
    if (TILE_DIM % kRowsPerRound != 0 && out_row_local >= TILE_DIM) break;
    std::uint8_t* const piece = first_piece + round * (kRowsPerRound * out_row_bytes);
    // The piece runs from the sector start at or after tile byte 0, 256 bytes, 16 whole vectors.
    const unsigned low = static_cast<unsigned>(reinterpret_cast<Address>(piece));
    const int lead = static_cast<int>((0u - low) % SECTOR_BYTES);
    const int lo_cell = static_cast<int>(s) + lead / VECTOR_BYTES,
              shift = static_cast<int>((0u - low) % VECTOR_BYTES);
    const uint4 a = tile[realign_cell<N, kGroups>(out_row_local, lo_cell)];
    const uint4 b = tile[realign_cell<N, kGroups>(out_row_local, lo_cell + 1)];
    const std::uint32_t lo[WORDS] = {a.x, a.y, a.z, a.w}, hi[WORDS] = {b.x, b.y, b.z, b.w};
    std::uint32_t v[WORDS];
    extract<REALIGN_GRAIN<T>>(lo, hi, shift, v);
    *reinterpret_cast<uint4*>(piece + lead + s * VECTOR_BYTES) = make_uint4(v[0], v[1], v[2], v[3]);
  }
}

// Bulk blocks through realign_bulk_tile; the others (tiles at the first rows, the last rows or
// the last columns) through realign_edge_tile.
template <class T, int kGroups, int kRowShift>
__global__ void __launch_bounds__(REALIGN_THREADS<T, kGroups>, REALIGN_MIN_BLOCKS<T>)
    realign_kernel(const T* in, T* out, int rows, int cols) {
  const TileOfBlock t = edge_tiles_first<T, kGroups>(rows, cols);  // the block's, for all threads
  if (t.bulk)
    realign_bulk_tile<T, kGroups, kRowShift>(in, out, rows, cols, t.tile_r, t.tile_c);
  else
    realign_edge_tile<T, kGroups>(in, out, rows, cols, t.tile_r, t.tile_c);
}

// realign_kernel, with the two more groups of the sector cut where the output rows need them.
template <class T>
LaunchShape launch_realigned(const T* in, T* out, int rows, int cols, cudaStream_t stream) {
  constexpr int TILE_DIM = CHUNKS * (VECTOR_BYTES / sizeof(T));
  // Every output row starts a sector: no block needs rows beyond its own.
  const bool whole_sectors = static_cast<size_t>(rows) * sizeof(T) % SECTOR_BYTES == 0 &&
                             reinterpret_cast<Address>(out) % SECTOR_BYTES == 0;
  const auto run = [&](auto kernel, int groups) {
    const int shared_bytes = (TILE_DIM * groups + CHUNKS) * VECTOR_BYTES;  // 72 KiB: uint8
    return launch_tiles(kernel, in, out, rows, cols, TILE_DIM, CHUNKS * groups * REALIGN_HALVES<T>,
                        shared_bytes, stream);
  };
  // The row shift as a template argument: (cols * sizeof(T)) % 8, where the input starts on 8
  // bytes.
  const auto with_shift = [&](auto shift) {
    constexpr int kShift = decltype(shift)::value;
    return whole_sectors ? run(realign_kernel<T, GROUPS, kShift>, GROUPS)
                         : run(realign_kernel<T, GROUPS + 2, kShift>, GROUPS + 2);
  };
  if constexpr (OCTET_LOADS<T>) {
    if (reinterpret_cast<Address>(in) % 8 == 0)
      return lab::with_constant<0, 8 / sizeof(T) - 1>(cols % (8 / sizeof(T)), [&](auto step) {
        return with_shift(std::integral_constant<int, decltype(step)::value * sizeof(T)>{});
      });
  }
  return with_shift(std::integral_constant<int, ANY_ROW_SHIFT>{});
}

// ---- Thin matrices: fewer than THIN_EXTENT rows or columns ----
// A tile is 256 bytes of 16 N rows: with 3 rows, most of every tile is empty, and each block of a
// kernel built to move 64 KiB moves 768 bytes. A thin matrix needs no tile: with R < THIN_EXTENT
// rows the output is the R input rows interleaved, element by element, one contiguous stream
// (with few columns, the mirror image: the input is one stream to be dealt into R rows). A block
// takes THIN_SPAN indices t along the long axis, every thread 16 bytes of each short row, so that
// each thread has R x 16 bytes in flight, not R elements (6 bytes for 3 rows of float16: far too
// few to cover the memory's latency). Both sides go through shared memory: the short rows with
// element accesses, each warp's covering consecutive elements; the interleaved stream with 16-byte
// accesses where its vectors are aligned (every block's stream starts on one). uint8 keeps one
// index t a thread (thin_element_kernel) where it deals a stream into rows: staged, it was slower
// at three of five thin shapes (thin_kernel.csv in docs/results/h100).
// Interleaving 1- and 2-byte elements, the element accesses of the short rows are the limit (a
// warp's uint8 load moves 32 bytes): there thin_register_kernel reads them 16 bytes at a time.
constexpr int THIN_EXTENT = short_rows::MAX_SIDE + 1;  // the short sides of common/short_rows.cuh
constexpr int THIN_BLOCK = 256;
template <class T>
constexpr int THIN_VECTOR = VECTOR_BYTES / sizeof(T);  // elements a thread of each short row
template <class T>
constexpr int THIN_SPAN = (THIN_BLOCK * THIN_VECTOR<T>);  // indices t a block
template <class T>
constexpr int THIN_STRIDE = THIN_SPAN<T> + THIN_VECTOR<T>;  // a staged row: one vector more, so
                                                            // rows start on different banks

template <class T, bool kFewRows>
__global__ void __launch_bounds__(THIN_BLOCK) thin_kernel(const T* in, T* out, int rows, int cols) {
  constexpr int N = THIN_VECTOR<T>, SHORT = THIN_EXTENT - 1;
  __shared__ alignas(VECTOR_BYTES) unsigned char staged[SHORT * THIN_STRIDE<T> * sizeof(T)];
  T* stage = reinterpret_cast<T*>(staged);  // [k][t - t0]: short row k, index t along the long axis
  const int across = kFewRows ? rows : cols, along = kFewRows ? cols : rows;
  const int t0 = blockIdx.x * THIN_SPAN<T>, span = min(THIN_SPAN<T>, along - t0);
  const int stream_elements = span * across;  // this block's part of the interleaved stream
  const std::size_t stream_begin = static_cast<std::size_t>(t0) * across;
  // Element e of the stream is stage[e % across][e / across]; a thread moves vectors q of N
  // elements, q = threadIdx.x + i * THIN_BLOCK, at most SHORT of them (span * across elements).
  auto stream_vector = [&](int i, auto move) {
    const int e = (i * THIN_BLOCK + static_cast<int>(threadIdx.x)) * N;
    if (e >= stream_elements) return;
    const int count = min(N, stream_elements - e);
    int t = e / across, k = e - t * across;
    T* at[N];  // where in the stage each of the vector's elements belongs
#pragma unroll
    for (int j = 0; j < N; ++j) {
      at[j] = stage + k * THIN_STRIDE<T> + t;
      if (++k == across) k = 0, ++t;
    }
    move(e, count, at);
  };
  // The short rows, element by element, each warp access over consecutive t.
  auto row_element = [&](int k, int v, auto move) {
    const int i = v * THIN_BLOCK + threadIdx.x;
    if (k < across && i < span) move(k, i);
  };
  VectorOf<T> vectors[SHORT];  // N elements of the stream each
  if constexpr (kFewRows) {
    T loaded[SHORT][N];  // every load first: all of them in flight at once
#pragma unroll
    for (int k = 0; k < SHORT; ++k)
#pragma unroll
      for (int v = 0; v < N; ++v)
        row_element(k, v, [&](int k, int i) {
          loaded[k][v] = in[static_cast<std::size_t>(k) * cols + t0 + i];
        });
#pragma unroll
    for (int k = 0; k < SHORT; ++k)
#pragma unroll
      for (int v = 0; v < N; ++v)
        row_element(k, v, [&](int k, int i) { stage[k * THIN_STRIDE<T> + i] = loaded[k][v]; });
    __syncthreads();
#pragma unroll
    for (int i = 0; i < SHORT; ++i)
      stream_vector(i, [&](int e, int count, T* const* at) {
        for (int j = 0; j < N; ++j)
          if (j < count) vectors[i].element[j] = *at[j];
        store_elements(out + stream_begin + e, vectors[i], count);
      });
  } else {
#pragma unroll
    for (int i = 0; i < SHORT; ++i)  // every load first
      stream_vector(i, [&](int e, int count, T* const*) {
        load_elements(in + stream_begin + e, vectors[i], count);
      });
#pragma unroll
    for (int i = 0; i < SHORT; ++i)
      stream_vector(i, [&](int, int count, T* const* at) {
        for (int j = 0; j < N; ++j)
          if (j < count) *at[j] = vectors[i].element[j];
      });
    __syncthreads();
#pragma unroll
    for (int k = 0; k < SHORT; ++k)
#pragma unroll
      for (int v = 0; v < N; ++v)
        row_element(k, v, [&](int k, int i) {
          out[static_cast<std::size_t>(k) * rows + t0 + i] = stage[k * THIN_STRIDE<T> + i];
        });
  }
}

// One index t along the long axis a thread, and the few elements across it: every load first,
// all of them in flight at once; each warp's loads and stores cover consecutive elements.
template <class T, bool kFewRows>
__global__ void __launch_bounds__(THIN_BLOCK)
    thin_element_kernel(const T* in, T* out, int rows, int cols) {
  const int t = blockIdx.x * THIN_BLOCK + threadIdx.x, across = kFewRows ? rows : cols;
  if (t >= (kFewRows ? cols : rows)) return;
  T v[THIN_EXTENT];
#pragma unroll
  for (int k = 0; k < THIN_EXTENT; ++k)
    if (k < across)
      v[k] = in[kFewRows ? static_cast<size_t>(k) * cols + t : static_cast<size_t>(t) * cols + k];
#pragma unroll
  for (int k = 0; k < THIN_EXTENT; ++k)
    if (k < across)
      out[kFewRows ? static_cast<size_t>(t) * rows + k : static_cast<size_t>(k) * rows + t] = v[k];
}

// Few rows of 1- or 2-byte elements, interleaved: chapter 3's short planes (PERMUTE.v5_packed),
// in its kernel's way (common/short_rows.cuh): each thread reads N indices t of every short row,
// 16 bytes each, transposes the K x N elements in registers and writes the stream through the
// warp's stage, 16-byte accesses on both sides. What differs here is that the short rows start
// anywhere in a vector (row k at element k * cols): each row's 16 bytes come from the two aligned
// vectors they straddle, shifted (`extract`, as the realigning kernel does; the second is the next
// thread's first, served by L1). The last indices (fewer than N, or a vector read past the row's
// end) go element by element. Measured against the kernels before it (thin_registers.csv in
// docs/results), it wins for 1- and 2-byte elements; the same way for wider elements, and for a
// stream dealt into rows (each lane taking its neighbour's bytes by a shuffle for the misaligned
// rows' stores), lost on an H200.
template <class T, int K>
__global__ void __launch_bounds__(THIN_BLOCK)
    thin_register_kernel(const T* __restrict__ in, T* __restrict__ out, int rows, int cols) {
  static_assert(sizeof(T) <= 2, "wider elements interleave faster through thin_kernel");
  constexpr int N = VECTOR_BYTES / sizeof(T);
  using short_rows::WARP_SIZE;
  __shared__ uint4 stages[THIN_BLOCK / WARP_SIZE][WARP_SIZE * K];
  const int lane = static_cast<int>(threadIdx.x % WARP_SIZE);
  // This thread's first index, 64-bit as every address formed from it.
  const std::size_t t = (std::size_t{blockIdx.x} * THIN_BLOCK + threadIdx.x) * N;
  const auto length = static_cast<std::size_t>(cols);
  const bool whole = t + 2 * N <= length;  // N indices and the aligned vector after them, each row
  VectorOf<T> short_vectors[K], run[K];    // short row k's N elements; the same, interleaved
  if (whole)
#pragma unroll
    for (int k = 0; k < K; ++k) short_vectors[k].word = load_unaligned(in + k * length + t);
  short_rows::interleave<T, K>(short_vectors, run);
  short_rows::scatter_runs<T, K>(stages[threadIdx.x / WARP_SIZE], whole ? out + t * K : nullptr,
                                 lane, run);
  if (!whole)
    for (std::size_t i = t; i < t + N && i < length; ++i)
#pragma unroll
      for (int k = 0; k < K; ++k) out[i * K + k] = in[k * length + i];
}

// thin_register_kernel needs both matrices to start on a vector (its stream is whole vectors from
// the start; the vector a row's first bytes straddle lies in the matrix).
template <class T>
LaunchShape launch_thin(const T* in, T* out, int rows, int cols, cudaStream_t stream) {
  const bool few_rows = rows < cols;
  // A block takes `span` indices t along the long axis.
  auto run = [&](auto kernel, int span) {
    const dim3 block(THIN_BLOCK), grid((std::int64_t{few_rows ? cols : rows} + span - 1) / span);
    if (few_rows)
      lab::require_grid(grid, lab::GridAxes::kColsInX, 0, span, rows, cols);
    else
      lab::require_grid(grid, lab::GridAxes::kRowsInX, span, cols, rows, cols);
    kernel<<<grid, block, 0, stream>>>(in, out, rows, cols);
    return LaunchShape{grid, block};
  };
  if constexpr (sizeof(T) <= 2) {
    if (few_rows &&
        (reinterpret_cast<Address>(in) | reinterpret_cast<Address>(out)) % VECTOR_BYTES == 0) {
      return short_rows::with_side(rows, [&](auto k) {  // 2 to 7 rows (1 x N is a copy)
        return run(thin_register_kernel<T, decltype(k)::value>, THIN_SPAN<T>);
      });
    }
  }
  if constexpr (sizeof(T) == 1)
    return few_rows ? run(thin_element_kernel<T, true>, THIN_BLOCK)
                    : run(thin_element_kernel<T, false>, THIN_BLOCK);
  else
    return few_rows ? run(thin_kernel<T, true>, THIN_SPAN<T>)
                    : run(thin_kernel<T, false>, THIN_SPAN<T>);
}

// The packed kernel where every row is whole aligned vectors, else one of the paths above.
template <class T>
LaunchShape launch_transpose(const T* in, T* out, int rows, int cols, cudaStream_t stream) {
  // A 1 x N or N x 1 matrix is its own transpose, byte for byte: a copy, whose every block is whole
  // vectors, where a tiled kernel would fill one row or column of each tile.
  if (rows == 1 || cols == 1)
    return lab::launch_vector_copy(in, out, static_cast<size_t>(rows) * cols * sizeof(T), stream);
  // 16-byte elements gain nothing from packing (N = 1): v6's kernel, with the sector cut, on every
  // shape (H200, complex128: 97.5% of the copy at 1024 x 65536 against 95.8% packed, within 0.6%
  // on the other aligned shapes).
  if constexpr (sizeof(T) < 16) {
    constexpr int N = VECTOR_BYTES / sizeof(T);
    const bool vectors = reinterpret_cast<Address>(in) % VECTOR_BYTES == 0 &&
                         reinterpret_cast<Address>(out) % VECTOR_BYTES == 0;
    if (rows % N == 0 && cols % N == 0 && vectors)
      return launch_packed(in, out, rows, cols, stream);
  }
  if (rows < THIN_EXTENT || cols < THIN_EXTENT) return launch_thin(in, out, rows, cols, stream);
  if constexpr (sizeof(T) == VECTOR_BYTES)
    return launch_sectors(in, out, rows, cols, stream);
  else
    return launch_realigned(in, out, rows, cols, stream);
}
