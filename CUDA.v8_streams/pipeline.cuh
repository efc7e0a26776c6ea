// The interface a host_pipeline step implements (CUDA.v8_streams); pipeline_driver.cu owns
// main() and does the rest (allocation of the host matrices, fills, verification, the bus and
// serial ceilings, timing, the report, the timeline file).
//
// The step decides how the matrix is cut (plan_pieces) and runs the pieces through the GPU
// (StreamPipeline): input and output are in host memory; piece p, a band of input rows, goes up,
// is transposed by a kernel step's launcher (cuda_step.cuh, linked through STEP_KERNEL), and comes
// back as a band of output columns.
#pragma once

#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "cuda_step.cuh"

// The summary of the kernel step whose launcher the pipeline runs (common/step.mk links it under
// this name, so that it does not collide with the step's own kStepSummary).
extern const char* const kReusedKernelSummary;

namespace lab {

// How a piece's output, a band of output columns, reaches host memory.
enum class DownPath {
  kKernel,      // the SMs write it, row segment by row segment (needs pinned, mapped host memory)
  kCopyEngine,  // one strided 2D copy by the device-to-host copy engine
  kAuto,        // the step chooses from the plan (a request only: a plan holds one of the two)
};

// What the command line asks of the pipeline; 0 leaves the choice to the step.
struct PipelineRequest {
  int rows = 0, cols = 0, elem_bytes = 0;
  int streams = 0;             // --streams K
  int pieces = 0;              // --pieces N
  std::size_t device_mem = 0;  // --device-mem: bytes of device memory the pipeline may allocate
  DownPath down = DownPath::kAuto;  // --down kernel|copy-engine (pageable: the copy engine)
  int down_blocks = 0;              // --down-blocks B: the grid of the kernel that writes down
  int col_ranges = 0;               // --piece-cols M: ranges of columns each band is cut into
  int ramp = 0;                     // --ramp R: the first and last band cut R times in halves
};

// How the matrix is cut: band b holds input rows [first_row(b), first_row(b + 1)), bands that
// differ by at most one row when they do not divide the rows; with col_ranges M > 1 every band is
// cut again into M ranges of columns [first_col(j), first_col(j + 1)), so a piece is a tile whose
// output touches only M-th of the output rows. Pieces run range by range, band by band within a
// range (piece q = j * pieces + b), so that pieces in a row write the same output rows; piece q
// runs on stream q % streams, which owns one input and one output buffer for the largest tile.
// With a ramp R > 0 the bands are equal (S rows each) except the first and the last, which are
// cut again into R + 1 pieces, S/2^R, S/2^R, S/2^(R-1), ..., S/2 rows (the last band in the
// mirror order): the pipeline fills and drains with pieces 2^R times smaller.
struct PiecePlan {
  int rows = 0, cols = 0, elem_bytes = 0;
  int streams = 0;  // never more than the pieces
  int pieces = 0;   // bands of rows, the ramp's pieces included
  int col_ranges = 1;
  int ramp = 0;  // R; then the rows divide into pieces - 2R equal bands
  DownPath down = DownPath::kKernel;
  int down_blocks = 0;                                                   // 0: the step's default
  std::int64_t band_rows() const { return rows / (pieces - 2 * ramp); }  // S, with a ramp
  std::int64_t first_row(int piece) const {
    if (ramp == 0) return std::int64_t{piece} * rows / pieces;  // 64-bit: rows * pieces > 2^31
    if (piece >= pieces) return rows;
    if (piece <= ramp) return piece == 0 ? 0 : band_rows() >> (ramp - piece + 1);
    if (piece >= pieces - ramp - 1) return rows - (band_rows() >> (piece - (pieces - ramp - 1)));
    return band_rows() * (piece - ramp);
  }
  int rows_of(int piece) const { return static_cast<int>(first_row(piece + 1) - first_row(piece)); }
  int max_piece_rows() const {
    return ramp > 0 ? static_cast<int>(band_rows()) : (rows + pieces - 1) / pieces;
  }
  int min_piece_rows() const {
    return ramp > 0 ? static_cast<int>(band_rows() >> ramp) : rows / pieces;
  }
  std::int64_t first_col(int range) const { return std::int64_t{range} * cols / col_ranges; }
  int cols_of(int range) const { return static_cast<int>(first_col(range + 1) - first_col(range)); }
  int max_piece_cols() const { return (cols + col_ranges - 1) / col_ranges; }
  int total_pieces() const { return pieces * col_ranges; }
  // One stream's input tile plus its output tile, for the largest piece.
  std::size_t stream_bytes() const {
    return 2 * static_cast<std::size_t>(max_piece_rows()) *
           static_cast<std::size_t>(max_piece_cols()) * static_cast<std::size_t>(elem_bytes);
  }
  std::size_t device_bytes() const { return static_cast<std::size_t>(streams) * stream_bytes(); }
};

// The widest word (16 bytes at most) that every piece's output row segments start and end on, the
// word the SMs would write down in (the step's, CUDA.v8_streams/transpose.cu).
std::size_t down_word_bytes(const PiecePlan& plan);

// Host only (no CUDA call): the plan for a request, or a plan with pieces == 0 and the reason in
// *why (the request cannot be met: bad input). Defined by the step.
PiecePlan plan_pieces(const PipelineRequest& request, std::string* why);

// When each stage of one piece ran, in ms from the start of the run (CUDA events; zero is an
// event on origin just before the fork): up is
// the host-to-device copy, kernel the transpose, down the way back into host memory (the down
// kernel, or the device-to-host copy with --down copy-engine). A start is the
// moment the stream reached the stage; an engine busy with another stream's copy can hold it
// back a little longer.
struct PieceTimes {
  int piece = 0, stream = 0;
  std::int64_t first_row = 0;
  int rows = 0;
  std::int64_t first_col = 0;
  int cols = 0;
  float up_start = 0, up_end = 0, kernel_start = 0, kernel_end = 0, down_start = 0, down_end = 0;
};

template <class T>
struct PipelineState;  // the step's own: its streams, device buffers and events

// Defined by the step for every storage type T of dtype.hpp (Bytes1 ... Bytes16).
template <class T>
class StreamPipeline {
 public:
  // Creates the streams and allocates plan.device_bytes() of device memory.
  explicit StreamPipeline(const PiecePlan& plan);
  ~StreamPipeline();
  StreamPipeline(const StreamPipeline&) = delete;
  StreamPipeline& operator=(const StreamPipeline&) = delete;

