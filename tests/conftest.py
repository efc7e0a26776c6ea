"""Shared helpers: where the programs are, how to run them, and whether a GPU is here."""
import collections
import functools
import importlib.util
import os
import subprocess
import sys
from pathlib import Path

import pytest

from transpose_lab.lab import DTYPES, ELEM_BYTES, ROOT  # noqa: E402  common/dtypes.def
sys.path.insert(0, str(ROOT))  # the package, however pytest is started

from transpose_lab.grader import NO_GPU, nvidia_smi_lists_a_gpu, skip_reason  # noqa: E402
EXIT_USAGE, EXIT_NO_MEMORY, EXIT_SKIPPED = 2, 3, 77


def steps_from_makefile(variable):
    """The step lists are written once, in the top Makefile; read them from there."""
    output = subprocess.run(["make", "--no-print-directory", "-s", "-C", str(ROOT),
                             f"print-{variable}"], capture_output=True, text=True, check=True)
    return output.stdout.split()


CPU_STEPS = steps_from_makefile("CPU_STEPS")
CUDA_STEPS = steps_from_makefile("CUDA_STEPS") + steps_from_makefile("REFERENCE_STEPS")
PIPELINE_STEPS = steps_from_makefile("PIPELINE_STEPS")


def step_variable(step, variable):
    """What a step's own Makefile declares (STEP_KIND, STEP_DTYPES): read from there."""
    output = subprocess.run(["make", "--no-print-directory", "-s", "-C", str(ROOT / step),
                             "-f", "Makefile", "-f", str(ROOT / "common" / "print.mk"),
                             f"print-{variable}"], capture_output=True, text=True, check=True)
    return output.stdout.split()


def supported_dtypes(step):
    return step_variable(step, "STEP_DTYPES")


def binary(step):
    return ROOT / step / "transpose"


def run(step, *args, threads=None, timeout=600, env_extra=None):
    env = dict(os.environ, **(env_extra or {}))
    if threads is not None:
        env["OMP_NUM_THREADS"] = str(threads)
    return subprocess.run([str(binary(step)), *map(str, args)], capture_output=True, text=True,
                          env=env, timeout=timeout)


@functools.lru_cache(maxsize=None)
def gpu_unavailable_reason():
    """None when the CUDA steps can run here, else why not: one reason for every GPU test, so the
    skips summarise to one line (the grader's words: NO_GPU without a GPU)."""
    # Any built CUDA step can ask: a checkout that builds only some steps still learns the truth.
    built = [step for step in CUDA_STEPS + PIPELINE_STEPS if binary(step).exists()]
    if not built:
        return "no CUDA step is built (nvcc not found?)" if nvidia_smi_lists_a_gpu() else NO_GPU
    done = run(built[0], 1, 1, "--reps", 1)
    return skip_reason(done.stderr) if done.returncode == EXIT_SKIPPED else None


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
# With workers (make test uses pytest-xdist, --dist loadgroup), too many of them at once would take
# the memory the others need, and a step that finds too little refuses in words (exit 3). They go
# round-robin into as many groups, each run by one worker, as the machine's memory holds side by
# side: one on a 24 GB machine, four on one with 128 GB and an 80 GB GPU. Counted from the total
# memory, never the free: every worker must name the same groups.
LARGE_MEMORY_GROUP = "large_memory"
HOST_BYTES_PER_LARGE_TEST = 24 << 30  # the 2^32-element uint8 and 2^31 float32 checks, headroom
GPU_BYTES_PER_LARGE_TEST = 20 << 30


def total_gpu_memory_bytes():
    """The first GPU's memory (None without nvidia-smi or a GPU)."""
    try:
        done = subprocess.run(["nvidia-smi", "--query-gpu=memory.total", "--format=csv,noheader,"
                               "nounits"], capture_output=True, text=True, timeout=60)
        return int(done.stdout.split()[0]) << 20 if done.returncode == 0 else None
    except (OSError, ValueError, IndexError, subprocess.TimeoutExpired):
        return None


def large_memory_groups():
    groups = (meminfo_bytes("MemTotal") or 0) // HOST_BYTES_PER_LARGE_TEST
    gpu = total_gpu_memory_bytes()
    if gpu is not None:
        groups = min(groups, gpu // GPU_BYTES_PER_LARGE_TEST)
    return max(1, groups)


def pytest_configure(config):
    config.addinivalue_line("markers", "large_memory: needs several GB of host or device "
                            "memory; only a few such tests run at a time")
    config.addinivalue_line("markers", "xdist_group(name): pytest-xdist runs a group on one "
                            "worker (declared here too for a run without pytest-xdist)")


@pytest.hookimpl(tryfirst=True)  # before pytest-xdist reads the groups
def pytest_collection_modifyitems(config, items):
    large = [item for item in items if item.get_closest_marker("large_memory")]
    if not large:
        return
    groups = large_memory_groups()
    for i, item in enumerate(large):
        item.add_marker(pytest.mark.xdist_group(f"{LARGE_MEMORY_GROUP}_{i % groups}"))


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
