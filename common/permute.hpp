// Chapter 3: any permutation of the axes of an N-d tensor. The problem, written once for every
// step of the chapter: the shape and the permutation (parsed from the command line), axis fusion,
// the fills and the poison on the linear input index, and the exact verifier. Usable from host
// C++ and from the host side of CUDA.
//
// The definition. The input is row-major with extents shape[0..rank) (outermost first). Output
// axis k is input axis perm[k], so the output has extents shape[perm[0]], shape[perm[1]], ... and
//   out[index of (i_perm[0], i_perm[1], ...)] == in[index of (i_0, i_1, ...)]
// as numpy.transpose and torch.permute define it. A matrix transpose is shape (R, C), perm (1, 0).
//
// Fusion. Two input axes that are neighbours in the input and stay neighbours, in the same order,
// in the output move as one axis of their product: (64, 3, 224, 224) perm (0, 2, 3, 1) is
// (64, 3, 50176) perm (0, 2, 1), a batch of 64 transposes of 3 x 50176. Axes of extent 1 move
// nothing and are dropped first. Every element lands where it did: fusion changes the indexing,
// never the result.
#pragma once

#include <cstdint>
#include <cstdio>
#include <string>
#include <vector>

#include "cli.hpp"
#include "config.hpp"
#include "dtype.hpp"
#include "matrix.hpp"
#include "report.hpp"

namespace lab {

constexpr int kMaxPermuteRank = 8;

struct Permutation {
  int rank = 0;
  Index shape[kMaxPermuteRank] = {};  // input extents, outermost first
  int perm[kMaxPermuteRank] = {};     // output axis k is input axis perm[k]

  Index elements() const;
  Index out_extent(int k) const { return shape[perm[k]]; }
  // Elements between neighbours along input axis a: the product of the extents inside it.
  Index in_stride(int a) const;
  // The output axis that input axis a becomes (perm[k] == a).
  int out_axis(int a) const;
  // The stride of input axis a in the output: the product of the output extents inside it.
  Index out_stride(int a) const;
  std::string shape_text() const;  // "64x3x224x224": the CSV's shape column
  std::string perm_text() const;   // "0,2,3,1": the CSV's perm column
};

// Axes of extent 1 dropped, then neighbours in both orders merged (the header says why). The
// result has rank >= 1: a tensor of one element is the shape (1), perm (0).
Permutation fuse_axes(const Permutation& p);

// One line for --explain: the problem, its fused form and what that form is (a copy, a batch of
// transposes, a general permutation).
std::string explain(const Permutation& p);

// The command line of every program of the chapter:
//   transpose [ROWS COLS] [--shape D0,D1,... --perm P0,P1,...] [--dtype T] [--reps N] [--csv F]
//             [--explain]
// ROWS COLS is the short form of --shape ROWS,COLS --perm 1,0.
struct PermuteOptions {
  Permutation problem;
  const Dtype* dtype = nullptr;  // never null after parsing
  int reps = 0;
  std::string csv_path;
  bool explain = false;  // print the fused form and exit, no run
};

// Parses argv; --help prints the usage and exits 0; bad input (not a permutation of 0..N-1, a
// length mismatch, a zero, negative or non-numeric extent, more than kMaxPermuteRank axes, more
// bytes than 64 bits count) prints one line on stderr and exits kExitUsage. `program` names the
// step in the messages, `action` says what it runs on (the CPU, the GPU) in the usage.
PermuteOptions parse_permute_options_or_exit(int argc, char** argv, const std::string& program,
                                             int default_reps, const std::string& action);

// run_each_case (cli.hpp) for chapter 3's steps: each case parsed as above, then --explain
// printed, or run(options).
template <class Run>
int run_each_permute_case(int argc, char** argv, const std::string& program, int default_reps,
                          const std::string& action, Run&& run) {
  return run_each_case(
      argc, argv, program,
      [&](int count, char** args, const std::string& named) {
        return parse_permute_options_or_exit(count, args, named, default_reps, action);
      },
      [&](const PermuteOptions& options) {
        if (!options.explain) return run(options);
        std::printf("%s\n", explain(options.problem).c_str());
        return static_cast<int>(kExitOk);
      });
}

// Where output element o reads from: the linear input index of the definition. Walks the output
// in order (an odometer over its multi-index), so a whole pass costs one add per element.
class SourceWalk {
 public:
  SourceWalk(const Permutation& p, Index first_output);
  Index source() const { return source_; }
  void next();

 private:
  int rank_;
  Index extent_[kMaxPermuteRank], stride_[kMaxPermuteRank], index_[kMaxPermuteRank];
  Index source_;
};

// The input of fill `fill`: element i holds fill_value(type, fill, i) (common/matrix.hpp).
template <class T>
void fill_permute_input(T* in, const Permutation& p, const Dtype& type, int fill);

// Every output element set to the complement of the value it must receive in fill `fill`.
template <class T>
void poison_permute_output(T* out, const Permutation& p, const Dtype& type, int fill);

struct PermuteVerification {
  Index checked = 0;
  Index wrong = 0;
  std::vector<Index> first;  // the first wrong output element's multi-index, outermost first
  std::string got, want;     // its bits and the wanted bits, in hex
  int fill = 0, fills = 1;
  bool ok() const { return wrong == 0; }
  std::string describe() const;  // one line: "verified ..." or "verification FAILED ..."
};

// Bitwise: every out[o] against in[source of o], by the definition (SourceWalk), on the problem
// as given (never its fused form).
template <class T>
PermuteVerification verify_permute(const T* out, const T* in, const Permutation& p);

// Correct first, as matrix.hpp's verify_every_fill: for each fill, the last filled being fill 0,
// fill `in`, poison `out`, produce() (which owns any device copies), verify; stops at the first
// failing fill.
template <class T, class Produce>
PermuteVerification verify_permute_every_fill(const Dtype& type, T* in, T* out,
                                              const Permutation& p, Produce&& produce) {
  const int fills = fills_needed(type, p.elements());
  PermuteVerification check;
  for (int fill = fills - 1; fill >= 0; --fill) {
    fill_permute_input(in, p, type, fill);
    poison_permute_output(out, p, type, fill);
    produce();
    check = verify_permute(out, in, p);
    check.fill = fill;
    check.fills = fills;
    if (!check.ok()) break;
  }
  return check;
}

// The CSV: the lab's schema (common/report.hpp) with two columns appended, shape and perm. Rows
// and cols hold the input seen as a matrix of its innermost axis (rows * cols = elements: what the
// bandwidth counts). Refuses (exit 1) a file whose header is another schema.
extern const char* const kPermuteCsvColumns;  // ",shape,perm"
void append_permute_csv(const std::string& path, const std::vector<Measurement>& rows,
                        const Permutation& p);

// A result row of a step of the chapter: kind is what the results tools read ("cpu" measured
// against an OpenMP copy, "kernel" against a device copy); rows x cols the input as a matrix of its
// innermost axis.
Measurement permute_measurement(const char* step, const char* kind, std::string variant,
                                std::string device, const Dtype& type, const Permutation& p);

// "tensor   64x3x224x224 -> 64x224x224x3 (perm 0,2,3,1) float32, 36.8 MiB each; median of ..."
std::string tensor_line(const Permutation& p, const Dtype& type, int reps, const char* runs);

}  // namespace lab
