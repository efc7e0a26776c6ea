// The bus, pattern by pattern: what each way of moving a transpose's pieces between pinned host
// memory and the GPU reaches, alone and beside the other direction. CUDA.v8_streams' pipeline is
// one strided direction (a band of output columns: a segment in every output row) overlapped
// with the other; this program measures those patterns without the transpose, so the pipeline's
// losses can be told apart from the bus's (`make bus-probe`, README of CUDA.v8_streams).
//
//   bus_probe [--gib G | --mib M] [--pitch BYTES] [--widths W,W,...] [--blocks B,B,...]
//             [--copy-rows K] [--one-stream] [--host driver|huge] [--reps N] [--csv F]
//
// A host matrix of G GiB (M MiB) with rows PITCH bytes apart is written (down) or read (up) in
// segments of W bytes, one segment per row and piece, piece after piece, as the pipeline does:
//   up:   contig (one copy of a band of rows) | 2d (cudaMemcpy2DAsync of W-byte rows) |
//         smB (common/band_copy.cuh's copy_rows with B blocks, from mapped host memory)
//   down: contig | 2d | smB (the same kernel, to mapped host memory)
// --copy-rows K issues each 2D copy as copies of at most K rows; --blocks none leaves out the SMs;
// --one-stream puts both directions on one stream (then nothing overlaps: a pipeline's stream).
// A pair runs its up pieces on one stream and its down pieces on another, nothing between them,
// so it is the steady state of a pipeline. GB/s counts the bytes of every direction that runs.
// --host huge pins the host matrices on 2 MiB pages instead of the driver's (cudaMallocHost);
// first_ms is the first, untimed-before pass, whose host pages the GPU has not translated yet.
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "../common/band_copy.cuh"
#include "../common/cuda_check.cuh"
#include "../common/cuda_harness.cuh"

