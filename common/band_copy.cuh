// A band copy by the SMs: `rows` rows of `width` bytes, contiguous at `from`, into rows `pitch`
// bytes apart at `to` (copy_band); or the general case, rows apart at both ends (copy_rows). A copy
// engine moves narrow strided rows slowly (CUDA.v8_streams' README); the SMs write them in the
// widest word that every row start and length allow, 16 bytes where they can, so a warp stores
// whole lines however narrow the rows. `to` may be device memory or pinned, mapped host memory (its
// device address). Used where a step puts a block into a wider matrix: CUDA.v8_streams' way down
// into host memory, CUDA.v9_multigpu's placement.
#pragma once

#include <cuda_runtime.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>

namespace lab {

namespace band_copy_detail {

constexpr std::size_t kWidestWord = 16;
constexpr int kMaxThreads = 256;
// A block has at least this many threads: rows narrower than that many words are copied several
// at a time instead of leaving most of a warp idle (H100, CUDA.v8_streams' 16-row float64 pieces,
// 128-byte rows: about five times faster down on an H100).
constexpr int kMinThreads = 64;

struct alignas(16) Word16 {
  unsigned int x[4];
};

// A block's threads form groups of `lanes` (dividing blockDim.x), one row per
// group; block b's groups take rows b * groups ..., then the next grid's worth. A group strides
// along its row in words of V.
template <class V>
__global__ void copy_band_rows(const V* from, std::int64_t from_pitch_words, V* to,
                               std::int64_t to_pitch_words, int row_words, std::int64_t rows,
                               int lanes) {
  const int groups = blockDim.x / lanes, lane = threadIdx.x % lanes;
  for (std::int64_t r = std::int64_t{blockIdx.x} * groups + threadIdx.x / lanes; r < rows;
       r += std::int64_t{gridDim.x} * groups) {
    const V* source = from + r * from_pitch_words;
    V* target = to + r * to_pitch_words;
    for (int j = lane; j < row_words; j += lanes) target[j] = source[j];
  }
}

}  // namespace band_copy_detail

// The widest word (16, 8, 4, 2 or 1 bytes) that both addresses, the width and both pitches are
// multiples of.
inline std::size_t band_copy_word_bytes(const void* from, std::size_t from_pitch, const void* to,
                                        std::size_t to_pitch, std::size_t width) {
  const std::uintptr_t all = reinterpret_cast<std::uintptr_t>(from) |
                             reinterpret_cast<std::uintptr_t>(to) | from_pitch | to_pitch | width;
  std::size_t word = band_copy_detail::kWidestWord;
  while (word > 1 && all % word != 0) word /= 2;
  return word;
}

// Enqueues the copy of `rows` rows of `width` bytes, `from_pitch` bytes apart at `from`, to rows
// `to_pitch` apart at `to`, on `stream` with at most `blocks` blocks; returns the threads it
// launched. Launch errors are the caller's to check (cudaGetLastError), like any launch.
inline std::int64_t copy_rows(const void* from, std::size_t from_pitch, void* to,
                              std::size_t to_pitch, std::size_t width, std::int64_t rows,
                              int blocks, cudaStream_t stream) {
  using namespace band_copy_detail;
  if (rows == 0 || width == 0) return 0;
  auto launch = [&](auto word) {
    using V = decltype(word);
    const int words = static_cast<int>(std::min<std::size_t>(width / sizeof(V), 1 << 30));
    // Threads per row: whole warps up to kMaxThreads for rows of a warp's words or more; below,
    // the power of two that covers the row, so that groups of rows fill kMinThreads.
    int lanes = std::min((words + 31) / 32 * 32, kMaxThreads);
    if (words < 32)
      for (lanes = 1; lanes < words;) lanes *= 2;
    const int threads = std::max(lanes, kMinThreads), groups = threads / lanes;
    const int grid = static_cast<int>(std::min<std::int64_t>(blocks, (rows + groups - 1) / groups));
    copy_band_rows<<<grid, threads, 0, stream>>>(
        static_cast<const V*>(from), static_cast<std::int64_t>(from_pitch / sizeof(V)),
        static_cast<V*>(to), static_cast<std::int64_t>(to_pitch / sizeof(V)), words, rows, lanes);
    return std::int64_t{grid} * threads;
  };
  switch (band_copy_word_bytes(from, from_pitch, to, to_pitch, width)) {
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

// A contiguous band into rows `pitch` bytes apart.
inline std::int64_t copy_band(const void* from, void* to, std::size_t width, std::size_t pitch,
                              std::int64_t rows, int blocks, cudaStream_t stream) {
  return copy_rows(from, width, to, pitch, width, rows, blocks, stream);
}

}  // namespace lab
