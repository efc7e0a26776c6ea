// CUDA.v8_streams: the matrix lives in host memory; hide the bus behind itself.
// Changed since the kernel steps: the transpose kernel is not new (CUDA.v7_packed's launcher,
// linked through STEP_KERNEL in the Makefile, not copied). What is new is everything around it:
// 1. The input and output stay in pinned host memory. The matrix is cut into pieces, bands of
//    input rows; a piece goes up (host to device), is transposed on the device, and its output,
//    a band of columns of the output matrix, comes down.
// 2. The pieces go round K CUDA streams. Work on different streams may run at once: while piece p
//    comes down, piece p + 1 is transposed and piece p + 2 goes up. The bus then carries both
//    directions at once, which is the ceiling of this step (pipeline_driver.cu measures it
//    in the same run).
// 3. Down is written by the SMs, not copied by a copy engine. A band of output columns is a
//    strided target: cols rows of only `piece rows x element bytes` each. A copy engine moves such
//    narrow strided rows at a fraction of the bus speed (measured: README), while the SMs write
//    pinned host memory directly, 16 bytes per thread and whole lines per warp, wherever the rows
//    lie. The copy-engine version stays as `--down copy-engine`, to compare in one run.
// 4. Each stream owns one input and one output buffer on the device, reused by its pieces in
//    stream order, so device memory is K x (input + output) of one piece, bounded by
//    --device-mem: a matrix larger than the GPU's memory transposes too (out of core). There the
//    pieces are tiles, moved both ways by the copy engines in rows tens of KiB wide
//    (plan_out_of_core): the SMs' writes spread over an output of many GiB lose a third of the bus.
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <limits>
#include <string>
#include <vector>

#include "../common/band_copy.cuh"
#include "../common/cuda_check.cuh"
#include "pipeline.cuh"

