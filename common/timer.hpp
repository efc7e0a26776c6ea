// CPU timing: warm up, run many times, report the median (robust against the odd slow run).
#pragma once

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <vector>

#include "cache_flush.hpp"
#include "config.hpp"

namespace lab {

inline double median(std::vector<double> values) {
  if (values.empty()) return 0.0;
  const std::size_t mid = values.size() / 2;
  std::nth_element(values.begin(), values.begin() + mid, values.end());
  const double upper = values[mid];
  if (values.size() % 2 == 1) return upper;
  return (*std::max_element(values.begin(), values.begin() + mid) + upper) / 2.0;
}

inline double elapsed_ms(std::chrono::steady_clock::time_point since) {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - since)
      .count();
}

// The warm-up's minimum: kMinWarmupMs, or what LAB_WARMUP_MS says (read once; a bad value is a
// usage error, never silently a different warm-up).
inline double min_warmup_ms() {
  static const double minimum = [] {
    const char* setting = std::getenv(kWarmupVariable);
    if (setting == nullptr) return kMinWarmupMs;
    char* end = nullptr;
    const double ms = std::strtod(setting, &end);
    if (end == setting || *end != '\0' || !(ms >= 0.0 && ms <= kMaxWarmupMs)) {
      std::fprintf(stderr, "error: %s=%s: use milliseconds from 0 to %.0f\n", kWarmupVariable,
                   setting, kMaxWarmupMs);
      std::exit(kExitUsage);
    }
    return ms;
  }();
  return minimum;
}

// Untimed runs until both kWarmupRuns runs and min_warmup_ms() have passed: the first runs pay for
// page faults, cold caches and clocks still ramping up. `run` must finish its work (synchronise).
template <class Run>
void warm_up(Run&& run) {
  const double minimum_ms = min_warmup_ms();
  const auto start = std::chrono::steady_clock::now();
  for (int i = 0; i < kWarmupRuns || elapsed_ms(start) < minimum_ms; ++i) run();
}

// Times several pieces of work in turn (a, b, c, a, b, c, ...) after a common warm-up, so they
// all see the same clocks and memory state and a drift cannot favour one; one median each.
// Each timed run follows an untimed run of the same piece, then the flush of
// common/cache_flush.hpp: a piece must not inherit another's cache state. (The naive transpose
// leaves hundreds of MB of modified lines in a large L3; the piece after it would pay to write them
// back.) before_last(p) runs ahead of piece p's last untimed-then-timed pair, after_last(p) after
// it, both untimed: pieces that share an output poison it and verify the last timed run there.
inline std::vector<double> median_cpu_ms_alternating(
    const std::vector<std::function<void()>>& pieces, int reps,
    const std::function<void(std::size_t)>& before_last = nullptr,
    const std::function<void(std::size_t)>& after_last = nullptr) {
  warm_up([&] {
    for (const auto& piece : pieces) piece();
  });
  std::vector<std::vector<double>> times_ms(pieces.size());
  for (int i = 0; i < reps; ++i) {
    for (std::size_t p = 0; p < pieces.size(); ++p) {
      const bool last = i == reps - 1;
      if (last && before_last) before_last(p);
      pieces[p]();
      flush_cpu_caches();  // cold, unless LAB_CPU_FLUSH=off: the untimed run still sets up the
                           // pages
      const auto start = std::chrono::steady_clock::now();
      pieces[p]();
      times_ms[p].push_back(elapsed_ms(start));
      if (last && after_last) after_last(p);
    }
  }
  std::vector<double> medians;
  for (const auto& times : times_ms) medians.push_back(median(times));
  return medians;
}

}  // namespace lab
