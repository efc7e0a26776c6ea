#include "cli.hpp"

#include <cerrno>
#include <climits>
#include <cstddef>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <stdexcept>

#include "config.hpp"

namespace lab {
namespace {

// A well-formed request this step cannot serve (a type it lacks): one line, no usage text, since
// the command line itself was right.
struct UnsupportedRequest : UsageError {
  using UsageError::UsageError;
};

int parse_positive(const std::string& text, const char* what, long long max) {
  return static_cast<int>(parse_count(text, what, max));
}

std::string join(const std::vector<std::string>& names, const char* separator) {
  std::string out;
  for (const auto& name : names) out += (out.empty() ? "" : separator) + name;
  return out;
}

bool supports(const CliSpec& spec, const std::string& dtype) {
  if (spec.dtypes.empty()) return true;
  std::istringstream names(spec.dtypes);
  std::string name;
  while (names >> name)
    if (name == dtype) return true;
  return false;
}

// What parse() found besides the options: a request that ends the program at once.
enum class Request { kRun, kHelp, kListVariants };

Options parse(int argc, char** argv, const CliSpec& spec, Request* request) {
  Options options;
  options.reps = spec.default_reps;
  std::vector<std::string> sizes;
  auto value_of = [&](int& i, const std::string& flag) -> std::string {
    if (i + 1 >= argc) throw UsageError(flag + " needs a value");
    return argv[++i];
  };
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if (arg == "--help" || arg == "-h") {
      *request = Request::kHelp;
      return options;
    } else if (arg == "--list-variants") {
      *request = Request::kListVariants;
      return options;
    } else if (arg == "--reps") {
      options.reps = parse_positive(value_of(i, arg), "--reps", kMaxReps);
    } else if (arg == "--dtype") {
      options.dtype = &dtype_option(value_of(i, arg));
    } else if (arg == "--csv") {
      options.csv_path = csv_option(value_of(i, arg));
    } else if (arg == "--variant" && !spec.variants.empty()) {
      options.variant = value_of(i, arg);
      bool known = options.variant == "all";
      for (const auto& name : spec.variants) known = known || options.variant == name;
      if (!known)
        throw UsageError("unknown variant '" + options.variant + "' (choose " +
                         join(spec.variants, ", ") + " or all)");
    } else if (arg.size() > 1 && arg[0] == '-') {
      throw UsageError("unknown option '" + arg + "'");
    } else {
      sizes.push_back(arg);
    }
  }
  if (sizes.size() > 2)
    throw UsageError("too many sizes: give ROWS and COLS at most, got " +
                     std::to_string(sizes.size()));
  options.rows = sizes.empty() ? kDefaultSize : parse_positive(sizes[0], "ROWS", INT_MAX);
  options.cols = sizes.size() < 2 ? options.rows : parse_positive(sizes[1], "COLS", INT_MAX);
  if (options.variant.empty())
    options.variant = spec.default_variant.empty() ? "all" : spec.default_variant;
  if (options.dtype == nullptr) options.dtype = &default_dtype();
  if (!supports(spec, options.dtype->name))
    throw UnsupportedRequest(spec.program + " does not support " + options.dtype->name +
                             " (it supports " + spec.dtypes + ")");
  return options;
}

}  // namespace

long long parse_count(const std::string& text, const std::string& what, long long max) {
  if (text.empty() || text.find_first_not_of("0123456789") != std::string::npos)
    throw UsageError(what + " must be a positive whole number, got '" + text + "'");
  errno = 0;
  const long long value = std::strtoll(text.c_str(), nullptr, 10);
  if (errno == ERANGE || value > max)
    throw UsageError(what + " is too large: '" + text + "' (at most " + std::to_string(max) + ")");
  if (value == 0) throw UsageError(what + " must be at least 1, got '" + text + "'");
  return value;
}

const Dtype& dtype_option(const std::string& name) {
  const Dtype* type = find_dtype(name);
  if (type == nullptr)
    throw UsageError("unknown --dtype '" + name + "' (choose " + dtype_names(", ") + ")");
  return *type;
}

std::string csv_option(const std::string& path) {
  if (path.empty()) throw UsageError("--csv needs a file name");
  return path;
}

const char* const kCasesUsage =
    "  --cases FILE  one run per line of FILE, each line's arguments added to these, in one "
    "process\n";

