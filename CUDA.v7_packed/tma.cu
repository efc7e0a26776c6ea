// CUDA.v7_packed, --variant tma, beyond the lesson: Hopper's bulk copies. The Tensor Memory
// Accelerator (TMA) copies a box of a matrix between global and shared memory at one thread's
// request, as a tensor map describes it (address, sizes, strides, box, swizzle). It counts the
// bytes into an mbarrier that the threads wait on, fills what lies past the matrix with zeros on
// the way in and clips it on the way out, so no thread computes an address or checks a bound. The
// threads only transpose, through registers as the packed kernel does, from the layout the load
// writes to the one the store reads. Each block walks several tiles through two buffers: the next
// tile loads while the current one is transposed and stored.
// The tensor maps need every row of the input and of the output to be whole 16-byte units, i.e.
// rows * sizeof(T) and cols * sizeof(T) multiples of 16: other shapes are refused.
#include <cuda.h>          // CUtensorMap and its enums: types only, nothing links libcuda
#include <cudaTypedefs.h>  // PFN_cuTensorMapEncodeTiled: reached through the runtime

#include <climits>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>

constexpr int TMA_STAGES = 2;        // tile buffers a block cycles through
constexpr int SWIZZLE_BYTES = 128;   // a row of the 128-byte swizzle: the widest box it takes
constexpr int SWIZZLE_ALIGN = 1024;  // its pattern repeats every 8 rows: 1024-byte aligned buffers

template <class T>
constexpr int TMA_TILE_DIM = CHUNKS*(VECTOR_BYTES / sizeof(T));  // as the packed kernel's
template <class T>
constexpr int TMA_TILE_BYTES = TMA_TILE_DIM<T>* CHUNKS* VECTOR_BYTES;  // 64 KiB for 1 byte
template <class T>
constexpr int TMA_SHARED_BYTES = TMA_STAGES* TMA_TILE_BYTES<T> + SWIZZLE_ALIGN;
// The unit the tensor map counts in: the element, or 8 bytes (its widest type) for 16-byte ones.
template <class T>
constexpr int TMA_UNIT = sizeof(T) < 8 ? sizeof(T) : 8;
// Box coordinates are ints, and a box at the edge reaches a tile past it.
constexpr long long TMA_MAX_UNITS = INT_MAX - 512;

#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
__device__ unsigned shared_address(const void* p) {
  return static_cast<unsigned>(__cvta_generic_to_shared(p));
}

__device__ void expect_bytes(unsigned barrier, unsigned bytes) {
  asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;" ::"r"(barrier), "r"(bytes)
               : "memory");
}

__device__ bool barrier_done(unsigned barrier, unsigned parity) {
  unsigned done;
  asm volatile(
      "{\n .reg .pred p;\n mbarrier.try_wait.parity.shared::cta.b64 p, [%1], %2;\n"
      " selp.u32 %0, 1, 0, p;\n}"
      : "=r"(done)
      : "r"(barrier), "r"(parity)
      : "memory");
  return done != 0;
}

// The box at (x units, y rows) of the map into shared memory; its bytes arrive on the barrier.
__device__ void load_box(unsigned to, const CUtensorMap* map, int x, int y, unsigned barrier) {
  asm volatile(
      "cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes"
      " [%0], [%1, {%2, %3}], [%4];" ::"r"(to),
      "l"(map), "r"(x), "r"(y), "r"(barrier)
      : "memory");
}

__device__ void store_box(const CUtensorMap* map, int x, int y, unsigned from) {
  asm volatile(
      "cp.async.bulk.tensor.2d.global.shared::cta.bulk_group [%0, {%1, %2}], [%3];" ::"l"(map),
      "r"(x), "r"(y), "r"(from)
      : "memory");
}

// The stores this thread committed have read their shared memory (their writes may still fly).
__device__ void wait_stores_read() {
  asm volatile("cp.async.bulk.wait_group.read 0;" ::: "memory");
}
#endif

