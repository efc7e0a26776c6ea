// Checks the index arithmetic of PERMUTE.v3_tiled and PERMUTE.v4_small_planes on the host, where
// no GPU is needed: v3's fast division against `/`, and each step's plan (its plan.hpp, the very
// header its kernel uses) by moving every element where the plan sends it and verifying the result
// against the definition.
//   permute_plan_probe division                   many divisors and dividends, up to 2^64 - 1
//   permute_plan_probe plan DTYPE SHAPE PERM CAP  v3's kernels replayed with at most CAP blocks
//                                                 along each grid axis (the kernel's cap is
//                                                 65535; a small one makes every loop turn)
//   permute_plan_probe small DTYPE SHAPE PERM CAP v4's launcher replayed the same way: its
//                                                 small-planes kernel, or v3's where it hands over
// Prints one line; exits 0 when everything agreed, 1 when not, 2 on bad arguments.
#include <algorithm>
#include <cinttypes>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <string>
#include <vector>

#include "../PERMUTE.v4_small_planes/small_planes.hpp"
#include "../common/config.hpp"
#include "../common/host_memory.hpp"

namespace {

using lab::Index;
using u64 = std::uint64_t;

// FastDivision (Word = u64) or FastDivision32 (Word = std::uint32_t) against `/`: every divisor up
// to 4096, those near each power of two, a few the cases meet and random ones; for each, dividends
// near 0, near 2^31 and 2^32 (for 64 bits, near 2^63 and 2^64 too), next to multiples of the
// divisor and random ones, all below 2^N.
template <class Word>
bool divides_exactly(u64* checked, std::size_t* divisor_count) {
  constexpr int kBits = 8 * sizeof(Word);
  constexpr u64 kMax = kBits == 64 ? ~u64{0} : (u64{1} << kBits) - 1;
  std::vector<u64> divisors, dividends;
  for (const u64 n : {u64{0}, u64{1}, u64{2}, u64{3}, (u64{1} << 31) - 1, u64{1} << 31,
                      (u64{1} << 32) - 1, u64{1} << 32, (u64{1} << 32) + 1, (u64{1} << 62) - 1,
                      (u64{1} << 63) - 1, u64{1} << 63, ~u64{0} - 1, ~u64{0}})
    if (n <= kMax) dividends.push_back(n);
  for (u64 d = 1; d <= 4096; ++d) divisors.push_back(d);
  for (int bit = 12; bit < kBits; ++bit)
    for (const long delta : {-3L, -1L, 0L, 1L, 3L}) divisors.push_back((u64{1} << bit) + delta);
  for (const u64 d : {u64{3} * 5 * 17 * 257, u64{2147483647}, u64{4294967291}, u64{4294967311},
                      u64{50176}, u64{3136}, ~u64{0}, ~u64{0} - 58})
    divisors.push_back(d);
  std::mt19937_64 random(12345);
  for (int i = 0; i < 2000; ++i) divisors.push_back((random() >> (random() % 64)) | 1);
  for (int i = 0; i < 200; ++i) dividends.push_back(random() >> (random() % 64));
  for (u64& d : divisors) d = d > kMax ? (d & kMax) | 1 : d;
  for (u64& n : dividends) n &= kMax;
  for (const u64 d : divisors) {
    const lab::BasicFastDivision<Word> fast(static_cast<Word>(d));
    std::vector<u64> near = dividends;
    for (const u64 k : {u64{1}, u64{2}, u64{7}, u64{65535}, kMax / d})
      if (k <= kMax / d)
        for (const u64 n : {k * d - 1, k * d, k * d + (k * d < kMax ? 1 : 0)}) near.push_back(n);
    for (const u64 n : near) {
      ++*checked;
      const u64 got = fast.quotient(static_cast<Word>(n));
      if (got != n / d) {
        std::printf("division WRONG (%d bits): %" PRIu64 " / %" PRIu64 " gave %" PRIu64
                    ", want %" PRIu64 "\n",
                    kBits, n, d, got, n / d);
        return false;
      }
    }
  }
  *divisor_count += divisors.size();
  return true;
}

int check_division() {
  u64 checked = 0;
  std::size_t divisors = 0;
  if (!divides_exactly<u64>(&checked, &divisors) ||
      !divides_exactly<std::uint32_t>(&checked, &divisors))
    return 1;
  std::printf("division: %" PRIu64 " quotients by %zu divisors (64 and 32 bits) equal to /\n",
              checked, divisors);
  return 0;
}

Index blocks(Index count, Index per_block, Index cap) {
  return std::min(cap, (count + per_block - 1) / per_block);
}

// The sectors (32 bytes) the warps' accesses touch, one warp access at a time, against the
// sectors a copy of the same bytes touches: what Nsight Compute counts as
// l1tex__t_sectors_pipe_lsu_mem_global_op_{ld,st} (arrays start on a 256-byte boundary, as
// cudaMalloc's do). 100%: every sector a warp touches is filled.
struct Sectors {
  Index touched = 0, bytes = 0;
  std::vector<Index> warp;
  void add(Index element, std::size_t size) {
    warp.push_back(element * static_cast<Index>(size) / 32);
    bytes += static_cast<Index>(size);
  }
  void end_warp() {
    std::sort(warp.begin(), warp.end());
    touched += std::unique(warp.begin(), warp.end()) - warp.begin();
    warp.clear();
  }
  double percent() const { return touched ? 100.0 * bytes / 32 / touched : 100.0; }
};

// PERMUTE.v3_tiled's two kernels, every block and thread in turn; a tile's loads all happen
// before its stores, as __syncthreads makes them on the GPU.
template <class T>
void replay(const T* in, T* out, const lab::Plan& plan, Index cap, Sectors& loads,
            Sectors& stores) {
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
                  if (c < plan.cols) {
                    out[out_base + c] = in[in_base + c];
                    loads.add(in_base + c, sizeof(T));
                    stores.add(out_base + c, sizeof(T));
                  }
                  if (tx == kTile - 1) loads.end_warp(), stores.end_warp();
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
                  if (r < plan.rows && c < plan.cols) {
                    tile[y * (kTile + 1) + x] = in[in_base + r * plan.in_pitch + c];
                    loads.add(in_base + r * plan.in_pitch + c, sizeof(T));
                  }
                  if (x == kTile - 1) loads.end_warp();
                }
              for (int y = 0; y < kTile; ++y)
                for (int x = 0; x < kTile; ++x) {
                  const Index r = tile_c + y, c = tile_r + x;
                  if (r < plan.cols && c < plan.rows) {
                    out[out_base + r * plan.out_pitch + c] = tile[x * (kTile + 1) + y];
                    stores.add(out_base + r * plan.out_pitch + c, sizeof(T));
                  }
                  if (x == kTile - 1) stores.end_warp();
                }
            }
        }
}