namespace lab {

constexpr int kDefaultStreams = 3;  // one piece going up, one transposed, one coming down
// Pieces of about this size: enough of them that filling and draining the pipeline (about one
// piece's time) costs little, none so small that the cost of each copy and launch shows.
constexpr std::size_t kTargetPieceBytes = std::size_t{8} << 20;
constexpr int kMaxDefaultPieces = 64;
// The kernel that writes a band into host memory: 16 blocks of 256 threads keep enough 16-byte
// stores in flight to fill the bus. More write in bursts that hold back the host-to-device
// copy running beside them (measured on an H100, `make streams-sweep` measures it again:
// 132 blocks reach 80% of the ceiling, 16 reach 93%), and leave fewer SMs to the next piece's
// transpose.
constexpr int kDefaultDownBlocks = 16;
constexpr std::size_t kDownWordBytes = 16;  // the widest word the way down writes
// Without --down, the SMs write a piece down only where its row segments take words of at least
// this many bytes; narrower, one 2D copy by the copy engine is faster (H200, 8191 x 8193, % of the
// bus ceiling written by the SMs against 2D copies: float16, 2-byte words, 50.6% against 71.8%;
// float32, 4-byte words, 57.0% and 60.9% against 66.0%). 16-byte words: the SMs by far (87.4%
// against 34.1%).
constexpr std::size_t kNarrowestKernelWord = 8;

// ---- How the matrix is cut (host only) ----
// The widest word (kDownWordBytes, 8, 4, 2 or 1 bytes) that a band's row segments start and end
// on: the band's width, its first column and the output's row length are all multiples of it.
std::size_t segment_word_bytes(std::size_t first, std::size_t width, std::size_t pitch) {
  std::size_t word = kDownWordBytes;
  while (word > 1 && (first % word != 0 || width % word != 0 || pitch % word != 0)) word /= 2;
  return word;
}

// The same for every piece of the plan: the narrowest of their words.
std::size_t down_word_bytes(const PiecePlan& plan) {
  const std::size_t pitch = static_cast<std::size_t>(plan.rows) * plan.elem_bytes;
  std::size_t word = kDownWordBytes;
  for (int p = 0; p < plan.pieces; ++p)
    word = std::min(word,
                    segment_word_bytes(plan.first_row(p) * plan.elem_bytes,
                                       std::size_t{1} * plan.rows_of(p) * plan.elem_bytes, pitch));
  return word;
}

// Out of core, the default is tiles moved by the copy engines both ways. A band of input rows
// writes a segment into every output row; with rows 256 KiB apart over 16 GiB, the SMs' writes
// beside the copy going up reach 64% of the bus on an H200, 2D copies of 64 KiB rows both ways 95%
// (make bus-probe). A tile of R rows x C columns goes up as C-element rows
// and down as R-element rows: wide rows both ways keep the copy engines at the bus's speed. 65536 x
// 131072 float32 through 2 GiB (H200): tiles of 16384 x 8192 on 2 streams 92.7% of the
// ceiling; 8192 x 8192 on 3 streams 83.6%; 4096 x 8192 63.6%; bands written by the SMs 76.7%.
constexpr int kOutOfCoreStreams = 2;             // the largest tiles the memory allows
constexpr std::size_t kTileRowBytes = 32 << 10;  // tile rows this wide going up, at least this
                                                 // wide going down...
constexpr int kMinOutOfCoreTiles = 32;           // ...where that leaves this many tiles

// The tile plan, or a plan with no pieces where the matrix fits (input and output together within
// the device memory), where its rows cannot be that wide, or where too few tiles would fill and
// drain the pipeline.
PiecePlan plan_out_of_core(const PipelineRequest& request) {
  const std::size_t elem = request.elem_bytes, budget = request.device_mem;
  const std::size_t matrix = static_cast<std::size_t>(request.rows) * request.cols * elem;
  if (request.pieces != 0 || request.col_ranges != 0 || request.ramp > 0 ||
      request.down == DownPath::kKernel || budget == 0 || 2 * matrix <= budget)
    return {};
  const int streams = request.streams > 0 ? request.streams : kOutOfCoreStreams;
  const auto range_cols = static_cast<int>(
      std::min<std::size_t>(request.cols, std::max<std::size_t>(1, kTileRowBytes / elem)));
  const int col_ranges = (request.cols + range_cols - 1) / range_cols;
  const int widest = (request.cols + col_ranges - 1) / col_ranges;  // PiecePlan::max_piece_cols
  const std::size_t band_rows = budget / (2 * static_cast<std::size_t>(streams) * widest * elem);
  if (widest * elem < kTileRowBytes || band_rows * elem < kTileRowBytes) return {};
  const auto pieces = static_cast<int>(
      std::min<std::size_t>(request.rows, (request.rows + band_rows - 1) / band_rows));
  if (std::int64_t{pieces} * col_ranges < kMinOutOfCoreTiles) return {};
  PiecePlan plan;
  plan.rows = request.rows;
  plan.cols = request.cols;
  plan.elem_bytes = request.elem_bytes;
  plan.pieces = pieces;
  plan.col_ranges = col_ranges;
  plan.streams = std::min(streams, plan.total_pieces());
  plan.down = DownPath::kCopyEngine;
  plan.down_blocks = request.down_blocks;
  return plan;
}

PiecePlan plan_pieces(const PipelineRequest& request, std::string* why) {
  if (const PiecePlan tiles = plan_out_of_core(request); tiles.pieces != 0) return tiles;
  const int rows = request.rows, streams = request.streams > 0 ? request.streams : kDefaultStreams;
  const int col_ranges = request.col_ranges > 0 ? request.col_ranges : 1;
  if (col_ranges > request.cols) {
    *why = "--piece-cols " + std::to_string(col_ranges) + " is more than the " +
           std::to_string(request.cols) + " columns: a range is at least one column";
    return {};
  }
  // With column ranges a piece's row is a tile's row: the counts below are per range.
  const int range_cols = (request.cols + col_ranges - 1) / col_ranges;
  const std::size_t row_bytes = static_cast<std::size_t>(range_cols) * request.elem_bytes;
  const std::size_t budget = request.device_mem;  // 0: not bounded
  // Device memory for `pieces` pieces: each stream in use holds one input band and one output
  // band of the largest piece.
  auto largest = [&](int pieces) { return (rows + pieces - 1) / pieces; };
  auto needed = [&](int pieces) {
    const auto in_use = std::min<std::int64_t>(streams, std::int64_t{pieces} * col_ranges);
    return static_cast<std::size_t>(in_use) * 2 * largest(pieces) * row_bytes;
  };
  if (request.pieces > rows) {
    *why = "--pieces " + std::to_string(request.pieces) + " is more than the " +
           std::to_string(rows) + " rows: a piece is at least one row";
    return {};
  }
  if (budget != 0 && needed(rows) > budget) {
    *why = "--device-mem " + std::to_string(budget) +
           " is too small for one piece: one row in and out on each of " +
           std::to_string(std::min(streams, rows)) + " streams needs " +
           std::to_string(needed(rows)) + " bytes";
    return {};
  }
  int pieces = request.pieces;
  if (pieces == 0) {
    // Pieces of about kTargetPieceBytes...
    const std::size_t matrix = static_cast<std::size_t>(rows) * row_bytes;
    pieces =
        static_cast<int>(std::clamp<std::size_t>(matrix / kTargetPieceBytes, 1, kMaxDefaultPieces));
    pieces = std::min(pieces, rows);
    // ...and as many more as the device memory requires...
    if (budget != 0 && needed(pieces) > budget) {
      const std::size_t max_rows = budget / (std::min(streams, rows) * 2 * row_bytes);
      pieces = std::max<int>(pieces, static_cast<int>((rows + max_rows - 1) / max_rows));
    }
    // ...and, where a few more do it, a count whose bands are equal and start on 16 bytes of
    // every output row: then the way down writes 16-byte words (out of core on an H200, 97
    // pieces of 675-676 float32 rows wrote 4-byte words and reached half the bus).
    for (int more = pieces; more <= std::min(rows, 2 * pieces); ++more) {
      const std::size_t band_bytes = static_cast<std::size_t>(rows / more) * request.elem_bytes;
      if (rows % more == 0 && band_bytes % kDownWordBytes == 0) {
        pieces = more;
        break;
      }
    }
  } else if (budget != 0 && needed(pieces) > budget) {
    *why = "--device-mem " + std::to_string(budget) + " is too small for " +
           std::to_string(pieces) + " pieces: " + std::to_string(std::min(streams, pieces)) +
           " streams x (input + output) of a piece of " + std::to_string(largest(pieces)) +
           " rows need " + std::to_string(needed(pieces)) + " bytes";
    return {};
  }
  if (std::int64_t{pieces} * col_ranges > std::numeric_limits<int>::max()) {
    *why = std::to_string(pieces) + " bands x " + std::to_string(col_ranges) +
           " column ranges are too many pieces (at most " +
           std::to_string(std::numeric_limits<int>::max()) + ")";
    return {};
  }
  // The ramp, only where asked for: filling and draining the pipeline take about one piece's time
  // each, and a ramp cuts the first and the last band into smaller pieces; but where the output
  // spans 1 GiB the SMs took nearly as long to write a piece of 32 rows down as one of 256, and
  // the ramp measured slower on both GPUs, so by default the bands stay equal.
  const int ramp = request.ramp;
  const std::int64_t band = rows / pieces;
  if (ramp > 0) {
    std::string wrong;
    if (col_ranges != 1)
      wrong = "bands of whole rows (not --piece-cols)";
    else if (pieces < 2)
      wrong = "at least 2 bands (a first and a last)";
    else if (rows % pieces != 0)
      wrong = "equal bands, and " + std::to_string(rows) + " rows do not divide into " +
              std::to_string(pieces);
    else if ((band >> ramp) == 0)
      wrong = "bands of at least 2^" + std::to_string(ramp) + " rows, not " + std::to_string(band);
    if (!wrong.empty()) {
      *why = "--ramp " + std::to_string(ramp) + " needs " + wrong;
      return {};
    }
  }
  if (std::int64_t{pieces} + 2 * ramp > std::numeric_limits<int>::max()) {
    *why = "--ramp " + std::to_string(ramp) + " makes too many pieces";
    return {};
  }
  PiecePlan plan;
  plan.rows = rows;
  plan.cols = request.cols;
  plan.elem_bytes = request.elem_bytes;
  plan.pieces = pieces + 2 * ramp;
  plan.ramp = ramp;
  plan.col_ranges = col_ranges;
  plan.streams = std::min(streams, plan.total_pieces());
  plan.down = request.down;
  if (plan.down == DownPath::kAuto)
    plan.down =
        down_word_bytes(plan) >= kNarrowestKernelWord ? DownPath::kKernel : DownPath::kCopyEngine;
  plan.down_blocks = request.down_blocks;
  return plan;
}

// ---- The pipeline ----
template <class T>
struct PipelineState {
  PiecePlan plan;
  std::vector<cudaStream_t> streams;
  std::vector<T*> device_in, device_out;  // one pair per stream, for its largest piece
  cudaEvent_t fork = nullptr;             // origin -> every stream
  std::vector<cudaEvent_t> joins;         // every stream -> origin
  cudaEvent_t zero = nullptr;             // timeline only: on origin, before the fork
  std::vector<cudaEvent_t> stage_events;  // timeline only, 4 per piece: before up, after up,
                                          // after the kernel, after down
  LaunchShape shape;                      // the launch of the first of the largest pieces
  int shape_rows = 0;                     // its rows
  std::int64_t threads = 0;               // GPU threads all pieces of one run launch
  int max_pitch = 0;
  int down_blocks = 0;  // the grid of the kernel that writes a band into host memory
};

template <class T>
StreamPipeline<T>::StreamPipeline(const PiecePlan& plan) : state_(new PipelineState<T>) {
  PipelineState<T>& s = *state_;
  s.plan = plan;
  const std::size_t band = plan.stream_bytes() / 2;
  for (int k = 0; k < plan.streams; ++k) {
    cudaStream_t stream;
    CUDA_CHECK(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
    s.streams.push_back(stream);
    void *in = nullptr, *out = nullptr;
    CUDA_CHECK(cudaMalloc(&in, band));
    CUDA_CHECK(cudaMalloc(&out, band));
    s.device_in.push_back(static_cast<T*>(in));
    s.device_out.push_back(static_cast<T*>(out));
    cudaEvent_t join;
    CUDA_CHECK(cudaEventCreateWithFlags(&join, cudaEventDisableTiming));
    s.joins.push_back(join);
  }
  CUDA_CHECK(cudaEventCreateWithFlags(&s.fork, cudaEventDisableTiming));
  int device = 0;
  CUDA_CHECK(cudaGetDevice(&device));
  CUDA_CHECK(cudaDeviceGetAttribute(&s.max_pitch, cudaDevAttrMaxPitch, device));
  s.down_blocks = plan.down_blocks > 0 ? plan.down_blocks : kDefaultDownBlocks;
}

template <class T>
StreamPipeline<T>::~StreamPipeline() {
  PipelineState<T>& s = *state_;
  for (cudaEvent_t event : s.stage_events) cudaEventDestroy(event);
  if (s.zero) cudaEventDestroy(s.zero);
  for (cudaEvent_t event : s.joins) cudaEventDestroy(event);
  cudaEventDestroy(s.fork);
  for (std::size_t k = 0; k < s.streams.size(); ++k) {
    cudaFree(s.device_in[k]);
    cudaFree(s.device_out[k]);
    cudaStreamDestroy(s.streams[k]);
  }
}

// A bad configuration must not pass as a fast pipeline: every launch is checked.
void check_launch(const LaunchShape& shape, int piece_rows, int cols) {
  const cudaError_t status = cudaGetLastError();
  if (status == cudaErrorInvalidConfiguration) {
    std::fprintf(stderr,
                 "error: %s cannot launch for a piece of %d x %d: grid (%u, %u, %u) exceeds the "
                 "device's limits (gridDim.y and .z are at most 65535)\n",
                 STEP_NAME, piece_rows, cols, shape.grid.x, shape.grid.y, shape.grid.z);
    std::exit(kExitFailed);
  }
  CUDA_CHECK(status);
}

// ---- Down: a piece's output, m x n on the device, into columns [r0, r0 + n) of its m output rows
// in host memory (every output row for whole-row bands) ----

// By the SMs, through the device address of the pinned host matrix: common/band_copy.cuh's kernel,
// whose block b writes output rows b, b + gridDim.x, ... and whose threads write one row's segment
// in the widest word it allows (16 bytes where it can), so a warp stores whole lines however
// narrow the band. `blocks` bounds the grid: few blocks leave the bus to the copy going up.
template <class T>
std::int64_t write_down_by_kernel(T* host_out, const T* piece_out, std::int64_t r0, int n,
                                  int out_rows, const PiecePlan& plan, int blocks,
                                  cudaStream_t stream) {
  return copy_band(piece_out, host_out + r0, static_cast<std::size_t>(n) * sizeof(T),
                   static_cast<std::size_t>(plan.rows) * sizeof(T), out_rows, blocks, stream);
}

// By the copy engine: one 2D copy of `out_rows` rows of n elements, the destination rows `rows`
// elements apart (the way a first version does it; narrow rows make it slow).
template <class T>
void copy_down(T* host_out, const T* piece_out, std::int64_t r0, int n, int out_rows,
               const PiecePlan& plan, int max_pitch, cudaStream_t stream) {
  const std::size_t width = static_cast<std::size_t>(n) * sizeof(T);
  const std::size_t pitch = static_cast<std::size_t>(plan.rows) * sizeof(T);
  if (pitch <= static_cast<std::size_t>(max_pitch)) {
    CUDA_CHECK(cudaMemcpy2DAsync(host_out + r0, pitch, piece_out, width, width, out_rows,
                                 cudaMemcpyDeviceToHost, stream));
    return;
  }
  // Output rows longer than the largest pitch a 2D copy takes (2^31 bytes and more): row by row.
  for (int c = 0; c < out_rows; ++c)
    CUDA_CHECK(cudaMemcpyAsync(host_out + static_cast<std::size_t>(c) * plan.rows + r0,
                               piece_out + static_cast<std::size_t>(c) * n, width,
                               cudaMemcpyDeviceToHost, stream));
}

// Up, for a tile: n rows of m elements, `cols` apart in host memory, into an n x m buffer.
template <class T>
void copy_tile_up(T* piece_in, const T* host_in, int n, int m, const PiecePlan& plan, int max_pitch,
                  cudaStream_t stream) {
  const std::size_t width = static_cast<std::size_t>(m) * sizeof(T);
  const std::size_t pitch = static_cast<std::size_t>(plan.cols) * sizeof(T);
  if (pitch <= static_cast<std::size_t>(max_pitch)) {
    CUDA_CHECK(cudaMemcpy2DAsync(piece_in, width, host_in, pitch, width, n, cudaMemcpyHostToDevice,
                                 stream));
    return;
  }
  for (int r = 0; r < n; ++r)
    CUDA_CHECK(cudaMemcpyAsync(piece_in + static_cast<std::size_t>(r) * m,
                               host_in + static_cast<std::size_t>(r) * plan.cols, width,
                               cudaMemcpyHostToDevice, stream));
}

template <class T>
void StreamPipeline<T>::enqueue(const T* host_in, T* host_out, cudaStream_t origin,
                                bool record_timeline) {
  PipelineState<T>& s = *state_;
  const PiecePlan& plan = s.plan;
  if (record_timeline && s.stage_events.empty()) {
    CUDA_CHECK(cudaEventCreate(&s.zero));
    s.stage_events.resize(4 * static_cast<std::size_t>(plan.total_pieces()));
    for (cudaEvent_t& event : s.stage_events) CUDA_CHECK(cudaEventCreate(&event));
  }
  if (record_timeline) CUDA_CHECK(cudaEventRecord(s.zero, origin));
  // The SMs write host memory through its device address (the same as the host address where
  // the address space is unified, which cudaHostGetDevicePointer does not assume).
  T* out_for_kernel = nullptr;
  if (plan.down == DownPath::kKernel)
    CUDA_CHECK(cudaHostGetDevicePointer(reinterpret_cast<void**>(&out_for_kernel), host_out, 0));
  // Fork: every stream starts after what is already on origin.
  CUDA_CHECK(cudaEventRecord(s.fork, origin));
  for (cudaStream_t stream : s.streams) CUDA_CHECK(cudaStreamWaitEvent(stream, s.fork, 0));

  // The lesson: pieces round robin over the streams. Within a stream the three stages of a
  // piece, and the pieces that reuse its buffers, run in order; across streams nothing waits, so
  // the copy engines (one per direction) and the SMs overlap pieces of different streams.
  for (int q = 0; q < plan.total_pieces(); ++q) {
    const int p = q % plan.pieces, range = q / plan.pieces, k = q % plan.streams;
    cudaStream_t stream = s.streams[k];
    const std::int64_t r0 = plan.first_row(p), c0 = plan.first_col(range);
    const int n = plan.rows_of(p), m = plan.cols_of(range);
    cudaEvent_t* events =
        record_timeline ? &s.stage_events[4 * static_cast<std::size_t>(q)] : nullptr;
    if (events) CUDA_CHECK(cudaEventRecord(events[0], stream));
    // Up: the band of input rows [r0, r0 + n) is contiguous in host memory; a tile of it is not.
    if (m == plan.cols)
      CUDA_CHECK(cudaMemcpyAsync(s.device_in[k], host_in + r0 * plan.cols,
                                 static_cast<std::size_t>(n) * plan.cols * sizeof(T),
                                 cudaMemcpyHostToDevice, stream));
    else
      copy_tile_up(s.device_in[k], host_in + r0 * plan.cols + c0, n, m, plan, s.max_pitch, stream);
    if (events) CUDA_CHECK(cudaEventRecord(events[1], stream));
    // Transpose: n x m in, m x n out, by the kernel step's own launcher.
    const LaunchShape shape = launch_transpose(s.device_in[k], s.device_out[k], n, m, stream);
    check_launch(shape, n, m);
    if (q == 0) s.threads = 0;
    if (q == 0 || n > s.shape_rows) {
      s.shape = shape;
      s.shape_rows = n;
    }
    s.threads += std::int64_t{shape.grid.x} * shape.grid.y * shape.grid.z * shape.block.x *
                 shape.block.y * shape.block.z;
    if (events) CUDA_CHECK(cudaEventRecord(events[2], stream));
    // Down: a band of output columns (of output rows [c0, c0 + m)), strided in host memory.
    const std::size_t first_out_row = static_cast<std::size_t>(c0) * plan.rows;
    if (plan.down == DownPath::kKernel) {
      s.threads += write_down_by_kernel(out_for_kernel + first_out_row, s.device_out[k], r0, n, m,
                                        plan, s.down_blocks, stream);
      CUDA_CHECK(cudaGetLastError());
    } else {
      copy_down(host_out + first_out_row, s.device_out[k], r0, n, m, plan, s.max_pitch, stream);
    }
    if (events) CUDA_CHECK(cudaEventRecord(events[3], stream));
  }

  // Join: origin waits for every stream.
  for (std::size_t k = 0; k < s.streams.size(); ++k) {
    CUDA_CHECK(cudaEventRecord(s.joins[k], s.streams[k]));
    CUDA_CHECK(cudaStreamWaitEvent(origin, s.joins[k], 0));
  }
}

template <class T>
std::vector<PieceTimes> StreamPipeline<T>::timeline() const {
  const PipelineState<T>& s = *state_;
  std::vector<PieceTimes> pieces;
  if (s.stage_events.empty()) return pieces;
  auto at = [&](cudaEvent_t event) {
    float ms = 0;
    CUDA_CHECK(cudaEventElapsedTime(&ms, s.zero, event));
    return ms;
  };
  for (int q = 0; q < s.plan.total_pieces(); ++q) {
    const cudaEvent_t* e = &s.stage_events[4 * static_cast<std::size_t>(q)];
    const int p = q % s.plan.pieces, range = q / s.plan.pieces;
    PieceTimes t;
    t.piece = q;
    t.stream = q % s.plan.streams;
    t.first_row = s.plan.first_row(p);
    t.rows = s.plan.rows_of(p);
    t.first_col = s.plan.first_col(range);
    t.cols = s.plan.cols_of(range);
    t.up_start = at(e[0]);
    t.up_end = t.kernel_start = at(e[1]);
    t.kernel_end = t.down_start = at(e[2]);
    t.down_end = at(e[3]);
    pieces.push_back(t);
  }
  return pieces;
}

template <class T>
LaunchShape StreamPipeline<T>::piece_launch() const {
  return state_->shape;
}

template <class T>
std::int64_t StreamPipeline<T>::threads_launched() const {
  return state_->threads;
}

template <class T>
std::string StreamPipeline<T>::describe_down() const {
  return state_->plan.down == DownPath::kKernel
             ? "down by a kernel of " + std::to_string(state_->down_blocks) + " blocks"
             : std::string("down by 2D copies");
}

}  // namespace lab

LAB_INSTANTIATE_PIPELINE()

const char* const kStepSummary =
    "streams: pieces of a host matrix up, transposed, down, overlapped; out of core";
