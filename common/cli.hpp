// Command line shared by every step: transpose [ROWS [COLS]] [options].
#pragma once

#include <stdexcept>
#include <string>
#include <vector>

#include "dtype.hpp"

namespace lab {

struct Options {
  int rows = 0;
  int cols = 0;
  int reps = 0;
  const Dtype* dtype = nullptr;  // never null after parsing: float32 unless --dtype says
  std::string variant;           // one name of CliSpec::variants or "all" (also without variants)
  std::string csv_path;          // empty: no CSV
};

struct CliSpec {
  std::string program;                // e.g. "CUDA.v3/transpose"
  std::vector<std::string> variants;  // empty: the step has one kernel and no --variant
  int default_reps = 0;
  std::string dtypes;           // the element types the step supports, space-separated; empty: all
  std::string default_variant;  // what runs without --variant; empty: every variant ("all")
  std::string action = "Transposes";  // what the program does to the matrix, for the usage
  bool openmp = false;                // the usage says that OMP_NUM_THREADS sets the threads
};

// Parses argv; on --help prints usage and exits 0, on --list-variants prints the variant names
// (one a line, none for a step without variants: what the runners ask) and exits 0, on bad input
// prints the reason and usage to stderr and exits kExitUsage. Never returns a half-valid Options.
Options parse_options_or_exit(int argc, char** argv, const CliSpec& spec);

std::string usage_text(const CliSpec& spec);

// What every program's parser shares (this one and chapter 3's, common/permute.cpp).
// A bad command line: the message is printed with the usage, and the program exits kExitUsage.
struct UsageError : std::runtime_error {
  using std::runtime_error::runtime_error;
};
// Strict: digits only (no sign, no spaces, no trailing garbage), 1..max.
long long parse_count(const std::string& text, const std::string& what, long long max);
// --dtype NAME: the type, or a UsageError listing every name.
const Dtype& dtype_option(const std::string& name);
// --csv FILE: the file name, or a UsageError when it is empty.
std::string csv_option(const std::string& path);

}  // namespace lab