// Rows and cols are multiples of 16 bytes. tile t is tile row t % tiles_r, tile column t / tiles_r:
// consecutive tiles walk down the rows, as blockIdx.x does in the packed kernel.
template <class T>
__global__ void __launch_bounds__(THREADS)
    tma_kernel(const __grid_constant__ CUtensorMap in_map,
               const __grid_constant__ CUtensorMap out_map, int tiles_r, long long tiles) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  constexpr int E = sizeof(T), N = VECTOR_BYTES / E, TILE_DIM = TMA_TILE_DIM<T>;
  constexpr int UNIT = TMA_UNIT<T>, TILE_BYTES = TMA_TILE_BYTES<T>;
  extern __shared__ unsigned char raw[];
  __shared__ unsigned long long full[TMA_STAGES];  // an mbarrier a buffer
  unsigned char* const buffers = reinterpret_cast<unsigned char*>(
      (reinterpret_cast<std::uintptr_t>(raw) + SWIZZLE_ALIGN - 1) / SWIZZLE_ALIGN * SWIZZLE_ALIGN);
  // Each buffer holds an input tile as the load writes it, TILE_DIM rows of 256 bytes, then the
  // output tile as the stores read it: two boxes of TILE_DIM rows of 128 bytes, swizzled by the
  // hardware (16-byte cell c of row r at c ^ r % 8). The threads are skewed over the groups
  // (group + chunk) so that the 8 threads of each quarter warp touch 8 different bank groups in
  // both layouts; with N = 1 every output row is one thread's, and no skew is needed.
  const int chunk = threadIdx.x % CHUNKS;
  const int group = (threadIdx.x / CHUNKS + (N > 1 ? chunk : 0)) % GROUPS;
  const bool leader = threadIdx.x == 0;
  const unsigned barrier0 = shared_address(&full[0]);
  if (leader) {
    for (int s = 0; s < TMA_STAGES; ++s)
      asm volatile("mbarrier.init.shared::cta.b64 [%0], 1;" ::"r"(barrier0 + 8 * s) : "memory");
    asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");  // seen by the TMA unit
  }
  __syncthreads();

  const auto load = [&](long long t, int s) {
    const int tile_r = static_cast<int>(t % tiles_r), tile_c = static_cast<int>(t / tiles_r);
    expect_bytes(barrier0 + 8 * s, TILE_BYTES);  // the whole box, filled past the edges too
    load_box(shared_address(buffers + s * TILE_BYTES), &in_map, tile_c * TILE_DIM * (E / UNIT),
             tile_r * TILE_DIM, barrier0 + 8 * s);
  };
  if (leader && blockIdx.x < tiles) load(blockIdx.x, 0);
  int k = 0;
  for (long long t = blockIdx.x; t < tiles; t += gridDim.x, ++k) {
    const int s = k % TMA_STAGES;
    unsigned char* const tile = buffers + s * TILE_BYTES;
    if (leader && t + gridDim.x < tiles) {
      wait_stores_read();  // the other buffer's last tile has left it: the next may come in
      load(t + gridDim.x, (k + 1) % TMA_STAGES);
    }
    while (!barrier_done(barrier0 + 8 * s, (k / TMA_STAGES) % 2)) {
    }

    std::uint32_t w[N][WORDS];
#pragma unroll
    for (int i = 0; i < N; ++i) {
      const uint4 v = reinterpret_cast<const uint4*>(tile)[(group * N + i) * CHUNKS + chunk];
      w[i][0] = v.x, w[i][1] = v.y, w[i][2] = v.z, w[i][3] = v.w;
    }
    transpose_in_registers<E, N>(w);  // w[j]: 16 bytes of output row chunk * N + j, cell group
    __syncthreads();                  // the whole tile is in registers: the buffer is free
#pragma unroll
    for (int j = 0; j < N; ++j) {
      const int r = chunk * N + j;
      const int at = (group / 8) * TILE_DIM * SWIZZLE_BYTES + r * SWIZZLE_BYTES +
                     ((group % 8) ^ (r % 8)) * VECTOR_BYTES;
      *reinterpret_cast<uint4*>(tile + at) = make_uint4(w[j][0], w[j][1], w[j][2], w[j][3]);
    }
    asm volatile("fence.proxy.async.shared::cta;" ::: "memory");  // seen by the bulk copies
    __syncthreads();
    if (leader) {
      const int tile_r = static_cast<int>(t % tiles_r), tile_c = static_cast<int>(t / tiles_r);
      for (int half = 0; half < 2; ++half)
        store_box(&out_map, (tile_r * TILE_DIM + half * 8 * N) * (E / UNIT), tile_c * TILE_DIM,
                  shared_address(tile + half * TILE_DIM * SWIZZLE_BYTES));
      asm volatile("cp.async.bulk.commit_group;" ::: "memory");
    }
  }
  if (leader) wait_stores_read();  // shared memory must outlive the stores' reads of it