template <class T>
int check_plan(const lab::Dtype& type, const lab::Permutation& p, Index cap) {
  auto in = lab::allocate_host<T>(p.elements(), "the input");
  auto out = lab::allocate_host<T>(p.elements(), "the output");
  const lab::Plan plan = lab::plan_of(p);
  Sectors loads, stores;
  const lab::PermuteVerification check =
      lab::verify_permute_every_fill(type, in.get(), out.get(), p, [&] {
        loads = stores = Sectors{};
        replay(in.get(), out.get(), plan, cap, loads, stores);
      });
  std::printf("%s: %s %" PRId64 " x %" PRId64 " planes, batch of %" PRId64
              " over %d axes; sectors used %.1f%% loading, %.1f%% storing: %s\n",
              p.shape_text().c_str(), plan.runs ? "runs" : "tiles", plan.rows, plan.cols,
              plan.batch.count, plan.batch.axes, loads.percent(), stores.percent(),
              check.describe().c_str());
  return check.ok() ? 0 : 1;
}

// PERMUTE.v4_small_planes's kernel: every block and thread in turn, each thread's places worked
// out once as on the GPU; a tile's loads all happen before its stores. Beyond the verification,
// it fails on what a GPU would not show every time: a shared slot outside the tile or written
// twice in one tile (a race), a store that reads a slot this tile never wrote, an index outside
// the tensor.
template <class T>
bool replay_small(const T* in, T* out, const lab::SmallPlanes& plan, Index cap, Index count,
                  Sectors& loads, Sectors& stores) {
  constexpr int kThreads = 256, kPerThread = lab::kTileElements / kThreads, kWarp = 32;
  struct Places {
    Index offset[kPerThread];
    int shared[kPerThread], at[kPerThread];
  };
  std::vector<Places> load(kThreads), store(kThreads);
  for (int t = 0; t < kThreads; ++t)
    for (int k = 0; k < kPerThread; ++k) {
      plan.load_place(t + k * kThreads, load[t].offset[k], load[t].shared[k], load[t].at[k]);
      plan.store_place(t + k * kThreads, store[t].offset[k], store[t].shared[k], store[t].at[k]);
    }
  const Index grid_x = blocks(plan.tiles, 1, cap), grid_y = blocks(plan.batch.count, 1, cap);
  const Index in_step = plan.in_stride[plan.along], out_step = plan.out_stride[plan.along];
  const Index per_tile = plan.box[plan.along];
  std::vector<T> tile(lab::kSharedElements);
  std::vector<int> written(lab::kSharedElements);
  int tile_number = 0;
  auto fail = [](const char* what, Index where) {
    std::printf("small planes WRONG: %s (%" PRId64 ")\n", what, where);
    return false;
  };
  int inside = 0;
  // One pass over a tile, its loads or its stores: each thread's k-th element, warp by warp.
  auto pass = [&](const std::vector<Places>& places, Index base, Sectors& sectors, auto&& move) {
    for (int k = 0; k < kPerThread; ++k)
      for (int thread = 0; thread < kThreads; ++thread) {
        const Places& at = places[thread];
        if (at.at[k] < inside) {
          const Index element = base + at.offset[k];
          const int slot = at.shared[k];
          if (element < 0 || element >= count) return fail("an index outside the tensor", element);
          if (slot < 0 || slot >= lab::kSharedElements) return fail("a slot outside", slot);
          if (!move(element, slot)) return false;
          sectors.add(element, sizeof(T));
        }
        if (thread % kWarp == kWarp - 1) sectors.end_warp();
      }
    return true;
  };
  for (Index by = 0; by < grid_y; ++by)
    for (Index bx = 0; bx < grid_x; ++bx)
      for (Index b = by; b < plan.batch.count; b += grid_y) {
        Index in_base, out_base;
        plan.batch.offsets(b, in_base, out_base);
        for (Index t = bx; t < plan.tiles; t += grid_x) {
          ++tile_number;
          const Index first = t * per_tile, left = plan.extent - first;
          inside = static_cast<int>(left < per_tile ? left : per_tile);
          const Index tile_in = in_base + first * in_step, tile_out = out_base + first * out_step;
          const bool loaded = pass(load, tile_in, loads, [&](Index from, int slot) {
            if (written[slot] == tile_number) return fail("a slot loaded twice", slot);
            written[slot] = tile_number;
            tile[slot] = in[from];
            return true;
          });
          if (!loaded) return false;
          const bool stored = pass(store, tile_out, stores, [&](Index to, int slot) {
            if (written[slot] != tile_number) return fail("a slot stored unloaded", slot);
            out[to] = tile[slot];
            return true;
          });
          if (!stored) return false;
        }
      }
  return true;
}

