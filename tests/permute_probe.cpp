// Checks chapter 3's verifier (common/permute.cpp) on outputs made here, right or planted wrong,
// so the tests can prove that a wrong permutation cannot pass. The right output is made by a
// scatter over the input (each input element to the output index the definition gives it), not
// by the verifier's gather: the two agree only where both are right.
//   permute_probe MODE DTYPE SHAPE PERM      e.g. permute_probe right uint8 17,19,3 2,0,1
// MODE: right       the permutation itself
//       swapped     perm's last two axes swapped: another permutation of the same shape
//       misplaced   the right output, but element 0 takes the input element 256 places past its
//                   own (for uint8 equal to it in the first fill, told apart in the second)
//       unwritten   the right output, but the last element is left as the poison had it
// Prints the verification's line; exits 0 when it passed, 1 when it failed, 2 on bad arguments.
#include <cstdio>
#include <cstdlib>
#include <string>
#include <utility>

#include "../common/config.hpp"
#include "../common/host_memory.hpp"
#include "../common/permute.hpp"

namespace {

using lab::Index;

// out[index of (i_perm[0], ...)] = in[index of (i_0, ...)], walking the input in order.
template <class T>
void scatter(const T* in, T* out, const lab::Permutation& p) {
  Index index[lab::kMaxPermuteRank] = {}, out_stride[lab::kMaxPermuteRank];
  for (int a = 0; a < p.rank; ++a) out_stride[a] = p.out_stride(a);
  for (Index i = 0; i < p.elements(); ++i) {
    Index o = 0;
    for (int a = 0; a < p.rank; ++a) o += index[a] * out_stride[a];
    out[o] = in[i];
    for (int a = p.rank - 1; a >= 0 && ++index[a] == p.shape[a]; --a) index[a] = 0;
  }
}

template <class T>
int probe(const std::string& mode, const lab::Dtype& type, const lab::Permutation& p) {
  const Index count = p.elements();
  auto in = lab::allocate_host<T>(count, "the input");
  auto out = lab::allocate_host<T>(count, "the output");
  lab::Permutation made = p;
  if (mode == "swapped") std::swap(made.perm[p.rank - 1], made.perm[p.rank - 2]);
  const lab::PermuteVerification check =
      lab::verify_permute_every_fill(type, in.get(), out.get(), p, [&] {
        if (mode == "unwritten") {  // the scatter into a copy, every element but the last kept
          auto full = lab::allocate_host<T>(count, "a copy");
          scatter(in.get(), full.get(), p);
          for (Index o = 0; o + 1 < count; ++o) out[o] = full[o];
          return;
        }
        scatter(in.get(), out.get(), made);
        if (mode == "misplaced") {
          const Index source = lab::SourceWalk(p, 0).source();
          out[0] = in[(source + 256) % count];
        }
      });
  std::printf("%s\n", check.describe().c_str());
  return check.ok() ? lab::kExitOk : lab::kExitFailed;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 5) {
    std::fprintf(stderr,
                 "usage: permute_probe right|swapped|misplaced|unwritten DTYPE SHAPE PERM\n");
    return lab::kExitUsage;
  }
  const std::string mode = argv[1];
  if (mode != "right" && mode != "swapped" && mode != "misplaced" && mode != "unwritten") {
    std::fprintf(stderr, "permute_probe: unknown mode '%s'\n", mode.c_str());
    return lab::kExitUsage;
  }
  char program[] = "permute_probe", shape_flag[] = "--shape", perm_flag[] = "--perm",
       dtype_flag[] = "--dtype";
  char* args[] = {program, shape_flag, argv[3], perm_flag, argv[4], dtype_flag, argv[2], nullptr};
  const lab::PermuteOptions options =
      lab::parse_permute_options_or_exit(7, args, program, 1, "in the probe");
  if ((mode == "swapped" && options.problem.rank < 2) ||
      (mode == "misplaced" && options.problem.elements() <= 256)) {
    std::fprintf(stderr, "permute_probe: %s needs %s\n", mode.c_str(),
                 mode == "swapped" ? "two axes" : "more than 256 elements");
    return lab::kExitUsage;
  }
  return lab::with_storage_type(options.dtype->bytes, [&](auto element) {
    return probe<decltype(element)>(mode, *options.dtype, options.problem);
  });
}
