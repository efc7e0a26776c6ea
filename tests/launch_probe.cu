// Calls each launcher of a kernel step for a shape, with no device needed when the launcher
// refuses the shape (lab::require_grid exits 2 before any CUDA call): the refusals are tested on
// any machine. Built by tests/test_launch_limits.py against the step's own .build/kernel.o.
//   launch_probe ROWS COLS ELEM_BYTES
#include <cstdio>
#include <cstdlib>

#include "../common/cuda_step.cuh"

int main(int argc, char** argv) {
  if (argc != 4) {
    std::fprintf(stderr, "usage: launch_probe ROWS COLS ELEM_BYTES\n");
    return lab::kExitUsage;
  }
  const int rows = std::atoi(argv[1]), cols = std::atoi(argv[2]);
  for (int v = 0; v < kKernelVariantCount; ++v) {
    lab::with_storage_type(std::atoi(argv[3]), [&](auto element) {
      using T = decltype(element);
      const LaunchShape shape =
          kKernelVariants[v].launcher<T>()(nullptr, nullptr, rows, cols, 0, lab::Dtype{});
      std::printf("%s: grid %u x %u x %u\n", kKernelVariants[v].name, shape.grid.x, shape.grid.y,
                  shape.grid.z);
      return 0;
    });
  }
  return lab::kExitOk;
}
