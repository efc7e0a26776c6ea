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
#include "cuda_harness.cuh"
#include "cuda_step.cuh"
#include "host_memory.hpp"
#include "matrix.hpp"
#include "report.hpp"
#include "step_info.hpp"
#include "timer.hpp"

namespace {

using lab::Index;

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

  lab::PinnedArray<T> host_in = lab::allocate_pinned<T>(count, "the input");
  lab::PinnedArray<T> host_out = lab::allocate_pinned<T>(count, "the output");
  lab::DeviceArray<T> device_in = lab::allocate_device<T>(count);
  lab::DeviceArray<T> device_out = lab::allocate_device<T>(count);
  const lab::L2Flush flush_l2(properties);
  cudaStream_t stream;
  CUDA_CHECK(cudaStreamCreate(&stream));

  // Correct first: for every fill, one run into a poisoned output, copied back, compared bitwise.
  LaunchShape shape;
  const lab::Verification first_check =
      lab::verify_every_fill(dtype, host_in.get(), host_out.get(), rows, cols, [&] {
        CUDA_CHECK(cudaMemcpy(device_in.get(), host_in.get(), bytes, cudaMemcpyHostToDevice));
        CUDA_CHECK(cudaMemsetAsync(device_out.get(), lab::kPoisonByte, bytes, stream));
        shape =
            lab::launch_checked(STEP_NAME, device_in.get(), device_out.get(), rows, cols, stream);
        CUDA_CHECK(cudaStreamSynchronize(stream));
        CUDA_CHECK(cudaMemcpy(host_out.get(), device_out.get(), bytes, cudaMemcpyDeviceToHost));
      });
  if (!first_check.ok()) fail_verification("first run", first_check);

  // One launch bracketed for Nsight Compute (`ncu --profile-from-start off`); a no-op otherwise.
  CUDA_CHECK(cudaProfilerStart());
  lab::launch_checked(STEP_NAME, device_in.get(), device_out.get(), rows, cols, stream);
  CUDA_CHECK(cudaStreamSynchronize(stream));
  CUDA_CHECK(cudaProfilerStop());

  // The kernel and its ceiling, the device-to-device copy of the same bytes, timed alternately,
  // each after an L2 flush.
  const std::vector<double> kernel_and_copy_ms = lab::median_event_ms(
      options.reps, stream, [&] { flush_l2(stream); },
      [&] {
        lab::launch_checked(STEP_NAME, device_in.get(), device_out.get(), rows, cols, stream);
      },
      [&] {
        CUDA_CHECK(cudaMemcpyAsync(device_out.get(), device_in.get(), bytes,
                                   cudaMemcpyDeviceToDevice, stream));
      });
  const double kernel_ms = kernel_and_copy_ms[0], ceiling_ms = kernel_and_copy_ms[1];

  // End to end, what a caller with the matrix in host memory pays; its result is verified too.
  CUDA_CHECK(cudaMemsetAsync(device_out.get(), lab::kPoisonByte, bytes, stream));
  lab::poison_bytes(host_out.get(), bytes);
  const double e2e_ms = lab::median_event_ms(
      std::min(options.reps, lab::kMaxEndToEndReps), stream, [] {},
      [&] {
        CUDA_CHECK(
            cudaMemcpyAsync(device_in.get(), host_in.get(), bytes, cudaMemcpyHostToDevice, stream));
        lab::launch_checked(STEP_NAME, device_in.get(), device_out.get(), rows, cols, stream);
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
  m.threads = lab::threads_launched(shape);
  m.launch = lab::describe_launch(shape);
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

int main(int argc, char** argv) {
  const lab::Options options =
      lab::parse_options_or_exit(argc, argv, lab::step_cli_spec({}, lab::kDefaultGpuReps));

  const std::string no_device = lab::no_cuda_device_reason();
  if (!no_device.empty()) {
    lab::say_skipped(STEP_NAME, no_device);
    return lab::kExitSkipped;
  }
  cudaDeviceProp properties;
  CUDA_CHECK(cudaGetDeviceProperties(&properties, 0));
  return lab::with_storage_type(options.dtype->bytes, [&](auto element) {
    return run<decltype(element)>(options, properties);
  });
}