std::vector<CaseLine> cases_or_exit(int argc, char** argv, const std::string& program) {
  std::vector<std::string> common;
  std::string path;
  bool asked = false;
  for (int i = 0; i < argc; ++i) {
    if (std::string(argv[i]) != "--cases") {
      common.push_back(argv[i]);
    } else if (asked || i + 1 >= argc || argv[i + 1][0] == '\0') {
      std::fprintf(stderr, "%s: error: %s\n", program.c_str(),
                   asked ? "--cases given twice" : "--cases needs a file name");
      std::exit(kExitUsage);
    } else {
      asked = true;
      path = argv[++i];
    }
  }
  std::vector<CaseLine> cases;
  if (!asked) return cases;
  std::ifstream file(path);
  if (!file) {
    std::fprintf(stderr, "%s: error: --cases %s cannot be read\n", program.c_str(), path.c_str());
    std::exit(kExitUsage);
  }
  std::string text;
  for (int number = 1; std::getline(file, text); ++number) {
    std::istringstream words(text);
    CaseLine line{common, text, path + " line " + std::to_string(number)};
    std::string word;
    while (words >> word && word[0] != '#') line.args.push_back(word);
    if (line.args.size() > common.size()) cases.push_back(line);
  }
  if (cases.empty()) {
    std::fprintf(stderr, "%s: error: --cases %s holds no case\n", program.c_str(), path.c_str());
    std::exit(kExitUsage);
  }
  return cases;
}

std::string usage_text(const CliSpec& spec) {
  std::string text = "usage: " + spec.program + " [ROWS [COLS]]";
  if (!spec.variants.empty()) text += " [--variant " + join(spec.variants, "|") + "|all]";
  text += " [--dtype NAME] [--reps N] [--csv FILE]";
  text += spec.cases ? " [--cases FILE]\n" : "\n";
  text += "  " + spec.action + " a ROWS x COLS matrix (default " + std::to_string(kDefaultSize) +
          " x " + std::to_string(kDefaultSize) + "; COLS defaults to ROWS),\n";
  text += "  verifies it bitwise, then times it (median of N runs, default " +
          std::to_string(spec.default_reps) + ") next to the copy ceiling.\n";
  text += "  --dtype NAME  the element type, default float32: " + dtype_names(" ") + "\n";
  if (!spec.dtypes.empty()) text += "               (this step: " + spec.dtypes + ")\n";
  text += "  --csv FILE    append one row per measurement to FILE (header written once)\n";
  if (spec.cases) text += kCasesUsage;
  if (!spec.variants.empty())
    text += "  --variant NAME  which to run, default " +
            (spec.default_variant.empty() ? std::string("all") : spec.default_variant) +
            " (--list-variants prints the names)\n";
  if (spec.openmp) text += "  OMP_NUM_THREADS sets the thread count.\n";
  return text;
}

Options parse_options_or_exit(int argc, char** argv, const CliSpec& spec) {
  Request request = Request::kRun;
  try {
    Options options = parse(argc, argv, spec, &request);
    if (request == Request::kHelp) {
      std::fputs(usage_text(spec).c_str(), stdout);
      std::exit(kExitOk);
    }
    if (request == Request::kListVariants) {
      for (const auto& name : spec.variants) std::puts(name.c_str());
      std::exit(kExitOk);
    }
    // Sizes whose byte counts would overflow 64 bits are refused here, before any size_t math.
    const long double needed = 2.0L * options.rows * options.cols * options.dtype->bytes;
    if (needed > static_cast<long double>(std::size_t{1} << 62)) {
      std::fprintf(stderr,
                   "error: %d x %d %s needs %.0Lf bytes for the input and the output: more than "
                   "any machine has available\n",
                   options.rows, options.cols, options.dtype->name, needed);
      std::exit(kExitNoMemory);
    }
    return options;
  } catch (const UnsupportedRequest& error) {
    std::fprintf(stderr, "%s: error: %s\n", spec.program.c_str(), error.what());
    std::exit(kExitUsage);
  } catch (const UsageError& error) {
    std::fprintf(stderr, "%s: error: %s\n%s", spec.program.c_str(), error.what(),
                 usage_text(spec).c_str());
    std::exit(kExitUsage);
  }
}

}  // namespace lab
