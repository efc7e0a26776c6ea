// main() for kernel steps: find a device, check the matrices fit, for every fill run once into a
// poisoned output and verify it bitwise, then time the kernel (CUDA events, median, L2 flushed
// before each launch), its ceiling and the end-to-end round trip, all in this one process. The
// ceiling is the faster of two copies of the same bytes timed beside the kernel: the
// device-to-device cudaMemcpy and the lab's vector copy kernel (vector_copy.cuh), whichever moves
// them faster on this GPU, for this size and type. A step with several launchers (kKernelVariants)
// runs the one --variant names (default: the first), or each in turn that can take the shape and
// the GPU (common/cuda_step.cuh); a copy step (STEP_OPERATION) is verified as a copy.
// What is verified and when (docs/verification.md): every fill's first run, of the step and of the
// vector copy; the output of the last timed launch (the ceilings copy into a buffer of their own,
// so nothing overwrites it); the vector copy's last timed run; the last end-to-end run. Each into
// an output poisoned from the fill, so no element can pass unwritten.
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
#include "vector_copy.cuh"

namespace {

using lab::Index;

// The pieces of a timed series, in the order they alternate: the step, then its two ceilings.
enum Piece : std::size_t { kStepPiece, kMemcpyPiece, kVectorCopyPiece };

void fail_ceiling(const char* when, const lab::Verification& check) {
  std::fprintf(stderr, "%s vector copy ceiling (%s): %s\n", STEP_NAME, when,
               check.describe().c_str());
  std::exit(lab::kExitFailed);
}

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

// Why the variant --variant names cannot take this shape (bad input), or empty; "all" refuses none.
std::string refused_shape(const lab::Options& options) {
  for (const lab::KernelVariant* variant : selected_variants(options.variant))
    if (options.variant != "all" && variant->refuses_shape != nullptr)
      return variant->refuses_shape(options.rows, options.cols, options.dtype->bytes);
  return "";
}

template <class T>
int run(const lab::Options& options, const cudaDeviceProp& properties) {
  const lab::Dtype& dtype = *options.dtype;
  const int rows = options.rows, cols = options.cols;
  const Index count = Index{rows} * cols;
  // A variant that cannot run this shape or on this GPU: a skip when named, left out of "all".
  std::vector<const lab::KernelVariant*> variants;
  for (const lab::KernelVariant* variant : selected_variants(options.variant)) {
    std::string why = variant->refuses_shape ? variant->refuses_shape(rows, cols, dtype.bytes) : "";
    if (why.empty() && variant->refuses_device) why = variant->refuses_device(properties);
    if (why.empty()) {
      variants.push_back(variant);
    } else if (options.variant != "all") {
      std::fprintf(stderr, "%s: skipped: %s\n", STEP_NAME, why.c_str());
      return lab::kExitSkipped;
    } else {
      std::fprintf(stderr, "%s: --variant all leaves out %s: %s\n", STEP_NAME, variant->name,
                   why.c_str());
    }
  }
  const std::size_t bytes = lab::matrix_bytes(rows, cols, sizeof(T));
  const std::string problem =
      std::to_string(rows) + " x " + std::to_string(cols) + " " + dtype.name;
  if (!lab::device_holds_the_problem(bytes, problem, properties)) return lab::kExitNoMemory;
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

  // The vector copy is a ceiling only if it copies: verified like a copy step, for every fill.
  LaunchShape vector_shape;
  auto vector_copy = [&] {
    vector_shape =
        lab::launch_vector_copy(device_in.get(), device_ceiling_out.get(), bytes, stream);
    lab::check_launch("the vector copy", vector_shape, rows, cols);
  };
  const lab::Verification vector_first_check = lab::verify_every_fill(
      dtype, host_in.get(), host_out.get(), rows, cols,
      [&] {
        CUDA_CHECK(cudaMemcpy(device_in.get(), host_in.get(), bytes, cudaMemcpyHostToDevice));
        CUDA_CHECK(
            cudaMemcpy(device_ceiling_out.get(), host_out.get(), bytes, cudaMemcpyHostToDevice));
        vector_copy();
        CUDA_CHECK(cudaStreamSynchronize(stream));
        CUDA_CHECK(
            cudaMemcpy(host_out.get(), device_ceiling_out.get(), bytes, cudaMemcpyDeviceToHost));
      },
      lab::Operation::kCopy);
  if (!vector_first_check.ok()) fail_ceiling("first run", vector_first_check);
  // Its last timed run lands in an output poisoned just before it: the memcpy before it in the
  // same round wrote the same buffer, and an element the kernel skipped must not pass.
  auto poison_before_last = [&](std::size_t piece) {
    if (piece != kVectorCopyPiece) return;
    lab::poison_output(host_out.get(), rows, cols, dtype, 0, lab::Operation::kCopy);
    CUDA_CHECK(cudaMemcpy(device_ceiling_out.get(), host_out.get(), bytes, cudaMemcpyHostToDevice));
  };

  std::vector<lab::Measurement> results;
  std::vector<double> memcpy_times_ms, vector_copy_times_ms;
  lab::Verification timed_check, vector_timed_check, final_check;
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

    // The kernel and its two ceilings, cudaMemcpy and the vector copy of the same bytes into a
    // buffer of their own, timed alternately, each after an L2 flush. The output is poisoned before
    // the series, so an element the kernel never writes is still poison when the last timed launch
    // is verified.
    poison_for_fill_0();
    const std::vector<double> times_ms = lab::median_event_ms_checked(
        options.reps, stream, [&] { flush_l2(stream); }, poison_before_last, [](std::size_t) {},
        launch,
        [&] {
          CUDA_CHECK(cudaMemcpyAsync(device_ceiling_out.get(), device_in.get(), bytes,
                                     cudaMemcpyDeviceToDevice, stream));
        },
        vector_copy);
    const double kernel_ms = times_ms[kStepPiece], memcpy_ms = times_ms[kMemcpyPiece],
                 vector_copy_ms = times_ms[kVectorCopyPiece];
    CUDA_CHECK(cudaMemcpy(host_out.get(), device_out.get(), bytes, cudaMemcpyDeviceToHost));
    timed_check = lab::verify_result(operation, host_out.get(), host_in.get(), rows, cols);
    if (!timed_check.ok()) fail_verification(variant, "last timed launch", timed_check);
    CUDA_CHECK(cudaMemcpy(host_out.get(), device_ceiling_out.get(), bytes, cudaMemcpyDeviceToHost));
    vector_timed_check = lab::verify_copy(host_out.get(), host_in.get(), rows, cols);
    if (!vector_timed_check.ok()) fail_ceiling("last timed run", vector_timed_check);

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
    // The ceiling is the faster copy of the two, measured in this series.
    lab::set_bandwidth(m, std::min(memcpy_ms, vector_copy_ms));
    m.ceiling_kind = memcpy_ms <= vector_copy_ms ? lab::kMemcpyCeiling : lab::kVectorCopyCeiling;
    m.memcpy_gbps = lab::effective_gbps(rows, cols, dtype.bytes, memcpy_ms);
    results.push_back(m);
    memcpy_times_ms.push_back(memcpy_ms);
    vector_copy_times_ms.push_back(vector_copy_ms);
  }