namespace {

constexpr int kExitUsage = 2, kExitSkipped = 77;

[[noreturn]] void usage(const std::string& why) {
  std::fprintf(
      stderr,
      "bus_probe: %s\nusage: bus_probe [--gib G | --mib M] [--pitch BYTES] [--widths W,...] "
      "[--blocks B,...] [--copy-rows K] [--one-stream] [--host driver|huge] [--reps N] "
      "[--csv FILE]\n",
      why.c_str());
  std::exit(kExitUsage);
}

long long parse_positive(const std::string& flag, const std::string& text) {
  char* end = nullptr;
  const long long value = std::strtoll(text.c_str(), &end, 10);
  if (text.empty() || *end != '\0' || value <= 0)
    usage(flag + " wants a positive integer, not '" + text + "'");
  return value;
}

std::vector<long long> parse_list(const std::string& flag, const std::string& text) {
  std::vector<long long> values;
  std::size_t start = 0;
  while (start <= text.size()) {
    const std::size_t comma = std::min(text.find(',', start), text.size());
    values.push_back(parse_positive(flag, text.substr(start, comma - start)));
    start = comma + 1;
  }
  return values;
}

struct Setup {
  std::size_t bytes = std::size_t{1} << 30;
  std::size_t pitch = std::size_t{64} << 10;
  std::vector<long long> widths = {1024, 2048, 4096, 8192, 16384};
  std::vector<long long> blocks = {16, 64};
  int reps = 5;
  std::size_t copy_rows = 0;  // 2D copies of at most this many rows (0: a piece's rows in one)
  bool one_stream = false;    // both directions on one stream, piece by piece (a pipeline's stream)
  lab::PinnedPages pages = lab::PinnedPages::kDriver;
  std::string csv;
};

enum class Way { kNone, kContig, k2d, kSm };

struct Pattern {
  Way up, down;
  int blocks;  // kSm only
  std::string name() const {
    auto way = [&](Way w) -> std::string {
      switch (w) {
        case Way::kNone:
          return "-";
        case Way::kContig:
          return "contig";
        case Way::k2d:
          return "2d";
        default:
          return "sm" + std::to_string(blocks);
      }
    };
    return way(up) + "/" + way(down);
  }
};

struct Buffers {
  unsigned char *host_in, *host_out, *mapped_in, *mapped_out, *device_in, *device_out;
};

// Enqueues one pass over the matrix: P / W pieces, each a segment of W bytes in every row.
void enqueue(const Setup& s, const Pattern& p, std::size_t width, const Buffers& b, cudaStream_t up,
             cudaStream_t down) {
  const std::size_t rows = s.bytes / s.pitch, piece = rows * width;
  const std::size_t copy_rows = s.copy_rows > 0 ? s.copy_rows : rows;  // rows per 2D copy
  for (std::size_t j = 0; j < s.pitch / width; ++j) {
    if (p.up == Way::kContig)
      CUDA_CHECK(
          cudaMemcpyAsync(b.device_in, b.host_in + j * piece, piece, cudaMemcpyHostToDevice, up));
    else if (p.up == Way::k2d)
      for (std::size_t r = 0; r < rows; r += copy_rows)
        CUDA_CHECK(cudaMemcpy2DAsync(b.device_in + r * width, width,
                                     b.host_in + r * s.pitch + j * width, s.pitch, width,
                                     std::min(copy_rows, rows - r), cudaMemcpyHostToDevice, up));
    else if (p.up == Way::kSm) {
      lab::copy_rows(b.mapped_in + j * width, s.pitch, b.device_in, width, width,
                     static_cast<std::int64_t>(rows), p.blocks, up);
      CUDA_CHECK(cudaGetLastError());
    }
    if (p.down == Way::kContig)
      CUDA_CHECK(cudaMemcpyAsync(b.host_out + j * piece, b.device_out, piece,
                                 cudaMemcpyDeviceToHost, down));
    else if (p.down == Way::k2d)
      for (std::size_t r = 0; r < rows; r += copy_rows)
        CUDA_CHECK(cudaMemcpy2DAsync(b.host_out + r * s.pitch + j * width, s.pitch,
                                     b.device_out + r * width, width, width,
                                     std::min(copy_rows, rows - r), cudaMemcpyDeviceToHost, down));
    else if (p.down == Way::kSm) {
      lab::copy_band(b.device_out, b.mapped_out + j * width, width, s.pitch,
                     static_cast<std::int64_t>(rows), p.blocks, down);
      CUDA_CHECK(cudaGetLastError());
    }
  }
}

struct Timing {
  double first_ms, median_ms;  // the first pass; the median of the `reps` after it
};

Timing time_pattern(const Setup& s, const Pattern& p, std::size_t width, const Buffers& b,
                    cudaStream_t origin, cudaStream_t up, cudaStream_t down) {
  cudaEvent_t start, stop, up_done, down_done;
  CUDA_CHECK(cudaEventCreate(&start));
  CUDA_CHECK(cudaEventCreate(&stop));
  CUDA_CHECK(cudaEventCreateWithFlags(&up_done, cudaEventDisableTiming));
  CUDA_CHECK(cudaEventCreateWithFlags(&down_done, cudaEventDisableTiming));
  std::vector<float> ms;
  float first = 0;
  for (int r = 0; r <= s.reps; ++r) {
    CUDA_CHECK(cudaEventRecord(start, origin));
    CUDA_CHECK(cudaStreamWaitEvent(up, start, 0));
    CUDA_CHECK(cudaStreamWaitEvent(down, start, 0));
    enqueue(s, p, width, b, up, down);
    CUDA_CHECK(cudaEventRecord(up_done, up));
    CUDA_CHECK(cudaEventRecord(down_done, down));
    CUDA_CHECK(cudaStreamWaitEvent(origin, up_done, 0));
    CUDA_CHECK(cudaStreamWaitEvent(origin, down_done, 0));
    CUDA_CHECK(cudaEventRecord(stop, origin));
    CUDA_CHECK(cudaEventSynchronize(stop));
    float t = 0;
    CUDA_CHECK(cudaEventElapsedTime(&t, start, stop));
    if (r > 0)
      ms.push_back(t);
    else
      first = t;
  }
  for (cudaEvent_t e : {start, stop, up_done, down_done}) CUDA_CHECK(cudaEventDestroy(e));
  std::sort(ms.begin(), ms.end());
  return {first, ms[ms.size() / 2]};
}

}  // namespace

