// Copies with lab::launch_vector_copy from and to every byte offset of a 16-byte boundary (0..15
// each side: the same offset, where the 16-byte path runs with scalar ends, and different ones,
// where every byte goes alone), for lengths around the vector and block sizes, and checks every
// byte: the copied range against the source, and guard bytes on both sides of it untouched.
// Built by tests/test_copy_ceiling.py; exit 0 when every case is exact, 1 naming the first that is
// not, 77 without a GPU.
#include <cstdio>
#include <cstdlib>
#include <iterator>
#include <vector>

#include "../common/vector_copy_kernel.cuh"

namespace {

constexpr std::size_t kGuard = 64;  // bytes checked on each side of the copied range
constexpr int kAlignment = 16;

void check(cudaError_t status, const char* what) {
  if (status == cudaSuccess) return;
  std::fprintf(stderr, "vector_copy_probe: %s: %s\n", what, cudaGetErrorString(status));
  std::exit(1);
}

// A byte per position and case, hashed: bytes copied from the wrong place cannot all match.
unsigned char pattern(std::size_t i, unsigned seed) {
  unsigned x = static_cast<unsigned>(i) * 2654435761u + seed;
  x ^= x >> 13;
  x *= 0x5bd1e995u;
  x ^= x >> 15;
  return static_cast<unsigned char>(x);
}

}  // namespace

int main() {
  int devices = 0;
  if (cudaGetDeviceCount(&devices) != cudaSuccess || devices == 0) {
    std::fprintf(stderr, "vector_copy_probe: skipped: no CUDA device\n");
    return 77;
  }
  const std::size_t lengths[] = {0,   1,   15,   16,   17,   31,    32,    33,      255,
                                 256, 257, 4095, 4096, 4097, 16383, 16401, 1 << 20, (1 << 20) + 7};
  const std::size_t largest = lengths[std::size(lengths) - 1];
  unsigned char *in = nullptr, *out = nullptr;
  check(cudaMalloc(&in, largest + 2 * kGuard + 2 * kAlignment), "cudaMalloc");
  check(cudaMalloc(&out, largest + 2 * kGuard + 2 * kAlignment), "cudaMalloc");
  int cases = 0;
  for (std::size_t length : lengths) {
    const std::size_t span = length + 2 * kGuard + 2 * kAlignment;
    std::vector<unsigned char> host_in(span), host_out(span), start(span);
    for (int in_offset = 0; in_offset < kAlignment; ++in_offset) {
      for (int out_offset = 0; out_offset < kAlignment; ++out_offset) {
        const unsigned seed = static_cast<unsigned>(cases * 7919 + 1);
        for (std::size_t i = 0; i < span; ++i) {
          host_in[i] = pattern(i, seed);
          // The complement of what lands there: a byte the copy skips differs in every bit.
          start[i] = static_cast<unsigned char>(~pattern(i + in_offset - out_offset, seed));
        }
        check(cudaMemcpy(in, host_in.data(), span, cudaMemcpyHostToDevice), "upload");
        check(cudaMemcpy(out, start.data(), span, cudaMemcpyHostToDevice), "poison");
        lab::launch_vector_copy(in + kGuard + in_offset, out + kGuard + out_offset, length, 0);
        check(cudaGetLastError(), "launch");
        check(cudaDeviceSynchronize(), "copy");
        check(cudaMemcpy(host_out.data(), out, span, cudaMemcpyDeviceToHost), "download");
        const std::size_t first = kGuard + out_offset, last = first + length;
        for (std::size_t i = 0; i < span; ++i) {
          const bool copied = i >= first && i < last;
          const unsigned char want = copied ? host_in[i - first + kGuard + in_offset] : start[i];
          if (host_out[i] != want) {
            std::printf(
                "FAILED: %zu bytes from offset %d to offset %d: byte %lld of the %s is "
                "0x%02x, want 0x%02x\n",
                length, in_offset, out_offset,
                static_cast<long long>(i) - static_cast<long long>(first),
                copied ? "copy" : "guard", host_out[i], want);
            return 1;
          }
        }
        ++cases;
      }
    }
  }
  std::printf("exact: %d cases\n", cases);
  return 0;
}
