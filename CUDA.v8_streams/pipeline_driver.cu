// main() for host_pipeline steps (CUDA.v8_streams): the matrix lives in host memory and the step
// pipelines pieces of it through the GPU (pipeline.cuh). This driver parses the pipeline's
// options, refuses bad input before looking for a GPU, allocates the host matrices (pinned, or
// pageable to show what that costs), verifies the result of every fill bitwise on the host, then
// times, alternately and in this one process:
//   - the pipeline, end to end (host in -> host out);
//   - its ceiling, the overlapped bus: host-to-device and device-to-host of the same bytes at once
//     on two streams, from and to pinned memory;
//   - the serial end to end of the kernel step it reuses (up, transpose, down, one after another),
//     when the whole matrix fits in device memory.
// No L2 flush: the data comes from host memory every time, and the kernel is a small part of it.
// Verified (docs/verification.md): every fill's first run of the pipeline, the serial reference's
// first run, and the last timed run of each of the two, into an output poisoned from the fill just
// before it and checked before the next piece (the bus ceiling writes the same output) runs.
#include <cuda_profiler_api.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <string>
#include <vector>

#include "cli.hpp"
#include "config.hpp"
#include "cuda_check.cuh"
#include "cuda_harness.cuh"
#include "cuda_step.cuh"
#include "host_memory.hpp"
#include "matrix.hpp"
#include "pipeline.cuh"
#include "report.hpp"
#include "step_info.hpp"
#include "timer.hpp"

// The kernel step's launchers, renamed by common/step.mk; the first is its launch_transpose.
extern const lab::KernelVariant kReusedKernelVariants[];

#ifndef STEP_KERNEL_NAME
#define STEP_KERNEL_NAME "the kernel step"  // the step's Makefile passes its STEP_KERNEL
#endif