int main(int argc, char** argv) {
  Setup s;
  for (int i = 1; i < argc; ++i) {
    const std::string flag = argv[i];
    if (flag == "--help" || flag == "-h") usage("the bus, pattern by pattern");
    if (flag == "--one-stream") {
      s.one_stream = true;
      continue;
    }
    static const std::string kValued[] = {"--gib",    "--mib",    "--pitch",
                                          "--widths", "--blocks", "--copy-rows",
                                          "--host",   "--reps",   "--csv"};
    if (std::find(std::begin(kValued), std::end(kValued), flag) == std::end(kValued))
      usage("unknown option " + flag);
    if (i + 1 >= argc) usage(flag + " wants a value");
    const std::string value = argv[++i];
    if (flag == "--gib")
      s.bytes = static_cast<std::size_t>(parse_positive(flag, value)) << 30;
    else if (flag == "--mib")
      s.bytes = static_cast<std::size_t>(parse_positive(flag, value)) << 20;
    else if (flag == "--copy-rows")
      s.copy_rows = static_cast<std::size_t>(parse_positive(flag, value));
    else if (flag == "--pitch")
      s.pitch = static_cast<std::size_t>(parse_positive(flag, value));
    else if (flag == "--widths")
      s.widths = parse_list(flag, value);
    else if (flag == "--blocks")
      s.blocks = value == "none" ? std::vector<long long>{} : parse_list(flag, value);
    else if (flag == "--reps")
      s.reps = static_cast<int>(std::min(parse_positive(flag, value), 1000LL));
    else if (flag == "--csv")
      s.csv = value;
    else if (flag == "--host" && (value == "driver" || value == "huge"))
      s.pages = value == "huge" ? lab::PinnedPages::kHuge : lab::PinnedPages::kDriver;
    else if (flag == "--host")
      usage("--host must be driver or huge, not '" + value + "'");
    else
      usage("unknown option " + flag);
  }
  if (s.pitch % 16 != 0 || s.bytes % s.pitch != 0)
    usage("--pitch must be a multiple of 16 bytes that divides the matrix");
  for (long long w : s.widths)
    if (w % 16 != 0 || s.pitch % w != 0)
      usage("a width must be a multiple of 16 bytes that divides the pitch, not " +
            std::to_string(w));
  int devices = 0;
  if (cudaGetDeviceCount(&devices) != cudaSuccess || devices == 0) {
    std::printf("bus_probe: no CUDA device; skipped\n");
    return kExitSkipped;
  }
  const std::size_t rows = s.bytes / s.pitch;
  const std::size_t largest =
      rows * static_cast<std::size_t>(*std::max_element(s.widths.begin(), s.widths.end()));
  Buffers b{};
  const lab::PinnedArray<unsigned char> host_in =
      lab::allocate_pinned<unsigned char>(s.bytes, "the input", s.pages);
  const lab::PinnedArray<unsigned char> host_out =
      lab::allocate_pinned<unsigned char>(s.bytes, "the output", s.pages);
  b.host_in = host_in.get();
  b.host_out = host_out.get();
  CUDA_CHECK(cudaHostGetDevicePointer(reinterpret_cast<void**>(&b.mapped_in), b.host_in, 0));
  CUDA_CHECK(cudaHostGetDevicePointer(reinterpret_cast<void**>(&b.mapped_out), b.host_out, 0));
  CUDA_CHECK(cudaMalloc(&b.device_in, largest));
  CUDA_CHECK(cudaMalloc(&b.device_out, largest));
  // Touched once, so no pass pays for first use.
  CUDA_CHECK(cudaMemset(b.device_out, 1, largest));
  std::fill(b.host_in, b.host_in + s.bytes, 2);
  std::fill(b.host_out, b.host_out + s.bytes, 3);
  cudaStream_t origin, up, down;
  CUDA_CHECK(cudaStreamCreateWithFlags(&origin, cudaStreamNonBlocking));
  CUDA_CHECK(cudaStreamCreateWithFlags(&up, cudaStreamNonBlocking));
  CUDA_CHECK(cudaStreamCreateWithFlags(&down, cudaStreamNonBlocking));
  cudaDeviceProp prop;
  CUDA_CHECK(cudaGetDeviceProperties(&prop, 0));

  FILE* csv = s.csv.empty() ? nullptr : std::fopen(s.csv.c_str(), "a");
  if (!s.csv.empty() && !csv) usage("cannot open " + s.csv);
  if (csv && std::ftell(csv) == 0)
    std::fprintf(csv, "device,host,matrix_bytes,pitch,width,up,down,ms,gbs,first_ms\n");
  const char* host = s.pages == lab::PinnedPages::kHuge ? "huge" : "driver";
  std::printf(
      "%s: %.2f GiB in pinned host memory (%s pages; %.2f GiB of this process on huge pages), "
      "rows %zu bytes apart, median of %d passes\n",
      prop.name, s.bytes / double(1 << 30), host, lab::huge_page_bytes() / double(1 << 30), s.pitch,
      s.reps);
  std::printf("%-8s %-14s %10s %8s %10s\n", "width", "up/down", "ms", "GB/s", "first ms");
  auto report = [&](std::size_t width, const Pattern& p) {
    const Timing t = time_pattern(s, p, width, b, origin, up, s.one_stream ? up : down);
    const int directions = (p.up != Way::kNone) + (p.down != Way::kNone);
    const double gbs = directions * static_cast<double>(s.bytes) / (t.median_ms * 1e6);
    std::printf("%-8zu %-14s %10.3f %8.1f %10.3f\n", width, p.name().c_str(), t.median_ms, gbs,
                t.first_ms);
    if (csv)
      std::fprintf(csv, "%s,%s,%zu,%zu,%zu,%s,%s,%.4f,%.2f,%.4f\n", prop.name, host, s.bytes,
                   s.pitch, width, p.name().substr(0, p.name().find('/')).c_str(),
                   p.name().substr(p.name().find('/') + 1).c_str(), t.median_ms, gbs, t.first_ms);
  };
  // The ceilings: each direction alone and both at once, whole bands.
  const std::size_t band = static_cast<std::size_t>(s.widths.front());
  for (Pattern p : {Pattern{Way::kContig, Way::kNone, 0}, Pattern{Way::kNone, Way::kContig, 0},
                    Pattern{Way::kContig, Way::kContig, 0}})
    report(band, p);
  for (long long w : s.widths) {
    std::vector<Pattern> patterns = {{Way::k2d, Way::kNone, 0},
                                     {Way::kNone, Way::k2d, 0},
                                     {Way::kContig, Way::k2d, 0},
                                     {Way::k2d, Way::kContig, 0},
                                     {Way::k2d, Way::k2d, 0}};
    for (long long blocks : s.blocks) {
      patterns.push_back({Way::kNone, Way::kSm, static_cast<int>(blocks)});
      patterns.push_back({Way::kContig, Way::kSm, static_cast<int>(blocks)});
      patterns.push_back({Way::k2d, Way::kSm, static_cast<int>(blocks)});
      patterns.push_back({Way::kSm, Way::kNone, static_cast<int>(blocks)});
      patterns.push_back({Way::kSm, Way::kContig, static_cast<int>(blocks)});
    }
    for (const Pattern& p : patterns) report(static_cast<std::size_t>(w), p);
  }
  if (csv) std::fclose(csv);
  return 0;
}
