#include "permute.hpp"

#include <omp.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <stdexcept>
#include <utility>

#include "cli.hpp"
#include "config.hpp"
#include "timer.hpp"

namespace lab {
namespace {

// The verifier and the poison walk the output in pieces of this many elements, one thread each.
constexpr Index kWalkChunk = Index{1} << 16;
// No byte count of a tensor may pass this: sizes stay far from 64-bit overflow.
constexpr long double kMaxBytes = static_cast<long double>(std::uint64_t{1} << 62);

std::string join(const Index* values, int count, const char* separator) {
  std::string text;
  for (int i = 0; i < count; ++i) text += (i == 0 ? "" : separator) + std::to_string(values[i]);
  return text;
}

// "64,3,224,224" -> its fields; an empty field (",," or a trailing comma) is an error.
std::vector<std::string> fields_of(const std::string& text, const std::string& flag) {
  std::vector<std::string> fields;
  std::size_t start = 0;
  while (true) {
    const std::size_t comma = text.find(',', start);
    fields.push_back(text.substr(start, comma - start));
    if (fields.back().empty())
      throw UsageError(flag + " '" + text + "' has an empty field (give numbers separated by ',')");
    if (comma == std::string::npos) break;
    start = comma + 1;
  }
  if (fields.size() > static_cast<std::size_t>(kMaxPermuteRank))
    throw UsageError(flag + " '" + text + "' has " + std::to_string(fields.size()) +
                     " axes; at most " + std::to_string(kMaxPermuteRank));
  return fields;
}

Permutation parse_problem(const std::string& shape_text, const std::string& perm_text) {
  Permutation p;
  const std::vector<std::string> extents = fields_of(shape_text, "--shape");
  const std::vector<std::string> axes = fields_of(perm_text, "--perm");
  p.rank = static_cast<int>(extents.size());
  for (int a = 0; a < p.rank; ++a)
    p.shape[a] = parse_count(extents[a], "extent " + std::to_string(a) + " of --shape",
                             std::int64_t{1} << 62);
  if (static_cast<int>(axes.size()) != p.rank)
    throw UsageError("--perm " + perm_text + " has " + std::to_string(axes.size()) +
                     " axes and --shape " + shape_text + " has " + std::to_string(p.rank) +
                     ": give one axis of --perm per extent");
  bool seen[kMaxPermuteRank] = {};
  for (int k = 0; k < p.rank; ++k) {
    const std::string& field = axes[k];
    const bool digits = field.find_first_not_of("0123456789") == std::string::npos;
    const long value = digits && field.size() < 3 ? std::strtol(field.c_str(), nullptr, 10) : -1;
    if (value < 0 || value >= p.rank || seen[value])
      throw UsageError("--perm " + perm_text + " is not a permutation of 0.." +
                       std::to_string(p.rank - 1) + " (each axis once)");
    seen[value] = true;
    p.perm[k] = static_cast<int>(value);
  }
  return p;
}

std::string usage(const std::string& program, int default_reps, const std::string& action) {
  return "usage: " + program +
         " [ROWS [COLS]] [--shape D0,D1,... --perm P0,P1,...] [--dtype NAME] [--reps N]\n"
         "       [--csv FILE] [--cases FILE] [--explain]\n"
         "  Permutes the axes of a row-major tensor " +
         action +
         ": output axis k is input axis Pk (numpy.transpose,\n"
         "  torch.permute), 1 to " +
         std::to_string(kMaxPermuteRank) +
         " axes. ROWS COLS is short for --shape ROWS,COLS --perm 1,0 (default " +
         std::to_string(kDefaultSize) + " x " + std::to_string(kDefaultSize) +
         ").\n"
         "  Verifies the result bitwise, then times it (median of N runs, default " +
         std::to_string(default_reps) +
         ") next to the copy ceiling.\n"
         "  --dtype NAME  the element type, default float32: " +
         dtype_names(" ") +
         "\n"
         "  --csv FILE    append one row per measurement to FILE (header written once)\n" +
         std::string(kCasesUsage) +
         "  --explain     print the problem after axis fusion and exit\n";
}

std::string csv_quoted(const std::string& text) {
  return text.find(',') == std::string::npos ? text : "\"" + text + "\"";
}

}  // namespace

Index Permutation::elements() const {
  Index count = 1;
  for (int a = 0; a < rank; ++a) count *= shape[a];
  return count;
}

Index Permutation::in_stride(int a) const {
  Index stride = 1;
  for (int inner = a + 1; inner < rank; ++inner) stride *= shape[inner];
  return stride;
}

int Permutation::out_axis(int a) const {
  for (int k = 0; k < rank; ++k)
    if (perm[k] == a) return k;
  return -1;
}

Index Permutation::out_stride(int a) const {
  Index stride = 1;
  for (int k = out_axis(a) + 1; k < rank; ++k) stride *= out_extent(k);
  return stride;
}

std::string Permutation::shape_text() const {
  return join(shape, rank, "x");
}

std::string Permutation::perm_text() const {
  Index axes[kMaxPermuteRank];
  for (int k = 0; k < rank; ++k) axes[k] = perm[k];
  return join(axes, rank, ",");
}

Permutation fuse_axes(const Permutation& p) {
  // Axes of extent 1 dropped: the others renumbered in input order.
  int renumbered[kMaxPermuteRank];
  Permutation kept;
  for (int a = 0; a < p.rank; ++a) {
    renumbered[a] = -1;
    if (p.shape[a] > 1) {
      renumbered[a] = kept.rank;
      kept.shape[kept.rank++] = p.shape[a];
    }
  }
  if (kept.rank == 0) {
    Permutation one;
    one.rank = 1;
    one.shape[0] = 1;
    return one;
  }
  int k_kept = 0;
  for (int k = 0; k < p.rank; ++k)
    if (renumbered[p.perm[k]] >= 0) kept.perm[k_kept++] = renumbered[p.perm[k]];

  // Runs of output axes that are consecutive input axes in the same order: one axis each.
  // group_of[a]: the run input axis a belongs to, numbered in output order.
  int group_of[kMaxPermuteRank], groups = 0;
  for (int k = 0; k < kept.rank; ++k) {
    const bool continues = k > 0 && kept.perm[k] == kept.perm[k - 1] + 1;
    if (!continues) ++groups;
    group_of[kept.perm[k]] = groups - 1;
  }
  // The fused input axes, in input order: each run's extent is the product of its axes'.
  Permutation fused;
  int fused_axis_of_group[kMaxPermuteRank];
  for (int a = 0; a < kept.rank; ++a) {
    const int g = group_of[a];
    if (a == 0 || group_of[a - 1] != g) {
      fused_axis_of_group[g] = fused.rank;
      fused.shape[fused.rank++] = 1;
    }
    fused.shape[fused.rank - 1] *= kept.shape[a];
  }
  for (int g = 0; g < groups; ++g) fused.perm[g] = fused_axis_of_group[g];
  return fused;
}

std::string explain(const Permutation& p) {
  const Permutation f = fuse_axes(p);
  std::string what;
  const Index inner = f.shape[f.rank - 1];
  if (f.rank == 1) {
    what = "a copy of " + std::to_string(inner) + " elements";
  } else if (f.perm[f.rank - 1] == f.rank - 1) {
    what = "runs of " + std::to_string(inner) + " contiguous elements moved whole";
  } else if (f.rank == 2) {
    what = "a transpose of " + std::to_string(f.shape[0]) + " x " + std::to_string(f.shape[1]);
  } else if (f.rank == 3 && f.perm[0] == 0 && f.perm[1] == 2 && f.perm[2] == 1) {
    what = "a batch of " + std::to_string(f.shape[0]) + " transposes of " +
           std::to_string(f.shape[1]) + " x " + std::to_string(f.shape[2]);
  } else {
    what = "a permutation of " + std::to_string(f.rank) + " axes";
  }
  return "shape " + p.shape_text() + " perm " + p.perm_text() + " fuses to shape " +
         f.shape_text() + " perm " + f.perm_text() + ": " + what;
}

PermuteOptions parse_permute_options_or_exit(int argc, char** argv, const std::string& program,
                                             int default_reps, const std::string& action) {
  PermuteOptions options;
  options.reps = default_reps;
  try {
    std::vector<std::string> sizes;
    std::string shape_text, perm_text;
    auto value_of = [&](int& i, const std::string& flag) -> std::string {
      if (i + 1 >= argc) throw UsageError(flag + " needs a value");
      return argv[++i];
    };
    for (int i = 1; i < argc; ++i) {
      const std::string arg = argv[i];
      if (arg == "--help" || arg == "-h") {
        std::fputs(usage(program, default_reps, action).c_str(), stdout);
        std::exit(kExitOk);
      } else if (arg == "--shape") {
        shape_text = value_of(i, arg);
      } else if (arg == "--perm") {
        perm_text = value_of(i, arg);
      } else if (arg == "--reps") {
        options.reps = static_cast<int>(parse_count(value_of(i, arg), "--reps", kMaxReps));
      } else if (arg == "--dtype") {
        options.dtype = &dtype_option(value_of(i, arg));
      } else if (arg == "--csv") {
        options.csv_path = csv_option(value_of(i, arg));
      } else if (arg == "--explain") {
        options.explain = true;
      } else if (arg.size() > 1 && arg[0] == '-') {
        throw UsageError("unknown option '" + arg + "'");
      } else {
        sizes.push_back(arg);
      }
    }
    if (!sizes.empty() && (!shape_text.empty() || !perm_text.empty()))
      throw UsageError("give ROWS COLS or --shape and --perm, not both");
    if (sizes.size() > 2)
      throw UsageError("too many sizes: give ROWS and COLS at most, got " +
                       std::to_string(sizes.size()));
    if (shape_text.empty() != perm_text.empty())
      throw UsageError(shape_text.empty() ? "--perm needs --shape" : "--shape needs --perm");
    if (shape_text.empty()) {
      const Index rows = sizes.empty() ? kDefaultSize : parse_count(sizes[0], "ROWS", INT32_MAX);
      const Index cols = sizes.size() < 2 ? rows : parse_count(sizes[1], "COLS", INT32_MAX);
      shape_text = std::to_string(rows) + "," + std::to_string(cols);
      perm_text = "1,0";
    }
    options.problem = parse_problem(shape_text, perm_text);
    if (options.dtype == nullptr) options.dtype = &default_dtype();
    long double bytes = 2.0L * options.dtype->bytes;
    for (int a = 0; a < options.problem.rank; ++a) bytes *= options.problem.shape[a];
    if (bytes > kMaxBytes) {
      char needed[64];
      std::snprintf(needed, sizeof needed, "%.0Lf", bytes);
      throw UsageError("shape " + options.problem.shape_text() + " of " + options.dtype->name +
                       " needs " + needed + " bytes for the input and the output: more than 2^62");
    }
  } catch (const UsageError& error) {
    std::fprintf(stderr, "%s: error: %s (--help for usage)\n", program.c_str(), error.what());
    std::exit(kExitUsage);
  }
  return options;
}

SourceWalk::SourceWalk(const Permutation& p, Index first_output) : rank_(p.rank), source_(0) {
  Index rest = first_output;
  for (int k = rank_ - 1; k >= 0; --k) {
    extent_[k] = p.out_extent(k);
    stride_[k] = p.in_stride(p.perm[k]);
    index_[k] = rest % extent_[k];
    rest /= extent_[k];
    source_ += index_[k] * stride_[k];
  }
}

void SourceWalk::next() {
  int k = rank_ - 1;
  ++index_[k];
  source_ += stride_[k];
  while (index_[k] == extent_[k] && k > 0) {
    source_ -= extent_[k] * stride_[k];
    index_[k] = 0;
    --k;
    ++index_[k];
    source_ += stride_[k];
  }
}

template <class T>
void fill_permute_input(T* in, const Permutation& p, const Dtype& type, int fill) {
  fill_input(in, 1, p.elements(), type, fill);  // the linear input index: the matrix fill's
}

template <class T>
void poison_permute_output(T* out, const Permutation& p, const Dtype& type, int fill) {
  const Index count = p.elements(), chunks = (count + kWalkChunk - 1) / kWalkChunk;
#pragma omp parallel for schedule(static)
  for (Index chunk = 0; chunk < chunks; ++chunk) {
    const Index end = std::min(count, (chunk + 1) * kWalkChunk);
    SourceWalk walk(p, chunk * kWalkChunk);
    for (Index o = chunk * kWalkChunk; o < end; ++o, walk.next())
      out[o] = poison_value<T>(type, fill, walk.source());
  }
}

template <class T>
PermuteVerification verify_permute(const T* out, const T* in, const Permutation& p) {
  PermuteVerification result;
  const Index count = p.elements(), chunks = (count + kWalkChunk - 1) / kWalkChunk;
  result.checked = count;
  Index wrong = 0, first = count;  // first: the lowest wrong output index
#pragma omp parallel for schedule(static) reduction(+ : wrong) reduction(min : first)
  for (Index chunk = 0; chunk < chunks; ++chunk) {
    const Index end = std::min(count, (chunk + 1) * kWalkChunk);
    SourceWalk walk(p, chunk * kWalkChunk);
    for (Index o = chunk * kWalkChunk; o < end; ++o, walk.next()) {
      if (std::memcmp(out + o, in + walk.source(), sizeof(T)) == 0) continue;
      ++wrong;
      first = std::min(first, o);
    }
  }
  result.wrong = wrong;
  if (wrong != 0) {
    result.first.assign(p.rank, 0);
    Index rest = first;
    for (int k = p.rank - 1; k >= 0; --k) {
      result.first[k] = rest % p.out_extent(k);
      rest /= p.out_extent(k);
    }
    result.got = bits_in_hex(out + first, sizeof(T));
    result.want = bits_in_hex(in + SourceWalk(p, first).source(), sizeof(T));
  }
  return result;
}

std::string PermuteVerification::describe() const {
  const std::string where =
      "index (" + join(first.data(), static_cast<int>(first.size()), ", ") + ")";
  return describe_verification(checked, wrong, fill, fills, "the definition", where, got, want);
}

const char* const kPermuteCsvColumns = ",shape,perm";

void append_permute_csv(const std::string& path, const std::vector<Measurement>& rows,
                        const Permutation& p) {
  append_csv(path, rows, kPermuteCsvColumns,
             "," + p.shape_text() + "," + csv_quoted(p.perm_text()));
}

Measurement permute_measurement(const char* step, const char* kind, std::string variant,
                                std::string device, const Dtype& type, const Permutation& p) {
  Measurement m;
  m.step = step;
  m.variant = std::move(variant);
  m.device = std::move(device);
  m.dtype = type.name;
  m.elem_bytes = type.bytes;
  m.kind = kind;
  m.cols = p.shape[p.rank - 1];
  m.rows = p.elements() / m.cols;
  return m;
}

std::string tensor_line(const Permutation& p, const Dtype& type, int reps, const char* runs) {
  Permutation out_shape;  // only for its text
  out_shape.rank = p.rank;
  for (int k = 0; k < p.rank; ++k) out_shape.shape[k] = p.out_extent(k);
  char line[512];
  std::snprintf(line, sizeof line,
                "tensor   %s perm %s -> %s %s, %.1f MiB each; median of %d %s after >= %.0f ms "
                "of warm-up",
                p.shape_text().c_str(), p.perm_text().c_str(), out_shape.shape_text().c_str(),
                type.name, static_cast<double>(p.elements()) * type.bytes / 1048576.0, reps, runs,
                min_warmup_ms());
  return line;
}

#define LAB_INSTANTIATE(T)                                                           \
  template void fill_permute_input<T>(T*, const Permutation&, const Dtype&, int);    \
  template void poison_permute_output<T>(T*, const Permutation&, const Dtype&, int); \
  template PermuteVerification verify_permute<T>(const T*, const T*, const Permutation&);
LAB_INSTANTIATE(Bytes1)
LAB_INSTANTIATE(Bytes2)
LAB_INSTANTIATE(Bytes4)
LAB_INSTANTIATE(Bytes8)
LAB_INSTANTIATE(Bytes16)
#undef LAB_INSTANTIATE

}  // namespace lab
