// CPU timing: warm up, run many times, report the median (robust against the odd slow run).
#pragma once

#include <algorithm>
#include <chrono>
#include <vector>

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

// Untimed runs until both kWarmupRuns runs and kMinWarmupMs have passed: the first runs pay for
// page faults, cold caches and clocks still ramping up. `run` must finish its work (synchronise).
template <class Run>
void warm_up(Run&& run) {
  const auto start = std::chrono::steady_clock::now();
  for (int i = 0; i < kWarmupRuns || elapsed_ms(start) < kMinWarmupMs; ++i) run();
}

template <class Run>
double median_cpu_ms(Run&& run, int reps) {
  warm_up(run);
  std::vector<double> times_ms;
  times_ms.reserve(reps);
  for (int i = 0; i < reps; ++i) {
    const auto start = std::chrono::steady_clock::now();
    run();
    const auto stop = std::chrono::steady_clock::now();
    times_ms.push_back(std::chrono::duration<double, std::milli>(stop - start).count());
  }
  return median(times_ms);
}

}  // namespace lab
