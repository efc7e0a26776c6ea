// What every program prints: a human table on stdout and, with --csv, one row per measurement in
// the one schema that the tools read (transpose_lab/results_csv.py holds the same column list).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace lab {

// The kinds of ceiling a row is held against: for kernel steps the faster of the device-to-device
// cudaMemcpy and the lab's vector copy kernel; the CPU steps' OpenMP copy; the host pipeline's bus
// (both directions at once); the distributed step's all-to-all.
constexpr const char* kMemcpyCeiling = "memcpy";
constexpr const char* kVectorCopyCeiling = "vector_copy";
constexpr const char* kOpenmpCopyCeiling = "openmp_copy";
constexpr const char* kBusCeiling = "bus";
constexpr const char* kAllToAllCeiling = "all_to_all";

struct Measurement {
  std::string step;     // directory name, e.g. "CUDA.v4"
  std::string variant;  // "naive", "blocked", or "kernel" for one-kernel steps
  std::string device;   // GPU or CPU model name
  std::string dtype;    // the user-facing element type, e.g. "float16"
  int elem_bytes = 0;   // its size: what the bandwidth counts
  std::string kind;     // cpu, kernel, host_pipeline or distributed: what the step is
  std::int64_t rows = 0, cols = 0;
  std::int64_t threads = 0;  // OpenMP threads, or GPU threads launched (0: a library call)
  std::string launch;        // how the work was split: "grid 256x256x1 block 32x8x1"
  int reps = 0;
  double median_ms = 0;
  double gbps = 0;
  double ceiling_gbps = 0;
  double pct_of_ceiling = 0;
  double e2e_ms = -1;  // GPU: host->device + kernel + device->host; CPU: the transpose itself
  bool verified = false;
  std::string summary;  // the step's one-line lesson
  // Which copy ceiling_gbps is (one of the kinds below; results_csv.CEILING_KINDS in Python).
  std::string ceiling_kind;
  double memcpy_gbps = -1;  // the device-to-device cudaMemcpy of the same run; < 0: not timed
};

// Effective bandwidth: every element read once and written once, decimal GB/s.
double effective_gbps(std::int64_t rows, std::int64_t cols, int elem_bytes, double ms);

// Fills gbps, ceiling_gbps and pct_of_ceiling from the times.
void set_bandwidth(Measurement& m, double ceiling_ms);

extern const char* const kCsvHeader;
std::string csv_row(const Measurement& m);

// Appends rows to path, writing the header first when the file is new or empty; refuses (exit 1)
// a file whose header is another schema. A program with columns of its own (chapter 3's shape and
// perm) names them in extra_header (",shape,perm") and gives every row the same extra_cells.
void append_csv(const std::string& path, const std::vector<Measurement>& rows,
                const std::string& extra_header = "", const std::string& extra_cells = "");

struct TableRow {
  std::string name, launch;
  double median_ms, gbps, pct_of_ceiling, e2e_ms;  // e2e_ms < 0: not applicable
  std::string check;
};
void print_context(const std::string& title, const std::vector<std::string>& lines);
void print_table(const std::vector<TableRow>& rows);
TableRow table_row(const Measurement& m);
// The copy ceiling's row of the table: 100% of itself by definition.
TableRow ceiling_row(std::int64_t rows, std::int64_t cols, int elem_bytes, double ceiling_ms,
                     const std::string& launch);
// Copies timed as ceilings, a row each against the fastest: that one, at 100% and with
// " (ceiling)" after its launch, is the ceiling of the rows above.
struct CopyTiming {
  std::string name, launch;
  double ms;
  std::string check;
};
std::vector<TableRow> ceiling_rows(std::int64_t rows, std::int64_t cols, int elem_bytes,
                                   const std::vector<CopyTiming>& copies);
// "matrix   R x C float16, X MiB each; median of N <runs> after >= W ms of warm-up"
std::string matrix_line(std::int64_t rows, std::int64_t cols, const char* dtype, int elem_bytes,
                        int reps, const char* runs);

}  // namespace lab
