// Copies that write past the cache. A normal store to a line that is not in cache first reads
// that line from memory (to merge the new bytes into it), so a plain copy of N bytes moves 3N
// through the memory bus: N read, N read-for-ownership, N written. A streaming (non-temporal)
// store fills whole lines in a write-combining buffer and sends them straight to memory: 2N.
// That only pays when the data would not stay in cache anyway; in cache a plain copy is faster.
// Which wins depends on the host (how much of a shared last-level cache is really this
// program's), on the size and on the step's access pattern, so no cache size written here
// decides: the transposes plan their stores by measuring both (run_with_planned_stores), and the
// copy ceiling is timed both ways, the faster kept (common/cpu_ceiling.hpp).
#pragma once

#include <omp.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <optional>
#include <string>

#if defined(__SSE__)
#include <immintrin.h>
#endif

#include "cache_flush.hpp"
#include "config.hpp"
#include "matrix.hpp"

namespace lab {

// The kind of store LAB_STREAMING_STORES forces: true for "on", false for "off", none for "auto"
// (the default: the transposes plan, the ceiling times both). A bad value: one line and exit 2.
inline std::optional<bool> forced_streaming() {
  const char* setting = std::getenv(kStreamingStoresVariable);
  const std::string choice = setting == nullptr ? "auto" : setting;
  if (choice == "on") return true;
  if (choice == "off") return false;
  if (choice != "auto") {
    std::fprintf(stderr, "error: %s=%s: use on, off or auto\n", kStreamingStoresVariable,
                 choice.c_str());
    std::exit(kExitUsage);
  }
  return std::nullopt;
}

namespace detail {
inline std::optional<bool>& stores_now() {  // the kind the running transpose uses
  static std::optional<bool> now;
  return now;
}
inline std::map<std::string, bool>& store_plans() {  // the planned kind, by work and threads
  static std::map<std::string, bool> plans;
  return plans;
}
inline std::string plan_key(const std::string& work) {
  return work + ", " + std::to_string(omp_get_max_threads()) + " threads";
}
}  // namespace detail

// Whether the transpose running now (inside run_with_planned_stores) streams its stores.
inline bool use_streaming_stores() {
  return detail::stores_now().value_or(false);
}

// Runs a transpose with the kind of store planned for `work` (what identifies it: its extents,
// permutation and element size), planning on the first call, as HPTT's and FFTW's planners do:
// the transpose runs kStorePlanTrials times with each kind, and the faster is kept for
// every later call of the same work at the same thread count. LAB_STREAMING_STORES=on or off
// forces one kind, without trials. Returns whether the run streamed.
template <class Run>
bool run_with_planned_stores(const std::string& work, Run&& run) {
  std::optional<bool>& now = detail::stores_now();
  std::optional<bool> streaming = forced_streaming();
  if (!streaming) {
    auto& plans = detail::store_plans();
    const std::string key = detail::plan_key(work);
    auto plan = plans.find(key);
    if (plan == plans.end()) {
      // Each kind's runs in a row, as a loop of calls makes them: a plain run right after a
      // streaming one finds none of its output lines in cache, where in a loop the run before
      // left them there. Alternating, the plan for 8191 x 8193 uint8 on a 16-core Xeon kept
      // streaming stores (plain trials 3.2 to 5.6 ms, streaming 2.9 to 6.2, first runs aside),
      // which took 2.9 to 3.2 ms in the timed loop, plain ones 2.0 to 2.8
      // (h100/store_trials.log).
      double fastest[2] = {HUGE_VAL, HUGE_VAL};  // plain, streaming: seconds
      for (const bool kind : {false, true})
        for (int trial = 0; trial < kStorePlanTrials; ++trial) {
          now = kind;
          flush_cpu_caches();  // as the timed runs start
          const double start = omp_get_wtime();
          run();
          fastest[kind] = std::min(fastest[kind], omp_get_wtime() - start);
        }
      plan = plans.emplace(key, fastest[1] < fastest[0]).first;
    }
    streaming = plan->second;
  }
  now = streaming;
  run();
  now.reset();
  return *streaming;
}

// The kind of store `work` runs with: as forced, or as planned (plain before any plan).
inline bool planned_streaming(const std::string& work) {
  if (const std::optional<bool> forced = forced_streaming()) return *forced;
  const auto& plans = detail::store_plans();
  const auto plan = plans.find(detail::plan_key(work));
  return plan != plans.end() && plan->second;
}

// One vector of floats stored past the cache; dst must be aligned to the vector. Without SSE
// (ARM, ...) a plain store of one float: the copies stay correct, only slower. A 64-byte AVX-512
// vector is one whole cache line, the unit a streaming store is cheapest in.
#if defined(__AVX512F__)
constexpr int kStreamFloats = 16;
inline void stream_vector(float* dst, const float* src) {
  _mm512_stream_ps(dst, _mm512_loadu_ps(src));
}
#elif defined(__AVX__)
constexpr int kStreamFloats = 8;
inline void stream_vector(float* dst, const float* src) {
  _mm256_stream_ps(dst, _mm256_loadu_ps(src));
}
#elif defined(__SSE__)
constexpr int kStreamFloats = 4;
inline void stream_vector(float* dst, const float* src) {
  _mm_stream_ps(dst, _mm_loadu_ps(src));
}
#else
constexpr int kStreamFloats = 1;
inline void stream_vector(float* dst, const float* src) {
  *dst = *src;
}
#endif

// Streaming stores are weakly ordered: make them visible before another thread reads the data.
inline void stream_fence() {
#if defined(__SSE__)
  _mm_sfence();
#endif
}

// bytes from src to dst: the whole 64-byte lines of dst with streaming stores, the partial lines
// at either end with plain ones (a line only partly streamed costs memory as much as a whole one,
// or more). For pieces of output written from a buffer in L1: a transpose's output rows. Call
// stream_fence() before other threads read dst.
inline void stream_lines(void* dst, const void* src, std::size_t bytes) {
  constexpr std::size_t kLine = 64, kStreamBytes = kStreamFloats * sizeof(float);
  auto* out = static_cast<unsigned char*>(dst);
  const auto* in = static_cast<const unsigned char*>(src);
  const std::size_t head = std::min(bytes, (0 - reinterpret_cast<std::uintptr_t>(out)) % kLine);
  const std::size_t lines_end = head + (bytes - head) / kLine * kLine;
  std::memcpy(out, in, head);
  for (std::size_t k = head; k < lines_end; k += kStreamBytes)
    stream_vector(reinterpret_cast<float*>(out + k), reinterpret_cast<const float*>(in + k));
  std::memcpy(out + lines_end, in + lines_end, bytes - lines_end);
}

// bytes from src to dst: through stream_lines with `streaming`, else a plain memcpy.
inline void copy_lines(void* dst, const void* src, std::size_t bytes, bool streaming) {
  if (streaming)
    stream_lines(dst, src, bytes);
  else
    std::memcpy(dst, src, bytes);
}

// dst[0..count) = src[0..count). With `streaming`, the part of dst that starts on a vector
// boundary is written with streaming stores; the ragged ends, and everything without
// `streaming`, with plain stores. Call stream_fence() before other threads read dst.
inline void copy_floats(float* dst, const float* src, Index count, bool streaming) {
  if (!streaming) {
    std::copy(src, src + count, dst);
    return;
  }
  const auto first_vector = reinterpret_cast<std::uintptr_t>(dst) / sizeof(float) % kStreamFloats;
  const Index head = std::min<Index>(count, (kStreamFloats - first_vector) % kStreamFloats);
  std::copy(src, src + head, dst);
  Index i = head;
  for (; i + kStreamFloats <= count; i += kStreamFloats) stream_vector(dst + i, src + i);
  std::copy(src + i, src + count, dst + i);
}

// The CPU ceiling: the same bytes read and written once, in order, each OpenMP thread a
// contiguous share that starts on a 64-byte line, so no line is written by two threads. Any
// element type: the bytes are copied as floats, and the last few (fewer than 4) one by one.
inline void parallel_copy(const void* in, void* out, std::size_t bytes, bool streaming) {
#pragma omp parallel
  {
    constexpr std::size_t kLineBytes = kCacheLineBytes;
    const std::size_t lines = (bytes + kLineBytes - 1) / kLineBytes;
    const std::size_t threads = omp_get_num_threads(), thread = omp_get_thread_num();
    const std::size_t begin = std::min(bytes, lines * thread / threads * kLineBytes);
    const std::size_t end = std::min(bytes, lines * (thread + 1) / threads * kLineBytes);
    const std::size_t whole_floats = (end - begin) / sizeof(float);
    const auto* src = static_cast<const unsigned char*>(in) + begin;
    auto* dst = static_cast<unsigned char*>(out) + begin;
    copy_floats(reinterpret_cast<float*>(dst), reinterpret_cast<const float*>(src),
                static_cast<Index>(whole_floats), streaming);
    const std::size_t done = whole_floats * sizeof(float);
    std::memcpy(dst + done, src + done, end - begin - done);
    stream_fence();
  }
}

}  // namespace lab
