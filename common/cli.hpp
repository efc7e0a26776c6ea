// Command line shared by every step: transpose [ROWS [COLS]] [options].
#pragma once

#include <cstddef>
#include <cstdio>
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
  // The program takes --cases FILE; v8 and v9 set up streams or ranks once and do not.
  bool cases = true;
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

// --cases FILE: many runs in one process. Each line of FILE (blank lines and # comments aside)
// holds one run's arguments, added to the command line's own. Every line is parsed before the
// first runs; then they run in turn, each under a "case N of M: LINE" heading, until one fails.
// Why: every process pays for its own CUDA context, about 0.3 s of driver time that processes
// started side by side take in turn, so a suite of thousands of small runs needs few processes.
struct CaseLine {
  std::vector<std::string> args;  // argv[0], the command line's other arguments, the line's
  std::string text;               // the line as written, for its heading
  std::string where;              // "FILE line N", for a message about it
};
// The runs --cases asks for; none when the command line has no --cases (it runs once). A missing
// or unreadable FILE, or one without a case: the reason on stderr, and exit kExitUsage.
std::vector<CaseLine> cases_or_exit(int argc, char** argv, const std::string& program);
// The usage line of --cases, for every program's help.
extern const char* const kCasesUsage;

// Runs parse(argc, argv, program) and then run(options) once, or once per line of --cases FILE,
// where parse names the line in its messages (its program is "PROGRAM (FILE line N)"). Returns
// the first non-zero exit code of a run, else kExitOk.
template <class Parse, class Run>
int run_each_case(int argc, char** argv, const std::string& program, Parse&& parse, Run&& run) {
  const std::vector<CaseLine> cases = cases_or_exit(argc, argv, program);
  if (cases.empty()) return run(parse(argc, argv, program));
  std::vector<decltype(parse(argc, argv, program))> parsed;
  for (const CaseLine& line : cases) {
    std::vector<char*> pointers;
    for (const std::string& arg : line.args) pointers.push_back(const_cast<char*>(arg.c_str()));
    parsed.push_back(parse(static_cast<int>(pointers.size()), pointers.data(),
                           program + " (" + line.where + ")"));
  }
  for (std::size_t i = 0; i < cases.size(); ++i) {
    std::printf("case %zu of %zu: %s\n", i + 1, cases.size(), cases[i].text.c_str());
    std::fflush(stdout);
    const int code = run(parsed[i]);
    std::fflush(stdout);
    if (code != 0) return code;
  }
  return 0;
}

// run_each_case for the matrix steps: the options parsed by `spec`, run(options) for each case.
template <class Run>
int run_each_matrix_case(int argc, char** argv, CliSpec spec, Run&& run) {
  return run_each_case(
      argc, argv, spec.program,
      [&](int count, char** args, const std::string& program) {
        spec.program = program;
        return parse_options_or_exit(count, args, spec);
      },
      run);
}

}  // namespace lab
