// main() for kernel steps: find a device, check the matrices fit, for every fill run once into a
// poisoned output and verify it bitwise, then time the kernel (CUDA events, median, L2 flushed
// before each launch), the device-to-device cudaMemcpy ceiling and the end-to-end round trip, all
// in this one process.
#include <cuda_profiler_api.h>

#include <algorithm>
#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include "cli.hpp"
#include "config.hpp"
#include "cuda_check.cuh"
#include "cuda_step.cuh"
#include "host_memory.hpp"
#include "matrix.hpp"
#include "report.hpp"
#include "step_info.hpp"
#include "timer.hpp"

namespace {

using lab::Index;

const lab::Dtype* g_requested_dtype = nullptr;

template <class T>
struct PinnedDeleter {
  void operator()(T* p) const { cudaFreeHost(p); }
};
template <class T>
using PinnedArray = std::unique_ptr<T[], PinnedDeleter<T>>;
struct DeviceDeleter {
  void operator()(void* p) const { cudaFree(p); }
};
template <class T>
using DeviceArray = std::unique_ptr<T[], DeviceDeleter>;

// Pinned host memory (fast, asynchronous copies); exits cleanly when it cannot be had.
template <class T>
PinnedArray<T> allocate_pinned(std::size_t count, const char* what) {
  void* raw = nullptr;
  if (cudaMallocHost(&raw, std::max<std::size_t>(count, 1) * sizeof(T)) != cudaSuccess) {
    std::fprintf(stderr, "error: could not pin %s of host memory for %s\n",
                 lab::format_bytes(count * sizeof(T)).c_str(), what);
    std::exit(lab::kExitNoMemory);
  }
  return PinnedArray<T>(static_cast<T*>(raw));
}

template <class T>
DeviceArray<T> allocate_device(std::size_t count) {
  void* raw = nullptr;
  CUDA_CHECK(cudaMalloc(&raw, std::max<std::size_t>(count, 1) * sizeof(T)));
  return DeviceArray<T>(static_cast<T*>(raw));
}

// Launch and check at once: a bad configuration must not pass as a fast kernel.
template <class T>
LaunchShape launch_checked(const T* in, T* out, int rows, int cols, cudaStream_t stream) {
  const LaunchShape shape = launch_transpose(in, out, rows, cols, stream);
  const cudaError_t status = cudaGetLastError();
  if (status == cudaErrorInvalidConfiguration) {
    std::fprintf(stderr,
                 "error: %s cannot launch for %d x %d: grid (%u, %u, %u) of blocks (%u, %u, %u) "
                 "exceeds the device's limits (gridDim.y and .z are at most 65535)\n",
                 STEP_NAME, rows, cols, shape.grid.x, shape.grid.y, shape.grid.z, shape.block.x,
                 shape.block.y, shape.block.z);
    std::exit(lab::kExitFailed);
  }
  CUDA_CHECK(status);
  return shape;
}

// Before every timed launch the L2 cache is overwritten (as NVIDIA's nvbench does), so that a
// matrix small enough to stay in L2 (50 MB on an H100, 60 MB on an H200) is read from DRAM like
// a large one, by the step and by its ceiling alike: no figure passes 100% of the copy because the
// second launch found its input in cache.
class L2Flush {
 public:
  explicit L2Flush(const cudaDeviceProp& properties)
      : bytes_(static_cast<std::size_t>(std::max(properties.l2CacheSize, 0))) {
    if (bytes_ != 0) buffer_ = allocate_device<unsigned char>(bytes_);
  }
  void operator()(cudaStream_t stream) const {
    if (bytes_ != 0) CUDA_CHECK(cudaMemsetAsync(buffer_.get(), 0, bytes_, stream));
  }

