// main() for kernel steps: find a device, check the matrices fit, for every fill run once into a
// poisoned output and verify it bitwise, then time the kernel (CUDA events, median, L2 flushed
// before each launch), the device-to-device cudaMemcpy ceiling and the end-to-end round trip, all
// in this one process. A step with several launchers (kKernelVariants) runs the one --variant
// names (default: the first), or each in turn; a copy step (STEP_OPERATION) is verified as a copy.
// What is verified and when (docs/verification.md): every fill's first run; the output of the
// last timed launch (the ceiling copies into a buffer of its own, so nothing overwrites it); the
// last end-to-end run. Each into an output poisoned from the fill, so no element can pass
// unwritten.
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

void fail_verification(const lab::KernelVariant& variant, const char* when,
                       const lab::Verification& check) {
  const bool named = kKernelVariantCount > 1;
  std::fprintf(stderr, "%s%s%s (%s): %s\n", STEP_NAME, named ? " " : "", named ? variant.name : "",
               when, check.describe().c_str());
  std::exit(lab::kExitFailed);
}

// The --variant names of a step with several launchers; none for a step with one.
std::vector<std::string> variant_names() {
  std::vector<std::string> names;
  if (kKernelVariantCount > 1)
    for (int i = 0; i < kKernelVariantCount; ++i) names.push_back(kKernelVariants[i].name);
  return names;
}

std::vector<const lab::KernelVariant*> selected_variants(const std::string& choice) {
  std::vector<const lab::KernelVariant*> selected;
  for (int i = 0; i < kKernelVariantCount; ++i)
    if (choice == "all" || choice == kKernelVariants[i].name)
      selected.push_back(&kKernelVariants[i]);
  return selected;
}

