// main() for CUDA steps: find a device, check the matrices fit, fill, run once into a poisoned
// output and verify it bitwise, then time the kernel (CUDA events, median), the device-to-device
// cudaMemcpy ceiling and the end-to-end round trip, all in this one process.
#include <cuda_profiler_api.h>

#include <cstdio>
#include <string>
#include <vector>

#include "cli.hpp"
#include "config.hpp"
#include "cuda_check.cuh"
#include "cuda_step.cuh"
#include "host_memory.hpp"
#include "matrix.hpp"
#include "report.hpp"
#include "timer.hpp"

#ifndef STEP_NAME
#error "STEP_NAME must be defined by common/step.mk"
#endif

namespace {

using lab::Index;

struct PinnedDeleter {
  void operator()(float* p) const { cudaFreeHost(p); }
};
using PinnedFloats = std::unique_ptr<float[], PinnedDeleter>;
struct DeviceDeleter {
  void operator()(float* p) const { cudaFree(p); }
};
using DeviceFloats = std::unique_ptr<float[], DeviceDeleter>;

// Pinned host memory (fast, asynchronous copies); exits cleanly when it cannot be had.
PinnedFloats allocate_pinned(std::size_t bytes, const char* what) {
  float* raw = nullptr;
  if (cudaMallocHost(&raw, bytes) != cudaSuccess) {
    std::fprintf(stderr, "error: could not pin %s of host memory for %s\n",
                 lab::format_bytes(bytes).c_str(), what);
    std::exit(lab::kExitNoMemory);
  }
  return PinnedFloats(raw);
}

// Launch and check at once: a bad configuration must not pass as a fast kernel.
LaunchShape launch_checked(const float* in, float* out, int rows, int cols, cudaStream_t stream) {
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

// Event-timed runs of each piece of work, after warm-up. With several pieces the runs alternate
// (a, b, a, b, ...), so every piece sees the same clocks and the same state of the memory system
// and a drift cannot favour one of them. Returns the median time of each piece.
template <class... Work>
std::vector<double> median_event_ms(int reps, cudaStream_t stream, Work&&... work) {
  lab::warm_up([&] {
    (work(), ...);
    CUDA_CHECK(cudaStreamSynchronize(stream));
  });
  cudaEvent_t start, stop;
  CUDA_CHECK(cudaEventCreate(&start));
  CUDA_CHECK(cudaEventCreate(&stop));
  std::vector<std::vector<double>> times_ms(sizeof...(work));
  auto time_one = [&](auto& piece, std::vector<double>& times) {
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

}  // namespace

int main(int argc, char** argv) {
  const lab::CliSpec spec{std::string(STEP_NAME) + "/transpose", {}, lab::kDefaultGpuReps};
  const lab::Options options = lab::parse_options_or_exit(argc, argv, spec);

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

  const int rows = options.rows, cols = options.cols;
  const Index count = Index{rows} * cols;
  const std::size_t bytes = lab::matrix_bytes(rows, cols);
  std::size_t device_free = 0, device_total = 0;
  CUDA_CHECK(cudaMemGetInfo(&device_free, &device_total));
  if (2 * bytes > device_free) {
    std::fprintf(stderr,
                 "error: %s x %s fp32 needs %s of device memory for input and output; "
                 "%s has %s free of %s\n",
                 std::to_string(rows).c_str(), std::to_string(cols).c_str(),
                 lab::format_bytes(2 * bytes).c_str(), properties.name,
                 lab::format_bytes(device_free).c_str(), lab::format_bytes(device_total).c_str());
    return lab::kExitNoMemory;
  }
  lab::require_host_memory(3 * bytes, "the input, the output and the reference");

  PinnedFloats host_in = allocate_pinned(bytes, "the input");
  PinnedFloats host_out = allocate_pinned(bytes, "the output");
  float* raw = nullptr;
  auto reference = lab::allocate_host_floats(count, "the reference");
  CUDA_CHECK(cudaMalloc(&raw, bytes));
  DeviceFloats device_in(raw);
  CUDA_CHECK(cudaMalloc(&raw, bytes));
  DeviceFloats device_out(raw);
  cudaStream_t stream;
  CUDA_CHECK(cudaStreamCreate(&stream));

  lab::fill_input(host_in.get(), rows, cols);
  lab::reference_transpose(host_in.get(), reference.get(), rows, cols);
  CUDA_CHECK(cudaMemcpy(device_in.get(), host_in.get(), bytes, cudaMemcpyHostToDevice));

  // Correct first: one run into a poisoned output, copied back and compared bitwise.
  CUDA_CHECK(cudaMemsetAsync(device_out.get(), lab::kPoisonByte, bytes, stream));
  const LaunchShape shape = launch_checked(device_in.get(), device_out.get(), rows, cols, stream);
  CUDA_CHECK(cudaStreamSynchronize(stream));
  CUDA_CHECK(cudaMemcpy(host_out.get(), device_out.get(), bytes, cudaMemcpyDeviceToHost));
  const lab::Verification first_check =
      lab::verify_transpose(host_out.get(), reference.get(), rows, cols);
  if (!first_check.ok()) fail_verification("first run", first_check);

  // One launch bracketed for Nsight Compute (`ncu --profile-from-start off`); a no-op otherwise.
  CUDA_CHECK(cudaProfilerStart());
  launch_checked(device_in.get(), device_out.get(), rows, cols, stream);
  CUDA_CHECK(cudaStreamSynchronize(stream));
  CUDA_CHECK(cudaProfilerStop());

  // The kernel and its ceiling, the device-to-device copy of the same bytes, timed alternately.
  const std::vector<double> kernel_and_copy_ms = median_event_ms(
      options.reps, stream,
      [&] { launch_checked(device_in.get(), device_out.get(), rows, cols, stream); },
      [&] {
        CUDA_CHECK(cudaMemcpyAsync(device_out.get(), device_in.get(), bytes,
                                   cudaMemcpyDeviceToDevice, stream));
      });
  const double kernel_ms = kernel_and_copy_ms[0], ceiling_ms = kernel_and_copy_ms[1];

  // End to end, what a caller with the matrix in host memory pays; its result is verified too.
  CUDA_CHECK(cudaMemsetAsync(device_out.get(), lab::kPoisonByte, bytes, stream));
  lab::poison(host_out.get(), count);
  const double e2e_ms = median_event_ms(std::min(options.reps, lab::kMaxEndToEndReps), stream, [&] {
    CUDA_CHECK(
        cudaMemcpyAsync(device_in.get(), host_in.get(), bytes, cudaMemcpyHostToDevice, stream));
    launch_checked(device_in.get(), device_out.get(), rows, cols, stream);
    CUDA_CHECK(
        cudaMemcpyAsync(host_out.get(), device_out.get(), bytes, cudaMemcpyDeviceToHost, stream));
  })[0];
  const lab::Verification final_check =
      lab::verify_transpose(host_out.get(), reference.get(), rows, cols);
  if (!final_check.ok()) fail_verification("after timing", final_check);

  lab::Measurement m;
  m.step = STEP_NAME;
  m.variant = "kernel";
  m.device = properties.name;
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

  lab::print_context(std::string(STEP_NAME) + ": " + kStepSummary,
                     {"device   " + std::string(properties.name),
                      lab::matrix_line(rows, cols, options.reps, "launches"),
                      "check    first run and end-to-end run " + final_check.describe()});
  lab::print_table({lab::table_row(m), lab::ceiling_row(rows, cols, ceiling_ms,
                                                        "cudaMemcpy device to device (ceiling)")});
  if (!options.csv_path.empty()) lab::append_csv(options.csv_path, {m});

  CUDA_CHECK(cudaStreamDestroy(stream));
  return lab::kExitOk;
}
