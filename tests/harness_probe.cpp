// A small front end to common/ so the Python tests can check the harness itself:
//   harness_probe verify DTYPE ROWS COLS [PLANT]
//   harness_probe verify-copy DTYPE ROWS COLS [PLANT]
//   harness_probe unwritten-each DTYPE ROWS COLS R C [R C ...]
//   harness_probe fill-distinct DTYPE START COUNT
//   harness_probe fills DTYPE COUNT
//   harness_probe csv-header
//   harness_probe copies
//   harness_probe store-plan SLOWER
// verify runs the multi-fill verification (common/matrix.hpp) on a transpose made straight from
// the definition (verify-copy: the copy verifier on a copy), into which PLANT puts one fault at
// output row R, col C, the same in every fill (as a buggy kernel would):
//   --wrong R C         the input element one after the right one
//   --shift R C DELTA   the input element DELTA positions (row-major input index) after it
//   --swap R C R2 C2    output elements (R, C) and (R2, C2) swapped
//   --unwritten R C     left poisoned (as the verifier poisoned it for that fill)
//   --other-operation   the whole output made by the other operation (a copy for verify, a
//                       transpose for verify-copy): what a step with the wrong STEP_OPERATION does
// It prints the verdict; exit 0 when it passes, 1 when it reports a mismatch.
// store-plan runs the store planner (common/streaming_copy.hpp) on a stand-in transpose that
// takes 5 ms longer with the SLOWER kind of store (plain or streaming): work "a", "a" again, then
// "b", one line each: the kind of each run it took, in order (p plain, s streaming), and the kind
// of the run that counted.
// cache-flush times, as the CPU drivers time a step (common/timer.hpp), a chase of dependent loads
// through every line of a 1 MiB buffer in a random order, the buffer registered for the flush
// (common/cache_flush.hpp): one line, the median nanoseconds a load. Warm, the lines are in L2
// (a few ns); flushed, each load waits for memory (about 100 ns).
// unwritten-each runs that verification once per position (R, C), each time with that one output
// element left poisoned, on one pair of matrices (large shapes pay for their memory once, and for
// the fill that caught the first position once); one verdict line per position; exit 0 when every
// position was caught, 1 when one passed.
#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <unordered_set>
#include <utility>
#include <vector>

#include "../common/config.hpp"
#include "../common/dtype.hpp"
#include "../common/host_memory.hpp"
#include "../common/matrix.hpp"
#include "../common/report.hpp"
#include "../common/streaming_copy.hpp"
#include "../common/timer.hpp"

