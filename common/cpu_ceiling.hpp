// The CPU drivers' ceiling: an OpenMP copy of the same bytes (parallel_copy), timed beside the
// transposes. Which kind of store copies fastest depends on the host, not only on the bytes, so
// with LAB_STREAMING_STORES=auto both kinds are timed and the faster is the ceiling; with "on" or
// "off", that kind alone, the one the transposes then use too.
#pragma once
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "config.hpp"
#include "report.hpp"
#include "streaming_copy.hpp"

namespace lab {

class CpuCeiling {
 public:
  CpuCeiling() {
    const std::optional<bool> forced = forced_streaming();  // a bad setting exits here
    streaming_ = forced ? std::vector<bool>{*forced} : std::vector<bool>{false, true};
  }

  // The copies, to time before the pieces after them: medians_ms[0, copies()) are theirs.
  std::size_t copies() const { return streaming_.size(); }
  void add_copies(std::vector<std::function<void()>>& pieces, const void* in, void* out,
                  std::size_t bytes) const {
    for (const bool streaming : streaming_)
      pieces.push_back([=] { parallel_copy(in, out, bytes, streaming); });
  }

  double ms(const std::vector<double>& medians_ms) const {
    return *std::min_element(medians_ms.begin(), medians_ms.begin() + copies());
  }

  // The table's copy rows, each against the faster (report.hpp's ceiling_rows).
  std::vector<TableRow> table_rows(std::int64_t rows, std::int64_t cols, int elem_bytes,
                                   const std::vector<double>& medians_ms) const {
    std::vector<CopyTiming> copies;
    for (std::size_t k = 0; k < streaming_.size(); ++k)
      copies.push_back({"copy",
                        streaming_[k] ? "omp copy, streaming stores" : "omp copy, plain stores",
                        medians_ms[k], "-"});
    return ceiling_rows(rows, cols, elem_bytes, copies);
  }

  // The run header's line on the ceiling.
  std::string line() const {
    if (streaming_.size() > 1)
      return "ceiling  the faster of the OpenMP copy with plain stores and with streaming stores, "
             "timed beside each row: % of copy is of that one";
    return std::string("ceiling  the OpenMP copy with ") +
           (streaming_.front() ? "streaming stores (" : "plain stores (") +
           kStreamingStoresVariable + (streaming_.front() ? "=on)" : "=off)");
  }

 private:
  std::vector<bool> streaming_;  // the copies' stores, in timing order
};

}  // namespace lab
