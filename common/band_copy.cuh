// A band copy by the SMs: `rows` rows of `width` bytes, contiguous at `from`, into rows `pitch`
// bytes apart at `to`. A copy engine moves narrow strided rows slowly (CUDA.v8_streams' README);
// the SMs write them in the widest word that every row start and length allow, 16 bytes where
// they can, so a warp stores whole lines however narrow the rows. `to` may be device memory or
// pinned, mapped host memory (its device address). Used where a step puts a block into a wider
// matrix: CUDA.v8_streams' way down into host memory, CUDA.v9_multigpu's placement.
#pragma once

#include <cuda_runtime.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>

namespace lab {

namespace band_copy_detail {

constexpr std::size_t kWidestWord = 16;
constexpr int kMaxThreads = 256;

struct alignas(16) Word16 {
  unsigned int x[4];
};

// Block b copies rows b, b + gridDim.x, ...; its threads stride along one row in words of V.
template <class V>
__global__ void copy_band_rows(const V* from, V* to, int row_words, std::int64_t pitch_words,
                               std::int64_t rows) {
  for (std::int64_t r = blockIdx.x; r < rows; r += gridDim.x) {
    const V* source = from + r * row_words;
    V* target = to + r * pitch_words;
    for (int j = threadIdx.x; j < row_words; j += blockDim.x) target[j] = source[j];
  }
}

}  // namespace band_copy_detail

// The widest word (16, 8, 4, 2 or 1 bytes) that both addresses, the width and the pitch are
// multiples of.
inline std::size_t band_copy_word_bytes(const void* from, const void* to, std::size_t width,
                                        std::size_t pitch) {
  const auto a = reinterpret_cast<std::uintptr_t>(from), b = reinterpret_cast<std::uintptr_t>(to);
  std::size_t word = band_copy_detail::kWidestWord;
  while (word > 1 && (a % word != 0 || b % word != 0 || width % word != 0 || pitch % word != 0))
    word /= 2;
  return word;
}

// Enqueues the copy on `stream` with at most `blocks` blocks; returns the threads it launched.
// Launch errors are the caller's to check (cudaGetLastError), like any launch.
inline std::int64_t copy_band(const void* from, void* to, std::size_t width, std::size_t pitch,
                              std::int64_t rows, int blocks, cudaStream_t stream) {
  using namespace band_copy_detail;
  if (rows == 0 || width == 0) return 0;
  const int grid = static_cast<int>(std::min<std::int64_t>(blocks, rows));
  auto launch = [&](auto word) {
    using V = decltype(word);
    const int words = static_cast<int>(width / sizeof(V));
    const int threads = std::clamp((words + 31) / 32 * 32, 32, kMaxThreads);
    copy_band_rows<<<grid, threads, 0, stream>>>(
        static_cast<const V*>(from), static_cast<V*>(to), words,
        static_cast<std::int64_t>(pitch / sizeof(V)), rows);
    return std::int64_t{grid} * threads;
  };
  switch (band_copy_word_bytes(from, to, width, pitch)) {
    case 16:
      return launch(Word16{});
    case 8:
      return launch(std::uint64_t{});
    case 4:
      return launch(std::uint32_t{});
    case 2:
      return launch(std::uint16_t{});
    default:
      return launch(std::uint8_t{});
  }
}

}  // namespace lab
