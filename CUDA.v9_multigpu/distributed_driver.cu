// main() for distributed steps (kind `distributed`): the matrix lives in row bands over G ranks
// and so does its transpose (distributed.cuh). Three ways to run, one code:
//   --gpus N           one process drives N visible GPUs (ncclCommInitAll); default: all of them
//   mpirun -np N       built with MPI (LAB_WITH_MPI): one process per GPU (ncclCommInitRank)
//   --virtual-ranks N  test mode: N ranks on one GPU, the exchange done by device copies
// and two exchanges: --exchange nccl (the default) or peer, one kernel per GPU writing into every
// rank's band (peer access in one process, CUDA IPC under MPI; NCCL where a pair lacks access).
// For every fill each rank's input band is filled on the host from the fill definition, the
// output bands are poisoned, the step runs once, and every rank verifies its own output band
// bitwise; then the step and its ceiling, the all-to-all of the same bytes without transposes
// (and with the peer exchange, a peer copy of the same bytes too), are timed alternately (L2
// flushed before each), and the kernel step the step links is timed
// alone on the whole matrix on one GPU for comparison. The output bands are poisoned again before
// the last timed run of the step, which every rank verifies before the ceiling (it writes the same
// bands) runs; the single-GPU run's last timed launch is verified too (docs/verification.md).
// A rank that dies, or a signal that stops the job, ends every rank with one line each (Faults).
// Fault injection, for the tests: LAB_DIE_AFTER_REPS=RANK:N makes the process that owns rank RANK
// kill itself (SIGKILL) after N timed runs.
#include <nccl.h>
#include <signal.h>
#include <unistd.h>

#ifdef LAB_WITH_MPI
#define OMPI_SKIP_MPICXX 1  // the C interface only: the C++ bindings are deprecated and noisy
#define MPICH_SKIP_MPICXX 1
#include <mpi.h>
#endif

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "cli.hpp"
#include "config.hpp"
#include "cuda_check.cuh"
#include "cuda_harness.cuh"
#include "cuda_step.cuh"
#include "distributed.cuh"
#include "host_memory.hpp"
#include "matrix.hpp"
#include "report.hpp"
#include "step_info.hpp"
#include "timer.hpp"