  // Enqueues the whole transpose, host_in (rows x cols) to host_out (cols x rows), and returns
  // at once. The work starts after what is already on `origin` and `origin` waits for all of it,
  // so events recorded on `origin` around this call time the whole pipeline. With
  // record_timeline, events around every stage of every piece are recorded for timeline().
  void enqueue(const T* host_in, T* host_out, cudaStream_t origin, bool record_timeline = false);

  // After the last enqueue with record_timeline has finished: one entry per piece.
  std::vector<PieceTimes> timeline() const;

  // What one piece's launch looked like and the GPU threads all pieces launch, for the report.
  LaunchShape piece_launch() const;
  std::int64_t threads_launched() const;
  // How the pieces' output comes down, e.g. "down by a kernel of 16 blocks", for the report.
  std::string describe_down() const;

 private:
  std::unique_ptr<PipelineState<T>> state_;
};

}  // namespace lab

// For the step's transpose.cu: compiles the pipeline for every element size.
#define LAB_INSTANTIATE_PIPELINE()                 \
  template class lab::StreamPipeline<lab::Bytes1>; \
  template class lab::StreamPipeline<lab::Bytes2>; \
  template class lab::StreamPipeline<lab::Bytes4>; \
  template class lab::StreamPipeline<lab::Bytes8>; \
  template class lab::StreamPipeline<lab::Bytes16>;
