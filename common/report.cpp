#include "report.hpp"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <fstream>

#include "config.hpp"
#include "timer.hpp"

namespace lab {

const char* const kCsvHeader =
    "step,variant,device,dtype,elem_bytes,kind,rows,cols,threads,launch,reps,median_ms,gbps,"
    "ceiling_gbps,"
    "pct_of_ceiling,e2e_ms,verified,summary,ceiling_kind,memcpy_gbps";

double effective_gbps(std::int64_t rows, std::int64_t cols, int elem_bytes, double ms) {
  const double bytes = 2.0 * static_cast<double>(rows) * static_cast<double>(cols) * elem_bytes;
  return ms > 0 ? bytes / (ms * 1e-3) / 1e9 : 0.0;
}

void set_bandwidth(Measurement& m, double ceiling_ms) {
  m.gbps = effective_gbps(m.rows, m.cols, m.elem_bytes, m.median_ms);
  m.ceiling_gbps = effective_gbps(m.rows, m.cols, m.elem_bytes, ceiling_ms);
  m.pct_of_ceiling = m.ceiling_gbps > 0 ? 100.0 * m.gbps / m.ceiling_gbps : 0.0;
}

namespace {

std::string csv_field(const std::string& text) {
  if (text.find_first_of(",\"\n") == std::string::npos) return text;
  std::string quoted = "\"";
  for (char ch : text) quoted += ch == '"' ? std::string("\"\"") : std::string(1, ch);
  return quoted + "\"";
}

std::string number(double value, const char* format) {
  char text[64];
  std::snprintf(text, sizeof text, format, value);
  return text;
}

}  // namespace

std::string csv_row(const Measurement& m) {
  return csv_field(m.step) + "," + csv_field(m.variant) + "," + csv_field(m.device) + "," +
         csv_field(m.dtype) + "," + std::to_string(m.elem_bytes) + "," + csv_field(m.kind) + "," +
         std::to_string(m.rows) + "," + std::to_string(m.cols) + "," + std::to_string(m.threads) +
         "," + csv_field(m.launch) + "," + std::to_string(m.reps) + "," +
         number(m.median_ms, "%.6f") + "," + number(m.gbps, "%.6g") + "," +
         number(m.ceiling_gbps, "%.6g") + "," + number(m.pct_of_ceiling, "%.2f") + "," +
         (m.e2e_ms < 0 ? std::string() : number(m.e2e_ms, "%.6f")) + "," +
         (m.verified ? "yes" : "no") + "," + csv_field(m.summary) + "," +
         csv_field(m.ceiling_kind) + "," +
         (m.memcpy_gbps < 0 ? std::string() : number(m.memcpy_gbps, "%.6g"));
}

void append_csv(const std::string& path, const std::vector<Measurement>& rows,
                const std::string& extra_header, const std::string& extra_cells) {
  const std::string header = kCsvHeader + extra_header;
  std::string first_line;
  {
    std::ifstream existing(path);
    std::getline(existing, first_line);
  }
  if (!first_line.empty() && first_line != header) {
    std::fprintf(stderr, "error: %s has another header; refusing to mix schemas in one file\n",
                 path.c_str());
    std::exit(kExitFailed);
  }
  std::ofstream out(path, std::ios::app);
  if (!out) {
    std::fprintf(stderr, "error: cannot write %s\n", path.c_str());
    std::exit(kExitFailed);
  }
  if (first_line.empty()) out << header << "\n";
  for (const Measurement& m : rows) out << csv_row(m) << extra_cells << "\n";
}

void print_context(const std::string& title, const std::vector<std::string>& lines) {
  std::printf("%s\n", title.c_str());
  for (const std::string& line : lines) std::printf("  %s\n", line.c_str());
  std::printf("\n");
}

TableRow table_row(const Measurement& m) {
  return {m.variant,
          m.launch,
          m.median_ms,
          m.gbps,
          m.pct_of_ceiling,
          m.e2e_ms,
          m.verified ? "verified" : "WRONG"};
}

TableRow ceiling_row(std::int64_t rows, std::int64_t cols, int elem_bytes, double ceiling_ms,
                     const std::string& launch) {
  return {"copy", launch, ceiling_ms, effective_gbps(rows, cols, elem_bytes, ceiling_ms),
          100.0,  -1,     "-"};
}

std::vector<TableRow> ceiling_rows(std::int64_t rows, std::int64_t cols, int elem_bytes,
                                   const std::vector<CopyTiming>& copies) {
  double best_ms = copies.front().ms;
  for (const CopyTiming& copy : copies) best_ms = std::min(best_ms, copy.ms);
  std::vector<TableRow> table;
  for (const CopyTiming& copy : copies)
    table.push_back({copy.name, copy.launch + (copy.ms == best_ms ? " (ceiling)" : ""), copy.ms,
                     effective_gbps(rows, cols, elem_bytes, copy.ms), 100.0 * best_ms / copy.ms, -1,
                     copy.check});
  return table;
}

std::string matrix_line(std::int64_t rows, std::int64_t cols, const char* dtype, int elem_bytes,
                        int reps, const char* runs) {
  char line[256];
  std::snprintf(line, sizeof line,
                "matrix   %lld x %lld %s, %.1f MiB each; median of %d %s after >= %.0f ms of "
                "warm-up",
                static_cast<long long>(rows), static_cast<long long>(cols), dtype,
                static_cast<double>(rows) * static_cast<double>(cols) * elem_bytes / 1048576.0,
                reps, runs, min_warmup_ms());
  return line;
}

void print_table(const std::vector<TableRow>& rows) {
  // Columns as wide as their longest entry, so a long launch text does not push the rest.
  int name_width = 9, launch_width = 38;
  for (const TableRow& row : rows) {
    name_width = std::max(name_width, static_cast<int>(row.name.size()));
    launch_width = std::max(launch_width, static_cast<int>(row.launch.size()));
  }
  std::printf("  %-*s %-*s %11s %10s %10s %10s  %s\n", name_width, "what", launch_width, "launch",
              "median ms", "GB/s", "% of copy", "e2e ms", "check");
  for (const TableRow& row : rows) {
    const std::string e2e = row.e2e_ms < 0 ? "-" : number(row.e2e_ms, "%.3f");
    std::printf("  %-*s %-*s %11.4f %10.1f %9.1f%% %10s  %s\n", name_width, row.name.c_str(),
                launch_width, row.launch.c_str(), row.median_ms, row.gbps, row.pct_of_ceiling,
                e2e.c_str(), row.check.c_str());
  }
  std::fflush(stdout);
}

}  // namespace lab
