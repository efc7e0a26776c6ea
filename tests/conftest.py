"""Shared helpers: where the programs are, how to run them, and whether a GPU is here."""
import collections
import csv
import dataclasses
import fcntl
import functools
import importlib.util
import os
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pytest

from transpose_lab.lab import (DTYPES, ELEM_BYTES, EXIT_NO_MEMORY, EXIT_SKIPPED,  # noqa: E402
                              EXIT_USAGE, ROOT, WARMUP_VARIABLE)
sys.path.insert(0, str(ROOT))  # the package, however pytest is started

from transpose_lab.grader import NO_GPU, nvidia_smi_lists_a_gpu, skip_reason  # noqa: E402

# The tests check results, never speed: the programs they start skip the warm-up's minimum
# (common/config.hpp, LAB_WARMUP_MS), which would keep a shared GPU busy for minutes. A value the
# user sets is kept.
os.environ.setdefault(WARMUP_VARIABLE, "0")


def usable_cores():
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:
        return os.cpu_count() or 1


# Every worker's programs share the cores with the other workers'. An OpenMP program left to its
# default starts a thread per core, and a worker for each core would then run cores x cores
# threads, spinning at every barrier. Each worker's programs get their share, at least two (a
# worker left alone at the end of the run still uses more than one core; two threads a core is
# mild); a value the user sets is kept, and a test that asks for a thread count (CPU.omp's
# scaling) still gets it.
WORKER_COUNT = int(os.environ.get("PYTEST_XDIST_WORKER_COUNT", "1"))
THREADS_PER_WORKER = max(2, usable_cores() // WORKER_COUNT)
USER_CHOSE_THREADS = "OMP_NUM_THREADS" in os.environ
os.environ.setdefault("OMP_NUM_THREADS", str(THREADS_PER_WORKER))
# With more threads than cores, an OpenMP thread that spins at a barrier (the default policy) holds
# a core its partner needs to reach it: small runs then took up to 30 times longer (four batches of
# small cases side by side on two cores, 2 threads each: 12.5 s spinning, 0.5 s sleeping).
os.environ.setdefault("OMP_WAIT_POLICY", "passive")


def steps_from_makefile(variable):
    """The step lists are written once, in the top Makefile; read them from there."""
    output = subprocess.run(["make", "--no-print-directory", "-s", "-C", str(ROOT),
                             f"print-{variable}"], capture_output=True, text=True, check=True)
    return output.stdout.split()


CPU_STEPS = steps_from_makefile("CPU_STEPS")
CUDA_STEPS = steps_from_makefile("CUDA_STEPS") + steps_from_makefile("REFERENCE_STEPS")
PIPELINE_STEPS = steps_from_makefile("PIPELINE_STEPS")
PERMUTE_CUDA_STEPS = steps_from_makefile("PERMUTE_CUDA_STEPS")


def step_variable(step, variable):
    """What a step's own Makefile declares (STEP_KIND, STEP_DTYPES): read from there."""
    output = subprocess.run(["make", "--no-print-directory", "-s", "-C", str(ROOT / step),
                             "-f", "Makefile", "-f", str(ROOT / "common" / "print.mk"),
                             f"print-{variable}"], capture_output=True, text=True, check=True)
    return output.stdout.split()


def supported_dtypes(step):
    return step_variable(step, "STEP_DTYPES")


# Whether CPU.omp's blocked variant, asked for streaming stores, uses them: output rows that start
# on a line stream from bands of input rows; the others from output bands (128 bytes of each
# input row), where each output row holds a line or more and the matrix a whole band; else plain.
def cpu_streams(rows, cols, elem_bytes):
    return rows * elem_bytes % 64 == 0 or (rows * elem_bytes >= 64 and cols * elem_bytes >= 128)


def binary(step):
    return ROOT / step / "transpose"


def run(step, *args, threads=None, timeout=600, env_extra=None):
    env = dict(os.environ, **(env_extra or {}))
    if threads is not None:
        env["OMP_NUM_THREADS"] = str(threads)
    return subprocess.run([str(binary(step)), *map(str, args)], capture_output=True, text=True,
                          env=env, timeout=timeout)


# ---- Many runs in one process: a step's --cases FILE (common/cli.hpp). ----
# Each process pays for its own CUDA context, about 0.3 s of driver time that processes started
# side by side take in turn (on an H100, small runs 4 at a time made 4.9 a second, 16 at a time
# 5.1; a bare context took 0.34 s alone; one process ran 213 small cases in 0.9 s). So
# the tests of one step that each make a small run (marked batched) go to one worker together,
# and the first of them to run makes every run of the batch in one process; each test then checks
# its own case's output, CSV rows and exit code.
CASE_HEADING = re.compile(r"^case (\d+) of \d+: .*$", re.M)


@dataclasses.dataclass
class CaseRun:
    returncode: int  # the case's own: 0 for a case that finished before the batch ended
    stdout: str
    stderr: str  # the batch's, given to the case that ended it
    rows: list  # the rows the case appended to its CSV


@functools.lru_cache(maxsize=None)
def run_batch(step, cases, common, threads):
    """Every case (a tuple of arguments) of `step` in one process, each with `common` and a CSV of
    its own; a dict from case to CaseRun. A case after the one that ended the batch is missing."""
    with tempfile.TemporaryDirectory() as scratch:
        lines = [" ".join([*case, "--csv", f"{scratch}/{k}.csv"]) for k, case in enumerate(cases)]
        (Path(scratch) / "cases").write_text("\n".join(lines) + "\n")
        done = run(step, *common, "--cases", Path(scratch) / "cases", threads=threads,
                   timeout=1800)
        headings = list(CASE_HEADING.finditer(done.stdout))
        results = {}
        for k, heading in enumerate(headings):
            end = headings[k + 1].start() if k + 1 < len(headings) else len(done.stdout)
            last = k + 1 == len(headings)
            csv_path = Path(scratch) / f"{int(heading.group(1)) - 1}.csv"
            rows = list(csv.DictReader(open(csv_path, newline=""))) if csv_path.exists() else []
            results[cases[int(heading.group(1)) - 1]] = CaseRun(
                done.returncode if last else 0, done.stdout[heading.end() + 1:end],
                done.stderr if last else "", rows)
        if not headings:  # refused before any case ran: every case gets the refusal
            results = {case: CaseRun(done.returncode, done.stdout, done.stderr, [])
                       for case in cases}
        return results


def run_case(step, case, batch, *common, threads=None):
    """The run of `case` (its arguments) made by one process that ran every case of `batch`."""
    def words(arguments):
        return tuple(str(a) for a in arguments)
    results = run_batch(step, tuple(dict.fromkeys(words(c) for c in batch)), words(common),
                        threads)
    if words(case) not in results:
        pytest.fail(f"{step}: the batch ended before this case; the case that ended it failed")
    return results[words(case)]


NO_STEP_BUILT = "no CUDA step is built (nvcc not found?)"


@functools.lru_cache(maxsize=None)
def gpu_unavailable_reason():
    """None when the CUDA steps can run here, else why not: one reason for every GPU test, so the
    skips summarise to one line (the grader's words: NO_GPU without a GPU)."""
    # Any built CUDA step can ask: a checkout that builds only some steps still learns the truth.
    built = [step for step in CUDA_STEPS + PIPELINE_STEPS + PERMUTE_CUDA_STEPS
             if binary(step).exists()]
    if not built:
        return NO_STEP_BUILT if nvidia_smi_lists_a_gpu() else NO_GPU
    done = run(built[0], 1, 1, "--reps", 1)
    return skip_reason(done.stderr) if done.returncode == EXIT_SKIPPED else None


def gpu_is_here():
    """Whether the CUDA programs find a GPU: a built step says, else nvidia-smi (a checkout that
    built only the step under test has a GPU all the same, and its no-GPU path is not taken)."""
    return gpu_unavailable_reason() in (None, NO_STEP_BUILT)


@pytest.fixture
def needs_gpu():
    reason = gpu_unavailable_reason()
    if reason:
        pytest.skip(reason)


# ---- The PyTorch rows (transpose_lab.torch_reference), run by this Python where it has torch. ----

def torch_importable():
    return importlib.util.find_spec("torch") is not None


def torch_reference(*args, timeout=900):
    return subprocess.run([sys.executable, "-m", "transpose_lab.torch_reference",
                           *map(str, args)], capture_output=True, text=True, timeout=timeout,
                          cwd=ROOT)


@pytest.fixture
def needs_torch_on_gpu(needs_gpu):
    if not torch_importable():
        pytest.skip("torch is not importable here")


def run_torch_or_skip(*args):
    done = torch_reference(*args)
    if done.returncode == EXIT_SKIPPED:  # e.g. a CPU-only torch on a GPU machine
        pytest.skip(done.stderr.strip())
    return done


# ---- Memory: the checks past 2^32 elements hold two matrices of 4 GiB or more in host memory. ----

HEADROOM_BYTES = 1 << 30  # the rest of the test run and the system keep this much


def meminfo_bytes(key):
    """A /proc/meminfo entry in bytes (MemAvailable: what can be allocated without swapping), or
    None where the system does not say."""
    try:
        with open("/proc/meminfo") as meminfo:
            for line in meminfo:
                if line.startswith(f"{key}:"):
                    return int(line.split()[1]) * 1024
    except OSError:
        pass
    return None


def available_memory_bytes():
    return meminfo_bytes("MemAvailable")


def skip_unless_memory(needed_bytes):
    """Skips the calling test, in one line that says why, unless that much host memory is free
    now (on CI's 24 GB these tests run; on a laptop they would swap or be killed)."""
    available = available_memory_bytes()
    if available is not None and available < needed_bytes + HEADROOM_BYTES:
        pytest.skip(f"needs {needed_bytes / 1e9:.1f} GB of free memory, "
                    f"{available / 1e9:.1f} GB free here")


# ---- Tests that need many GB (marked large_memory) run a few at a time. ----
# Run side by side (make test's workers), too many of them at once would take the memory the
# others need, and a step that finds too little refuses in words (exit 3). Each takes one of as
# many slots as the machine's memory holds side by side (one on a 24 GB machine, four with 128 GB
# and an 80 GB GPU) and waits while all are taken. A slot is a lock file, so the limit holds across
# workers, however pytest-xdist hands out the tests, and across test runs on one machine.
HOST_BYTES_PER_LARGE_TEST = 24 << 30  # the 2^32-element uint8 and 2^31 float32 checks, headroom
GPU_BYTES_PER_LARGE_TEST = 20 << 30
SLOT_WAIT_S = 0.5


@functools.lru_cache(maxsize=None)
def gpu_memory_list():
    """Every GPU's memory in bytes, as nvidia-smi lists them (none without nvidia-smi or a GPU)."""
    try:
        done = subprocess.run(["nvidia-smi", "--query-gpu=memory.total", "--format=csv,noheader,"
                               "nounits"], capture_output=True, text=True, timeout=60)
        return tuple(int(mib) << 20 for mib in done.stdout.split()) if done.returncode == 0 else ()
    except (OSError, ValueError, subprocess.TimeoutExpired):
        return ()


@functools.lru_cache(maxsize=None)  # asked before any test sets CUDA_VISIBLE_DEVICES
def gpus_to_spread_over():
    """How many GPUs the tests spread over: every GPU nvidia-smi lists, unless the user chose the
    GPUs (CUDA_VISIBLE_DEVICES set): then the order is theirs and nothing is spread."""
    return 1 if "CUDA_VISIBLE_DEVICES" in os.environ else max(1, len(gpu_memory_list()))


def large_memory_slots():
    """As many as the host's memory holds, and as many per GPU as the smallest GPU holds (slot s
    runs on GPU s modulo the GPUs spread over)."""
    slots = (meminfo_bytes("MemTotal") or 0) // HOST_BYTES_PER_LARGE_TEST
    memories = gpu_memory_list()
    if memories:
        slots = min(slots, min(memories) // GPU_BYTES_PER_LARGE_TEST * gpus_to_spread_over())
    return max(1, slots)


def take_large_memory_slot():
    """Blocks until one of the slots is free; returns its number and the open, locked file."""
    slots = large_memory_slots()
    while True:
        for slot in range(slots):
            lock = open(Path(tempfile.gettempdir()) / f"transpose-lab-large-memory-{slot}.lock", "w")
            try:
                fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
                return slot, lock
            except BlockingIOError:
                lock.close()
        time.sleep(SLOT_WAIT_S)


def pytest_configure(config):
    config.addinivalue_line("markers", "large_memory: needs several GB of host or device "
                            "memory; only a few such tests run at a time")
    config.addinivalue_line("markers", "xdist_group(name): pytest-xdist runs a group on one "
                            "worker (declared here too for a run without pytest-xdist)")
    config.addinivalue_line("markers", "batched: the test's run is one case of a batch that one "
                            "process makes (run_case); a step's tests of it share a worker")


@pytest.hookimpl(tryfirst=True)  # before pytest-xdist reads the groups
def pytest_collection_modifyitems(config, items):
    """A step's batched tests go to one worker as a group, so that one process makes their runs.
    The large tests are the longest: they start first, and each slot's share of them goes to
    one worker as a group (make test's --dist loadgroup), so no worker sits waiting for a slot
    while other tests queue behind it."""
    for item in items:
        if item.get_closest_marker("batched"):
            step = getattr(item, "callspec", None) and item.callspec.params.get("step")
            item.add_marker(pytest.mark.xdist_group(f"batch-{item.originalname}-{step}"))
    large = [item for item in items if item.get_closest_marker("large_memory")]
    slots = large_memory_slots()
    for k, item in enumerate(large):
        item.add_marker(pytest.mark.xdist_group(f"large-memory-{k % slots}"))
    items[:] = large + [item for item in items if not item.get_closest_marker("large_memory")]


# ---- Several GPUs: each test's programs start on one of them, so all are busy. ----
# The order is rotated, never narrowed: a test of several GPUs still sees them all. A large test
# starts on its slot's GPU, any other on its worker's.
@pytest.fixture(autouse=True)
def spread_over_gpus_and_hold_memory(request, monkeypatch):
    worker = os.environ.get("PYTEST_XDIST_WORKER", "gw0").removeprefix("gw")
    first, lock = (int(worker) if worker.isdigit() else 0), None
    if request.node.get_closest_marker("large_memory"):
        first, lock = take_large_memory_slot()
        if not USER_CHOSE_THREADS:  # filling and checking 2^32 elements: the slots share the cores
            threads = max(THREADS_PER_WORKER, usable_cores() // large_memory_slots())
            monkeypatch.setenv("OMP_NUM_THREADS", str(threads))
    count = gpus_to_spread_over()
    if count > 1:
        order = [(first + i) % count for i in range(count)]
        monkeypatch.setenv("CUDA_VISIBLE_DEVICES", ",".join(map(str, order)))
    yield
    if lock is not None:
        lock.close()  # releases the slot


# ---- The skips, summarised: one line per reason with its count. ----

def pytest_terminal_summary(terminalreporter):
    reasons = collections.Counter()
    for report in terminalreporter.stats.get("skipped", []):
        if not isinstance(report.longrepr, tuple):
            continue
        reason = report.longrepr[2].removeprefix("Skipped: ")
        name = report.nodeid.split("::")[-1]
        reasons[reason.removeprefix(f"{name}: ")] += 1  # a test that names itself in its reason
    if not reasons:
        return
    terminalreporter.section("skipped, by reason")
    for reason, count in reasons.most_common():
        terminalreporter.write_line(f"{count:5d} skipped: {reason}")
