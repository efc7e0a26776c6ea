// CUDA.v8_streams: the matrix lives in host memory; hide the bus behind itself.
// Changed since the kernel steps: the kernel is not new (CUDA.v7_packed's launcher, linked
// through STEP_KERNEL in the Makefile, not copied). What is new is everything around it:
// 1. The input and output stay in pinned host memory. The matrix is cut into pieces, bands of
//    input rows; a piece goes up (host to device), is transposed on the device, and its output,
//    a band of columns of the output matrix, comes down as one strided 2D copy.
// 2. The pieces go round K CUDA streams. Work on different streams may run at once, and a GPU has
//    separate copy engines for each direction: while piece p comes down, piece p + 1 goes up and
//    piece p + 2 is transposed. The bus then carries both directions at once, which is the
//    ceiling of this step (common/pipeline_driver.cu measures it in the same run).
// 3. Each stream owns one input and one output buffer on the device, reused by its pieces in
//    stream order, so device memory is K x (input + output) of one piece, bounded by
//    --device-mem: a matrix larger than the GPU's memory transposes too (out of core).
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "../common/cuda_check.cuh"
#include "../common/pipeline.cuh"

namespace lab {

constexpr int kDefaultStreams = 3;  // one piece going up, one transposed, one coming down
constexpr int kDefaultPieces = 8;  // measured best of five (streams, pieces) on an H200 (README)
constexpr std::size_t kMinPieceBytes = std::size_t{4} << 20;  // below this, per-copy overheads

// ---- How the matrix is cut (host only) ----
PiecePlan plan_pieces(const PipelineRequest& request, std::string* why) {
  const int rows = request.rows, streams = request.streams > 0 ? request.streams : kDefaultStreams;
  const std::size_t row_bytes = static_cast<std::size_t>(request.cols) * request.elem_bytes;
  const std::size_t budget = request.device_mem;  // 0: not bounded
  // Device memory for `pieces` pieces: each stream in use holds one input band and one output
  // band of the largest piece.
  auto largest = [&](int pieces) { return (rows + pieces - 1) / pieces; };
  auto needed = [&](int pieces) {
    return static_cast<std::size_t>(std::min(streams, pieces)) * 2 * largest(pieces) * row_bytes;
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
    // Enough pieces that filling and draining the pipeline costs little, none so small that the
    // cost of each copy shows...
    const std::size_t matrix = static_cast<std::size_t>(rows) * row_bytes;
    pieces = static_cast<int>(std::clamp<std::size_t>(matrix / kMinPieceBytes, 1, kDefaultPieces));
    pieces = std::min(pieces, rows);
    // ...and as many more as the device memory requires.
    if (budget != 0 && needed(pieces) > budget) {
      const std::size_t max_rows = budget / (std::min(streams, rows) * 2 * row_bytes);
      pieces = std::max<int>(pieces, static_cast<int>((rows + max_rows - 1) / max_rows));
    }
  } else if (budget != 0 && needed(pieces) > budget) {
    *why = "--device-mem " + std::to_string(budget) + " is too small for " +
           std::to_string(pieces) + " pieces: " + std::to_string(std::min(streams, pieces)) +
           " streams x (input + output) of a piece of " + std::to_string(largest(pieces)) +
           " rows need " + std::to_string(needed(pieces)) + " bytes";
    return {};
  }
  PiecePlan plan;
  plan.rows = rows;
  plan.cols = request.cols;
  plan.elem_bytes = request.elem_bytes;
  plan.pieces = pieces;
  plan.streams = std::min(streams, pieces);
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
  LaunchShape shape;                      // the first (largest) piece's launch
  std::int64_t threads = 0;               // GPU threads all pieces of one run launch
  int max_pitch = 0;
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

// Piece's output, cols x n on the device, into columns [r0, r0 + n) of every output row on the
// host: one 2D copy of `cols` rows of n elements, the destination rows `rows` elements apart.
template <class T>
void copy_down(T* host_out, const T* piece_out, std::int64_t r0, int n, const PiecePlan& plan,
               int max_pitch, cudaStream_t stream) {
  const std::size_t width = static_cast<std::size_t>(n) * sizeof(T);
  const std::size_t pitch = static_cast<std::size_t>(plan.rows) * sizeof(T);
  if (pitch <= static_cast<std::size_t>(max_pitch)) {
    CUDA_CHECK(cudaMemcpy2DAsync(host_out + r0, pitch, piece_out, width, width, plan.cols,
                                 cudaMemcpyDeviceToHost, stream));
    return;
  }
  // Output rows longer than the largest pitch a 2D copy takes (2^31 bytes and more): row by row.
  for (int c = 0; c < plan.cols; ++c)
    CUDA_CHECK(cudaMemcpyAsync(host_out + static_cast<std::size_t>(c) * plan.rows + r0,
                               piece_out + static_cast<std::size_t>(c) * n, width,
                               cudaMemcpyDeviceToHost, stream));
}

template <class T>
void StreamPipeline<T>::enqueue(const T* host_in, T* host_out, cudaStream_t origin,
                                bool record_timeline) {
  PipelineState<T>& s = *state_;
  const PiecePlan& plan = s.plan;
  if (record_timeline && s.stage_events.empty()) {
    CUDA_CHECK(cudaEventCreate(&s.zero));
    s.stage_events.resize(4 * static_cast<std::size_t>(plan.pieces));
    for (cudaEvent_t& event : s.stage_events) CUDA_CHECK(cudaEventCreate(&event));
  }
  if (record_timeline) CUDA_CHECK(cudaEventRecord(s.zero, origin));
  // Fork: every stream starts after what is already on origin.
  CUDA_CHECK(cudaEventRecord(s.fork, origin));
  for (cudaStream_t stream : s.streams) CUDA_CHECK(cudaStreamWaitEvent(stream, s.fork, 0));

  // The lesson: pieces round robin over the streams. Within a stream the three stages of a
  // piece, and the pieces that reuse its buffers, run in order; across streams nothing waits, so
  // the copy engines (one per direction) and the SMs overlap pieces of different streams.
  for (int p = 0; p < plan.pieces; ++p) {
    const int k = p % plan.streams;
    cudaStream_t stream = s.streams[k];
    const std::int64_t r0 = plan.first_row(p);
    const int n = plan.rows_of(p);
    cudaEvent_t* events =
        record_timeline ? &s.stage_events[4 * static_cast<std::size_t>(p)] : nullptr;
    if (events) CUDA_CHECK(cudaEventRecord(events[0], stream));
    // Up: the band of input rows [r0, r0 + n) is contiguous in host memory.
    CUDA_CHECK(cudaMemcpyAsync(s.device_in[k], host_in + r0 * plan.cols,
                               static_cast<std::size_t>(n) * plan.cols * sizeof(T),
                               cudaMemcpyHostToDevice, stream));
    if (events) CUDA_CHECK(cudaEventRecord(events[1], stream));
    // Transpose: n x cols in, cols x n out, by the kernel step's own launcher.
    const LaunchShape shape =
        launch_transpose(s.device_in[k], s.device_out[k], n, plan.cols, stream);
    check_launch(shape, n, plan.cols);
    if (p == 0) {
      s.shape = shape;
      s.threads = 0;
    }
    s.threads += std::int64_t{shape.grid.x} * shape.grid.y * shape.grid.z * shape.block.x *
                 shape.block.y * shape.block.z;
    if (events) CUDA_CHECK(cudaEventRecord(events[2], stream));
    // Down: a band of output columns, strided in host memory.
    copy_down(host_out, s.device_out[k], r0, n, plan, s.max_pitch, stream);
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
  for (int p = 0; p < s.plan.pieces; ++p) {
    const cudaEvent_t* e = &s.stage_events[4 * static_cast<std::size_t>(p)];
    PieceTimes t;
    t.piece = p;
    t.stream = p % s.plan.streams;
    t.first_row = s.plan.first_row(p);
    t.rows = s.plan.rows_of(p);
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

}  // namespace lab

LAB_INSTANTIATE_PIPELINE()

const char* const kStepSummary =
    "streams: pieces of a host matrix up, transposed, down, overlapped; out of core";
