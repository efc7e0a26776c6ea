// main() for the GPU steps of chapter 3, the kernel driver's rules on a tensor: bad input refused
// before any GPU work; without a device one line and exit 77; check the tensors fit; for every
// fill run once into a poisoned output and verify it bitwise against the definition; then time the
// step (CUDA events, median, L2 flushed before each launch) and its ceiling, the device-to-device
// cudaMemcpy of the same bytes into a buffer of its own, alternately in this one process; verify
// the last timed launch; time the end-to-end round trip and verify its last run.
#include <cuda_profiler_api.h>

#include <algorithm>
#include <cstdio>
#include <string>
#include <vector>

#include "cli.hpp"
#include "config.hpp"
#include "cuda_check.cuh"
#include "cuda_harness.cuh"
#include "host_memory.hpp"
#include "permute.hpp"
#include "permute_step.hpp"
#include "report.hpp"
#include "timer.hpp"

namespace {

using lab::Index;

void fail_verification(const char* when, const lab::PermuteVerification& check) {
  std::fprintf(stderr, "%s (%s): %s\n", STEP_NAME, when, check.describe().c_str());
  std::exit(lab::kExitFailed);
}

template <class T>
int run(const lab::PermuteOptions& options, const cudaDeviceProp& properties) {
  const lab::Dtype& dtype = *options.dtype;
  const lab::Permutation& p = options.problem;
  const Index count = p.elements();
  const std::size_t bytes = static_cast<std::size_t>(count) * sizeof(T);
  if (!lab::device_holds_the_problem(bytes, "shape " + p.shape_text() + " " + dtype.name,
                                     properties))
    return lab::kExitNoMemory;
  lab::require_host_memory(2 * bytes, "the input and the output");

  lab::PinnedArray<T> host_in = lab::allocate_pinned<T>(count, "the input");
  lab::PinnedArray<T> host_out = lab::allocate_pinned<T>(count, "the output");
  lab::DeviceArray<T> device_in = lab::allocate_device<T>(count);
  lab::DeviceArray<T> device_out = lab::allocate_device<T>(count);
  lab::DeviceArray<T> device_ceiling_out = lab::allocate_device<T>(count);
  const lab::L2Flush flush_l2(properties);
  cudaStream_t stream;
  CUDA_CHECK(cudaStreamCreate(&stream));

  LaunchShape shape;
  auto launch = [&] {
    shape = launch_permute<T>(device_in.get(), device_out.get(), p, stream);
    CUDA_CHECK(cudaGetLastError());
  };
  // The host's poisoned output copied to the device: an element the step never writes stays
  // poison there.
  auto poison_for_fill_0 = [&] {
    lab::poison_permute_output(host_out.get(), p, dtype, 0);
    CUDA_CHECK(cudaMemcpy(device_out.get(), host_out.get(), bytes, cudaMemcpyHostToDevice));
  };

  const lab::PermuteVerification first_check =
      lab::verify_permute_every_fill(dtype, host_in.get(), host_out.get(), p, [&] {
        CUDA_CHECK(cudaMemcpy(device_in.get(), host_in.get(), bytes, cudaMemcpyHostToDevice));
        CUDA_CHECK(cudaMemcpy(device_out.get(), host_out.get(), bytes, cudaMemcpyHostToDevice));
        launch();
        CUDA_CHECK(cudaStreamSynchronize(stream));
        CUDA_CHECK(cudaMemcpy(host_out.get(), device_out.get(), bytes, cudaMemcpyDeviceToHost));
      });
  if (!first_check.ok()) fail_verification("first run", first_check);

  // One launch bracketed for Nsight Compute (`ncu --profile-from-start off`); a no-op otherwise.
  CUDA_CHECK(cudaProfilerStart());
  launch();
  CUDA_CHECK(cudaStreamSynchronize(stream));
  CUDA_CHECK(cudaProfilerStop());

  poison_for_fill_0();
  const std::vector<double> step_and_copy_ms = lab::median_event_ms(
      options.reps, stream, [&] { flush_l2(stream); }, launch,
      [&] {
        CUDA_CHECK(cudaMemcpyAsync(device_ceiling_out.get(), device_in.get(), bytes,
                                   cudaMemcpyDeviceToDevice, stream));
      });
  CUDA_CHECK(cudaMemcpy(host_out.get(), device_out.get(), bytes, cudaMemcpyDeviceToHost));
  const lab::PermuteVerification timed_check =
      lab::verify_permute(host_out.get(), host_in.get(), p);
  if (!timed_check.ok()) fail_verification("last timed launch", timed_check);

  poison_for_fill_0();
  const double e2e_ms = lab::median_event_ms(
      std::min(options.reps, lab::kMaxEndToEndReps), stream, [] {},
      [&] {
        CUDA_CHECK(
            cudaMemcpyAsync(device_in.get(), host_in.get(), bytes, cudaMemcpyHostToDevice, stream));
        launch();
        CUDA_CHECK(cudaMemcpyAsync(host_out.get(), device_out.get(), bytes, cudaMemcpyDeviceToHost,
                                   stream));
      })[0];
  const lab::PermuteVerification final_check =
      lab::verify_permute(host_out.get(), host_in.get(), p);
  if (!final_check.ok()) fail_verification("last end-to-end run", final_check);

  lab::Measurement m = lab::permute_measurement(STEP_NAME, "kernel", lab::kOneKernelVariant,
                                                properties.name, dtype, p);
  m.threads = lab::threads_launched(shape);
  m.launch = lab::describe_launch(shape);
  m.reps = options.reps;
  m.median_ms = step_and_copy_ms[0];
  m.e2e_ms = e2e_ms;
  m.verified = true;
  m.summary = kStepSummary;
  lab::set_bandwidth(m, step_and_copy_ms[1]);
  m.ceiling_kind = lab::kMemcpyCeiling;
  m.memcpy_gbps = m.ceiling_gbps;

  lab::print_context(
      std::string(STEP_NAME) + ": " + kStepSummary,
      {"device   " + std::string(properties.name),
       lab::tensor_line(p, dtype, options.reps, "launches") + lab::L2Flush::described(),
       "fusion   " + lab::explain(p), "check    first run " + first_check.describe(),
       "         last timed launch (fill 1): " + timed_check.describe(),
       "         last end-to-end run (fill 1): " + final_check.describe()});
  lab::print_table(
      {lab::table_row(m), lab::ceiling_row(m.rows, m.cols, dtype.bytes, step_and_copy_ms[1],
                                           "cudaMemcpy device to device (ceiling)")});
  if (!options.csv_path.empty()) lab::append_permute_csv(options.csv_path, {m}, p);

  CUDA_CHECK(cudaStreamDestroy(stream));
  return lab::kExitOk;
}

}  // namespace

int main(int argc, char** argv) {
  lab::keep_freed_blocks() = true;  // for the next case of --cases
  return lab::run_each_permute_case(
      argc, argv, std::string(STEP_NAME) + "/transpose", lab::kDefaultGpuReps, "on the GPU",
      [](const lab::PermuteOptions& options) {
        return lab::run_on_device_0(STEP_NAME, options.dtype->bytes,
                                    [&](auto element, const cudaDeviceProp& properties) {
                                      return run<decltype(element)>(options, properties);
                                    });
      });
}
