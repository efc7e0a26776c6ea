// Host buffers large enough for the biggest matrices, refused with a clear message (and
// kExitNoMemory) when they cannot fit, instead of an out-of-memory kill half way through.
#pragma once

#include <cstddef>
#include <memory>
#include <string>

namespace lab {

struct HostMemoryInfo {
  std::size_t total = 0;      // MemTotal
  std::size_t available = 0;  // MemAvailable
};
HostMemoryInfo read_host_memory();

std::string format_bytes(std::size_t bytes);  // "268435456 bytes (256.0 MiB)"

// Exits with a message naming the bytes needed and available when `bytes` cannot fit.
void require_host_memory(std::size_t bytes, const char* what);

struct FreeDeleter {
  void operator()(void* p) const;
};
template <class T>
using HostArray = std::unique_ptr<T[], FreeDeleter>;

// Huge-page-aligned, transparent-huge-page-advised, uninitialised; exits cleanly if allocation
// fails.
void* allocate_host_bytes(std::size_t bytes, const char* what);

// Bytes of this process's anonymous memory that the kernel has put on huge pages (AnonHugePages
// of /proc/self/smaps_rollup; 0 where it cannot be read): madvise asks, this says what was given.
std::size_t huge_page_bytes();

template <class T>
HostArray<T> allocate_host(std::size_t count, const char* what) {
  return HostArray<T>(static_cast<T*>(allocate_host_bytes(count * sizeof(T), what)));
}

}  // namespace lab