namespace {

using lab::Index;

// A pipeline run moves the matrix over the bus twice: far slower than a kernel, and steadier.
constexpr int kDefaultPipelineReps = 10;
constexpr std::size_t kDefaultDeviceMem = std::size_t{2} << 30;  // or a quarter of the free memory
constexpr std::size_t kDeviceMargin = std::size_t{256} << 20;    // left free for the runtime
constexpr std::size_t kCeilingChunkBytes = std::size_t{256} << 20;  // when the matrix does not fit

const char* const kPipelineUsage =
    "  --streams K        CUDA streams the pieces go round (default 3; 1: the serial pipeline)\n"
    "  --pieces N         bands of input rows, 1..ROWS (default: from the size, --streams and\n"
    "                     --device-mem)\n"
    "  --piece-cols M     cut every band into M ranges of columns, 1..COLS (default 1): tiles,\n"
    "                     whose output touches only an M-th of the output rows\n"
    "  --ramp R           cut the first and the last band R times in halves, so that the pipeline\n"
    "                     fills and drains with smaller pieces (0..8, default 0; needs equal "
    "bands)\n"
    "  --device-mem BYTES device memory the pipeline may use (default 2 GiB or a quarter of the\n"
    "                     free memory, the smaller)\n"
    "  --host-memory M    pinned (default; the driver's pages), huge (pinned on 2 MiB pages) or\n"
    "                     pageable (the host matrices from malloc)\n"
    "  --down D           how a piece's output reaches host memory: kernel (the SMs write it) or\n"
    "                     copy-engine (one strided 2D copy; always so when pageable). Default: "
    "the\n"
    "                     SMs where they can write words of 8 bytes or more, else 2D copies\n"
    "  --down-blocks B    thread blocks of the kernel that writes down (default 16)\n"
    "  --plan             print how the matrix would be cut, then exit (no GPU needed; without\n"
    "                     --device-mem the plan assumes the default's upper bound, 2 GiB)\n"
    "  --timeline FILE    write when each piece went up, was transposed and came down (CSV;\n"
    "                     draw it with python -m transpose_lab.plot_timeline)\n";

struct PipelineOptions {
  int streams = 0;             // 0: the step's default
  int pieces = 0;              // 0: the step's default
  int col_ranges = 0;          // 0: the step's default (whole rows)
  int ramp = 0;                // 0: equal bands
  std::size_t device_mem = 0;  // 0: the default
  bool pageable = false;
  lab::PinnedPages pages = lab::PinnedPages::kDriver;
  bool down_given = false;
  lab::DownPath down =
      lab::DownPath::kAuto;  // kAuto: the step chooses (kernel where words are wide)
  int down_blocks = 0;       // 0: the step's default
  bool plan_only = false;
  std::string timeline_path;
};

[[noreturn]] void usage_error(const lab::CliSpec& spec, const std::string& message) {
  std::fprintf(stderr, "%s: error: %s\n%s%s", spec.program.c_str(), message.c_str(),
               lab::usage_text(spec).c_str(), kPipelineUsage);
  std::exit(lab::kExitUsage);
}

// The shared parser's rule and words (digits only, 1..max), with this program's usage on error.
unsigned long long parse_positive(const lab::CliSpec& spec, const std::string& text,
                                  const std::string& flag, long long max) {
  try {
    return static_cast<unsigned long long>(lab::parse_count(text, flag, max));
  } catch (const lab::UsageError& refused) {
    usage_error(spec, refused.what());
  }
}

// Takes the pipeline's own options out of argv; the rest goes to the shared parser. --help is
// answered here, with the pipeline's options in the usage.
std::vector<char*> take_pipeline_options(int argc, char** argv, const lab::CliSpec& spec,
                                         PipelineOptions* pipeline) {
  std::vector<char*> rest{argv[0]};
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    const bool ours = arg == "--streams" || arg == "--pieces" || arg == "--piece-cols" ||
                      arg == "--device-mem" || arg == "--host-memory" || arg == "--down" ||
                      arg == "--down-blocks" || arg == "--timeline" || arg == "--ramp";
    if (arg == "--plan") {
      pipeline->plan_only = true;
      continue;
    }
    if (arg == "--help" || arg == "-h") {
      std::printf("%s%s", lab::usage_text(spec).c_str(), kPipelineUsage);
      std::exit(lab::kExitOk);
    }
    if (!ours) {
      rest.push_back(argv[i]);
      // The shared options' values pass through untouched, whatever they look like.
      const bool takes_value = arg == "--reps" || arg == "--dtype" || arg == "--csv";
      if (takes_value && i + 1 < argc) rest.push_back(argv[++i]);
      continue;
    }
    if (i + 1 >= argc) usage_error(spec, arg + " needs a value");
    const std::string value = argv[++i];
    if (arg == "--streams") {
      pipeline->streams = static_cast<int>(parse_positive(spec, value, arg, 1024));
    } else if (arg == "--pieces") {
      pipeline->pieces = static_cast<int>(parse_positive(spec, value, arg, 2147483647));
    } else if (arg == "--piece-cols") {
      pipeline->col_ranges = static_cast<int>(parse_positive(spec, value, arg, 2147483647));
    } else if (arg == "--ramp") {
      if (value.size() != 1 || value[0] < '0' || value[0] > '8')
        usage_error(spec, "--ramp must be a whole number from 0 to 8, got '" + value + "'");
      pipeline->ramp = value[0] - '0';
    } else if (arg == "--device-mem") {
      pipeline->device_mem = parse_positive(spec, value, arg, std::size_t{1} << 50);
    } else if (arg == "--host-memory") {
      if (value != "pinned" && value != "huge" && value != "pageable")
        usage_error(spec, "--host-memory must be pinned, huge or pageable, got '" + value + "'");
      pipeline->pageable = value == "pageable";
      pipeline->pages = value == "huge" ? lab::PinnedPages::kHuge : lab::PinnedPages::kDriver;
    } else if (arg == "--down-blocks") {
      pipeline->down_blocks = static_cast<int>(parse_positive(spec, value, arg, 1 << 20));
    } else if (arg == "--down") {
      if (value != "kernel" && value != "copy-engine")
        usage_error(spec, "--down must be kernel or copy-engine, got '" + value + "'");
      pipeline->down_given = true;
      pipeline->down = value == "kernel" ? lab::DownPath::kKernel : lab::DownPath::kCopyEngine;
    } else {
      if (value.empty()) usage_error(spec, "--timeline needs a file name");
      pipeline->timeline_path = value;
    }
  }
  // A kernel can write only host memory that is pinned and mapped into the device's space.
  if (pipeline->pageable) {
    if (pipeline->down_given && pipeline->down == lab::DownPath::kKernel)
      usage_error(spec,
                  "--down kernel needs pinned host memory: a kernel cannot write pageable memory");
    pipeline->down = lab::DownPath::kCopyEngine;
  }
  return rest;
}