#elif defined(__CUDA_ARCH__)
  __trap();  // never launched: tma_refuses_device refuses a build without sm_90 code
#endif
}

// The variant's refusals (common/cuda_step.cuh): what the tensor maps cannot describe...
inline std::string tma_refuses_shape(int rows, int cols, int elem_bytes) {
  const long long in_row = 1LL * cols * elem_bytes, out_row = 1LL * rows * elem_bytes;
  const int unit = elem_bytes < 8 ? elem_bytes : 8;
  const bool whole = in_row % 16 == 0 && out_row % 16 == 0;
  if (whole && in_row / unit <= TMA_MAX_UNITS && out_row / unit <= TMA_MAX_UNITS) return "";
  return "--variant tma cannot take " + std::to_string(rows) + " x " + std::to_string(cols) +
         " of " + std::to_string(elem_bytes) + "-byte elements: its bulk copies need rows of the " +
         "input (" + std::to_string(in_row) + " bytes) and of the output (" +
         std::to_string(out_row) + " bytes) " +
         (whole ? "of fewer than 2^31 units" : "of a multiple of 16 bytes");
}

// ...and the GPUs it cannot run on: before Hopper, or a build without sm_90 code.
inline std::string tma_refuses_device(const cudaDeviceProp& device) {
  const std::string name = device.name;
  if (device.major < 9)
    return "--variant tma needs Hopper (sm_90) or later; " + name + " is sm_" +
           std::to_string(device.major) + std::to_string(device.minor);
  cudaFuncAttributes built;
  CUDA_CHECK(cudaFuncGetAttributes(&built, tma_kernel<lab::Bytes4>));
  if (built.ptxVersion < 90)
    return "--variant tma: this build has no sm_90 code for " + name + " (compiled for compute_" +
           std::to_string(built.ptxVersion) + "): rebuild with make CUDA_ARCH=90";
  return "";
}

// A 2-D map of a row-major matrix of `rows` rows of `row_bytes` bytes, in boxes of box_rows rows of
// box_bytes bytes.
inline CUtensorMap tma_map(const void* base, long long rows, long long row_bytes, int unit,
                           int box_rows, int box_bytes, CUtensorMapSwizzle swizzle) {
  static const PFN_cuTensorMapEncodeTiled_v12000 encode = [] {
    void* entry = nullptr;
    cudaDriverEntryPointQueryResult found;
    CUDA_CHECK(cudaGetDriverEntryPointByVersion("cuTensorMapEncodeTiled", &entry, 12000,
                                                cudaEnableDefault, &found));
    if (found != cudaDriverEntryPointSuccess || entry == nullptr) {
      std::fprintf(stderr, "%s: error: the driver has no cuTensorMapEncodeTiled\n", STEP_NAME);
      std::exit(lab::kExitFailed);
    }
    return reinterpret_cast<PFN_cuTensorMapEncodeTiled_v12000>(entry);
  }();
  const CUtensorMapDataType type = unit == 1   ? CU_TENSOR_MAP_DATA_TYPE_UINT8
                                   : unit == 2 ? CU_TENSOR_MAP_DATA_TYPE_UINT16
                                   : unit == 4 ? CU_TENSOR_MAP_DATA_TYPE_UINT32
                                               : CU_TENSOR_MAP_DATA_TYPE_UINT64;
  const cuuint64_t size[2] = {static_cast<cuuint64_t>(row_bytes / unit),
                              static_cast<cuuint64_t>(rows)};
  const cuuint64_t stride[1] = {static_cast<cuuint64_t>(row_bytes)};
  const cuuint32_t box[2] = {static_cast<cuuint32_t>(box_bytes / unit),
                             static_cast<cuuint32_t>(box_rows)};
  const cuuint32_t step[2] = {1, 1};
  CUtensorMap map;
  const CUresult status =
      encode(&map, type, 2, const_cast<void*>(base), size, stride, box, step,
             CU_TENSOR_MAP_INTERLEAVE_NONE, swizzle, CU_TENSOR_MAP_L2_PROMOTION_L2_256B,
             CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);
  if (status != CUDA_SUCCESS) {
    std::fprintf(stderr, "%s: error: cuTensorMapEncodeTiled failed (CUresult %d)\n", STEP_NAME,
                 static_cast<int>(status));
    std::exit(lab::kExitFailed);
  }
  return map;
}

