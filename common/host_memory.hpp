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
using HostFloats = std::unique_ptr<float[], FreeDeleter>;

// Page-aligned, transparent-huge-page-advised, uninitialised; exits cleanly if allocation fails.
HostFloats allocate_host_floats(std::size_t count, const char* what);

}  // namespace lab
