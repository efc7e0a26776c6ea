// main() for the CPU steps of chapter 3: parse, fill, verify, time the step against an OpenMP copy
// of the same bytes (the ceiling), print the table and the CSV row. Verified as in the matrix
// steps' CPU driver (docs/verification.md): the first run of every fill, and the last timed run,
// into an output poisoned just before that run's untimed twin.
#include <omp.h>

#include <cstdio>
#include <functional>
#include <string>
#include <vector>

#include "cache_flush.hpp"
#include "cli.hpp"
#include "config.hpp"
#include "cpu_ceiling.hpp"
#include "cpu_model.hpp"
#include "host_memory.hpp"
#include "permute.hpp"
#include "permute_step.hpp"
#include "report.hpp"
#include "streaming_copy.hpp"
#include "timer.hpp"

namespace {

using lab::Index;

template <class T>
int run(const lab::PermuteOptions& options) {
  const lab::Dtype& dtype = *options.dtype;
  const lab::Permutation& p = options.problem;
  const Index count = p.elements();
  const std::size_t bytes = static_cast<std::size_t>(count) * sizeof(T);
  const lab::CpuCeiling ceiling;  // a bad LAB_STREAMING_STORES exits here
  lab::require_host_memory(2 * bytes, "the input and the output");
  auto in = lab::allocate_host<T>(count, "the input");
  auto out = lab::allocate_host<T>(count, "the output");
  auto step = [&] { permute_on_cpu<T>(in.get(), out.get(), p); };
  const lab::CpuFlushScope flushed{{in.get(), bytes}, {out.get(), bytes}};

  const lab::PermuteVerification check =
      lab::verify_permute_every_fill(dtype, in.get(), out.get(), p, step);
  if (!check.ok()) {
    std::fprintf(stderr, "%s (first run): %s\n", STEP_NAME, check.describe().c_str());
    return lab::kExitFailed;
  }

  // The copies (the ceiling: the faster) and the step in turn on the same buffers; the step's
  // last timed run is verified where it ran, into an output poisoned before it (the input holds
  // fill 0).
  const std::size_t copies = ceiling.copies();
  std::vector<std::function<void()>> pieces;
  ceiling.add_copies(pieces, in.get(), out.get(), bytes);
  pieces.push_back(step);
  lab::PermuteVerification timed_check;
  const std::vector<double> medians_ms = lab::median_cpu_ms_alternating(
      pieces, options.reps,
      [&](std::size_t piece) {
        if (piece == copies) lab::poison_permute_output(out.get(), p, dtype, 0);
      },
      [&](std::size_t piece) {
        if (piece == copies) timed_check = lab::verify_permute(out.get(), in.get(), p);
      });
  const double ceiling_ms = ceiling.ms(medians_ms);

  const int threads = omp_get_max_threads();
  lab::Measurement m =
      lab::permute_measurement(STEP_NAME, "cpu", "blocked", lab::cpu_model_name(), dtype, p);
  m.threads = threads;
  m.launch = kStepLaunch;
  m.reps = options.reps;
  m.summary = kStepSummary;
  m.median_ms = medians_ms[copies];
  m.e2e_ms = m.median_ms;  // no transfers on the CPU: end to end is the permutation itself
  m.verified = timed_check.ok();
  lab::set_bandwidth(m, ceiling_ms);
  m.ceiling_kind = lab::kOpenmpCopyCeiling;

  lab::print_context(
      std::string(STEP_NAME) + ": " + kStepSummary,
      {"device   " + lab::cpu_model_name() + ", " + std::to_string(threads) + " OpenMP threads",
       lab::tensor_line(p, dtype, options.reps, "runs"), "fusion   " + lab::explain(p),
       "check    first run " + check.describe(),
       "         last timed run (fill 1): " + timed_check.describe(), ceiling.line(),
       lab::cpu_flush_line()});
  std::vector<lab::TableRow> table{lab::table_row(m)};
  const std::vector<lab::TableRow> copy_rows =
      ceiling.table_rows(m.rows, m.cols, dtype.bytes, medians_ms);
  table.insert(table.end(), copy_rows.begin(), copy_rows.end());
  lab::print_table(table);
  if (!options.csv_path.empty()) lab::append_permute_csv(options.csv_path, {m}, p);
  if (!timed_check.ok()) {
    std::fprintf(stderr, "%s (last timed run): %s\n", STEP_NAME, timed_check.describe().c_str());
    return lab::kExitFailed;
  }
  return lab::kExitOk;
}

}  // namespace

int main(int argc, char** argv) {
  return lab::run_each_permute_case(
      argc, argv, std::string(STEP_NAME) + "/transpose", lab::kDefaultCpuReps,
      "on the CPU (OMP_NUM_THREADS threads)", [](const lab::PermuteOptions& options) {
        return lab::with_storage_type(
            options.dtype->bytes, [&](auto element) { return run<decltype(element)>(options); });
      });
}