namespace {

using lab::Index;

int usage() {
  std::fprintf(
      stderr,
      "usage: harness_probe verify|verify-copy DTYPE ROWS COLS [--wrong R C |\n"
      "           --shift R C DELTA | --swap R C R2 C2 | --unwritten R C | --other-operation]\n"
      "       harness_probe unwritten-each DTYPE ROWS COLS R C [R C ...]\n"
      "       harness_probe fill-distinct DTYPE START COUNT\n"
      "       harness_probe fills DTYPE COUNT\n"
      "       harness_probe store-plan plain|streaming\n"
      "       harness_probe cache-flush\n"
      "       harness_probe csv-header\n"
      "       harness_probe copies\n");
  return lab::kExitUsage;
}

const lab::Dtype* dtype_or_null(const char* name) {
  const lab::Dtype* type = lab::find_dtype(name);
  if (type == nullptr) std::fprintf(stderr, "unknown dtype %s\n", name);
  return type;
}

// The transpose by its definition, in 64 x 64 blocks so that both matrices stay in cache: the
// 2^32-element checks would take many minutes on two cores element by element.
template <class T>
void transpose_from_definition(const T* in, T* out, Index rows, Index cols) {
  constexpr Index kBlock = 64;
#pragma omp parallel for collapse(2) schedule(static)
  for (Index cb = 0; cb < cols; cb += kBlock)
    for (Index rb = 0; rb < rows; rb += kBlock)
      for (Index c = cb; c < std::min(cols, cb + kBlock); ++c)
        for (Index r = rb; r < std::min(rows, rb + kBlock); ++r)
          out[c * rows + r] = in[r * cols + c];
}

template <class T>
int verify(lab::Operation operation, const lab::Dtype& type, Index rows, Index cols, int argc,
           char** argv) {
  auto in = lab::allocate_host<T>(rows * cols, "input");
  auto out = lab::allocate_host<T>(rows * cols, "output");
  const std::string plant = argc > 0 ? argv[0] : "";
  auto arg = [&](int i) { return i < argc ? std::atoll(argv[i]) : 0; };
  const Index row = arg(1), col = arg(2);  // in the output: cols x rows, or rows x cols for a copy
  const bool transpose =
      (operation == lab::Operation::kTranspose) != (plant == "--other-operation");
  const Index out_cols = transpose ? rows : cols;
  auto output_index = [&](Index r, Index c) { return r * out_cols + c; };
  const Index source = transpose ? col * cols + row : output_index(row, col);  // of out(row, col)
  const lab::Verification check = lab::verify_every_fill(
      type, in.get(), out.get(), rows, cols,
      [&] {
        const T poisoned = out[output_index(row, col)];  // what verify_every_fill wrote there
        if (transpose) {
          transpose_from_definition(in.get(), out.get(), rows, cols);
        } else {
          std::memcpy(out.get(), in.get(), lab::matrix_bytes(rows, cols, sizeof(T)));
        }
        const Index o = output_index(row, col);
        if (plant == "--wrong") out[o] = in[source + 1];
        if (plant == "--shift") out[o] = in[source + arg(3)];
        if (plant == "--swap") std::swap(out[o], out[output_index(arg(3), arg(4))]);
        if (plant == "--unwritten") out[o] = poisoned;
      },
      operation);
  std::printf("%s\n", check.describe().c_str());
  return check.ok() ? lab::kExitOk : lab::kExitFailed;
}

template <class T>
int unwritten_each(const lab::Dtype& type, Index rows, Index cols, int argc, char** argv) {
  auto in = lab::allocate_host<T>(rows * cols, "input");
  auto out = lab::allocate_host<T>(rows * cols, "output");
  int passed = 0;
  lab::Verification last;
  Index last_o = -1, last_i = -1;
  for (int k = 0; k + 1 < argc; k += 2) {
    const Index row = std::atoll(argv[k]), col = std::atoll(argv[k + 1]);  // output cols x rows
    const Index o = row * rows + col, i = col * cols + row;                // out[o] must hold in[i]
    lab::Verification check;
    if (last_o < 0 || last.ok()) {
      check = lab::verify_every_fill(type, in.get(), out.get(), rows, cols, [&] {
        const T poisoned = out[o];
        transpose_from_definition(in.get(), out.get(), rows, cols);
        out[o] = poisoned;
      });
    } else {
      // The fill that caught the last position is still in place: only the unwritten element
      // moves (its poison is what poison_output gave it), so a 2^32-element check pays for its
      // fill and its transpose once, not once per position.
      out[last_o] = in[last_i];
      out[o] = lab::poison_value<T>(type, last.fill, i);
      check = lab::verify_result(lab::Operation::kTranspose, out.get(), in.get(), rows, cols);
      check.fill = last.fill;
      check.fills = last.fills;
    }
    std::printf("unwritten at output row %lld, col %lld: %s\n", static_cast<long long>(row),
                static_cast<long long>(col), check.describe().c_str());
    passed += check.ok();
    last = check;
    last_o = o;
    last_i = i;
  }
  return passed == 0 ? lab::kExitOk : lab::kExitFailed;
}

// Every value of every part is a safe pattern (a normal float), and the values of all the fills
// together differ between any two elements in [start, start + count).
template <class T>
int fill_distinct(const lab::Dtype& type, Index start, Index count) {
  const int fills = lab::fills_needed(type, start + count);
  std::unordered_set<std::string> seen;
  const int part_bytes = type.bytes / type.parts;
  for (Index i = start; i < start + count; ++i) {
    std::string key;
    for (int fill = 0; fill < fills; ++fill) {
      const T value = lab::fill_value<T>(type, fill, i);
      key.append(reinterpret_cast<const char*>(&value), sizeof value);
      for (int part = 0; part < type.parts && type.exponent_bits != 0; ++part) {
        std::uint64_t bits = 0;
        std::memcpy(&bits, reinterpret_cast<const char*>(&value) + part * part_bytes, part_bytes);
        const std::uint64_t exponent =
            (bits >> type.fraction_bits) & ((std::uint64_t{1} << type.exponent_bits) - 1);
        if (exponent == 0 || exponent == (std::uint64_t{1} << type.exponent_bits) - 1) {
          std::printf("element %lld fill %d part %d: 0x%llx is not a normal number\n",
                      static_cast<long long>(i), fill, part, static_cast<unsigned long long>(bits));
          return lab::kExitFailed;
        }
      }
    }
    if (!seen.insert(key).second) {
      std::printf("element %lld repeats the fill values of an earlier one\n",
                  static_cast<long long>(i));
      return lab::kExitFailed;
    }
  }
  std::printf("%lld elements distinct over %d fills\n", static_cast<long long>(count), fills);
  return lab::kExitOk;
}

// copy_floats and parallel_copy (the CPU ceiling), streaming and plain, against the source at
// every alignment of the destination and lengths around the vector and line sizes; the bytes
// just outside the destination must stay untouched.
int copies() {
  constexpr int kMaxCount = 70, kMaxOffset = 16, kGuard = 16;
  constexpr std::uint32_t kGuardBits = 0xFFFFFFFFu;  // a NaN: never a fill value, never copied
  const lab::Dtype& type = lab::default_dtype();
  auto in = lab::allocate_host<float>(kMaxCount + kMaxOffset, "input");
  auto out = lab::allocate_host<float>(kMaxCount + kMaxOffset + 2 * kGuard, "output");
  lab::fill_input(reinterpret_cast<lab::Bytes4*>(in.get()), 1, kMaxCount + kMaxOffset, type, 0);
  int cases = 0;
  for (const bool streaming : {false, true}) {
    for (const bool parallel : {false, true}) {
      for (int offset = 0; offset < kMaxOffset; ++offset) {
        for (int count = 0; count <= kMaxCount; ++count) {
          float* dst = out.get() + kGuard + offset;
          const float* src = in.get() + (offset * 7) % kMaxOffset;  // any source alignment
          for (int k = 0; k < kMaxCount + kMaxOffset + 2 * kGuard; ++k)
            std::memcpy(out.get() + k, &kGuardBits, sizeof(float));
          if (parallel)
            lab::parallel_copy(src, dst, count * sizeof(float), streaming);
          else
            lab::copy_floats(dst, src, count, streaming);
          lab::stream_fence();
          const bool exact = std::memcmp(dst, src, count * sizeof(float)) == 0;
          const bool guards_intact = std::memcmp(dst - 1, &kGuardBits, sizeof(float)) == 0 &&
                                     std::memcmp(dst + count, &kGuardBits, sizeof(float)) == 0;
          if (!exact || !guards_intact) {
            std::printf("%s%s copy of %d floats at offset %d: %s\n",
                        streaming ? "streaming" : "plain", parallel ? " parallel" : "", count,
                        offset, guards_intact ? "wrong bytes" : "wrote outside");
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

int store_plan(const std::string& slower) {
  if (slower != "plain" && slower != "streaming") return usage();
  for (const char* work : {"a", "a", "b"}) {
    std::string runs;  // the kind of each run, in order: p plain, s streaming
    const bool streamed = lab::run_with_planned_stores(work, [&] {
      runs += lab::use_streaming_stores() ? 's' : 'p';
      if (lab::use_streaming_stores() == (slower == "streaming")) {
        const double until = omp_get_wtime() + 0.005;
        while (omp_get_wtime() < until) {
        }
      }
    });
    std::printf("%s: runs %s, %s\n", work, runs.c_str(), streamed ? "streaming" : "plain");
  }
  return lab::kExitOk;
}

int cache_flush() {
  constexpr std::size_t kBytes = std::size_t{1} << 20;
  constexpr std::size_t kLines = kBytes / lab::kCacheLineBytes;
  constexpr std::size_t kStride = lab::kCacheLineBytes / sizeof(std::size_t);
  auto chain = lab::allocate_host<std::size_t>(kBytes / sizeof(std::size_t), "the chain");
  // One cycle through every line in a shuffled order: the next line's index in each line's first
  // word, so no prefetcher can guess it.
  std::vector<std::size_t> order(kLines);
  for (std::size_t i = 0; i < kLines; ++i) order[i] = i;
  std::uint64_t state = 12345;
  for (std::size_t i = kLines - 1; i > 0; --i) {
    state = state * 6364136223846793005ULL + 1442695040888963407ULL;
    std::swap(order[i], order[(state >> 33) % (i + 1)]);
  }
  for (std::size_t i = 0; i < kLines; ++i)
    chain.get()[order[i] * kStride] = order[(i + 1) % kLines] * kStride;
  const lab::CpuFlushScope flushed{{chain.get(), kBytes}};
  volatile std::size_t end = 0;
  const std::vector<double> medians_ms =
      lab::median_cpu_ms_alternating({[&] {
                                       std::size_t at = 0;
                                       for (std::size_t i = 0; i < kLines; ++i)
                                         at = chain.get()[at];
                                       end = at;
                                     }},
                                     7);
  std::printf("%.1f ns a load\n", medians_ms[0] * 1e6 / kLines);
  return lab::kExitOk;
}

int main(int argc, char** argv) {
  if (argc < 2) return usage();
  const std::string command = argv[1];
  if (command == "store-plan" && argc == 3) return store_plan(argv[2]);
  if (command == "copies" && argc == 2) return copies();
  if (command == "cache-flush" && argc == 2) return cache_flush();
  if (command == "csv-header" && argc == 2) return std::puts(lab::kCsvHeader) >= 0 ? 0 : 1;
  if (argc < 4) return usage();
  const lab::Dtype* type = dtype_or_null(argv[2]);
  if (type == nullptr) return lab::kExitUsage;
  if (command == "fills" && argc == 4) {
    std::printf("%d\n", lab::fills_needed(*type, std::atoll(argv[3])));
    return lab::kExitOk;
  }
  if (argc < 5) return usage();
  const Index a = std::atoll(argv[3]), b = std::atoll(argv[4]);
  return lab::with_storage_type(type->bytes, [&](auto element) {
    using T = decltype(element);
    if (command == "verify")
      return verify<T>(lab::Operation::kTranspose, *type, a, b, argc - 5, argv + 5);
    if (command == "verify-copy")
      return verify<T>(lab::Operation::kCopy, *type, a, b, argc - 5, argv + 5);
    if (command == "fill-distinct" && argc == 5) return fill_distinct<T>(*type, a, b);
    if (command == "unwritten-each" && argc >= 7 && argc % 2 == 1)
      return unwritten_each<T>(*type, a, b, argc - 5, argv + 5);
    return usage();
  });
}