void fail_verification(const char* when, const lab::Verification& check) {
  std::fprintf(stderr, "%s (%s): %s\n", STEP_NAME, when, check.describe().c_str());
  std::exit(lab::kExitFailed);
}

// The host matrices: pinned (by the driver, or on 2 MiB pages) or pageable (malloc).
template <class T>
struct HostMatrices {
  lab::PinnedArray<T> pinned_in, pinned_out;
  lab::HostArray<T> pageable_in, pageable_out;
  T* in = nullptr;
  T* out = nullptr;
  HostMatrices(Index count, bool pageable, lab::PinnedPages pages) {
    if (pageable) {
      pageable_in = lab::allocate_host<T>(count, "the input");
      pageable_out = lab::allocate_host<T>(count, "the output");
      in = pageable_in.get();
      out = pageable_out.get();
    } else {
      pinned_in = lab::allocate_pinned<T>(count, "the input", pages);
      pinned_out = lab::allocate_pinned<T>(count, "the output", pages);
      in = pinned_in.get();
      out = pinned_out.get();
    }
  }
};

void write_timeline(const std::string& path, const std::vector<lab::PieceTimes>& pieces) {
  std::ofstream out(path);
  if (!out) {
    std::fprintf(stderr, "error: cannot write %s\n", path.c_str());
    std::exit(lab::kExitFailed);
  }
  out << "piece,stream,first_row,rows,up_start_ms,up_end_ms,kernel_start_ms,kernel_end_ms,"
         "down_start_ms,down_end_ms,first_col,cols\n";
  char line[360];
  for (const lab::PieceTimes& t : pieces) {
    std::snprintf(line, sizeof line, "%d,%d,%lld,%d,%.4f,%.4f,%.4f,%.4f,%.4f,%.4f,%lld,%d\n",
                  t.piece, t.stream, static_cast<long long>(t.first_row), t.rows, t.up_start,
                  t.up_end, t.kernel_start, t.kernel_end, t.down_start, t.down_end,
                  static_cast<long long>(t.first_col), t.cols);
    out << line;
  }
}

// "675-676 rows", or "675-676 rows x 4096 columns" for tiles.
std::string piece_size(const lab::PiecePlan& plan) {
  auto span = [](int smallest, int largest) {
    return smallest == largest ? std::to_string(largest)
                               : std::to_string(smallest) + "-" + std::to_string(largest);
  };
  const std::string rows = span(plan.min_piece_rows(), plan.max_piece_rows()) + " rows";
  if (plan.col_ranges == 1) return rows;
  return rows + " x " + span(plan.cols / plan.col_ranges, plan.max_piece_cols()) + " columns";
}

// What the command line asks of the step's plan.
lab::PipelineRequest request_of(const lab::Options& options, const PipelineOptions& pipeline) {
  lab::PipelineRequest request;
  request.rows = options.rows;
  request.cols = options.cols;
  request.elem_bytes = options.dtype->bytes;
  request.streams = pipeline.streams;
  request.pieces = pipeline.pieces;
  request.device_mem = pipeline.device_mem;
  request.down = pipeline.down;
  request.down_blocks = pipeline.down_blocks;
  request.col_ranges = pipeline.col_ranges;
  request.ramp = pipeline.ramp;
  return request;
}