// v4's launcher on the host: its own kernel where its plan is used, v3's elsewhere.
template <class T>
int check_small_planes(const lab::Dtype& type, const lab::Permutation& p, Index cap) {
  const lab::SmallPlanes plan = lab::small_planes_of(p);
  if (!plan.used) {
    std::printf("small planes not used, v3's kernels: ");
    return check_plan<T>(type, p, cap);
  }
  auto in = lab::allocate_host<T>(p.elements(), "the input");
  auto out = lab::allocate_host<T>(p.elements(), "the output");
  Sectors loads, stores;
  bool sound = true;
  const lab::PermuteVerification check =
      lab::verify_permute_every_fill(type, in.get(), out.get(), p, [&] {
        loads = stores = Sectors{};
        sound = sound && replay_small(in.get(), out.get(), plan, cap, p.elements(), loads, stores);
      });
  static const char* const kAxes[] = {"planes", "rows", "columns"};
  std::printf("%s: small planes, tiles of %d planes x %d x %d along the %s, %" PRId64
              " tiles x batch of %" PRId64 "; sectors used %.1f%% loading, %.1f%% storing: %s\n",
              p.shape_text().c_str(), plan.box[0], plan.box[1], plan.box[2], kAxes[plan.along],
              plan.tiles, plan.batch.count, loads.percent(), stores.percent(),
              check.describe().c_str());
  return check.ok() && sound ? 0 : 1;
}

}  // namespace

int main(int argc, char** argv) {
  const std::string mode = argc > 1 ? argv[1] : "";
  if (mode == "division" && argc == 2) return check_division();
  if ((mode != "plan" && mode != "small") || argc != 6) {
    std::fprintf(stderr,
                 "usage: permute_plan_probe division | plan DTYPE SHAPE PERM CAP | small DTYPE "
                 "SHAPE PERM CAP\n");
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
    using T = decltype(element);
    return mode == "small" ? check_small_planes<T>(*parsed.dtype, parsed.problem, cap)
                           : check_plan<T>(*parsed.dtype, parsed.problem, cap);
  });
}
