// Checks PERMUTE.v3_tiled's index arithmetic on the host, where no GPU is needed: its fast
// division against `/`, and its plan (PERMUTE.v3_tiled/plan.hpp, the very header the kernel uses)
// by moving every element where the plan sends it and verifying the result against the definition.
//   permute_plan_probe division                   many divisors and dividends, up to 2^64 - 1
//   permute_plan_probe plan DTYPE SHAPE PERM CAP  the kernels' loops replayed with at most CAP
//                                                 blocks along each grid axis (the kernel's cap is
//                                                 65535; a small one makes every loop turn)
// Prints one line; exits 0 when everything agreed, 1 when not, 2 on bad arguments.
#include <cinttypes>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <string>
#include <vector>

#include "../PERMUTE.v3_tiled/plan.hpp"
#include "../common/config.hpp"
#include "../common/host_memory.hpp"

namespace {

using lab::Index;
using u64 = std::uint64_t;

int check_division() {
  std::vector<u64> divisors, dividends = {0,
                                          1,
                                          2,
                                          3,
                                          (u64{1} << 31) - 1,
                                          u64{1} << 31,
                                          (u64{1} << 32) - 1,
                                          u64{1} << 32,
                                          (u64{1} << 32) + 1,
                                          (u64{1} << 62) - 1,
                                          (u64{1} << 63) - 1,
                                          u64{1} << 63,
                                          ~u64{0} - 1,
                                          ~u64{0}};
  for (u64 d = 1; d <= 4096; ++d) divisors.push_back(d);
  for (int bit = 12; bit < 64; ++bit)
    for (const long delta : {-3L, -1L, 0L, 1L, 3L}) divisors.push_back((u64{1} << bit) + delta);
  for (const u64 d : {u64{3} * 5 * 17 * 257, u64{2147483647}, u64{4294967291}, u64{4294967311},
                      u64{50176}, u64{3136}, ~u64{0}, ~u64{0} - 58})
    divisors.push_back(d);
  std::mt19937_64 random(12345);
  for (int i = 0; i < 2000; ++i) divisors.push_back((random() >> (random() % 64)) | 1);
  for (int i = 0; i < 200; ++i) dividends.push_back(random() >> (random() % 64));
  u64 checked = 0;
  for (const u64 d : divisors) {
    const lab::FastDivision fast(d);
    std::vector<u64> near = dividends;
    for (const u64 k : {u64{1}, u64{2}, u64{7}, u64{65535}, ~u64{0} / d})
      if (k <= ~u64{0} / d)
        for (const u64 n : {k * d - 1, k * d, k * d + (k * d < ~u64{0} ? 1 : 0)}) near.push_back(n);
    for (const u64 n : near) {
      ++checked;
      if (fast.quotient(n) != n / d) {
        std::printf("division WRONG: %" PRIu64 " / %" PRIu64 " gave %" PRIu64 ", want %" PRIu64
                    "\n",
                    n, d, fast.quotient(n), n / d);
        return 1;
      }
    }
  }
  std::printf("division: %" PRIu64 " quotients by %zu divisors equal to /\n", checked,
              divisors.size());
  return 0;
}

Index blocks(Index count, Index per_block, Index cap) {
  return std::min(cap, (count + per_block - 1) / per_block);
}

// PERMUTE.v3_tiled's two kernels, every block and thread in turn; a tile's loads all happen
// before its stores, as __syncthreads makes them on the GPU.
template <class T>
void replay(const T* in, T* out, const lab::Plan& plan, Index cap) {
  constexpr int kTile = 32, kRows = 8, kPiece = kTile * (kTile / kRows);
  if (plan.runs) {
    const Index grid_x = blocks(plan.cols, kPiece, cap),
                grid_y = blocks(plan.batch.count, kRows, cap);
    for (Index by = 0; by < grid_y; ++by)
      for (Index bx = 0; bx < grid_x; ++bx)
        for (int ty = 0; ty < kRows; ++ty)
          for (Index b = by * kRows + ty; b < plan.batch.count; b += grid_y * kRows) {
            Index in_base, out_base;
            plan.batch.offsets(b, in_base, out_base);
            for (Index piece = bx * kPiece; piece < plan.cols; piece += grid_x * kPiece)
              for (int j = 0; j < kPiece; j += kTile)
                for (int tx = 0; tx < kTile; ++tx) {
                  const Index c = piece + j + tx;
                  if (c < plan.cols) out[out_base + c] = in[in_base + c];
                }
          }
    return;
  }
  const Index grid_x = blocks(plan.cols, kTile, cap), grid_y = blocks(plan.rows, kTile, cap),
              grid_z = blocks(plan.batch.count, 1, cap);
  std::vector<T> tile(kTile * (kTile + 1));
  for (Index bz = 0; bz < grid_z; ++bz)
    for (Index by = 0; by < grid_y; ++by)
      for (Index bx = 0; bx < grid_x; ++bx)
        for (Index b = bz; b < plan.batch.count; b += grid_z) {
          Index in_base, out_base;
          plan.batch.offsets(b, in_base, out_base);
          for (Index tile_r = by * kTile; tile_r < plan.rows; tile_r += grid_y * kTile)
            for (Index tile_c = bx * kTile; tile_c < plan.cols; tile_c += grid_x * kTile) {
              for (int y = 0; y < kTile; ++y)
                for (int x = 0; x < kTile; ++x) {
                  const Index r = tile_r + y, c = tile_c + x;
                  if (r < plan.rows && c < plan.cols)
                    tile[y * (kTile + 1) + x] = in[in_base + r * plan.in_pitch + c];
                }
              for (int y = 0; y < kTile; ++y)
                for (int x = 0; x < kTile; ++x) {
                  const Index r = tile_c + y, c = tile_r + x;
                  if (r < plan.cols && c < plan.rows)
                    out[out_base + r * plan.out_pitch + c] = tile[x * (kTile + 1) + y];
                }
            }
        }
}

template <class T>
int check_plan(const lab::Dtype& type, const lab::Permutation& p, Index cap) {
  auto in = lab::allocate_host<T>(p.elements(), "the input");
  auto out = lab::allocate_host<T>(p.elements(), "the output");
  const lab::Plan plan = lab::plan_of(p);
  const lab::PermuteVerification check = lab::verify_permute_every_fill(
      type, in.get(), out.get(), p, [&] { replay(in.get(), out.get(), plan, cap); });
  std::printf("%s: %s %" PRId64 " x %" PRId64 " planes, batch of %" PRId64 " over %d axes: %s\n",
              p.shape_text().c_str(), plan.runs ? "runs" : "tiles", plan.rows, plan.cols,
              plan.batch.count, plan.batch.axes, check.describe().c_str());
  return check.ok() ? 0 : 1;
}

}  // namespace

int main(int argc, char** argv) {
  const std::string mode = argc > 1 ? argv[1] : "";
  if (mode == "division" && argc == 2) return check_division();
  if (mode != "plan" || argc != 6) {
    std::fprintf(stderr, "usage: permute_plan_probe division | plan DTYPE SHAPE PERM CAP\n");
    return lab::kExitUsage;
  }
  char* options[] = {argv[0], const_cast<char*>("--dtype"), argv[2], const_cast<char*>("--shape"),
                     argv[3], const_cast<char*>("--perm"),  argv[4]};
  const lab::PermuteOptions parsed =
      lab::parse_permute_options_or_exit(7, options, "permute_plan_probe", 1, "on the host");
  const Index cap = std::atoll(argv[5]);
  if (cap < 1) {
    std::fprintf(stderr, "permute_plan_probe: CAP must be at least 1\n");
    return lab::kExitUsage;
  }
  return lab::with_storage_type(parsed.dtype->bytes, [&](auto element) {
    return check_plan<decltype(element)>(*parsed.dtype, parsed.problem, cap);
  });
}
