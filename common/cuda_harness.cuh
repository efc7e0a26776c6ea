// The CUDA side of the harness, shared by every CUDA driver (kernel, host pipeline, distributed):
// checked allocations, checked launches, the L2 flush and event timing.
#pragma once

#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <memory>
#include <string>
#include <vector>

#include "config.hpp"
#include "cuda_check.cuh"
#include "cuda_step.cuh"
#include "dtype.hpp"
#include "host_memory.hpp"
#include "timer.hpp"

namespace lab {

// Freed blocks kept for the process's next allocations, as PyTorch's caching allocator keeps them:
// a driver that runs many cases in one process (--cases) would otherwise pay the driver for every
// cudaMalloc, cudaMallocHost and free, calls that processes side by side take in turn. Only the
// drivers that ask (keep_freed_blocks) keep them, at most kKeptBlockBytes of each kind. Contents
// are never relied on: every driver fills its input and poisons its output before each check.
enum class BlockKind { kDevice, kPinned };
struct KeptBlock {
  void* pointer;
  std::size_t bytes;
};
inline bool& keep_freed_blocks() {
  static bool keep = false;
  return keep;
}
inline std::vector<KeptBlock>& kept_blocks(BlockKind kind) {
  static std::vector<KeptBlock> kept[2];
  return kept[static_cast<int>(kind)];
}
inline void free_block(BlockKind kind, void* pointer) {
  if (kind == BlockKind::kDevice) {
    cudaFree(pointer);
  } else {
    cudaFreeHost(pointer);
  }
}
// A kept block of at least `bytes` and at most twice that (a small request does not hold a large
// block), or null. The device is synchronized first: the work that used the block has finished.
inline void* take_kept_block(BlockKind kind, std::size_t bytes) {
  std::vector<KeptBlock>& kept = kept_blocks(kind);
  auto best = kept.end();
  for (auto block = kept.begin(); block != kept.end(); ++block)
    if (block->bytes >= bytes && block->bytes / 2 <= bytes &&
        (best == kept.end() || block->bytes < best->bytes))
      best = block;
  if (best == kept.end()) return nullptr;
  CUDA_CHECK(cudaDeviceSynchronize());
  void* pointer = best->pointer;
  kept.erase(best);
  return pointer;
}
inline void give_back_block(BlockKind kind, void* pointer, std::size_t bytes) {
  std::vector<KeptBlock>& kept = kept_blocks(kind);
  std::size_t total = bytes;
  for (const KeptBlock& block : kept) total += block.bytes;
  if (keep_freed_blocks() && total <= kKeptBlockBytes) {
    kept.push_back({pointer, bytes});
  } else {
    free_block(kind, pointer);
  }
}
// Frees every kept block: before telling a user that the device memory is too small.
inline void free_kept_blocks() {
  for (BlockKind kind : {BlockKind::kDevice, BlockKind::kPinned}) {
    for (const KeptBlock& block : kept_blocks(kind)) free_block(kind, block.pointer);
    kept_blocks(kind).clear();
  }
}

// A kernel step's device memory: the input, the output, the ceilings' own output (the step's last
// timed output is verified before anything overwrites it) and the L2 flush buffer. True when they
// fit; otherwise one line on stderr naming `problem`, the bytes needed and those free.
inline bool device_holds_the_problem(std::size_t matrix_bytes, const std::string& problem,
                                     const cudaDeviceProp& properties) {
  std::size_t device_free = 0, device_total = 0;
  CUDA_CHECK(cudaMemGetInfo(&device_free, &device_total));
  const std::size_t needed = 3 * matrix_bytes + static_cast<std::size_t>(properties.l2CacheSize);
  if (needed <= device_free) return true;
  if (!kept_blocks(BlockKind::kDevice).empty()) {  // what an earlier case left, freed: ask again
    free_kept_blocks();
    return device_holds_the_problem(matrix_bytes, problem, properties);
  }
  std::fprintf(stderr,
               "error: %s needs %s of device memory for the input, the output, the ceilings' "
               "output and the L2 flush buffer; %s has %s free of %s\n",
               problem.c_str(), format_bytes(needed).c_str(), properties.name,
               format_bytes(device_free).c_str(), format_bytes(device_total).c_str());
  return false;
}

// Where pinned host memory comes from. kDriver: cudaMallocHost, the driver's own pages.
// kHuge: 2 MiB pages advised to the kernel (allocate_host_bytes), then registered with
// cudaHostRegister, to test whether fewer host pages make scattered writes faster: they did not
// (slower on an H200, the same on an H100: CUDA.v8_streams --host-memory huge).
enum class PinnedPages { kDriver, kHuge };

template <class T>
struct PinnedDeleter {
  PinnedPages pages = PinnedPages::kDriver;
  std::size_t bytes = 0;
  void operator()(T* p) const {
    if (pages == PinnedPages::kDriver) {
      give_back_block(BlockKind::kPinned, p, bytes);
    } else {
      cudaHostUnregister(p);
      FreeDeleter{}(p);
    }
  }
};
template <class T>
using PinnedArray = std::unique_ptr<T[], PinnedDeleter<T>>;
struct DeviceDeleter {
  std::size_t bytes = 0;
  void operator()(void* p) const { give_back_block(BlockKind::kDevice, p, bytes); }
};
template <class T>
using DeviceArray = std::unique_ptr<T[], DeviceDeleter>;

// Pinned host memory (fast, asynchronous copies); exits cleanly when it cannot be had.
template <class T>
PinnedArray<T> allocate_pinned(std::size_t count, const char* what,
                               PinnedPages pages = PinnedPages::kDriver) {
  const std::size_t bytes = std::max<std::size_t>(count, 1) * sizeof(T);
  void* raw = nullptr;
  bool pinned = false;
  if (pages == PinnedPages::kDriver) {
    raw = take_kept_block(BlockKind::kPinned, bytes);
    pinned = raw != nullptr || cudaMallocHost(&raw, bytes) == cudaSuccess;
  } else {
    raw = allocate_host_bytes(bytes, what);
    pinned = cudaHostRegister(raw, bytes, cudaHostRegisterPortable | cudaHostRegisterMapped) ==
             cudaSuccess;
    if (!pinned) FreeDeleter{}(raw);
  }
  if (!pinned) {
    std::fprintf(stderr, "error: could not pin %s of host memory for %s\n",
                 format_bytes(bytes).c_str(), what);
    std::exit(kExitNoMemory);
  }
  return PinnedArray<T>(static_cast<T*>(raw), PinnedDeleter<T>{pages, bytes});
}

template <class T>
DeviceArray<T> allocate_device(std::size_t count) {
  const std::size_t bytes = std::max<std::size_t>(count, 1) * sizeof(T);
  void* raw = take_kept_block(BlockKind::kDevice, bytes);
  if (raw == nullptr) CUDA_CHECK(cudaMalloc(&raw, bytes));
  return DeviceArray<T>(static_cast<T*>(raw), DeviceDeleter{bytes});
}

// A launch checked at once: a bad configuration must not pass as a fast kernel. `program` names
// the step in the message. The launchers refuse a grid past the device's limits themselves, in
// words (lab::require_grid, before launching); this catches one that does not.
inline void check_launch(const char* program, const LaunchShape& shape, int rows, int cols) {
  const cudaError_t status = cudaGetLastError();
  if (status == cudaErrorInvalidConfiguration) {
    std::fprintf(stderr,
                 "error: %s cannot launch for %d x %d: grid (%u, %u, %u) of blocks (%u, %u, %u) "
                 "exceeds the device's limits (gridDim.y and .z are at most 65535)\n",
                 program, rows, cols, shape.grid.x, shape.grid.y, shape.grid.z, shape.block.x,
                 shape.block.y, shape.block.z);
    std::exit(kExitUsage);
  }
  CUDA_CHECK(status);
}

// `launch` is one of the step's launchers (kKernelVariants), given the element type it moves.
template <class T>
LaunchShape launch_checked(const char* program, KernelLauncher<T> launch, const T* in, T* out,
                           int rows, int cols, cudaStream_t stream, const Dtype& dtype) {
  const LaunchShape shape = launch(in, out, rows, cols, stream, dtype);
  check_launch(program, shape, rows, cols);
  return shape;
}

// A kernel step's launch_transpose itself, which moves storage types and takes no element type
// (the host-pipeline and distributed steps run one through its step's own interface).
template <class T>
LaunchShape launch_checked(const char* program, const T* in, T* out, int rows, int cols,
                           cudaStream_t stream) {
  const LaunchShape shape = launch_transpose<T>(in, out, rows, cols, stream);
  check_launch(program, shape, rows, cols);
  return shape;
}

// Before every timed launch the L2 cache is emptied of the tensors, so that a matrix small enough
// to stay in L2 (50 MB on an H100, 60 MB on an H200) is read from DRAM like a large one, by the
// step and by its ceiling alike: no figure passes 100% of the copy because the second launch found
// its input in cache. By default with a memset as large as L2, as NVIDIA's nvbench does. That
// leaves L2 full of modified lines, which the timed launch must write back to DRAM as it evicts
// them, and not at the same cost for every kernel, nor in every process: on an H200, 4096 planes
// of 64 x 64 float16 (PERMUTE.v5_packed) took 41 and 31 us in two runs after the memset and 20
// us after a read, their copy 20 and 18 us (l2_flush.csv in docs/results). LAB_L2_FLUSH=read
// reads twice L2's bytes instead: the lines left are clean, and the launch pays for its own bytes
// only. Both are cold caches; the lab's figures use the default, and the CPU side's timer meets
// the same trap (common/timer.hpp).
enum class FlushKind { kWrite, kRead };

// LAB_L2_FLUSH's choice, read once; a bad value is a usage error, never silently another flush.
inline FlushKind l2_flush_kind() {
  static const FlushKind kind = [] {
    const char* setting = std::getenv(kL2FlushVariable);
    if (setting == nullptr || std::string(setting) == "write") return FlushKind::kWrite;
    if (std::string(setting) == "read") return FlushKind::kRead;
    std::fprintf(stderr, "error: %s=%s: use write or read\n", kL2FlushVariable, setting);
    std::exit(kExitUsage);
  }();
  return kind;
}

// Reads n vectors and keeps nothing: the sum is stored only where `never` points (the flush passes
// nullptr), a store the compiler cannot drop, so it keeps the loads. A template, so that every
// file that includes this header may define it.
template <class Vector>
__global__ void read_to_flush(const Vector* data, std::size_t n, unsigned* never) {
  unsigned sum = 0;
  for (std::size_t i = blockIdx.x * std::size_t{blockDim.x} + threadIdx.x; i < n;
       i += std::size_t{gridDim.x} * blockDim.x) {
    const Vector v = data[i];
    sum ^= v.x ^ v.y ^ v.z ^ v.w;
  }
  if (never != nullptr) *never = sum;
}

class L2Flush {
 public:
  // How the runs' headers say it: ", L2 flushed before each" and the kind where it is not the
  // default.
  static std::string described() {
    return l2_flush_kind() == FlushKind::kRead ? ", L2 flushed (read) before each"
                                               : ", L2 flushed before each";
  }
  explicit L2Flush(const cudaDeviceProp& properties)
      : kind_(l2_flush_kind()),
        bytes_(static_cast<std::size_t>(std::max(properties.l2CacheSize, 0)) *
               (kind_ == FlushKind::kRead ? kL2ReadFlushMultiple : 1) / sizeof(uint4) *
               sizeof(uint4)),
        blocks_(std::max(properties.multiProcessorCount, 1) * kReadFlushBlocksPerSm) {
    if (bytes_ == 0) return;
    buffer_ = allocate_device<unsigned char>(bytes_);
    if (kind_ == FlushKind::kRead) CUDA_CHECK(cudaMemset(buffer_.get(), 0, bytes_));
  }
  void operator()(cudaStream_t stream) const {
    if (bytes_ == 0) return;
    if (kind_ == FlushKind::kWrite) {
      CUDA_CHECK(cudaMemsetAsync(buffer_.get(), 0, bytes_, stream));
    } else {
      read_to_flush<<<blocks_, kReadFlushThreads, 0, stream>>>(
          reinterpret_cast<const uint4*>(buffer_.get()), bytes_ / sizeof(uint4), nullptr);
      CUDA_CHECK(cudaGetLastError());
    }
  }

