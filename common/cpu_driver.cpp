// main() for CPU steps: parse, fill, verify every variant, time it against an OpenMP copy of the
// same bytes (the ceiling), print the table and the CSV rows. Verified (docs/verification.md):
// every fill's first run of each variant, and each variant's last timed run, into an output
// poisoned from the fill just before that variant's last pair of runs.
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
#include "cpu_step.hpp"
#include "host_memory.hpp"
#include "report.hpp"
#include "step_info.hpp"
#include "streaming_copy.hpp"
#include "timer.hpp"

namespace {

using lab::Index;

std::vector<const lab::CpuVariant*> selected_variants(const std::string& choice) {
  std::vector<const lab::CpuVariant*> selected;
  for (int i = 0; i < kCpuVariantCount; ++i)
    if (choice == "all" || choice == kCpuVariants[i].name) selected.push_back(&kCpuVariants[i]);
  return selected;
}

template <class T>
int run(const lab::Options& options) {
  const lab::Dtype& dtype = *options.dtype;
  const Index rows = options.rows, cols = options.cols, count = rows * cols;
  const std::size_t bytes = lab::matrix_bytes(rows, cols, sizeof(T));
  const lab::CpuCeiling ceiling;  // a bad LAB_STREAMING_STORES exits here
  lab::require_host_memory(2 * bytes, "the input and the output");
  auto in = lab::allocate_host<T>(count, "the input");
  auto out = lab::allocate_host<T>(count, "the output");
  const std::vector<const lab::CpuVariant*> selected = selected_variants(options.variant);
  const lab::CpuFlushScope flushed{{in.get(), bytes}, {out.get(), bytes}};

  // Correct first: every selected variant is verified, with every fill, before anything is timed.
  for (const lab::CpuVariant* variant : selected) {
    const lab::Verification check =
        lab::verify_every_fill(dtype, in.get(), out.get(), rows, cols,
                               [&] { variant->transpose<T>()(in.get(), out.get(), rows, cols); });
    if (!check.ok()) {
      std::fprintf(stderr, "%s %s: %s\n", STEP_NAME, variant->name, check.describe().c_str());
      return lab::kExitFailed;
    }
  }

  // The copies (the ceiling: the faster) and every variant timed in turn, each on the same
  // buffers. The input holds fill 0. Each variant's last timed run is verified where it ran,
  // before the next piece overwrites it; the output was poisoned just before that variant's last
  // pair of runs.
  const int threads = omp_get_max_threads();
  const std::size_t copies = ceiling.copies();
  std::vector<std::function<void()>> pieces;
  ceiling.add_copies(pieces, in.get(), out.get(), bytes);
  for (const lab::CpuVariant* variant : selected)
    pieces.push_back([&, variant] { variant->transpose<T>()(in.get(), out.get(), rows, cols); });
  std::vector<lab::Verification> timed_checks(selected.size());
  const std::vector<double> medians_ms = lab::median_cpu_ms_alternating(
      pieces, options.reps,
      [&](std::size_t p) {
        if (p >= copies) lab::poison_output(out.get(), rows, cols, dtype, 0);
      },
      [&](std::size_t p) {
        if (p >= copies)
          timed_checks[p - copies] = lab::verify_transpose(out.get(), in.get(), rows, cols);
      });
  const double ceiling_ms = ceiling.ms(medians_ms);

  std::vector<lab::Measurement> results;
  for (std::size_t v = 0; v < selected.size(); ++v) {
    const lab::CpuVariant* variant = selected[v];
    lab::Measurement m =
        lab::step_measurement(variant->name, lab::cpu_model_name(), dtype, rows, cols);
    m.threads = threads;
    m.launch = variant->launch;
    if (variant->streams != nullptr)
      m.launch += variant->streams(rows, cols, sizeof(T), out.get()) ? ", streaming stores"
                                                                     : ", plain stores";
    m.reps = options.reps;
    m.summary = kStepSummary;
    m.median_ms = medians_ms[copies + v];
    m.e2e_ms = m.median_ms;  // no transfers on the CPU: end to end is the transpose itself
    const lab::Verification& recheck = timed_checks[v];
    m.verified = recheck.ok();
    lab::set_bandwidth(m, ceiling_ms);
    m.ceiling_kind = lab::kOpenmpCopyCeiling;
    results.push_back(m);
    if (!recheck.ok())
      std::fprintf(stderr, "%s %s: last timed run: %s\n", STEP_NAME, variant->name,
                   recheck.describe().c_str());
  }

  const int fills = lab::fills_needed(dtype, count);
  lab::print_context(
      std::string(STEP_NAME) + ": " + kStepSummary,
      {"device   " + lab::cpu_model_name() + ", " + std::to_string(threads) + " OpenMP threads",
       lab::matrix_line(rows, cols, dtype.name, dtype.bytes, options.reps, "runs"),
       "check    each variant bitwise, all " + std::to_string(count) +
           " elements: the first run of " +
           (fills == 1 ? std::string("the fill") : "each of " + std::to_string(fills) + " fills") +
           ", then the last timed run (fill 1), each into a poisoned output",
       ceiling.line(), lab::cpu_flush_line()});
  std::vector<lab::TableRow> table;
  for (const lab::Measurement& m : results) table.push_back(lab::table_row(m));
  const std::vector<lab::TableRow> copy_rows =
      ceiling.table_rows(rows, cols, dtype.bytes, medians_ms);
  table.insert(table.end(), copy_rows.begin(), copy_rows.end());
  lab::print_table(table);

  if (!options.csv_path.empty()) lab::append_csv(options.csv_path, results);
  for (const lab::Measurement& m : results)
    if (!m.verified) return lab::kExitFailed;
  return lab::kExitOk;
}

}  // namespace

int main(int argc, char** argv) {
  std::vector<std::string> names;
  for (int i = 0; i < kCpuVariantCount; ++i) names.push_back(kCpuVariants[i].name);
  return lab::run_each_matrix_case(
      argc, argv, lab::step_cli_spec(names, lab::kDefaultCpuReps), [](const lab::Options& options) {
        return lab::with_storage_type(
            options.dtype->bytes, [&](auto element) { return run<decltype(element)>(options); });
      });
}
