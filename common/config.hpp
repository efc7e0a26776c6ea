// Every constant the harness shares: one place to read and change them.
#pragma once

#include <cstddef>
#include <cstdint>

namespace lab {

constexpr int kDefaultSize = 8192;        // rows and cols when none are given
constexpr int kDefaultGpuReps = 50;       // timed launches per GPU measurement
constexpr int kDefaultCpuReps = 10;       // timed runs per CPU measurement
constexpr int kWarmupRuns = 2;            // untimed runs before every timed series, at least...
constexpr double kMinWarmupMs = 200.0;    // ...and this long: clocks ramp up when work starts
constexpr double kMaxWarmupMs = 60000.0;  // the most LAB_WARMUP_MS may ask for
// Sets the warm-up's minimum instead of kMinWarmupMs (milliseconds). The tests set it to 0: they
// check results, never speed, and thousands of runs would spend minutes warming up a shared GPU.
constexpr const char* kWarmupVariable = "LAB_WARMUP_MS";
constexpr int kMaxEndToEndReps = 5;  // host->device->host round trips are slow: fewer
constexpr int kMaxReps = 100000;     // beyond this a typo is more likely than intent
// Freed device and pinned blocks a kernel driver keeps for its next case (common/cuda_harness.cuh),
// of each kind: the runs that --cases batches are small.
constexpr std::size_t kKeptBlockBytes = std::size_t{1} << 30;
// Runs of each kind of store when a CPU transpose plans its stores (common/streaming_copy.hpp).
constexpr int kStorePlanTrials = 2;
constexpr const char* kStreamingStoresVariable = "LAB_STREAMING_STORES";  // on, off, auto
// How the GPU drivers empty L2 before each timed launch (common/cuda_harness.cuh): "write" (the
// default, as nvbench: a memset as large as L2) or "read" (a read of several L2s of bytes).
constexpr const char* kL2FlushVariable = "LAB_L2_FLUSH";
constexpr int kL2ReadFlushMultiple = 2;  // "read" reads this many times L2's bytes
// Whether the CPU drivers flush their buffers from the caches before each timed run
// (common/cache_flush.hpp): "on" (the default) or "off" (warm caches).
constexpr const char* kCpuFlushVariable = "LAB_CPU_FLUSH";
constexpr std::size_t kCacheLineBytes = 64;  // the CPU's cache line

// Exit codes every program shares (tests and transpose_lab/run_steps.py rely on them).
constexpr int kExitOk = 0;
constexpr int kExitFailed = 1;    // verification failed or a runtime error
constexpr int kExitUsage = 2;     // bad command line
constexpr int kExitNoMemory = 3;  // the matrices do not fit in host or device memory
constexpr int kExitSkipped = 77;  // no CUDA device: the conventional "skipped"

}  // namespace lab