template <class T>
LaunchShape launch_tma(const T* in, T* out, int rows, int cols, cudaStream_t stream) {
  constexpr int E = sizeof(T), TILE_DIM = TMA_TILE_DIM<T>, SHARED_BYTES = TMA_SHARED_BYTES<T>;
  const std::string why = tma_refuses_shape(rows, cols, E);
  const bool aligned = reinterpret_cast<std::uintptr_t>(in) % 16 == 0 &&
                       reinterpret_cast<std::uintptr_t>(out) % 16 == 0;
  if (!why.empty() || !aligned) {
    std::fprintf(stderr, "%s: %s\n", STEP_NAME,
                 why.empty() ? "--variant tma needs 16-byte aligned matrices" : why.c_str());
    std::exit(lab::kExitUsage);
  }
  // The maps hold the addresses: made again only when the matrices or the shape change.
  struct Maps {
    const T* in = nullptr;
    T* out = nullptr;
    int rows = 0, cols = 0, device = -1, blocks = 0;
    CUtensorMap in_map, out_map;
  };
  static Maps maps;
  int device;
  CUDA_CHECK(cudaGetDevice(&device));
  lab::allow_shared_bytes(tma_kernel<T>, SHARED_BYTES);
  if (maps.in != in || maps.out != out || maps.rows != rows || maps.cols != cols ||
      maps.device != device) {
    maps.in_map = tma_map(in, rows, 1LL * cols * E, TMA_UNIT<T>, TILE_DIM, CHUNKS * VECTOR_BYTES,
                          CU_TENSOR_MAP_SWIZZLE_NONE);
    maps.out_map = tma_map(out, cols, 1LL * rows * E, TMA_UNIT<T>, TILE_DIM, SWIZZLE_BYTES,
                           CU_TENSOR_MAP_SWIZZLE_128B);
    // As many blocks as fit on the GPU at once, each walking its share of the tiles.
    int per_sm = 0;
    CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, tma_kernel<T>, THREADS,
                                                             SHARED_BYTES));
    maps.blocks = lab::multiprocessors() * (per_sm > 0 ? per_sm : 1);
    maps.in = in, maps.out = out, maps.rows = rows, maps.cols = cols, maps.device = device;
  }
  const int tiles_r = (rows - 1) / TILE_DIM + 1;
  const long long tiles = 1LL * tiles_r * ((cols - 1) / TILE_DIM + 1);
  const dim3 block(THREADS), grid(static_cast<unsigned>(tiles < maps.blocks ? tiles : maps.blocks));
  tma_kernel<T><<<grid, block, SHARED_BYTES, stream>>>(maps.in_map, maps.out_map, tiles_r, tiles);
  return {grid, block};
}

const char* const kTmaSummary =
    "the packed kernel's tiles moved by Hopper's bulk copies (TMA), two tiles in flight a block";