// --plan: the pieces, their rows and the device memory, as the step would cut the matrix.
int print_plan(lab::PipelineRequest request, const lab::Options& options) {
  const bool given = request.device_mem != 0;
  if (!given) request.device_mem = kDefaultDeviceMem;
  std::string why;
  const lab::PiecePlan plan = lab::plan_pieces(request, &why);
  if (plan.pieces == 0) {
    std::fprintf(stderr, "error: %s (the default --device-mem %zu)\n", why.c_str(),
                 request.device_mem);
    return lab::kExitNoMemory;
  }
  std::printf(
      "%s %d x %d %s: %d pieces of %s over %d streams, %zu bytes of device memory "
      "(%s %zu), down by %s (the SMs would write %zu-byte words)\n",
      STEP_NAME, options.rows, options.cols, options.dtype->name, plan.total_pieces(),
      piece_size(plan).c_str(), plan.streams, plan.device_bytes(),
      given ? "--device-mem" : "assumed --device-mem", request.device_mem,
      plan.down == lab::DownPath::kKernel ? "the SMs" : "2D copies", lab::down_word_bytes(plan));
  return lab::kExitOk;
}

template <class T>
int run(const lab::Options& options, const PipelineOptions& pipeline,
        const cudaDeviceProp& properties) {
  const lab::Dtype& dtype = *options.dtype;
  const int rows = options.rows, cols = options.cols;
  const Index count = Index{rows} * cols;
  const std::size_t bytes = lab::matrix_bytes(rows, cols, sizeof(T));

  // The plan, now with the default device memory where none was given.
  std::size_t device_free = 0, device_total = 0;
  CUDA_CHECK(cudaMemGetInfo(&device_free, &device_total));
  lab::PipelineRequest request = request_of(options, pipeline);
  if (request.device_mem == 0) request.device_mem = std::min(kDefaultDeviceMem, device_free / 4);
  std::string why;
  const lab::PiecePlan plan = lab::plan_pieces(request, &why);
  if (plan.pieces == 0) {  // only the default can fail here: a given --device-mem was checked
    std::fprintf(stderr, "error: %s (the default for %s with %s free)\n", why.c_str(),
                 properties.name, lab::format_bytes(device_free).c_str());
    return lab::kExitNoMemory;
  }
  if (plan.device_bytes() + kDeviceMargin > device_free) {
    std::fprintf(stderr,
                 "error: the pipeline needs %s of device memory (%d streams x input and output "
                 "of a piece of %d rows); %s has %s free of %s: lower --device-mem\n",
                 lab::format_bytes(plan.device_bytes()).c_str(), plan.streams,
                 plan.max_piece_rows(), properties.name, lab::format_bytes(device_free).c_str(),
                 lab::format_bytes(device_total).c_str());
    return lab::kExitNoMemory;
  }
  HostMatrices<T> host(count, pipeline.pageable, pipeline.pages);
  lab::StreamPipeline<T> pipe(plan);
  cudaStream_t origin, up_stream, down_stream;
  CUDA_CHECK(cudaStreamCreateWithFlags(&origin, cudaStreamNonBlocking));
  CUDA_CHECK(cudaStreamCreateWithFlags(&up_stream, cudaStreamNonBlocking));
  CUDA_CHECK(cudaStreamCreateWithFlags(&down_stream, cudaStreamNonBlocking));
  cudaEvent_t fork, up_done, down_done;
  for (cudaEvent_t* event : {&fork, &up_done, &down_done})
    CUDA_CHECK(cudaEventCreateWithFlags(event, cudaEventDisableTiming));

  // Device buffers of the ceilings: the whole matrix when it fits next to the pipeline (then the
  // serial end to end runs in them too), else chunks and no serial reference.
  std::size_t free_now = 0;
  CUDA_CHECK(cudaMemGetInfo(&free_now, &device_total));
  const bool serial_fits = 2 * bytes + kDeviceMargin <= free_now;
  const std::size_t chunk =
      serial_fits ? bytes
                  : std::max<std::size_t>(
                        std::min({bytes, kCeilingChunkBytes, free_now / 4}) / 4096 * 4096, 4096);
  lab::DeviceArray<unsigned char> device_a = lab::allocate_device<unsigned char>(chunk);
  lab::DeviceArray<unsigned char> device_b = lab::allocate_device<unsigned char>(chunk);
  // The bus ceiling is always taken from pinned memory: with pageable matrices, from two pinned
  // buffers of one chunk, copied again and again.
  lab::PinnedArray<unsigned char> staging_up, staging_down;
  if (pipeline.pageable) {
    const std::size_t staged = std::min(chunk, kCeilingChunkBytes);
    staging_up = lab::allocate_pinned<unsigned char>(staged, "the bus ceiling's source");
    staging_down = lab::allocate_pinned<unsigned char>(staged, "the bus ceiling's destination");
  }
  const std::size_t ceiling_chunk = pipeline.pageable ? std::min(chunk, kCeilingChunkBytes) : chunk;

  auto run_pipeline = [&] { pipe.enqueue(host.in, host.out, origin); };
  auto bus_ceiling = [&] {
    CUDA_CHECK(cudaEventRecord(fork, origin));
    CUDA_CHECK(cudaStreamWaitEvent(up_stream, fork, 0));
    CUDA_CHECK(cudaStreamWaitEvent(down_stream, fork, 0));
    const auto* in_bytes = reinterpret_cast<const unsigned char*>(host.in);
    auto* out_bytes = reinterpret_cast<unsigned char*>(host.out);
    for (std::size_t offset = 0; offset < bytes; offset += ceiling_chunk) {
      const std::size_t n = std::min(ceiling_chunk, bytes - offset);
      CUDA_CHECK(cudaMemcpyAsync(device_a.get(),
                                 pipeline.pageable ? staging_up.get() : in_bytes + offset, n,
                                 cudaMemcpyHostToDevice, up_stream));
      CUDA_CHECK(cudaMemcpyAsync(pipeline.pageable ? staging_down.get() : out_bytes + offset,
                                 device_b.get(), n, cudaMemcpyDeviceToHost, down_stream));
    }
    CUDA_CHECK(cudaEventRecord(up_done, up_stream));
    CUDA_CHECK(cudaEventRecord(down_done, down_stream));
    CUDA_CHECK(cudaStreamWaitEvent(origin, up_done, 0));
    CUDA_CHECK(cudaStreamWaitEvent(origin, down_done, 0));
  };
  T* const serial_in = reinterpret_cast<T*>(device_a.get());
  T* const serial_out = reinterpret_cast<T*>(device_b.get());
  LaunchShape serial_shape;
  auto serial = [&] {
    CUDA_CHECK(cudaMemcpyAsync(serial_in, host.in, bytes, cudaMemcpyHostToDevice, origin));
    serial_shape = lab::launch_checked(STEP_NAME, kReusedKernelVariants[0].launcher<T>(), serial_in,
                                       serial_out, rows, cols, origin, dtype);
    CUDA_CHECK(cudaMemcpyAsync(host.out, serial_out, bytes, cudaMemcpyDeviceToHost, origin));
  };

  // Correct first: for every fill, one pipeline run into a poisoned output (poisoned from the
  // fill), verified bitwise.
  const lab::Verification first_check =
      lab::verify_every_fill(dtype, host.in, host.out, rows, cols, [&] {
        run_pipeline();
        CUDA_CHECK(cudaStreamSynchronize(origin));
      });
  if (!first_check.ok()) fail_verification("first run", first_check);
  lab::Verification serial_check;
  if (serial_fits) {
    lab::poison_output(host.out, rows, cols, dtype, 0);
    serial();
    CUDA_CHECK(cudaStreamSynchronize(origin));
    serial_check = lab::verify_transpose(host.out, host.in, rows, cols);
    if (!serial_check.ok()) fail_verification("serial reference", serial_check);
  }

  // One run bracketed for Nsight Systems (`nsys profile --capture-range=cudaProfilerApi`).
  CUDA_CHECK(cudaProfilerStart());
  run_pipeline();
  CUDA_CHECK(cudaStreamSynchronize(origin));
  CUDA_CHECK(cudaProfilerStop());

  // The pipeline and its references, timed alternately (CUDA events on origin around each). All
  // three write host.out: the last timed run of the pipeline (piece 0) and of the serial
  // reference (piece 2) each get an output poisoned just before it and are verified right after.
  constexpr std::size_t kPipelinePiece = 0, kSerialPiece = 2;
  lab::Verification timed_check, serial_timed_check;
  auto poison_before = [&](std::size_t piece) {
    if (piece == kPipelinePiece || piece == kSerialPiece)
      lab::poison_output(host.out, rows, cols, dtype, 0);
  };
  auto verify_after = [&](std::size_t piece) {
    if (piece == kPipelinePiece) timed_check = lab::verify_transpose(host.out, host.in, rows, cols);
    if (piece == kSerialPiece)
      serial_timed_check = lab::verify_transpose(host.out, host.in, rows, cols);
  };
  const std::vector<double> ms = serial_fits ? lab::median_event_ms_checked(
                                                   options.reps, origin, [] {}, poison_before,
                                                   verify_after, run_pipeline, bus_ceiling, serial)
                                             : lab::median_event_ms_checked(
                                                   options.reps, origin, [] {}, poison_before,
                                                   verify_after, run_pipeline, bus_ceiling);
  const double pipeline_ms = ms[0], ceiling_ms = ms[1], serial_ms = serial_fits ? ms[2] : -1;
  if (!timed_check.ok()) fail_verification("last timed run", timed_check);
  if (serial_fits && !serial_timed_check.ok())
    fail_verification("serial reference, last timed run", serial_timed_check);

  // The timeline comes from one more run, verified too.
  lab::Verification timeline_check;
  if (!pipeline.timeline_path.empty()) {
    lab::poison_output(host.out, rows, cols, dtype, 0);
    pipe.enqueue(host.in, host.out, origin, true);
    CUDA_CHECK(cudaStreamSynchronize(origin));
    timeline_check = lab::verify_transpose(host.out, host.in, rows, cols);
    if (!timeline_check.ok()) fail_verification("timeline run", timeline_check);
    write_timeline(pipeline.timeline_path, pipe.timeline());
  }

  // The report: the pipeline's row and, when measured, the serial reference's.
  const LaunchShape piece_shape = pipe.piece_launch();
  const std::string pieces_of = piece_size(plan);
  const char* variant = pipeline.pageable                             ? "pageable"
                        : pipeline.down == lab::DownPath::kCopyEngine ? "copy-engine-down"
                                                                      : "pipeline";
  lab::Measurement m = lab::step_measurement(variant, properties.name, dtype, rows, cols);
  m.threads = pipe.threads_launched();
  m.launch = std::to_string(plan.streams) + " streams x " + std::to_string(plan.total_pieces()) +
             " pieces of " + pieces_of + ", " + pipe.describe_down() + ", " +
             lab::describe_launch(piece_shape);
  m.reps = options.reps;
  m.median_ms = pipeline_ms;
  m.e2e_ms = pipeline_ms;  // the pipeline is end to end: host in, host out
  m.verified = true;
  m.summary = kStepSummary;
  lab::set_bandwidth(m, ceiling_ms);
  m.ceiling_kind = lab::kBusCeiling;  // both directions at once; the serial row below copies it
  std::vector<lab::Measurement> measured{m};
  if (serial_fits) {
    lab::Measurement s = m;
    s.variant = "serial";
    s.threads = lab::threads_launched(serial_shape);
    s.launch = "1 stream, whole matrix, " + lab::describe_launch(serial_shape);
    s.median_ms = s.e2e_ms = serial_ms;
    s.summary = std::string("serial end to end of ") + STEP_KERNEL_NAME +
                ": up, transpose, down, one after another";
    lab::set_bandwidth(s, ceiling_ms);
    measured.push_back(s);
  }

  const std::string given = pipeline.device_mem != 0
                                ? "--device-mem " + std::to_string(pipeline.device_mem)
                                : "default " + std::to_string(request.device_mem);
  std::vector<std::string> context = {
      "device   " + std::string(properties.name) + ", " +
          std::to_string(properties.asyncEngineCount) + " copy engines",
      lab::matrix_line(rows, cols, dtype.name, dtype.bytes, options.reps, "runs"),
      std::string("host     ") +
          (pipeline.pageable ? "pageable (malloc): the driver stages every copy through "
                               "pinned buffers of its own"
           : pipeline.pages == lab::PinnedPages::kHuge
               ? "pinned on 2 MiB pages (" + lab::format_bytes(lab::huge_page_bytes()) +
                     " of this process on huge pages)"
               : "pinned (cudaMallocHost)"),
      std::string("down     ") + (plan.down == lab::DownPath::kKernel
                                      ? "the SMs write each piece's output into host memory"
                                      : "one strided 2D copy per piece, by the copy engine"),
      "pieces   " + std::to_string(plan.total_pieces()) +
          (plan.col_ranges == 1 ? " bands of " : " tiles of ") + pieces_of + " of the input over " +
          std::to_string(plan.streams) + " streams; " + lab::format_bytes(plan.device_bytes()) +
          " of device memory (" + given + ")",
      std::string("kernel   ") + STEP_KERNEL_NAME + ": " + kReusedKernelSummary,
      "ceiling  host to device and device to host of the same bytes at once, two streams, "
      "pinned, " +
          (ceiling_chunk == bytes ? std::string("one copy each way")
                                  : "in chunks of " + lab::format_bytes(ceiling_chunk)),
      serial_fits ? std::string("serial   ") + STEP_KERNEL_NAME +
                        " end to end: the whole matrix up, transposed, down, on one stream"
                  : "serial   not measured: in and out, " + lab::format_bytes(2 * bytes) +
                        ", do not fit in device memory: that is what the pieces are for",
      "check    first run " + first_check.describe(),
      "         last timed run (fill 1): " + timed_check.describe()};
  if (serial_fits) {
    context.push_back("         serial reference, first run (fill 1): " + serial_check.describe());
    context.push_back("         serial reference, last timed run (fill 1): " +
                      serial_timed_check.describe());
  }
  if (!pipeline.timeline_path.empty())
    context.push_back("         timeline run (fill 1): " + timeline_check.describe());
  lab::print_context(std::string(STEP_NAME) + ": " + kStepSummary, context);
  std::vector<lab::TableRow> table;
  for (const lab::Measurement& row : measured) table.push_back(lab::table_row(row));
  table.push_back(lab::ceiling_row(rows, cols, dtype.bytes, ceiling_ms,
                                   "H2D + D2H at once, two streams, pinned (ceiling)"));
  lab::print_table(table);
  if (serial_fits)
    std::printf("  speedup over the serial end to end: %.2fx\n", serial_ms / pipeline_ms);
  if (!pipeline.timeline_path.empty())
    std::printf("  timeline of the last run: %s\n", pipeline.timeline_path.c_str());
  std::fflush(stdout);
  if (!options.csv_path.empty()) lab::append_csv(options.csv_path, measured);

  for (cudaEvent_t event : {fork, up_done, down_done}) CUDA_CHECK(cudaEventDestroy(event));
  for (cudaStream_t stream : {origin, up_stream, down_stream})
    CUDA_CHECK(cudaStreamDestroy(stream));
  return lab::kExitOk;
}

}  // namespace

int main(int argc, char** argv) {
  lab::CliSpec spec = lab::step_cli_spec({}, kDefaultPipelineReps);
  spec.cases = false;
  PipelineOptions pipeline;
  std::vector<char*> rest = take_pipeline_options(argc, argv, spec, &pipeline);
  const lab::Options options =
      lab::parse_options_or_exit(static_cast<int>(rest.size()), rest.data(), spec);

  // What can be refused without a GPU is refused before looking for one.
  std::string why;
  const lab::PipelineRequest request = request_of(options, pipeline);
  if (lab::plan_pieces(request, &why).pieces == 0) usage_error(spec, why);
  if (pipeline.plan_only) return print_plan(request, options);
  lab::require_host_memory(2 * lab::matrix_bytes(options.rows, options.cols, options.dtype->bytes),
                           "the input and the output");

  return lab::run_on_device_0(STEP_NAME, options.dtype->bytes,
                              [&](auto element, const cudaDeviceProp& properties) {
                                return run<decltype(element)>(options, pipeline, properties);
                              });
}