 private:
  static constexpr int kReadFlushThreads = 256, kReadFlushBlocksPerSm = 8;
  FlushKind kind_;
  std::size_t bytes_;
  int blocks_;
  DeviceArray<unsigned char> buffer_;
};

// Event-timed runs of each piece of work, after warm-up. With several pieces the runs alternate
// (a, b, a, b, ...), so every piece sees the same clocks and the same state of the memory system
// and a drift cannot favour one of them. `before` runs ahead of each timed piece, outside the
// events (the L2 flush). Returns the median time of each piece.
// The last round's hooks, outside the events: before_last(p) runs ahead of piece p's last timed
// run (before `before`, so that what it writes is flushed from L2 too), after_last(p) once that
// run has finished. A driver whose pieces share an
// output poisons it in the first and verifies the last timed run in the second, before the next
// piece overwrites it.
template <class Before, class BeforeLast, class AfterLast, class... Work>
std::vector<double> median_event_ms_checked(int reps, cudaStream_t stream, Before&& before,
                                            BeforeLast&& before_last, AfterLast&& after_last,
                                            Work&&... work) {
  warm_up([&] {
    (work(), ...);
    CUDA_CHECK(cudaStreamSynchronize(stream));
  });
  cudaEvent_t start, stop;
  CUDA_CHECK(cudaEventCreate(&start));
  CUDA_CHECK(cudaEventCreate(&stop));
  std::vector<std::vector<double>> times_ms(sizeof...(work));
  auto time_one = [&](auto& piece, std::size_t index, bool last) {
    if (last) before_last(index);
    before();
    CUDA_CHECK(cudaEventRecord(start, stream));
    piece();
    CUDA_CHECK(cudaEventRecord(stop, stream));
    CUDA_CHECK(cudaEventSynchronize(stop));
    float ms = 0;
    CUDA_CHECK(cudaEventElapsedTime(&ms, start, stop));
    times_ms[index].push_back(ms);
    if (last) after_last(index);
  };
  for (int i = 0; i < reps; ++i) {
    std::size_t index = 0;
    (time_one(work, index++, i == reps - 1), ...);
  }
  CUDA_CHECK(cudaEventDestroy(start));
  CUDA_CHECK(cudaEventDestroy(stop));
  std::vector<double> medians;
  for (const auto& times : times_ms) medians.push_back(median(times));
  return medians;
}

template <class Before, class... Work>
std::vector<double> median_event_ms(int reps, cudaStream_t stream, Before&& before,
                                    Work&&... work) {
  auto nothing = [](std::size_t) {};
  return median_event_ms_checked(reps, stream, before, nothing, nothing, work...);
}

inline std::string describe_launch(const LaunchShape& shape) {
  if (shape.grid.x == 0) return "library call";
  char text[96];
  std::snprintf(text, sizeof text, "grid %ux%ux%u block %ux%ux%u", shape.grid.x, shape.grid.y,
                shape.grid.z, shape.block.x, shape.block.y, shape.block.z);
  return text;
}

inline std::int64_t threads_launched(const LaunchShape& shape) {
  if (shape.grid.x == 0) return 0;
  return std::int64_t{shape.grid.x} * shape.grid.y * shape.grid.z * shape.block.x * shape.block.y *
         shape.block.z;
}

// Empty when a CUDA device is here; otherwise why not, for the one line every CUDA program prints
// before it exits kExitSkipped: say_skipped(program, reason).
inline std::string no_cuda_device_reason() {
  int device_count = 0;
  const cudaError_t status = cudaGetDeviceCount(&device_count);
  if (status == cudaSuccess) return device_count == 0 ? "no NVIDIA GPU found" : "";
  // With no NVIDIA driver loaded at all, CUDA reports "driver version is insufficient", which
  // would send a student without a GPU to update a driver: say what is true instead.
  const bool driver_loaded = std::ifstream("/proc/driver/nvidia/version").good();
  if (status == cudaErrorNoDevice || !driver_loaded) return "no NVIDIA GPU found";
  return cudaGetErrorString(status);
}

inline void say_skipped(const char* program, const std::string& reason) {
  std::fprintf(stderr, "%s: skipped: no CUDA device (%s)\n", program, reason.c_str());
}

// The end of main() for a step that runs in one process on device 0: without a device, the one
// 'skipped' line and kExitSkipped; else run(element, properties) for the storage type of the
// element size (dtype.hpp), its exit code the program's.
template <class Run>
int run_on_device_0(const char* program, int elem_bytes, Run&& run) {
  l2_flush_kind();  // a bad LAB_L2_FLUSH is refused before any GPU work, with or without a GPU
  static const std::string no_device = no_cuda_device_reason();  // asked once a process
  if (!no_device.empty()) {
    say_skipped(program, no_device);
    return kExitSkipped;
  }
  static const cudaDeviceProp properties = [] {
    cudaDeviceProp asked;
    CUDA_CHECK(cudaGetDeviceProperties(&asked, 0));
    return asked;
  }();
  return with_storage_type(elem_bytes, [&](auto element) { return run(element, properties); });
}

}  // namespace lab