template <class T>
int run(const lab::Options& options, const cudaDeviceProp& properties) {
  const lab::Dtype& dtype = *options.dtype;
  const int rows = options.rows, cols = options.cols;
  const Index count = Index{rows} * cols;
  const std::size_t bytes = lab::matrix_bytes(rows, cols, sizeof(T));
  std::size_t device_free = 0, device_total = 0;
  CUDA_CHECK(cudaMemGetInfo(&device_free, &device_total));
  // The ceiling's copy gets an output of its own: the kernel's last timed output is verified.
  const std::size_t device_needed = 3 * bytes + static_cast<std::size_t>(properties.l2CacheSize);
  if (device_needed > device_free) {
    std::fprintf(stderr,
                 "error: %d x %d %s needs %s of device memory for the input, the output, the "
                 "ceiling's output and the L2 flush buffer; %s has %s free of %s\n",
                 rows, cols, dtype.name, lab::format_bytes(device_needed).c_str(), properties.name,
                 lab::format_bytes(device_free).c_str(), lab::format_bytes(device_total).c_str());
    return lab::kExitNoMemory;
  }
  lab::require_host_memory(2 * bytes, "the input and the output");

  lab::PinnedArray<T> host_in = lab::allocate_pinned<T>(count, "the input");
  lab::PinnedArray<T> host_out = lab::allocate_pinned<T>(count, "the output");
  lab::DeviceArray<T> device_in = lab::allocate_device<T>(count);
  lab::DeviceArray<T> device_out = lab::allocate_device<T>(count);
  lab::DeviceArray<T> device_ceiling_out = lab::allocate_device<T>(count);
  const lab::L2Flush flush_l2(properties);
  cudaStream_t stream;
  CUDA_CHECK(cudaStreamCreate(&stream));

  // Correct first: each selected variant, for every fill, one run into a poisoned output, copied
  // back, compared bitwise with the transpose (or, for a copy step, the input itself). The device
  // output is poisoned by copying the host's poisoned output to it.
  const lab::Operation operation = lab::step_operation();
  // The output poisoned for fill 0 (what the input holds after the first runs), on both sides.
  auto poison_for_fill_0 = [&] {
    lab::poison_output(host_out.get(), rows, cols, dtype, 0, operation);
    CUDA_CHECK(cudaMemcpy(device_out.get(), host_out.get(), bytes, cudaMemcpyHostToDevice));
  };
  const std::vector<const lab::KernelVariant*> variants = selected_variants(options.variant);
  std::vector<LaunchShape> shapes;
  lab::Verification first_check;
  for (const lab::KernelVariant* variant : variants) {
    LaunchShape shape;
    first_check = lab::verify_every_fill(
        dtype, host_in.get(), host_out.get(), rows, cols,
        [&] {
          CUDA_CHECK(cudaMemcpy(device_in.get(), host_in.get(), bytes, cudaMemcpyHostToDevice));
          CUDA_CHECK(cudaMemcpy(device_out.get(), host_out.get(), bytes, cudaMemcpyHostToDevice));
          shape = lab::launch_checked(STEP_NAME, variant->launcher<T>(), device_in.get(),
                                      device_out.get(), rows, cols, stream, dtype);
          CUDA_CHECK(cudaStreamSynchronize(stream));
          CUDA_CHECK(cudaMemcpy(host_out.get(), device_out.get(), bytes, cudaMemcpyDeviceToHost));
        },
        operation);
    if (!first_check.ok()) fail_verification(*variant, "first run", first_check);
    shapes.push_back(shape);
  }

  std::vector<lab::Measurement> results;
  std::vector<double> ceilings_ms;
  lab::Verification timed_check, final_check;
  for (std::size_t v = 0; v < variants.size(); ++v) {
    const lab::KernelVariant& variant = *variants[v];
    auto launch = [&] {
      lab::launch_checked(STEP_NAME, variant.launcher<T>(), device_in.get(), device_out.get(), rows,
                          cols, stream, dtype);
    };

    // One launch bracketed for Nsight Compute (`ncu --profile-from-start off`); a no-op otherwise.
    CUDA_CHECK(cudaProfilerStart());
    launch();
    CUDA_CHECK(cudaStreamSynchronize(stream));
    CUDA_CHECK(cudaProfilerStop());

    // The kernel and its ceiling, the device-to-device copy of the same bytes into its own buffer,
    // timed alternately, each after an L2 flush. The output is poisoned before the series, so an
    // element the kernel never writes is still poison when the last timed launch is verified.
    poison_for_fill_0();
    const std::vector<double> kernel_and_copy_ms = lab::median_event_ms(
        options.reps, stream, [&] { flush_l2(stream); }, launch,
        [&] {
          CUDA_CHECK(cudaMemcpyAsync(device_ceiling_out.get(), device_in.get(), bytes,
                                     cudaMemcpyDeviceToDevice, stream));
        });
    const double kernel_ms = kernel_and_copy_ms[0], ceiling_ms = kernel_and_copy_ms[1];
    CUDA_CHECK(cudaMemcpy(host_out.get(), device_out.get(), bytes, cudaMemcpyDeviceToHost));
    timed_check = lab::verify_result(operation, host_out.get(), host_in.get(), rows, cols);
    if (!timed_check.ok()) fail_verification(variant, "last timed launch", timed_check);

    // End to end, what a caller with the matrix in host memory pays; its last run is verified too.
    poison_for_fill_0();
    const double e2e_ms = lab::median_event_ms(
        std::min(options.reps, lab::kMaxEndToEndReps), stream, [] {},
        [&] {
          CUDA_CHECK(cudaMemcpyAsync(device_in.get(), host_in.get(), bytes, cudaMemcpyHostToDevice,
                                     stream));
          launch();
          CUDA_CHECK(cudaMemcpyAsync(host_out.get(), device_out.get(), bytes,
                                     cudaMemcpyDeviceToHost, stream));
        })[0];
    final_check = lab::verify_result(operation, host_out.get(), host_in.get(), rows, cols);
    if (!final_check.ok()) fail_verification(variant, "last end-to-end run", final_check);

    lab::Measurement m = lab::step_measurement(variant.name, properties.name, dtype, rows, cols);
    m.threads = lab::threads_launched(shapes[v]);
    m.launch = lab::describe_launch(shapes[v]);
    m.reps = options.reps;
    m.median_ms = kernel_ms;
    m.e2e_ms = e2e_ms;
    m.verified = true;
    m.summary = variant.summary;
    lab::set_bandwidth(m, ceiling_ms);
    results.push_back(m);
    ceilings_ms.push_back(ceiling_ms);
  }

  lab::print_context(
      std::string(STEP_NAME) + ": " + kStepSummary,
      {"device   " + std::string(properties.name),
       lab::matrix_line(rows, cols, dtype.name, dtype.bytes, options.reps, "launches") +
           ", L2 flushed before each",
       "check    first run " + first_check.describe(),
       "         last timed launch (fill 1): " + timed_check.describe(),
       "         last end-to-end run (fill 1): " + final_check.describe()});
  std::vector<lab::TableRow> table;
  for (const lab::Measurement& m : results) table.push_back(lab::table_row(m));
  table.push_back(lab::ceiling_row(rows, cols, dtype.bytes, lab::median(ceilings_ms),
                                   "cudaMemcpy device to device (ceiling)"));
  lab::print_table(table);
  if (!options.csv_path.empty()) lab::append_csv(options.csv_path, results);

  CUDA_CHECK(cudaStreamDestroy(stream));
  return lab::kExitOk;
}

}  // namespace

int main(int argc, char** argv) {
  const std::vector<std::string> variants = variant_names();
  const lab::Options options = lab::parse_options_or_exit(
      argc, argv,
      lab::step_cli_spec(variants, lab::kDefaultGpuReps, variants.empty() ? "" : variants[0]));

  return lab::run_on_device_0(STEP_NAME, options.dtype->bytes,
                              [&](auto element, const cudaDeviceProp& properties) {
                                return run<decltype(element)>(options, properties);
                              });
}