  lab::print_context(
      std::string(STEP_NAME) + ": " + kStepSummary,
      {"device   " + std::string(properties.name),
       lab::matrix_line(rows, cols, dtype.name, dtype.bytes, options.reps, "launches") +
           lab::L2Flush::described(),
       "check    first run " + first_check.describe(),
       "         last timed launch (fill 1): " + timed_check.describe(),
       "         last end-to-end run (fill 1): " + final_check.describe(),
       "         vector copy ceiling, first run " + vector_first_check.describe(),
       "         vector copy ceiling, last timed run (fill 1): " + vector_timed_check.describe(),
       "ceiling  the faster of cudaMemcpy device to device and the vector copy kernel "
       "(16-byte accesses), timed beside each row: % of copy is of that one"});
  std::vector<lab::TableRow> table;
  for (const lab::Measurement& m : results) table.push_back(lab::table_row(m));
  // Both ceilings, each against the faster: the one at 100% is the ceiling of the rows above.
  const double memcpy_ms = lab::median(memcpy_times_ms);
  const double vector_copy_ms = lab::median(vector_copy_times_ms);
  const std::vector<lab::TableRow> copies = lab::ceiling_rows(
      rows, cols, dtype.bytes,
      {{lab::kMemcpyCeiling, "cudaMemcpy device to device", memcpy_ms, "-"},
       {lab::kVectorCopyCeiling, lab::describe_launch(vector_shape), vector_copy_ms, "verified"}});
  table.insert(table.end(), copies.begin(), copies.end());
  lab::print_table(table);
  if (!options.csv_path.empty()) lab::append_csv(options.csv_path, results);

  CUDA_CHECK(cudaStreamDestroy(stream));
  return lab::kExitOk;
}

}  // namespace

int main(int argc, char** argv) {
  const std::vector<std::string> variants = variant_names();
  lab::keep_freed_blocks() = true;  // for the next case of --cases
  return lab::run_each_matrix_case(
      argc, argv,
      lab::step_cli_spec(variants, lab::kDefaultGpuReps, variants.empty() ? "" : variants[0]),
      [](const lab::Options& options) {
        if (const std::string why = refused_shape(options); !why.empty()) {
          std::fprintf(stderr, "%s: %s\n", STEP_NAME, why.c_str());
          return lab::kExitUsage;
        }
        return lab::run_on_device_0(STEP_NAME, options.dtype->bytes,
                                    [&](auto element, const cudaDeviceProp& properties) {
                                      return run<decltype(element)>(options, properties);
                                    });
      });
}
