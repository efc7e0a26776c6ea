// The CPU side's cold cache. A matrix whose input and output fit in the host's last-level cache
// (300 MB on the GPU machines' Xeons: 8192 x 8192 uint8 is 128 MB of both) is read from cache by a
// run that follows another, and the copy that is the ceiling gains more from that than a
// transpose does: on the H200 machine's 16-core host the copy of 8192 x 8192 uint8 ran at 306 GB/s
// warm and 165 GB/s flushed (cpu_cache.csv in docs/results/h200). So, as the GPU drivers empty L2
// before each timed launch (common/cuda_harness.cuh), the CPU drivers write back and drop every
// line of their input and output from every cache level before each timed run, of the step and of
// its ceiling alike, and before each trial of a store plan: every run starts from memory, whatever
// its size.
// LAB_CPU_FLUSH=off times warm caches instead, the figures of a loop that runs one shape again
// and again.
#pragma once

#include <omp.h>

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <initializer_list>
#include <string>
#include <vector>

#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#endif

#include "config.hpp"

namespace lab {

// LAB_CPU_FLUSH's choice, read once: true for "on" (the default), false for "off"; a bad value is
// a usage error, never silently the other one.
inline bool cpu_flush_enabled() {
  static const bool enabled = [] {
    const char* setting = std::getenv(kCpuFlushVariable);
    if (setting == nullptr || std::string(setting) == "on") return true;
    if (std::string(setting) == "off") return false;
    std::fprintf(stderr, "error: %s=%s: use on or off\n", kCpuFlushVariable, setting);
    std::exit(kExitUsage);
  }();
  return enabled;
}

namespace detail {

struct HostRange {
  const void* data;
  std::size_t bytes;
};

// The buffers a driver times on (CpuFlushScope registers them).
inline std::vector<HostRange>& flushed_ranges() {
  static std::vector<HostRange> ranges;
  return ranges;
}

#if defined(__x86_64__) || defined(__i386__)
// clflushopt where the processor has it (many in flight), else clflush (one at a time).
__attribute__((target("clflushopt"))) inline void flush_lines_opt(const char* begin,
                                                                  const char* end) {
  for (const char* line = begin; line < end; line += kCacheLineBytes)
    _mm_clflushopt(const_cast<char*>(line));
}
inline void flush_lines(const char* begin, const char* end) {
  static const bool has_clflushopt = __builtin_cpu_supports("clflushopt");
  if (has_clflushopt) {
    flush_lines_opt(begin, end);
  } else {
    for (const char* line = begin; line < end; line += kCacheLineBytes) _mm_clflush(line);
  }
}
inline void flush_fence() {
  _mm_mfence();
}
#elif defined(__aarch64__)
inline void flush_lines(const char* begin, const char* end) {
  for (const char* line = begin; line < end; line += kCacheLineBytes)
    asm volatile("dc civac, %0" ::"r"(line) : "memory");
}
inline void flush_fence() {
  asm volatile("dsb ish" ::: "memory");
}
#else
#error "common/cache_flush.hpp: no cache-line flush for this architecture"
#endif

}  // namespace detail

// Writes back and drops every line of the registered buffers, all threads at once (a line can be
// flushed from any core); nothing when LAB_CPU_FLUSH=off or no buffer is registered.
inline void flush_cpu_caches() {
  if (!cpu_flush_enabled()) return;
  for (const detail::HostRange& range : detail::flushed_ranges()) {
    const auto address = reinterpret_cast<std::uintptr_t>(range.data);
    const std::uintptr_t first = address / kCacheLineBytes * kCacheLineBytes;
    const std::int64_t lines = static_cast<std::int64_t>(
        (address + range.bytes - first + kCacheLineBytes - 1) / kCacheLineBytes);
#pragma omp parallel
    {
      const std::int64_t threads = omp_get_num_threads(), thread = omp_get_thread_num();
      const char* base = reinterpret_cast<const char*>(first);
      detail::flush_lines(base + lines * thread / threads * kCacheLineBytes,
                          base + lines * (thread + 1) / threads * kCacheLineBytes);
      detail::flush_fence();
    }
  }
}

// While it lives, flush_cpu_caches() flushes these buffers: a driver's input and output.
class CpuFlushScope {
 public:
  CpuFlushScope(std::initializer_list<detail::HostRange> ranges) {
    detail::flushed_ranges().assign(ranges);
  }
  ~CpuFlushScope() { detail::flushed_ranges().clear(); }
  CpuFlushScope(const CpuFlushScope&) = delete;
  CpuFlushScope& operator=(const CpuFlushScope&) = delete;
};

// The run header's line on it.
inline std::string cpu_flush_line() {
  return cpu_flush_enabled()
             ? std::string(
                   "caches   input and output flushed from every CPU cache before each "
                   "timed run, step and copy alike (") +
                   kCpuFlushVariable + "=off: warm)"
             : std::string("caches   warm: each timed run follows an untimed one (") +
                   kCpuFlushVariable + "=off)";
}

}  // namespace lab
