// A small front end to common/ so the Python tests can check the harness itself:
//   harness_probe verify ROWS COLS [--wrong R C | --unwritten R C]
//   harness_probe fill-distinct START COUNT
//   harness_probe csv-header
//   harness_probe copies
// verify builds a correct transpose, optionally spoils one output element (R, C in the output),
// runs the verifier and prints its verdict; exit 0 when it passes, 1 when it reports a mismatch.
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <unordered_set>

#include "../common/config.hpp"
#include "../common/host_memory.hpp"
#include "../common/matrix.hpp"
#include "../common/report.hpp"
#include "../common/streaming_copy.hpp"

namespace {

int usage() {
  std::fprintf(stderr,
               "usage: harness_probe verify ROWS COLS [--wrong R C | --unwritten R C]\n"
               "       harness_probe fill-distinct START COUNT\n"
               "       harness_probe csv-header\n"
               "       harness_probe copies\n");
  return lab::kExitUsage;
}

int verify(int argc, char** argv) {
  if (argc != 4 && argc != 7) return usage();
  const lab::Index rows = std::atoll(argv[2]), cols = std::atoll(argv[3]);
  auto in = lab::allocate_host_floats(rows * cols, "input");
  auto out = lab::allocate_host_floats(rows * cols, "output");
  auto reference = lab::allocate_host_floats(rows * cols, "reference");
  lab::fill_input(in.get(), rows, cols);
  lab::reference_transpose(in.get(), reference.get(), rows, cols);
  // An independent transpose straight from the definition, so the reference is checked too.
  lab::poison(out.get(), rows * cols);
  for (lab::Index r = 0; r < rows; ++r)
    for (lab::Index c = 0; c < cols; ++c) out[c * rows + r] = in[r * cols + c];
  if (argc == 7) {
    const lab::Index out_row = std::atoll(argv[5]), out_col = std::atoll(argv[6]);
    float& spoiled = out[out_row * rows + out_col];
    if (std::strcmp(argv[4], "--wrong") == 0)
      spoiled = lab::fill_value(out_row * rows + out_col + 1);  // a real value, wrong place
    else if (std::strcmp(argv[4], "--unwritten") == 0)
      lab::poison(&spoiled, 1);
    else
      return usage();
  }
  const lab::Verification check = lab::verify_transpose(out.get(), reference.get(), rows, cols);
  std::printf("%s\n", check.describe().c_str());
  return check.ok() ? lab::kExitOk : lab::kExitFailed;
}

int fill_distinct(int argc, char** argv) {
  if (argc != 4) return usage();
  const lab::Index start = std::atoll(argv[2]), count = std::atoll(argv[3]);
  std::unordered_set<std::uint32_t> seen;
  for (lab::Index i = start; i < start + count; ++i) {
    const float value = lab::fill_value(i);
    std::uint32_t bits;
    std::memcpy(&bits, &value, sizeof bits);
    if (!std::isnormal(value) || !seen.insert(bits).second) {
      std::printf("element %lld: 0x%08x is %s\n", static_cast<long long>(i), bits,
                  std::isnormal(value) ? "a repeat" : "not a normal float");
      return lab::kExitFailed;
    }
  }
  std::printf("%lld distinct normal floats\n", static_cast<long long>(count));
  return lab::kExitOk;
}

// copy_floats and parallel_copy (the CPU ceiling), streaming and plain, against a plain loop at
// every alignment of the destination and lengths around the vector and line sizes; the bytes
// just outside the destination must stay untouched.
int copies() {
  constexpr int kMaxCount = 70, kMaxOffset = 16, kGuard = 16;
  auto in = lab::allocate_host_floats(kMaxCount + kMaxOffset, "input");
  auto out = lab::allocate_host_floats(kMaxCount + kMaxOffset + 2 * kGuard, "output");
  lab::fill_input(in.get(), 1, kMaxCount + kMaxOffset);
  int cases = 0;
  for (const bool streaming : {false, true}) {
    for (const bool parallel : {false, true}) {
      for (int offset = 0; offset < kMaxOffset; ++offset) {
        for (int count = 0; count <= kMaxCount; ++count) {
          float* dst = out.get() + kGuard + offset;
          const float* src = in.get() + (offset * 7) % kMaxOffset;  // any source alignment
          lab::poison(out.get(), kMaxCount + kMaxOffset + 2 * kGuard);
          if (parallel)
            lab::parallel_copy(src, dst, count, streaming);
          else
            lab::copy_floats(dst, src, count, streaming);
          lab::stream_fence();
          const lab::Verification check = lab::verify_transpose(dst, src, 1, count);
          float poisoned;
          lab::poison(&poisoned, 1);
          const bool guards_intact = std::memcmp(dst - 1, &poisoned, sizeof poisoned) == 0 &&
                                     std::memcmp(dst + count, &poisoned, sizeof poisoned) == 0;
          if (!check.ok() || !guards_intact) {
            std::printf("%s%s copy of %d floats at offset %d: %s\n",
                        streaming ? "streaming" : "plain", parallel ? " parallel" : "", count,
                        offset, guards_intact ? check.describe().c_str() : "wrote outside");
            return lab::kExitFailed;
          }
          ++cases;
        }
      }
    }
  }
  std::printf("%d copies exact\n", cases);
  return lab::kExitOk;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) return usage();
  const std::string command = argv[1];
  if (command == "verify") return verify(argc, argv);
  if (command == "fill-distinct") return fill_distinct(argc, argv);
  if (command == "copies" && argc == 2) return copies();
  if (command == "csv-header" && argc == 2) return std::puts(lab::kCsvHeader) >= 0 ? 0 : 1;
  return usage();
}
