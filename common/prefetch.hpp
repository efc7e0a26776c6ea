// Lines asked for before they are needed (x86: prefetcht0/t1, prefetchw), shared by the CPU
// steps. A run of a few lines is too short for the hardware prefetcher to follow, and each of its
// lines read one after another waits on memory; asked for ahead, they come together.
#pragma once

#include <algorithm>
#include <cstdint>

#include "config.hpp"  // kCacheLineBytes

namespace lab {

// One line, the one holding p. kForWriting asks for it owned by this core, ready for stores;
// kLocality 3 into L1, 2 into L2 (where rows a multiple of 4 KiB apart would evict each other
// from L1's few sets).
template <bool kForWriting, int kLocality>
inline void prefetch_line(const void* p) {
#if defined(__GNUC__)
  __builtin_prefetch(p, kForWriting ? 1 : 0, kLocality);
#else
  (void)p;
#endif
}

// Every line of the bytes [at, at + bytes): the last one too, where the run starts part-way into
// a line and reaches into one line more.
template <bool kForWriting, int kLocality>
inline void prefetch_lines(const void* at, std::int64_t bytes) {
  const auto* p = static_cast<const unsigned char*>(at);
  const auto line = static_cast<std::int64_t>(kCacheLineBytes);
  for (std::int64_t k = 0; k < bytes + line; k += line)
    prefetch_line<kForWriting, kLocality>(p + std::min(k, bytes - 1));
}

}  // namespace lab
