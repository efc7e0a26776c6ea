#include "host_memory.hpp"

#include <sys/mman.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <sstream>

#include "config.hpp"

namespace lab {

HostMemoryInfo read_host_memory() {
  HostMemoryInfo info;
  std::ifstream meminfo("/proc/meminfo");
  std::string key;
  std::size_t kib = 0;
  std::string unit;
  while (meminfo >> key >> kib >> unit) {
    if (key == "MemTotal:") info.total = kib * 1024;
    if (key == "MemAvailable:") info.available = kib * 1024;
  }
  return info;
}

std::string format_bytes(std::size_t bytes) {
  char text[96];
  std::snprintf(text, sizeof text, "%zu bytes (%.1f GiB)", bytes,
                static_cast<double>(bytes) / (1u << 30));
  return text;
}

void require_host_memory(std::size_t bytes, const char* what) {
  const HostMemoryInfo info = read_host_memory();
  // MemTotal, not MemAvailable: on VMs whose memory grows on demand MemAvailable reads low at
  // start. A request over MemTotal can never succeed; one under it is tried, and a failed
  // allocation is reported by allocate_host_floats.
  if (info.total != 0 && bytes > info.total) {
    std::fprintf(stderr,
                 "error: %s needs %s of host memory; this machine has %s in all (%s available)\n",
                 what, format_bytes(bytes).c_str(), format_bytes(info.total).c_str(),
                 format_bytes(info.available).c_str());
    std::exit(kExitNoMemory);
  }
}

void FreeDeleter::operator()(void* p) const {
  std::free(p);
}

void* allocate_host_bytes(std::size_t wanted, const char* what) {
  constexpr std::size_t kHugePage = std::size_t{2} << 20;
  const std::size_t bytes =
      (std::max<std::size_t>(wanted, 1) + kHugePage - 1) / kHugePage * kHugePage;
  void* p = std::aligned_alloc(kHugePage, bytes);
  if (p == nullptr) {
    std::fprintf(stderr, "error: could not allocate %s for %s; %s available\n",
                 format_bytes(bytes).c_str(), what,
                 format_bytes(read_host_memory().available).c_str());
    std::exit(kExitNoMemory);
  }
  // Huge pages: a transpose walks columns, and 4 KiB pages would make it a TLB benchmark.
  madvise(p, bytes, MADV_HUGEPAGE);
  return p;
}

std::size_t huge_page_bytes() {
  std::ifstream rollup("/proc/self/smaps_rollup");
  std::string line;
  while (std::getline(rollup, line)) {
    std::istringstream fields(line);
    std::string key;
    std::size_t kib = 0;
    if (fields >> key >> kib && key == "AnonHugePages:") return kib * 1024;
  }
  return 0;
}

}  // namespace lab