namespace {

using lab::Decomposition;
using lab::Index;
using lab::Rank;
using lab::Team;

constexpr std::size_t kChunkTargetBytes = std::size_t{32} << 20;  // of an input band, by default
constexpr int kMaxDefaultChunks = 16;
// Each ncclAlltoAll on the copy engines begins and ends with a handshake between the ranks: with
// symmetric windows fewer, larger chunks (measured on two H200s: README).
constexpr int kMaxDefaultWindowChunks = 6;
constexpr int kMaxCount = 999999;  // the most a count option (--gpus, --chunks, ...) takes
#ifdef LAB_WITH_MPI
constexpr int kBusIdBytes = 32;  // a PCI bus id, "0000:1b:00.0", with room to spare
#endif

// ---- The processes: one, or one per GPU under MPI ----

struct World {
  bool mpi = false;  // launched by mpirun and built with MPI
  int rank = 0, size = 1;
  int local_rank = 0, local_size = 1;  // among the processes on this host
};
World g_world;
std::string g_label = STEP_NAME;  // "STEP" or "STEP: rank r": what every message starts with
// Set once this rank has said why it leaves, or a signal stops it: a signal on its way out (mpirun
// stopping the job that its failure ends) then adds no second line (Faults, below).
std::atomic<bool> g_said_why{false};
static_assert(std::atomic<bool>::is_always_lock_free, "a signal handler needs a lock-free flag");

#ifdef LAB_WITH_MPI
bool launched_by_mpi() {
  for (const char* name : {"OMPI_COMM_WORLD_SIZE", "PMI_SIZE", "PMIX_RANK", "MV2_COMM_WORLD_SIZE"})
    if (std::getenv(name) != nullptr) return true;
  return false;
}
#endif

[[noreturn]] void leave(int code) {
  if (code != lab::kExitOk) g_said_why = true;
  std::fflush(stdout);
  std::fflush(stderr);
#ifdef LAB_WITH_MPI
  if (g_world.mpi) MPI_Finalize();
#endif
  std::exit(code);
}

// For a rank that failed, after the line that says why: no MPI_Finalize, which would wait for
// ranks that wait for this one (under MPI, mpirun stops the other ranks).
[[noreturn]] void exit_failed() {
  g_said_why = true;
  std::fflush(stdout);
  std::fflush(stderr);
  std::exit(lab::kExitFailed);
}

// Every rank passes its own exit code (0: fine); all leave with the largest when one is not 0.
// The rank that failed has printed why; the others leave quietly.
void agree_or_leave(int code) {
#ifdef LAB_WITH_MPI
  if (g_world.mpi) {
    int worst = 0;
    MPI_Allreduce(&code, &worst, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
    code = worst;
  }
#endif
  if (code != lab::kExitOk) leave(code);
}

void barrier() {
#ifdef LAB_WITH_MPI
  if (g_world.mpi) MPI_Barrier(MPI_COMM_WORLD);
#endif
}

bool rank0_says(bool value) {  // rank 0 decides, everybody follows (loops that must match)
#ifdef LAB_WITH_MPI
  if (g_world.mpi) {
    int v = value ? 1 : 0;
    MPI_Bcast(&v, 1, MPI_INT, 0, MPI_COMM_WORLD);
    return v != 0;
  }
#endif
  return value;
}

bool every_rank(bool value) {  // true where it is true on every rank of every process
#ifdef LAB_WITH_MPI
  if (g_world.mpi) {
    int v = value ? 1 : 0;
    MPI_Allreduce(MPI_IN_PLACE, &v, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
    return v != 0;
  }
#endif
  return value;
}

void max_over_ranks(std::vector<double>& values) {
#ifdef LAB_WITH_MPI
  if (g_world.mpi && !values.empty())
    MPI_Allreduce(MPI_IN_PLACE, values.data(), static_cast<int>(values.size()), MPI_DOUBLE, MPI_MAX,
                  MPI_COMM_WORLD);
#else
  (void)values;
#endif
}

// ---- The command line: the shared options plus this kind's own ----

struct DistributedOptions {
  int gpus = 0;           // 0: not given
  int virtual_ranks = 0;  // 0: not given
  int chunks = 0;         // 0: chosen from the band size
  bool tapered = true;    // --chunk-sizes tapered (default) or even
  lab::PlacePath place = lab::PlacePath::kKernel;
  int place_blocks = 0;  // 0: not given (a block per placed row)
  lab::NcclBuffers nccl_buffers = lab::NcclBuffers::kPlain;
  lab::Exchange exchange = lab::Exchange::kNccl;
  bool nccl_pipeline_given = false;  // an option that shapes the NCCL exchange only
};

const char* const kDistributedUsage =
    "  --gpus N           this one process drives N GPUs through NCCL (default: every visible "
    "GPU)\n"
    "  --virtual-ranks N  test mode: N ranks on one GPU, the exchange done by device copies\n"
    "  --chunks N         pieces of each band, exchanged while the next is transposed "
    "(default: by size)\n"
    "  --chunk-sizes WAY  tapered (default: the first and last chunks smallest, 1, 2, 4, 8, ..., "
    "8, 4, 2, 1)\n"
    "                     or even (every chunk the same size)\n"
    "  --place WAY        kernel (default: the SMs place received blocks) or copy-engine "
    "(2D copies)\n"
    "  --place-blocks N   the placement kernels launch at most N blocks (default: one a row), "
    "leaving\n"
    "                     SMs to NCCL's kernels while they run beside the exchange\n"
    "  --nccl-buffers WAY plain (default: cudaMalloc, NCCL copies through its own buffers), "
    "registered\n"
    "                     (ncclMemAlloc + ncclCommRegister: NCCL reads and writes the step's "
    "buffers)\n"
    "                     or windows (symmetric windows, no SM for NCCL: ncclAlltoAll on the "
    "copy engines)\n"
    "  --exchange WAY     nccl (default: local transposes and an NCCL all-to-all) or peer (one "
    "kernel\n"
    "                     per GPU writes into every GPU's band; NCCL where a pair lacks peer "
    "access)\n"
    "  Built with MPI, under mpirun: one process per GPU (no --gpus). NCCL_NVLS_ENABLE=0 unless "
    "set.\n";

[[noreturn]] void usage_error(const lab::CliSpec& spec, const std::string& why) {
  if (g_world.rank == 0)
    std::fprintf(stderr, "%s: error: %s\n%s%s", spec.program.c_str(), why.c_str(),
                 lab::usage_text(spec).c_str(), kDistributedUsage);
  leave(lab::kExitUsage);
}

// Digits only (no sign, no spaces), six at the most: the rank and the run count of a fault, which
// may be 0 (the count options go through lab::parse_count).
bool whole_number(const std::string& text) {
  return !text.empty() && text.size() <= 6 &&
         text.find_first_not_of("0123456789") == std::string::npos;
}

// The shared parser's rule and words (digits only, 1..max), with this program's usage on error.
int parse_count(const lab::CliSpec& spec, const std::string& flag, const char* text) {
  try {
    return static_cast<int>(lab::parse_count(text == nullptr ? "" : text, flag, kMaxCount));
  } catch (const lab::UsageError& refused) {
    usage_error(spec, refused.what());
  }
}

// --nccl-buffers, in NcclBuffers order: the option's word, what the CSV's launch says (rows with
// plain buffers read as they always have) and the report's line.
struct BufferWay {
  const char* option;
  const char* launch;
  const char* report;
};
const BufferWay kBufferWays[] = {
    {"plain", "", "plain (cudaMalloc): NCCL copies through its own buffers"},
    {"registered", "registered NCCL buffers, ",
     "registered (ncclMemAlloc, ncclCommRegister): NCCL moves the bytes between them"},
    {"windows", "symmetric NCCL windows (ncclAlltoAll, zero CTAs), ",
     "symmetric windows (ncclMemAlloc, ncclCommWindowRegister), communicators under "
     "NCCL_CTA_POLICY_ZERO: ncclAlltoAll may run on the copy engines, no SM"},
};

static_assert(sizeof kBufferWays / sizeof kBufferWays[0] ==
                  static_cast<int>(lab::NcclBuffers::kWindows) + 1,
              "one way for each NcclBuffers");

const BufferWay& buffer_way(lab::NcclBuffers way) {
  return kBufferWays[static_cast<int>(way)];
}

// The value of a flag that names one of a few ways; anything else is refused.
std::string take_way(const lab::CliSpec& spec, const std::string& flag, const char* text,
                     const std::vector<std::string>& ways) {
  const std::string way = text == nullptr ? "" : text;
  if (std::find(ways.begin(), ways.end(), way) != ways.end()) return way;
  std::string named = ways.front();
  for (std::size_t i = 1; i < ways.size(); ++i)
    named += (i + 1 == ways.size() ? " or " : ", ") + ways[i];
  usage_error(spec, flag + " takes " + named + ", got '" + way + "'");
}

// Takes this kind's flags out of argv (the shared parser refuses options it does not know).
DistributedOptions take_distributed_options(int* argc, char** argv, const lab::CliSpec& spec) {
  DistributedOptions options;
  int kept = 1;
  for (int i = 1; i < *argc; ++i) {
    const std::string arg = argv[i];
    if (arg == "--help" || arg == "-h") {
      if (g_world.rank == 0) std::printf("%s%s", lab::usage_text(spec).c_str(), kDistributedUsage);
      leave(lab::kExitOk);
    }
    const char* value = i + 1 < *argc ? argv[i + 1] : nullptr;
    if (arg == "--exchange") {
      const bool nccl = take_way(spec, arg, value, {"nccl", "peer"}) == "nccl";
      options.exchange = nccl ? lab::Exchange::kNccl : lab::Exchange::kPeer;
      ++i;
      continue;
    }
    if (arg == "--chunk-sizes") {
      options.tapered = take_way(spec, arg, value, {"tapered", "even"}) == "tapered";
      options.nccl_pipeline_given = true;
      ++i;
      continue;
    }
    if (arg == "--place") {
      const bool kernel = take_way(spec, arg, value, {"kernel", "copy-engine"}) == "kernel";
      options.place = kernel ? lab::PlacePath::kKernel : lab::PlacePath::kCopyEngine;
      options.nccl_pipeline_given = true;
      ++i;
      continue;
    }
    if (arg == "--nccl-buffers") {
      std::vector<std::string> ways;
      for (const BufferWay& known : kBufferWays) ways.push_back(known.option);
      const std::string way = take_way(spec, arg, value, ways);
      options.nccl_buffers =
          static_cast<lab::NcclBuffers>(std::find(ways.begin(), ways.end(), way) - ways.begin());
      options.nccl_pipeline_given = true;
      ++i;
      continue;
    }
    int* target = arg == "--gpus"            ? &options.gpus
                  : arg == "--virtual-ranks" ? &options.virtual_ranks
                  : arg == "--chunks"        ? &options.chunks
                  : arg == "--place-blocks"  ? &options.place_blocks
                                             : nullptr;
    if (target == nullptr) {
      argv[kept++] = argv[i];
      continue;
    }
    options.nccl_pipeline_given |= target == &options.chunks || target == &options.place_blocks;
    *target = parse_count(spec, arg, value);
    ++i;
  }
  *argc = kept;
  argv[kept] = nullptr;
  if (options.gpus != 0 && options.virtual_ranks != 0)
    usage_error(spec, "--gpus and --virtual-ranks exclude each other");
  if (options.exchange == lab::Exchange::kPeer && options.nccl_pipeline_given)
    usage_error(spec,
                "--chunks, --chunk-sizes, --place, --place-blocks and --nccl-buffers shape the "
                "NCCL exchange; --exchange peer has none of them");
  if (options.place == lab::PlacePath::kCopyEngine && options.place_blocks != 0)
    usage_error(spec, "--place-blocks sizes the placement kernels; --place copy-engine has none");
  return options;
}

// ---- Fills and verification of one band, on the host, from the fill definition ----

template <class T>
void fill_band(T* band, const Decomposition& plan, int g, const lab::Dtype& type, int fill) {
  const Index first = plan.row_begin(g) * plan.cols, count = plan.band_rows(g) * plan.cols;
#pragma omp parallel for schedule(static)
  for (Index i = 0; i < count; ++i) band[i] = lab::fill_value<T>(type, fill, first + i);
}

// Output band of rank g, each element the poison of the value it must receive in `fill`.
template <class T>
void poison_band(T* band, const Decomposition& plan, int g, const lab::Dtype& type, int fill) {
  const Index c0 = plan.col_begin(g), band_cols = plan.band_cols(g), rows = plan.rows;
#pragma omp parallel for collapse(2) schedule(static)
  for (Index c = 0; c < band_cols; ++c)
    for (Index r = 0; r < rows; ++r)
      band[c * rows + r] = lab::poison_value<T>(type, fill, r * plan.cols + c0 + c);
}

std::string hex(const void* bits, int bytes) {
  std::string text = "0x";
  const auto* b = static_cast<const unsigned char*>(bits);
  char two[3];
  for (int i = bytes - 1; i >= 0; --i) {  // most significant byte first
    std::snprintf(two, sizeof two, "%02x", b[i]);
    text += two;
  }
  return text;
}

// Output band of rank g: out[(c - c0) * rows + r] must be input element (r, c), for c in the band.
// Positions in the report are in the whole output (cols x rows).
template <class T>
lab::Verification verify_band(const T* out, const Decomposition& plan, int g,
                              const lab::Dtype& type, int fill) {
  const Index c0 = plan.col_begin(g), band_cols = plan.band_cols(g), rows = plan.rows;
  lab::Verification result;
  result.checked = band_cols * rows;
  Index wrong = 0, first = result.checked;
#pragma omp parallel for collapse(2) schedule(static) reduction(+ : wrong) reduction(min : first)
  for (Index c = 0; c < band_cols; ++c) {
    for (Index r = 0; r < rows; ++r) {
      const T want = lab::fill_value<T>(type, fill, r * plan.cols + c0 + c);
      if (std::memcmp(out + c * rows + r, &want, sizeof(T)) == 0) continue;
      ++wrong;
      first = std::min(first, c * rows + r);
    }
  }
  result.wrong = wrong;
  if (wrong != 0) {
    result.first_row = c0 + first / rows;
    result.first_col = first % rows;
    const T want = lab::fill_value<T>(type, fill, result.first_col * plan.cols + result.first_row);
    result.got = hex(out + first, sizeof(T));
    result.want = hex(&want, sizeof(T));
  }
  return result;
}

// ---- Waiting: never blocks where NCCL might not finish ----

void abort_and_leave(Team& team, int rank, ncclResult_t error, const char* what) {
  std::fprintf(stderr, "%s: NCCL error on rank %d while %s: %s%s\n", g_label.c_str(), rank, what,
               ncclGetErrorString(error),
               error == ncclRemoteError ? " (a peer failed or left)" : "");
  g_said_why = true;  // before the aborts, which take a while
  for (Rank& r : team.local)
    if (r.comm != nullptr) ncclCommAbort(r.comm);
  exit_failed();
}

// Until every stream of every local rank is idle; meanwhile NCCL's asynchronous errors (a peer
// that died, a broken link) are checked, so an error ends the run instead of hanging it.
void wait_for(Team& team, const char* what) {
  for (;;) {
    bool done = true;
    for (Rank& r : team.local) {
      CUDA_CHECK(cudaSetDevice(r.device));
      for (cudaStream_t stream : {r.compute, r.link, r.place}) {
        const cudaError_t status = cudaStreamQuery(stream);
        if (status == cudaErrorNotReady)
          done = false;
        else
          CUDA_CHECK(status);
      }
    }
    if (done) return;
    for (Rank& r : team.local) {
      if (r.comm == nullptr) continue;
      ncclResult_t async = ncclSuccess;
      NCCL_CHECK(ncclCommGetAsyncError(r.comm, &async), r.comm);
      if (async != ncclSuccess && async != ncclInProgress)
        abort_and_leave(team, r.rank, async, what);
    }
    std::this_thread::sleep_for(std::chrono::microseconds(20));
  }
}

// ---- Faults: a rank that dies, or a signal that stops the job, ends every rank in one line ----

// A rank that dies (a crash, the OOM killer) leaves the others waiting in a collective; mpirun then
// stops them with SIGTERM, as a user's Ctrl-C stops a run with SIGINT. Each says so in one line.
// The lines are made before the handler is installed, since a handler may only write(2) and
// _exit(2) (plain arrays: a string could be destroyed under it at exit); g_said_why keeps two
// signals at once (Ctrl-C reaches the ranks beside mpirun's SIGTERM) to one line.
constexpr int kStopSignals[] = {SIGTERM, SIGINT};
constexpr const char* kStopSignalNames[] = {"SIGTERM", "SIGINT"};
char g_stopped_lines[2][256];

void say_stopped_and_leave(int number) {
  if (!g_said_why.exchange(true)) {
    const char* line = g_stopped_lines[number == kStopSignals[0] ? 0 : 1];
    const ssize_t written = write(STDERR_FILENO, line, std::strlen(line));
    (void)written;  // nothing more can be done about a stderr that is gone
  }
  _exit(lab::kExitFailed);
}

// Once the rank is known (g_label names it), in every mode.
void say_one_line_when_stopped() {
  const std::string who = g_label + (g_world.mpi ? " of " + std::to_string(g_world.size) : "");
  const char* why = g_world.mpi ? "another rank failed, or mpirun or the user stopped the job"
                                : "the user or a job manager stopped the run";
  struct sigaction action = {};
  action.sa_handler = say_stopped_and_leave;
  sigemptyset(&action.sa_mask);
  for (int k = 0; k < 2; ++k) {
    std::snprintf(g_stopped_lines[k], sizeof g_stopped_lines[k], "%s: stopped by %s: %s\n",
                  who.c_str(), kStopSignalNames[k], why);
    sigaction(kStopSignals[k], &action, nullptr);
  }
}

// Fault injection, for the tests: a rank that dies mid-run, at the same point of every run and
// without a handler or a word, as a crash would end it. Where one process holds several ranks
// (--gpus, --virtual-ranks), they all die with it.
constexpr const char* kDieVariable = "LAB_DIE_AFTER_REPS";  // RANK:N, after N timed runs
struct Fault {
  int rank = -1;  // -1: none asked for
  int after_reps = 0;
};
Fault g_fault;

[[noreturn]] void refuse_fault(const lab::CliSpec& spec, const std::string& why) {
  if (g_world.rank == 0)
    std::fprintf(stderr, "%s: error: %s=%s: %s\n", spec.program.c_str(), kDieVariable,
                 std::getenv(kDieVariable), why.c_str());
  leave(lab::kExitUsage);
}

// Read with the command line, before any GPU work: a bad value is refused as a bad option is.
Fault fault_asked_for(const lab::CliSpec& spec, int reps) {
  const char* setting = std::getenv(kDieVariable);
  if (setting == nullptr) return {};
  const std::string text = setting;
  const std::size_t colon = text.find(':');
  const std::string rank = text.substr(0, colon);
  const std::string after = colon == std::string::npos ? "" : text.substr(colon + 1);
  if (whole_number(rank) && whole_number(after) && std::atoi(after.c_str()) < reps)
    return {std::atoi(rank.c_str()), std::atoi(after.c_str())};
  const std::string most = std::to_string(reps - 1) + " (--reps " + std::to_string(reps) + ")";
  refuse_fault(
      spec,
      "use RANK:N: the process that owns rank RANK dies after N timed runs, N from 0 to " + most);
}

void die_here_if_asked(const Team& team, int reps_done) {
  if (reps_done != g_fault.after_reps) return;
  for (const Rank& r : team.local)
    if (r.rank == g_fault.rank) raise(SIGKILL);
}

// ---- Set-up ----

int default_chunks(const Decomposition& plan, lab::NcclBuffers buffers) {
  if (plan.ranks == 1) return 1;
  Index widest = 0, narrowest = plan.rows;
  for (int g = 0; g < plan.ranks; ++g) {
    widest = std::max(widest, plan.band_rows(g));
    narrowest = std::min(narrowest, plan.band_rows(g));
  }
  const std::size_t band_bytes = plan.bytes(widest * plan.cols);
  Index chunks = static_cast<Index>((band_bytes + kChunkTargetBytes - 1) / kChunkTargetBytes);
  chunks = std::min<Index>(
      chunks, buffers == lab::NcclBuffers::kWindows ? kMaxDefaultWindowChunks : kMaxDefaultChunks);
  if (narrowest > 0) chunks = std::min(chunks, narrowest);
  return static_cast<int>(std::max<Index>(chunks, 1));
}

struct Buffers {  // what the driver owns for one local rank, besides the device pointers in Rank
  lab::PinnedArray<char> host_in, host_out;
  std::unique_ptr<lab::L2Flush> flush;  // one per GPU: on the first local rank of each device
  bool leads_device = false;
  cudaEvent_t start = nullptr, stop = nullptr;
  // --nccl-buffers registered or windows: the buffers that came from ncclMemAlloc (bytes each),
  // and the handles ncclCommRegister or ncclCommWindowRegister gave for them.
  std::vector<std::pair<char*, std::size_t>> from_nccl;
  std::vector<void*> registrations;
#if LAB_NCCL_HAS_WINDOWS
  std::vector<ncclWindow_t> windows;
#endif
};

// --nccl-buffers windows: communicators that may use no SM, so that NCCL runs ncclAlltoAll between
// symmetric windows on the copy engines.
ncclConfig_t zero_cta_config() {
  ncclConfig_t config = NCCL_CONFIG_INITIALIZER;
#if LAB_NCCL_HAS_WINDOWS
  config.CTAPolicy = NCCL_CTA_POLICY_ZERO;
#endif
  return config;
}

char* device_bytes(std::size_t bytes) {
  void* raw = nullptr;
  CUDA_CHECK(cudaMalloc(&raw, std::max<std::size_t>(bytes, 1)));
  return static_cast<char*>(raw);
}

// A buffer NCCL sends from or receives into (a band, an exchange buffer). To be registered it
// must come from ncclMemAlloc, whose memory NCCL can map into the other ranks' address spaces.
// Where that fails, one line says so and every later buffer is plain.
char* nccl_bytes(Team& team, Buffers& mine, std::size_t bytes) {
#if LAB_NCCL_CAN_REGISTER
  if (team.nccl_buffers != lab::NcclBuffers::kPlain) {
    bytes = std::max<std::size_t>(bytes, 1);
    void* raw = nullptr;
    const ncclResult_t status = ncclMemAlloc(&raw, bytes);
    if (status == ncclSuccess) {
      mine.from_nccl.emplace_back(static_cast<char*>(raw), bytes);
      return static_cast<char*>(raw);
    }
    std::fprintf(stderr, "%s: --nccl-buffers %s: ncclMemAlloc failed (%s): plain buffers\n",
                 g_label.c_str(), buffer_way(team.nccl_buffers).option, ncclGetErrorString(status));
    team.nccl_buffers = lab::NcclBuffers::kPlain;
  }
#else
  (void)team;
  (void)mine;
#endif
  return device_bytes(bytes);
}

void free_nccl_bytes(Buffers& mine, char* bytes) {
#if LAB_NCCL_CAN_REGISTER
  for (const auto& allocation : mine.from_nccl)
    if (allocation.first == bytes) {
      NCCL_CHECK(ncclMemFree(bytes), nullptr);
      return;
    }
#else
  (void)mine;
#endif
  CUDA_CHECK(cudaFree(bytes));
}

void deregister_buffers(Team& team, std::vector<Buffers>& buffers) {
#if LAB_NCCL_HAS_WINDOWS
  // Window (de)registration is collective: every local rank's in one group.
  NCCL_CHECK(ncclGroupStart(), nullptr);
  for (std::size_t i = 0; i < team.local.size(); ++i) {
    Rank& me = team.local[i];
    CUDA_CHECK(cudaSetDevice(me.device));
    for (ncclWindow_t window : buffers[i].windows)
      if (window != nullptr) NCCL_CHECK(ncclCommWindowDeregister(me.comm, window), me.comm);
    buffers[i].windows.clear();
  }
  NCCL_CHECK(ncclGroupEnd(), nullptr);
#endif
#if LAB_NCCL_CAN_REGISTER
  for (std::size_t i = 0; i < team.local.size(); ++i) {
    Rank& me = team.local[i];
    CUDA_CHECK(cudaSetDevice(me.device));
    for (void* handle : buffers[i].registrations)
      NCCL_CHECK(ncclCommDeregister(me.comm, handle), me.comm);
    buffers[i].registrations.clear();
  }
#else
  (void)team;
  (void)buffers;
#endif
}

// --nccl-buffers windows: every buffer NCCL touches, registered as a symmetric window (every rank
// registers buffers of the same sizes in the same order, and passes the same offsets into them),
// which with communicators under NCCL_CTA_POLICY_ZERO lets ncclAlltoAll run on the copy engines.
// Where a rank fails, one line says so and the buffers are registered as with `registered`.
bool register_windows(Team& team, std::vector<Buffers>& buffers) {
  bool ok = true;
#if LAB_NCCL_HAS_WINDOWS
  ncclResult_t status = ncclGroupStart();
  for (std::size_t i = 0; i < team.local.size() && status == ncclSuccess; ++i) {
    Rank& me = team.local[i];
    CUDA_CHECK(cudaSetDevice(me.device));
    // Inside a group a handle is filled in at ncclGroupEnd: each has its place already.
    std::vector<ncclWindow_t>& windows = buffers[i].windows;
    windows.assign(buffers[i].from_nccl.size(), nullptr);
    for (std::size_t j = 0; j < windows.size() && status == ncclSuccess; ++j)
      status = ncclCommWindowRegister(me.comm, buffers[i].from_nccl[j].first,
                                      buffers[i].from_nccl[j].second, &windows[j],
                                      NCCL_WIN_COLL_SYMMETRIC);
  }
  const ncclResult_t ended = ncclGroupEnd();
  if (status == ncclSuccess) status = ended;
  if (status != ncclSuccess) {
    std::fprintf(stderr,
                 "%s: --nccl-buffers windows: ncclCommWindowRegister failed (%s): registered "
                 "buffers\n",
                 g_label.c_str(), ncclGetErrorString(status));
    ok = false;
  }
#else
  ok = false;
#endif
  if (every_rank(ok)) return true;
  deregister_buffers(team, buffers);
  team.nccl_buffers = lab::NcclBuffers::kRegistered;
  return false;
}

// Every buffer NCCL touches, registered with the communicator of its rank, so that NCCL's kernels
// read the sender's buffer and write the receiver's across the link, without staging the bytes
// through its own FIFO buffers. NCCL requires all ranks or none to pass registered buffers: where
// one rank fails, one line says so and every rank goes back to plain (unregistered) buffers.
void register_buffers(Team& team, std::vector<Buffers>& buffers) {
  if (team.nccl_buffers == lab::NcclBuffers::kWindows && register_windows(team, buffers)) return;
  bool ok = team.nccl_buffers == lab::NcclBuffers::kRegistered;
#if LAB_NCCL_CAN_REGISTER
  for (std::size_t i = 0; i < team.local.size() && ok; ++i) {
    Rank& me = team.local[i];
    CUDA_CHECK(cudaSetDevice(me.device));
    for (const auto& allocation : buffers[i].from_nccl) {
      void* handle = nullptr;
      const ncclResult_t status =
          ncclCommRegister(me.comm, allocation.first, allocation.second, &handle);
      if (status != ncclSuccess) {
        std::fprintf(stderr,
                     "%s: --nccl-buffers registered: ncclCommRegister failed on rank %d (%s): "
                     "plain buffers\n",
                     g_label.c_str(), me.rank, ncclGetErrorString(status));
        ok = false;
        break;
      }
      buffers[i].registrations.push_back(handle);
    }
  }
#endif
  if (every_rank(ok) || team.nccl_buffers == lab::NcclBuffers::kPlain) return;
  deregister_buffers(team, buffers);
  team.nccl_buffers = lab::NcclBuffers::kPlain;
}

// The peer exchange writes into the output bands themselves: it needs no scratch.
lab::Scratch scratch_of(const Team& team, int g) {
  return team.exchange == lab::Exchange::kPeer ? lab::Scratch{} : lab::step_scratch(team, g);
}

std::size_t rank_device_bytes(const Team& team, int g) {
  const Decomposition& plan = team.plan;
  const lab::Scratch scratch = scratch_of(team, g);
  const std::size_t copies = plan.chunks > 1 ? 2 : 1;
  return plan.bytes(plan.band_rows(g) * plan.cols) + plan.bytes(plan.band_cols(g) * plan.rows) +
         copies * (scratch.send + scratch.recv);
}

// Every rank's bands and buffers, and the L2 flush of each GPU, must fit in its GPU's free memory.
int check_device_memory(const Team& team, const lab::Dtype& dtype) {
  int code = lab::kExitOk;
  for (std::size_t i = 0; i < team.local.size(); ++i) {
    const Rank& me = team.local[i];
    bool first_on_device = true;
    for (std::size_t j = 0; j < i; ++j) first_on_device &= team.local[j].device != me.device;
    if (!first_on_device) continue;
    std::size_t needed = 0;
    for (const Rank& other : team.local)
      if (other.device == me.device) needed += rank_device_bytes(team, other.rank);
    cudaDeviceProp properties;
    CUDA_CHECK(cudaGetDeviceProperties(&properties, me.device));
    needed += static_cast<std::size_t>(std::max(properties.l2CacheSize, 0));
    CUDA_CHECK(cudaSetDevice(me.device));
    std::size_t free_bytes = 0, total_bytes = 0;
    CUDA_CHECK(cudaMemGetInfo(&free_bytes, &total_bytes));
    if (needed > free_bytes) {
      std::fprintf(
          stderr,
          "%s: error: rank %d's band of %lld x %lld %s does not fit on GPU %d (%s): its "
          "bands, exchange buffers and the L2 flush buffer need %s; it has %s free of %s\n",
          g_label.c_str(), me.rank, static_cast<long long>(team.plan.rows),
          static_cast<long long>(team.plan.cols), dtype.name, me.device, properties.name,
          lab::format_bytes(needed).c_str(), lab::format_bytes(free_bytes).c_str(),
          lab::format_bytes(total_bytes).c_str());
      code = lab::kExitNoMemory;
    }
    // Received blocks are placed with strided copies whose pitch is a whole output row.
    if (team.plan.ranks > 1 && team.exchange == lab::Exchange::kNccl &&
        team.plan.bytes(team.plan.rows) > properties.memPitch) {
      std::fprintf(stderr,
                   "%s: error: an output row of %lld elements is %s, over the largest pitch of a "
                   "strided copy on %s (%s)\n",
                   g_label.c_str(), static_cast<long long>(team.plan.rows),
                   lab::format_bytes(team.plan.bytes(team.plan.rows)).c_str(), properties.name,
                   lab::format_bytes(properties.memPitch).c_str());
      code = lab::kExitFailed;
    }
  }
  return code;
}

void set_up(Team& team, std::vector<Buffers>& buffers) {
  const Decomposition& plan = team.plan;
  std::size_t host_bytes = 0;
  for (const Rank& me : team.local)
    host_bytes += plan.bytes(plan.band_rows(me.rank) * plan.cols) +
                  plan.bytes(plan.band_cols(me.rank) * plan.rows);
  lab::require_host_memory(host_bytes, "the input and output bands");
  buffers.resize(team.local.size());
  for (std::size_t i = 0; i < team.local.size(); ++i) {
    Rank& me = team.local[i];
    Buffers& mine = buffers[i];
    CUDA_CHECK(cudaSetDevice(me.device));
    mine.leads_device = true;
    for (std::size_t j = 0; j < i; ++j) mine.leads_device &= team.local[j].device != me.device;
    const std::size_t in_bytes = plan.bytes(plan.band_rows(me.rank) * plan.cols);
    const std::size_t out_bytes = plan.bytes(plan.band_cols(me.rank) * plan.rows);
    mine.host_in = lab::allocate_pinned<char>(in_bytes, "an input band");
    mine.host_out = lab::allocate_pinned<char>(out_bytes, "an output band");
    // The bands too: the ceiling's all-to-all sends from them and receives into them.
    me.in = nccl_bytes(team, mine, in_bytes);
    me.out = nccl_bytes(team, mine, out_bytes);
    const lab::Scratch scratch = scratch_of(team, me.rank);
    for (int b = 0; b < (plan.chunks > 1 ? 2 : 1); ++b) {
      if (scratch.send != 0) me.send[b] = nccl_bytes(team, mine, scratch.send);
      if (scratch.recv != 0) me.recv[b] = nccl_bytes(team, mine, scratch.recv);
    }
    if (me.send[1] == nullptr) me.send[1] = me.send[0];  // one chunk: one buffer of each
    if (me.recv[1] == nullptr) me.recv[1] = me.recv[0];
    for (cudaStream_t* stream : {&me.compute, &me.place})
      CUDA_CHECK(cudaStreamCreateWithFlags(stream, cudaStreamNonBlocking));
    int least = 0, greatest = 0;
    CUDA_CHECK(cudaDeviceGetStreamPriorityRange(&least, &greatest));
    CUDA_CHECK(cudaStreamCreateWithPriority(&me.link, cudaStreamNonBlocking, greatest));
    for (int b = 0; b < 2; ++b)
      for (cudaEvent_t* event : {&me.transposed[b], &me.exchanged[b], &me.placed[b]})
        CUDA_CHECK(cudaEventCreateWithFlags(event, cudaEventDisableTiming));
    CUDA_CHECK(cudaEventCreateWithFlags(&me.joined, cudaEventDisableTiming));
    CUDA_CHECK(cudaEventCreate(&mine.start));
    CUDA_CHECK(cudaEventCreate(&mine.stop));
    if (mine.leads_device) {
      cudaDeviceProp properties;
      CUDA_CHECK(cudaGetDeviceProperties(&properties, me.device));
      mine.flush = std::make_unique<lab::L2Flush>(properties);
    }
  }
}

// Registered buffers are deregistered and freed while their communicators still exist.
void tear_down(Team& team, std::vector<Buffers>& buffers) {
  deregister_buffers(team, buffers);
  for (std::size_t i = 0; i < team.local.size(); ++i) {
    Rank& me = team.local[i];
    Buffers& mine = buffers[i];
    CUDA_CHECK(cudaSetDevice(me.device));
    mine.flush.reset();
    mine.host_in.reset();
    mine.host_out.reset();
    for (int b = 0; b < 2; ++b) {
      if (b == 0 || me.send[1] != me.send[0]) free_nccl_bytes(mine, me.send[b]);
      if (b == 0 || me.recv[1] != me.recv[0]) free_nccl_bytes(mine, me.recv[b]);
      for (cudaEvent_t event : {me.transposed[b], me.exchanged[b], me.placed[b]})
        CUDA_CHECK(cudaEventDestroy(event));
    }
    for (cudaEvent_t event : {me.joined, mine.start, mine.stop})
      CUDA_CHECK(cudaEventDestroy(event));
    free_nccl_bytes(mine, me.in);
    free_nccl_bytes(mine, me.out);
    mine.from_nccl.clear();
    for (cudaStream_t stream : {me.compute, me.link, me.place})
      CUDA_CHECK(cudaStreamDestroy(stream));
  }
  for (Rank& me : team.local) {
    CUDA_CHECK(cudaSetDevice(me.device));
    if (me.comm != nullptr) NCCL_CHECK(ncclCommDestroy(me.comm), me.comm);
    me.comm = nullptr;
  }
}

// ---- The peer exchange: every rank's output band within reach of every rank's GPU ----

// Ranks in other processes (MPI, not virtual): their bands and events come through CUDA IPC.
bool crosses_processes(const Team& team) {
  return g_world.mpi && !team.virtual_ranks;
}

// Why the peer exchange cannot run ("" where it can): every rank's GPU must reach every other
// rank's memory. Fills team.peers.device: each rank's GPU as this process numbers them (under MPI
// found by its PCI bus id; -1 where this process does not see it). Every process gets one answer.
std::string peer_access_missing(Team& team) {
  const int ranks = team.plan.ranks;
  std::vector<int>& device = team.peers.device;
  device.assign(ranks, -1);
  for (const Rank& me : team.local) device[me.rank] = me.device;
  std::string why;
#ifdef LAB_WITH_MPI
  if (crosses_processes(team)) {
    char mine[kBusIdBytes] = {};
    CUDA_CHECK(cudaDeviceGetPCIBusId(mine, kBusIdBytes, team.local[0].device));
    std::vector<char> all(static_cast<std::size_t>(ranks) * kBusIdBytes);
    MPI_Allgather(mine, kBusIdBytes, MPI_CHAR, all.data(), kBusIdBytes, MPI_CHAR, MPI_COMM_WORLD);
    for (int g = 0; g < ranks; ++g) {
      if (g == team.local[0].rank) continue;
      if (cudaDeviceGetByPCIBusId(&device[g], &all[static_cast<std::size_t>(g) * kBusIdBytes]) !=
          cudaSuccess) {
        device[g] = -1;
        (void)cudaGetLastError();  // not an error of the run: this process does not see that GPU
      }
    }
    if (g_world.local_size != g_world.size) why = "the processes run on more than one host";
  }
#endif
  for (const Rank& me : team.local) {
    for (int g = 0; g < ranks && why.empty(); ++g) {
      if (device[g] < 0) {
        why = "rank " + std::to_string(g) + "'s GPU is not visible to rank " +
              std::to_string(me.rank);
        continue;
      }
      int can = 1;
      if (device[g] != me.device) CUDA_CHECK(cudaDeviceCanAccessPeer(&can, me.device, device[g]));
      if (can == 0)
        why = "GPU " + std::to_string(me.device) + " cannot reach GPU " +
              std::to_string(device[g]) + "'s memory";
    }
  }
#ifdef LAB_WITH_MPI
  if (crosses_processes(team)) {
    int missing = why.empty() ? 0 : 1;
    MPI_Allreduce(MPI_IN_PLACE, &missing, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
    if (missing != 0 && why.empty()) why = "the GPU of another rank cannot reach every other GPU";
  }
#endif
  return why;
}

void enable_peer_access(int device, int peer) {
  CUDA_CHECK(cudaSetDevice(device));
  const cudaError_t status = cudaDeviceEnablePeerAccess(peer, 0);
  if (status == cudaErrorPeerAccessAlreadyEnabled) {
    (void)cudaGetLastError();  // enabled before: what was asked for
    return;
  }
  CUDA_CHECK(status);
}

#ifdef LAB_WITH_MPI
template <class Handle>
std::vector<Handle> from_every_process(const Handle& mine) {
  std::vector<Handle> all(g_world.size);
  MPI_Allgather(&mine, sizeof mine, MPI_BYTE, all.data(), sizeof mine, MPI_BYTE, MPI_COMM_WORLD);
  return all;
}

// The other processes' bands and events, through CUDA IPC handles: once opened they are addresses
// and events of this process (opening a band enables peer access to its GPU).
void open_other_bands(Team& team) {
  lab::PeerBands& peers = team.peers;
  const Rank& me = team.local[0];
  cudaIpcMemHandle_t band;
  cudaIpcEventHandle_t ready, written;
  CUDA_CHECK(cudaIpcGetMemHandle(&band, me.out));
  CUDA_CHECK(cudaIpcGetEventHandle(&ready, peers.ready[me.rank]));
  CUDA_CHECK(cudaIpcGetEventHandle(&written, peers.written[me.rank]));
  const std::vector<cudaIpcMemHandle_t> bands = from_every_process(band);
  const std::vector<cudaIpcEventHandle_t> readies = from_every_process(ready);
  const std::vector<cudaIpcEventHandle_t> writtens = from_every_process(written);
  for (int g = 0; g < g_world.size; ++g) {
    if (g == me.rank) continue;  // a process cannot open its own handles
    void* mapped = nullptr;
    CUDA_CHECK(cudaIpcOpenMemHandle(&mapped, bands[g], cudaIpcMemLazyEnablePeerAccess));
    peers.out[g] = static_cast<char*>(mapped);
    CUDA_CHECK(cudaIpcOpenEventHandle(&peers.ready[g], readies[g]));
    CUDA_CHECK(cudaIpcOpenEventHandle(&peers.written[g], writtens[g]));
  }
}
#endif

// Every rank's band and events as this process reaches them, and on each GPU the table of bands
// that the peer kernel writes through.
void set_up_peers(Team& team) {
  lab::PeerBands& peers = team.peers;
  const int ranks = team.plan.ranks;
  peers.out.assign(ranks, nullptr);
  peers.ready.assign(ranks, nullptr);
  peers.written.assign(ranks, nullptr);
  peers.between_processes = crosses_processes(team) ? barrier : nullptr;
  const unsigned flags =
      cudaEventDisableTiming | (crosses_processes(team) ? cudaEventInterprocess : 0u);
  for (Rank& me : team.local) {
    for (const Rank& other : team.local)  // one process, several GPUs: each pair, both ways
      if (other.device != me.device) enable_peer_access(me.device, other.device);
    CUDA_CHECK(cudaSetDevice(me.device));
    peers.out[me.rank] = me.out;
    CUDA_CHECK(cudaEventCreateWithFlags(&peers.ready[me.rank], flags));
    CUDA_CHECK(cudaEventCreateWithFlags(&peers.written[me.rank], flags));
  }
#ifdef LAB_WITH_MPI
  if (crosses_processes(team)) open_other_bands(team);
#endif
  const std::size_t table_bytes = static_cast<std::size_t>(ranks) * sizeof(char*);
  for (Rank& me : team.local) {
    CUDA_CHECK(cudaSetDevice(me.device));
    me.bands = reinterpret_cast<char**>(device_bytes(table_bytes));
    CUDA_CHECK(cudaMemcpy(me.bands, peers.out.data(), table_bytes, cudaMemcpyHostToDevice));
  }
}

void tear_down_peers(Team& team) {
  lab::PeerBands& peers = team.peers;
  if (crosses_processes(team)) {
    CUDA_CHECK(cudaSetDevice(team.local[0].device));
    for (int g = 0; g < team.plan.ranks; ++g) {
      if (g == team.local[0].rank) continue;
      CUDA_CHECK(cudaIpcCloseMemHandle(peers.out[g]));
      for (cudaEvent_t event : {peers.ready[g], peers.written[g]})
        CUDA_CHECK(cudaEventDestroy(event));
    }
    barrier();  // no process frees its band or its events while another still has them open
  }
  for (Rank& me : team.local) {
    CUDA_CHECK(cudaSetDevice(me.device));
    for (cudaEvent_t event : {peers.ready[me.rank], peers.written[me.rank]})
      CUDA_CHECK(cudaEventDestroy(event));
    CUDA_CHECK(cudaFree(me.bands));
    me.bands = nullptr;
  }
}

// ---- The ceiling: the all-to-all of the same bytes, straight from the input bands into the
// output bands, no transposes (rank g sends d the band_rows(g) x band_cols(d) elements the step
// sends it, its own block included, as nccl-tests' alltoall does). ----

lab::Blocks ceiling_blocks(const Decomposition& plan, const Rank& me) {
  const int g = me.rank;
  lab::Blocks b(plan.ranks);
  b.send = me.in;
  b.recv = me.out;
  for (int peer = 0; peer < plan.ranks; ++peer) {
    b.send_offset[peer] = plan.bytes(plan.band_rows(g) * plan.col_begin(peer));
    b.send_bytes[peer] = plan.bytes(plan.band_rows(g) * plan.band_cols(peer));
    b.recv_offset[peer] = plan.bytes(plan.band_cols(g) * plan.row_begin(peer));
    b.recv_bytes[peer] = plan.bytes(plan.band_cols(g) * plan.band_rows(peer));
  }
  return b;
}

void enqueue_ceiling(Team& team) {
  std::vector<lab::Blocks> blocks;
  for (Rank& me : team.local) {
    blocks.push_back(ceiling_blocks(team.plan, me));
    CUDA_CHECK(cudaSetDevice(me.device));
    CUDA_CHECK(cudaEventRecord(me.transposed[0], me.compute));
    CUDA_CHECK(cudaStreamWaitEvent(me.link, me.transposed[0], 0));
  }
  lab::all_to_all(team, blocks);
  for (Rank& me : team.local) {
    CUDA_CHECK(cudaSetDevice(me.device));
    CUDA_CHECK(cudaEventRecord(me.exchanged[0], me.link));
    CUDA_CHECK(cudaStreamWaitEvent(me.compute, me.exchanged[0], 0));
  }
}

// The peer exchange's second ceiling: the same blocks, each written by cudaMemcpyPeerAsync into
// the band of the rank that receives it, as the peer kernel writes, but without a transpose.
void enqueue_peer_copy(Team& team) {
  const Decomposition& plan = team.plan;
  lab::peer_writes_begin(team);
  for (Rank& me : team.local) {
    CUDA_CHECK(cudaSetDevice(me.device));
    const lab::Blocks b = ceiling_blocks(plan, me);
    for (int d = 0; d < plan.ranks; ++d) {
      if (b.send_bytes[d] == 0) continue;
      char* target = team.peers.out[d] + plan.bytes(plan.band_cols(d) * plan.row_begin(me.rank));
      CUDA_CHECK(cudaMemcpyPeerAsync(target, team.peers.device[d], b.send + b.send_offset[d],
                                     me.device, b.send_bytes[d], me.compute));
    }
  }
  lab::peer_writes_end(team);
}

// One timed run of `enqueue`: every GPU's L2 flushed, then CUDA events around the work on each
// rank's compute stream; the time is the slowest rank's (all ranks, under MPI).
template <class Enqueue>
double timed_run(Team& team, std::vector<Buffers>& buffers, Enqueue&& enqueue) {
  wait_for(team, "waiting before a timed run");
  barrier();
  for (std::size_t i = 0; i < team.local.size(); ++i) {
    Rank& me = team.local[i];
    CUDA_CHECK(cudaSetDevice(me.device));
    if (buffers[i].leads_device) {
      (*buffers[i].flush)(me.compute);
    } else {  // virtual ranks start together, after their GPU's flush
      for (std::size_t j = 0; j < i; ++j)
        if (team.local[j].device == me.device && buffers[j].leads_device)
          CUDA_CHECK(cudaStreamWaitEvent(me.compute, buffers[j].start, 0));
    }
    CUDA_CHECK(cudaEventRecord(buffers[i].start, me.compute));
  }
  enqueue();
  for (std::size_t i = 0; i < team.local.size(); ++i) {
    CUDA_CHECK(cudaSetDevice(team.local[i].device));
    CUDA_CHECK(cudaEventRecord(buffers[i].stop, team.local[i].compute));
  }
  wait_for(team, "timing");
  double slowest = 0;
  for (Buffers& mine : buffers) {
    float ms = 0;
    CUDA_CHECK(cudaEventElapsedTime(&ms, mine.start, mine.stop));
    slowest = std::max(slowest, static_cast<double>(ms));
  }
  return slowest;
}

// ---- One run, verified on every rank ----

// Every rank's output band poisoned for `fill`: made on the host, copied to the device (the host
// band is then overwritten only by the copy back of a verified run). Enqueued on each compute
// stream.
template <class T>
void poison_output_bands(Team& team, std::vector<Buffers>& buffers, const lab::Dtype& dtype,
                         int fill) {
  const Decomposition& plan = team.plan;
  for (std::size_t i = 0; i < team.local.size(); ++i) {
    Rank& me = team.local[i];
    CUDA_CHECK(cudaSetDevice(me.device));
    CUDA_CHECK(cudaStreamSynchronize(me.compute));  // the host band may still be copied from
    poison_band(reinterpret_cast<T*>(buffers[i].host_out.get()), plan, me.rank, dtype, fill);
    CUDA_CHECK(cudaMemcpyAsync(me.out, buffers[i].host_out.get(),
                               plan.bytes(plan.band_cols(me.rank) * plan.rows),
                               cudaMemcpyHostToDevice, me.compute));
  }
}

// Every rank copies its output band back and verifies it (the input holds `fill`); all ranks
// leave together when one fails.
template <class T>
void verify_output_bands(Team& team, std::vector<Buffers>& buffers, const lab::Dtype& dtype,
                         int fill, int fills, const char* when) {
  const Decomposition& plan = team.plan;
  for (std::size_t i = 0; i < team.local.size(); ++i) {
    Rank& me = team.local[i];
    CUDA_CHECK(cudaSetDevice(me.device));
    CUDA_CHECK(cudaMemcpyAsync(buffers[i].host_out.get(), me.out,
                               plan.bytes(plan.band_cols(me.rank) * plan.rows),
                               cudaMemcpyDeviceToHost, me.compute));
  }
  wait_for(team, when);
  int code = lab::kExitOk;
  for (std::size_t i = 0; i < team.local.size(); ++i) {
    const Rank& me = team.local[i];
    lab::Verification check = verify_band(reinterpret_cast<const T*>(buffers[i].host_out.get()),
                                          plan, me.rank, dtype, fill);
    check.fill = fill;
    check.fills = fills;
    if (check.ok()) continue;
    std::fprintf(stderr, "%s (%s): rank %d of %d (GPU %d), output rows [%lld, %lld): %s\n",
                 STEP_NAME, when, me.rank, plan.ranks, me.device,
                 static_cast<long long>(plan.col_begin(me.rank)),
                 static_cast<long long>(plan.col_begin(me.rank + 1)), check.describe().c_str());
    code = lab::kExitFailed;
  }
  agree_or_leave(code);
}

// The first run of one fill: every rank's input band filled, its output band poisoned, the step
// run once and every band verified.
template <class T>
void run_once_verified(Team& team, std::vector<Buffers>& buffers, const lab::Dtype& dtype, int fill,
                       int fills, const char* when) {
  const Decomposition& plan = team.plan;
  for (std::size_t i = 0; i < team.local.size(); ++i) {
    Rank& me = team.local[i];
    CUDA_CHECK(cudaSetDevice(me.device));
    fill_band(reinterpret_cast<T*>(buffers[i].host_in.get()), plan, me.rank, dtype, fill);
    CUDA_CHECK(cudaMemcpyAsync(me.in, buffers[i].host_in.get(),
                               plan.bytes(plan.band_rows(me.rank) * plan.cols),
                               cudaMemcpyHostToDevice, me.compute));
  }
  poison_output_bands<T>(team, buffers, dtype, fill);
  lab::enqueue_distributed_transpose<T>(team);
  verify_output_bands<T>(team, buffers, dtype, fill, fills, when);
}

// ---- The kernel step alone on the whole matrix on one GPU: what several GPUs are up against ----

struct SingleGpu {
  double ms = -1;    // < 0: not measured
  std::string note;  // why not
};

template <class T>
SingleGpu time_single_gpu(int device, const lab::Options& options) {
  SingleGpu result;
  const lab::Dtype& dtype = *options.dtype;
  const int rows = options.rows, cols = options.cols;
  const std::size_t bytes = lab::matrix_bytes(rows, cols, sizeof(T));
  CUDA_CHECK(cudaSetDevice(device));
  cudaDeviceProp properties;
  CUDA_CHECK(cudaGetDeviceProperties(&properties, device));
  std::size_t free_bytes = 0, total_bytes = 0;
  CUDA_CHECK(cudaMemGetInfo(&free_bytes, &total_bytes));
  if (2 * bytes + (std::size_t{64} << 20) > free_bytes ||
      2 * bytes > lab::read_host_memory().available / 2) {
    result.note = "the whole matrix does not fit next to the bands";
    return result;
  }
  lab::PinnedArray<T> host_in = lab::allocate_pinned<T>(Index{rows} * cols, "the input");
  lab::PinnedArray<T> host_out = lab::allocate_pinned<T>(Index{rows} * cols, "the output");
  lab::DeviceArray<T> in = lab::allocate_device<T>(Index{rows} * cols);
  lab::DeviceArray<T> out = lab::allocate_device<T>(Index{rows} * cols);
  const lab::L2Flush flush_l2(properties);
  cudaStream_t stream;
  CUDA_CHECK(cudaStreamCreate(&stream));
  const lab::Verification check =
      lab::verify_every_fill(dtype, host_in.get(), host_out.get(), rows, cols, [&] {
        CUDA_CHECK(cudaMemcpy(in.get(), host_in.get(), bytes, cudaMemcpyHostToDevice));
        CUDA_CHECK(cudaMemcpy(out.get(), host_out.get(), bytes, cudaMemcpyHostToDevice));
        lab::local_transpose(in.get(), out.get(), rows, cols, stream);
        CUDA_CHECK(cudaStreamSynchronize(stream));
        CUDA_CHECK(cudaMemcpy(host_out.get(), out.get(), bytes, cudaMemcpyDeviceToHost));
      });
  if (!check.ok()) {
    std::fprintf(stderr, "%s (the kernel step alone on one GPU): %s\n", STEP_NAME,
                 check.describe().c_str());
    exit_failed();
  }
  // Its last timed launch verified too, into an output poisoned before the series.
  lab::poison_output(host_out.get(), rows, cols, dtype, 0);
  CUDA_CHECK(cudaMemcpy(out.get(), host_out.get(), bytes, cudaMemcpyHostToDevice));
  result.ms = lab::median_event_ms(
      options.reps, stream, [&] { flush_l2(stream); },
      [&] { lab::local_transpose(in.get(), out.get(), rows, cols, stream); })[0];
  CUDA_CHECK(cudaMemcpy(host_out.get(), out.get(), bytes, cudaMemcpyDeviceToHost));
  const lab::Verification timed = lab::verify_transpose(host_out.get(), host_in.get(), rows, cols);
  if (!timed.ok()) {
    std::fprintf(stderr, "%s (the kernel step alone on one GPU, last timed launch): %s\n",
                 STEP_NAME, timed.describe().c_str());
    exit_failed();
  }
  CUDA_CHECK(cudaStreamDestroy(stream));
  return result;
}

// "16 chunks" or "6 tapered chunks", in the CSV's launch and the report.
std::string chunk_count(const Decomposition& plan) {
  return std::to_string(plan.chunks) + (plan.tapered ? " tapered" : "") + " chunks";
}

std::string placed_by(const Team& team) {
  if (team.place == lab::PlacePath::kCopyEngine) return "placed by 2D copies";
  return "placed by the SMs" + (team.place_blocks > 0
                                    ? " in at most " + std::to_string(team.place_blocks) + " blocks"
                                    : std::string());
}

std::string nccl_buffers_line(const Team& team) {
  if (team.virtual_ranks) return "none (virtual ranks: no NCCL in the exchange)";
  return buffer_way(team.nccl_buffers).report;
}

// How the peer kernel reaches the other ranks' bands, for the report.
std::string peer_writes(const Team& team) {
  return std::string("one kernel per GPU writes its tiles into every rank's output band ") +
         (team.virtual_ranks        ? "(virtual ranks: all on this GPU)"
          : crosses_processes(team) ? "(opened through CUDA IPC handles)"
                                    : "(through peer access)");
}

std::string figure(const char* format, double value) {
  char text[64];
  std::snprintf(text, sizeof text, format, value);
  return text;
}

// ---- The run ----

template <class T>
int run(Team& team, const lab::Options& options, const std::string& variant, bool nvls_set_here) {
  const lab::Dtype& dtype = *options.dtype;
  Decomposition& plan = team.plan;
  agree_or_leave(check_device_memory(team, dtype));
  std::vector<Buffers> buffers;
  set_up(team, buffers);
  const bool peer = team.exchange == lab::Exchange::kPeer;
  if (peer) set_up_peers(team);

  // The communicators: none for virtual ranks (their exchange is device copies).
  if (!team.virtual_ranks) {
    if (g_world.mpi) {
#ifdef LAB_WITH_MPI
      ncclUniqueId id;
      if (g_world.rank == 0) NCCL_CHECK(ncclGetUniqueId(&id), nullptr);
      MPI_Bcast(&id, sizeof id, MPI_BYTE, 0, MPI_COMM_WORLD);
      Rank& me = team.local[0];
      CUDA_CHECK(cudaSetDevice(me.device));
      if (team.nccl_buffers == lab::NcclBuffers::kWindows) {
        ncclConfig_t config = zero_cta_config();
        NCCL_CHECK(ncclCommInitRankConfig(&me.comm, plan.ranks, id, me.rank, &config), nullptr);
      } else {
        NCCL_CHECK(ncclCommInitRank(&me.comm, plan.ranks, id, me.rank), nullptr);
      }
#endif
    } else if (team.nccl_buffers == lab::NcclBuffers::kWindows) {
      // ncclCommInitAll takes no configuration: one communicator per GPU, made in one group.
      ncclUniqueId id;
      NCCL_CHECK(ncclGetUniqueId(&id), nullptr);
      ncclConfig_t config = zero_cta_config();
      NCCL_CHECK(ncclGroupStart(), nullptr);
      for (Rank& me : team.local) {
        CUDA_CHECK(cudaSetDevice(me.device));
        NCCL_CHECK(ncclCommInitRankConfig(&me.comm, plan.ranks, id, me.rank, &config), nullptr);
      }
      NCCL_CHECK(ncclGroupEnd(), nullptr);
    } else {
      std::vector<ncclComm_t> comms(plan.ranks);
      std::vector<int> devices;
      for (const Rank& me : team.local) devices.push_back(me.device);
      NCCL_CHECK(ncclCommInitAll(comms.data(), plan.ranks, devices.data()), nullptr);
      for (int g = 0; g < plan.ranks; ++g) team.local[g].comm = comms[g];
    }
    register_buffers(team, buffers);
  }

  // Correct first: every fill, every rank verifies its own output band.
  const int fills = lab::fills_needed(dtype, plan.rows * plan.cols);
  for (int fill = fills - 1; fill >= 0; --fill)
    run_once_verified<T>(team, buffers, dtype, fill, fills, "first run");

  // The step and its ceiling (with the peer exchange, the peer copy too), alternately; warm-up as
  // long as rank 0 says.
  auto step = [&] { lab::enqueue_distributed_transpose<T>(team); };
  auto ceiling = [&] { enqueue_ceiling(team); };
  auto peer_copy = [&] { enqueue_peer_copy(team); };
  const auto warm_start = std::chrono::steady_clock::now();
  for (int i = 0;
       rank0_says(i < lab::kWarmupRuns || lab::elapsed_ms(warm_start) < lab::min_warmup_ms());
       ++i) {
    timed_run(team, buffers, step);
    timed_run(team, buffers, ceiling);
    if (peer) timed_run(team, buffers, peer_copy);
  }
  // The last timed run of the step is verified before the ceilings, which write the same output
  // bands, run: the bands are poisoned just before it (untimed; the L2 flush follows).
  std::vector<double> step_ms, ceiling_ms, peer_copy_ms;
  for (int i = 0; i < options.reps; ++i) {
    die_here_if_asked(team, i);
    const bool last = i == options.reps - 1;
    if (last) poison_output_bands<T>(team, buffers, dtype, 0);
    step_ms.push_back(timed_run(team, buffers, step));
    if (last) verify_output_bands<T>(team, buffers, dtype, 0, 1, "last timed run");
    ceiling_ms.push_back(timed_run(team, buffers, ceiling));
    if (peer) peer_copy_ms.push_back(timed_run(team, buffers, peer_copy));
  }
  max_over_ranks(step_ms);
  max_over_ranks(ceiling_ms);
  max_over_ranks(peer_copy_ms);
  const double median_ms = lab::median(step_ms), median_ceiling_ms = lab::median(ceiling_ms);
  const double median_peer_copy_ms = peer ? lab::median(peer_copy_ms) : -1;

  // The kernel step alone on the whole matrix, on rank 0's GPU.
  SingleGpu single;
  if (g_world.rank == 0) single = time_single_gpu<T>(team.local[0].device, options);
  barrier();

  if (g_world.rank == 0) {
    cudaDeviceProp properties;
    CUDA_CHECK(cudaGetDeviceProperties(&properties, team.local[0].device));
    lab::Measurement m =
        lab::step_measurement(variant, properties.name, dtype, plan.rows, plan.cols);
    m.threads = lab::threads_launched(team.local[0].shape);
    m.launch =
        std::to_string(plan.ranks) +
        (peer ? " bands, peer writes, "
              : " bands x " + chunk_count(plan) + ", " + buffer_way(team.nccl_buffers).launch +
                    (plan.ranks > 1 ? placed_by(team) + ", " : std::string())) +
        lab::describe_launch(team.local[0].shape);
    m.reps = options.reps;
    m.median_ms = median_ms;
    m.e2e_ms = -1;  // the data lives on the GPUs: there is no host round trip to time
    m.verified = true;
    m.summary = peer ? kPeerSummary : kStepSummary;
    lab::set_bandwidth(m, median_ceiling_ms);
    m.ceiling_kind = lab::kAllToAllCeiling;

    // Bus figures as nccl-tests reports an all-to-all: bytes per GPU over time (algbw), and
    // algbw * (G-1)/G, the share that crosses the links (busbw).
    const double per_gpu_bytes =
        static_cast<double>(plan.bytes(plan.rows * plan.cols)) / plan.ranks;
    const double share = static_cast<double>(plan.ranks - 1) / plan.ranks;
    auto algbw = [&](double ms) { return per_gpu_bytes / (ms * 1e-3) / 1e9; };
    auto bus = [&](double ms) {
      return "algbw " + figure("%.1f", algbw(ms)) + ", busbw " + figure("%.1f", algbw(ms) * share);
    };
    Index min_rows = plan.rows, max_rows = 0;
    for (int g = 0; g < plan.ranks; ++g) {
      min_rows = std::min(min_rows, plan.band_rows(g));
      max_rows = std::max(max_rows, plan.band_rows(g));
    }
    std::vector<std::string> lines = {
        "device   " + std::string(properties.name) +
            (!team.virtual_ranks ? ""
             : peer              ? " (virtual ranks: one GPU, peer writes between their bands)"
                                 : " (virtual ranks: one GPU, exchange by device copies)"),
        lab::matrix_line(plan.rows, plan.cols, dtype.name, dtype.bytes, options.reps, "runs") +
            lab::L2Flush::described(),
        "bands    " + std::to_string(plan.ranks) + " ranks, input bands of " +
            std::to_string(min_rows) + " to " + std::to_string(max_rows) + " rows, " +
            (peer ? peer_writes(team)
                  : chunk_count(plan) + " each" +
                        (plan.ranks > 1 ? ", " + placed_by(team) : std::string()) + "; kernel " +
                        STEP_KERNEL_NAME + ": " + kReusedKernelSummary),
        "exchange algbw " + figure("%.1f", algbw(median_ms)) + " GB/s, busbw " +
            figure("%.1f", algbw(median_ms) * share) + " GB/s (ceiling: " + bus(median_ceiling_ms) +
            (peer ? "; peer copy: " + bus(median_peer_copy_ms) : "") + "), " +
            lab::format_bytes(static_cast<std::size_t>(per_gpu_bytes)) + " per GPU",
        std::string("nccl     NCCL_NVLS_ENABLE=") + std::getenv("NCCL_NVLS_ENABLE") +
            (nvls_set_here ? " (set by the program)" : " (from the environment)") + "; buffers " +
            nccl_buffers_line(team),
        "check    first run: every rank's output band verified bitwise" +
            std::string(fills > 1 ? " over " + std::to_string(fills) + " fills" : "") +
            "; the last timed run (fill 1): verified the same way"};
    if (single.ms > 0)
      lines.push_back("1 GPU    " + std::string(STEP_KERNEL_NAME) + " alone on the whole matrix: " +
                      figure("%.4f", single.ms) + " ms; this step takes " +
                      figure("%.2f", median_ms / single.ms) + "x its time");
    else
      lines.push_back("1 GPU    not measured: " + single.note);
    lab::print_context(std::string(STEP_NAME) + ": " + m.summary, lines);
    std::vector<lab::TableRow> table = {
        lab::table_row(m),
        {team.virtual_ranks ? "device copies" : "all-to-all",
         team.virtual_ranks ? "the same blocks by cudaMemcpyAsync (ceiling)"
         : team.nccl_buffers == lab::NcclBuffers::kWindows
             ? "ncclAlltoAll of the same bytes, symmetric windows (ceiling)"
             : "ncclSend/ncclRecv of the same bytes (ceiling)",
         median_ceiling_ms, m.ceiling_gbps, 100.0, -1, "-"}};
    if (peer)  // the second ceiling, as a share of the first like the 1 GPU row below
      table.push_back({"peer copy", "cudaMemcpyPeerAsync of the same bytes, band to band",
                       median_peer_copy_ms,
                       lab::effective_gbps(plan.rows, plan.cols, dtype.bytes, median_peer_copy_ms),
                       100.0 * median_ceiling_ms / median_peer_copy_ms, -1, "-"});
    if (single.ms > 0)
      table.push_back({"1 GPU", std::string(STEP_KERNEL_NAME) + " on the whole matrix", single.ms,
                       lab::effective_gbps(plan.rows, plan.cols, dtype.bytes, single.ms),
                       100.0 * median_ceiling_ms / single.ms, -1, "verified"});
    lab::print_table(table);
    if (!options.csv_path.empty()) lab::append_csv(options.csv_path, {m});
  }
  if (peer) tear_down_peers(team);
  tear_down(team, buffers);
  return lab::kExitOk;
}

}  // namespace

namespace lab {

[[noreturn]] void fail_nccl(ncclResult_t status, ncclComm_t comm, const char* file, int line,
                            const char* call) {
  const char* detail = ncclGetLastError(comm);
  std::fprintf(stderr, "%s: NCCL error: %s%s%s (at %s:%d in %s)\n", g_label.c_str(),
               ncclGetErrorString(status), detail != nullptr && *detail ? ": " : "",
               detail != nullptr ? detail : "", file, line, call);
  exit_failed();
}

template <class T>
LaunchShape local_transpose(const T* in, T* out, int rows, int cols, cudaStream_t stream) {
  return launch_checked(STEP_NAME, in, out, rows, cols, stream);
}
#define LAB_INSTANTIATE_LOCAL(T) \
  template LaunchShape local_transpose<T>(const T*, T*, int, int, cudaStream_t);
LAB_INSTANTIATE_LOCAL(Bytes1)
LAB_INSTANTIATE_LOCAL(Bytes2)
LAB_INSTANTIATE_LOCAL(Bytes4)
LAB_INSTANTIATE_LOCAL(Bytes8)
LAB_INSTANTIATE_LOCAL(Bytes16)
#undef LAB_INSTANTIATE_LOCAL

}  // namespace lab

int main(int argc, char** argv) {
  // NVLink multicast (NVLS) stays off unless the user chose: set before NCCL starts.
  const bool nvls_set_here = std::getenv("NCCL_NVLS_ENABLE") == nullptr;
  if (nvls_set_here) setenv("NCCL_NVLS_ENABLE", "0", 0);

#ifdef LAB_WITH_MPI
  if (launched_by_mpi()) {
    MPI_Init(&argc, &argv);
    g_world.mpi = true;
    MPI_Comm_rank(MPI_COMM_WORLD, &g_world.rank);
    MPI_Comm_size(MPI_COMM_WORLD, &g_world.size);
    MPI_Comm node;
    MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, g_world.rank, MPI_INFO_NULL, &node);
    MPI_Comm_rank(node, &g_world.local_rank);
    MPI_Comm_size(node, &g_world.local_size);
    MPI_Comm_free(&node);
    g_label = std::string(STEP_NAME) + ": rank " + std::to_string(g_world.rank);
  }
#endif
  say_one_line_when_stopped();
  lab::CliSpec spec = lab::step_cli_spec({}, lab::kDefaultGpuReps);
  spec.cases = false;
  const DistributedOptions distributed = take_distributed_options(&argc, argv, spec);
  if (g_world.mpi && distributed.gpus != 0)
    usage_error(spec, "under mpirun each process drives one GPU: --gpus is for one process");
  if (g_world.mpi && g_world.size > 1 && distributed.virtual_ranks != 0)
    usage_error(spec, "--virtual-ranks runs in one process, not under mpirun -np " +
                          std::to_string(g_world.size));
  const lab::Options options = lab::parse_options_or_exit(argc, argv, spec);
  g_fault = fault_asked_for(spec, options.reps);

  const std::string no_device = lab::no_cuda_device_reason();
  int device_count = 0;
  if (no_device.empty()) CUDA_CHECK(cudaGetDeviceCount(&device_count));
  int any_device = no_device.empty() ? 1 : 0;
#ifdef LAB_WITH_MPI
  if (g_world.mpi) MPI_Allreduce(MPI_IN_PLACE, &any_device, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
#endif
  if (any_device == 0) {
    if (g_world.rank == 0) lab::say_skipped(STEP_NAME, no_device);
    leave(lab::kExitSkipped);
  }

  Team team;
  std::string variant;
  const bool virtual_mode = distributed.virtual_ranks != 0;
  int ranks = 1;
  if (virtual_mode) {
    ranks = distributed.virtual_ranks;
    variant = "virtual=" + std::to_string(ranks);
    for (int g = 0; g < ranks; ++g) team.local.push_back(Rank{});
    for (int g = 0; g < ranks; ++g) team.local[g].rank = g;
  } else if (g_world.mpi) {
    ranks = g_world.size;
    variant = "gpus=" + std::to_string(ranks) + " mpi";
    if (g_world.local_rank >= device_count) {
      char host[256] = "?";
      gethostname(host, sizeof host - 1);
      std::fprintf(stderr,
                   "%s: error: no GPU of its own: it is process %d on host %s, which has %d "
                   "visible CUDA device(s); run at most one process per GPU\n",
                   g_label.c_str(), g_world.local_rank, host, device_count);
    }
    agree_or_leave(g_world.local_rank >= device_count ? lab::kExitFailed : lab::kExitOk);
    team.local.push_back(Rank{});
    team.local[0].rank = g_world.rank;
    team.local[0].device = g_world.local_rank;
  } else {
    ranks = distributed.gpus != 0 ? distributed.gpus : device_count;
    if (ranks > device_count)
      usage_error(spec, "--gpus " + std::to_string(ranks) + ": only " +
                            std::to_string(device_count) + " CUDA device(s) visible");
    variant = "gpus=" + std::to_string(ranks) + " single-process";
    for (int g = 0; g < ranks; ++g) team.local.push_back(Rank{});
    for (int g = 0; g < ranks; ++g) team.local[g].rank = team.local[g].device = g;
  }
  if (g_fault.rank >= ranks)
    refuse_fault(spec, "rank " + std::to_string(g_fault.rank) + " is not in this run (ranks 0 to " +
                           std::to_string(ranks - 1) + ")");
  team.virtual_ranks = virtual_mode;
  team.place = distributed.place;
  team.place_blocks = distributed.place_blocks;
  team.nccl_buffers = distributed.nccl_buffers;
  team.exchange = distributed.exchange;
  team.plan.rows = options.rows;
  team.plan.cols = options.cols;
  if (team.nccl_buffers != lab::NcclBuffers::kPlain) {
    const std::string nccl_version = std::to_string(NCCL_MAJOR) + "." + std::to_string(NCCL_MINOR) +
                                     "." + std::to_string(NCCL_PATCH);
    const bool windows = team.nccl_buffers == lab::NcclBuffers::kWindows;
    const std::string why =
        virtual_mode ? "virtual ranks exchange by device copies, without NCCL: no effect"
        : !LAB_NCCL_CAN_REGISTER
            ? "NCCL " + nccl_version + " has no ncclCommRegister (2.19 and later): plain buffers"
        : windows && !LAB_NCCL_HAS_WINDOWS
            ? "NCCL " + nccl_version +
                  " has no copy-engine ncclAlltoAll (2.28 and later): registered buffers"
        : windows && (options.rows % ranks != 0 || options.cols % ranks != 0)
            ? "ncclAlltoAll moves blocks of one size, and " + std::to_string(options.rows) + " x " +
                  std::to_string(options.cols) + " does not split evenly over " +
                  std::to_string(ranks) + " GPUs: registered buffers"
            : "";
    if (!why.empty()) {
      if (g_world.rank == 0)
        std::fprintf(stderr, "%s: --nccl-buffers %s: %s\n", g_label.c_str(),
                     buffer_way(team.nccl_buffers).option, why.c_str());
      team.nccl_buffers = virtual_mode || !LAB_NCCL_CAN_REGISTER ? lab::NcclBuffers::kPlain
                                                                 : lab::NcclBuffers::kRegistered;
    }
  }
  team.plan.ranks = ranks;
  team.plan.elem_bytes = options.dtype->bytes;
  if (team.exchange == lab::Exchange::kPeer) {
    const std::string missing = peer_access_missing(team);
    if (!missing.empty()) {
      if (g_world.rank == 0)
        std::fprintf(stderr, "%s: --exchange peer: %s; the NCCL exchange runs instead\n",
                     g_label.c_str(), missing.c_str());
      team.exchange = lab::Exchange::kNccl;
    }
  }
  // The peer exchange writes whole bands at once: chunks pipeline the NCCL exchange only.
  const bool pipelined = ranks > 1 && team.exchange == lab::Exchange::kNccl;
  team.plan.chunks = !pipelined ? 1 : distributed.chunks != 0 ? distributed.chunks : 1;
  if (pipelined && distributed.chunks == 0)
    team.plan.chunks = default_chunks(team.plan, team.nccl_buffers);
  team.plan.tapered = team.plan.chunks > 2 && distributed.tapered;
  if (team.exchange == lab::Exchange::kPeer) variant += " peer";

  const int code = lab::with_storage_type(options.dtype->bytes, [&](auto element) {
    return run<decltype(element)>(team, options, variant, nvls_set_here);
  });
  leave(code);
}