 private:
  std::size_t bytes_;
  DeviceArray<unsigned char> buffer_;
};

// Event-timed runs of each piece of work, after warm-up. With several pieces the runs alternate
// (a, b, a, b, ...), so every piece sees the same clocks and the same state of the memory system
// and a drift cannot favour one of them. `before` runs ahead of each timed piece, outside the
// events (the L2 flush). Returns the median time of each piece.
template <class Before, class... Work>
std::vector<double> median_event_ms(int reps, cudaStream_t stream, Before&& before,
                                    Work&&... work) {
  lab::warm_up([&] {
    (work(), ...);
    CUDA_CHECK(cudaStreamSynchronize(stream));
  });
  cudaEvent_t start, stop;
  CUDA_CHECK(cudaEventCreate(&start));
  CUDA_CHECK(cudaEventCreate(&stop));
  std::vector<std::vector<double>> times_ms(sizeof...(work));
  auto time_one = [&](auto& piece, std::vector<double>& times) {
    before();
    CUDA_CHECK(cudaEventRecord(start, stream));
    piece();
    CUDA_CHECK(cudaEventRecord(stop, stream));
    CUDA_CHECK(cudaEventSynchronize(stop));
    float ms = 0;
    CUDA_CHECK(cudaEventElapsedTime(&ms, start, stop));
    times.push_back(ms);
  };
  for (int i = 0; i < reps; ++i) {
    std::size_t index = 0;
    (time_one(work, times_ms[index++]), ...);
  }
  CUDA_CHECK(cudaEventDestroy(start));
  CUDA_CHECK(cudaEventDestroy(stop));
  std::vector<double> medians;
  for (const auto& times : times_ms) medians.push_back(lab::median(times));
  return medians;
}

std::string describe_launch(const LaunchShape& shape) {
  if (shape.grid.x == 0) return "library call";
  char text[96];
  std::snprintf(text, sizeof text, "grid %ux%ux%u block %ux%ux%u", shape.grid.x, shape.grid.y,
                shape.grid.z, shape.block.x, shape.block.y, shape.block.z);
  return text;
}

std::int64_t threads_launched(const LaunchShape& shape) {
  if (shape.grid.x == 0) return 0;
  return std::int64_t{shape.grid.x} * shape.grid.y * shape.grid.z * shape.block.x * shape.block.y *
         shape.block.z;
}

void fail_verification(const char* when, const lab::Verification& check) {
  std::fprintf(stderr, "%s (%s): %s\n", STEP_NAME, when, check.describe().c_str());
  std::exit(lab::kExitFailed);
}

template <class T>
int run(const lab::Options& options, const cudaDeviceProp& properties) {
  const lab::Dtype& dtype = *options.dtype;
  const int rows = options.rows, cols = options.cols;
  const Index count = Index{rows} * cols;
  const std::size_t bytes = lab::matrix_bytes(rows, cols, sizeof(T));
  std::size_t device_free = 0, device_total = 0;
  CUDA_CHECK(cudaMemGetInfo(&device_free, &device_total));
  const std::size_t device_needed = 2 * bytes + static_cast<std::size_t>(properties.l2CacheSize);
  if (device_needed > device_free) {
    std::fprintf(stderr,
                 "error: %d x %d %s needs %s of device memory for the input, the output and the "
                 "L2 flush buffer; %s has %s free of %s\n",
                 rows, cols, dtype.name, lab::format_bytes(device_needed).c_str(), properties.name,
                 lab::format_bytes(device_free).c_str(), lab::format_bytes(device_total).c_str());
    return lab::kExitNoMemory;
  }
  lab::require_host_memory(2 * bytes, "the input and the output");

  PinnedArray<T> host_in = allocate_pinned<T>(count, "the input");
  PinnedArray<T> host_out = allocate_pinned<T>(count, "the output");
  DeviceArray<T> device_in = allocate_device<T>(count);
  DeviceArray<T> device_out = allocate_device<T>(count);
  const L2Flush flush_l2(properties);
  cudaStream_t stream;
  CUDA_CHECK(cudaStreamCreate(&stream));

  // Correct first: for every fill, one run into a poisoned output, copied back, compared bitwise.
  LaunchShape shape;
  const lab::Verification first_check =
      lab::verify_every_fill(dtype, host_in.get(), host_out.get(), rows, cols, [&] {
        CUDA_CHECK(cudaMemcpy(device_in.get(), host_in.get(), bytes, cudaMemcpyHostToDevice));
        CUDA_CHECK(cudaMemsetAsync(device_out.get(), lab::kPoisonByte, bytes, stream));
        shape = launch_checked(device_in.get(), device_out.get(), rows, cols, stream);
        CUDA_CHECK(cudaStreamSynchronize(stream));
        CUDA_CHECK(cudaMemcpy(host_out.get(), device_out.get(), bytes, cudaMemcpyDeviceToHost));
      });
  if (!first_check.ok()) fail_verification("first run", first_check);

  // One launch bracketed for Nsight Compute (`ncu --profile-from-start off`); a no-op otherwise.
  CUDA_CHECK(cudaProfilerStart());
  launch_checked(device_in.get(), device_out.get(), rows, cols, stream);
  CUDA_CHECK(cudaStreamSynchronize(stream));
  CUDA_CHECK(cudaProfilerStop());

  // The kernel and its ceiling, the device-to-device copy of the same bytes, timed alternately,
  // each after an L2 flush.
  const std::vector<double> kernel_and_copy_ms = median_event_ms(
      options.reps, stream, [&] { flush_l2(stream); },
      [&] { launch_checked(device_in.get(), device_out.get(), rows, cols, stream); },
      [&] {
        CUDA_CHECK(cudaMemcpyAsync(device_out.get(), device_in.get(), bytes,
                                   cudaMemcpyDeviceToDevice, stream));
      });
  const double kernel_ms = kernel_and_copy_ms[0], ceiling_ms = kernel_and_copy_ms[1];

  // End to end, what a caller with the matrix in host memory pays; its result is verified too.
  CUDA_CHECK(cudaMemsetAsync(device_out.get(), lab::kPoisonByte, bytes, stream));
  lab::poison_bytes(host_out.get(), bytes);
  const double e2e_ms = median_event_ms(
      std::min(options.reps, lab::kMaxEndToEndReps), stream, [] {},
      [&] {
        CUDA_CHECK(
            cudaMemcpyAsync(device_in.get(), host_in.get(), bytes, cudaMemcpyHostToDevice, stream));
        launch_checked(device_in.get(), device_out.get(), rows, cols, stream);
        CUDA_CHECK(cudaMemcpyAsync(host_out.get(), device_out.get(), bytes, cudaMemcpyDeviceToHost,
                                   stream));
      })[0];
  const lab::Verification final_check =
      lab::verify_transpose(host_out.get(), host_in.get(), rows, cols);
  if (!final_check.ok()) fail_verification("after timing", final_check);

  lab::Measurement m;
  m.step = STEP_NAME;
  m.variant = "kernel";
  m.device = properties.name;
  m.dtype = dtype.name;
  m.elem_bytes = dtype.bytes;
  m.kind = STEP_KIND;
  m.rows = rows;
  m.cols = cols;
  m.threads = threads_launched(shape);
  m.launch = describe_launch(shape);
  m.reps = options.reps;
  m.median_ms = kernel_ms;
  m.e2e_ms = e2e_ms;
  m.verified = true;
  m.summary = kStepSummary;
  lab::set_bandwidth(m, ceiling_ms);

  lab::print_context(
      std::string(STEP_NAME) + ": " + kStepSummary,
      {"device   " + std::string(properties.name),
       lab::matrix_line(rows, cols, dtype.name, dtype.bytes, options.reps, "launches") +
           ", L2 flushed before each",
       "check    first run " + first_check.describe(),
       "         end-to-end run " + final_check.describe()});
  lab::print_table({lab::table_row(m), lab::ceiling_row(rows, cols, dtype.bytes, ceiling_ms,
                                                        "cudaMemcpy device to device (ceiling)")});
  if (!options.csv_path.empty()) lab::append_csv(options.csv_path, {m});

  CUDA_CHECK(cudaStreamDestroy(stream));
  return lab::kExitOk;
}

}  // namespace

const lab::Dtype& lab::requested_dtype() {
  return *g_requested_dtype;
}

int main(int argc, char** argv) {
  const lab::Options options =
      lab::parse_options_or_exit(argc, argv, lab::step_cli_spec({}, lab::kDefaultGpuReps));
  g_requested_dtype = options.dtype;

  int device_count = 0;
  const cudaError_t device_status = cudaGetDeviceCount(&device_count);
  if (device_status != cudaSuccess || device_count == 0) {
    std::fprintf(stderr, "%s: skipped: no CUDA device (%s)\n", STEP_NAME,
                 device_status != cudaSuccess ? cudaGetErrorString(device_status)
                                              : "the driver reports none");
    return lab::kExitSkipped;
  }
  cudaDeviceProp properties;
  CUDA_CHECK(cudaGetDeviceProperties(&properties, 0));
  return lab::with_storage_type(options.dtype->bytes, [&](auto element) {
    return run<decltype(element)>(options, properties);
  });
}
