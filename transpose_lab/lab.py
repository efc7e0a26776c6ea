"""What the lab is made of, for every tool: the repository root, the steps and their kinds (the
top Makefile declares the lists, each step's Makefile its STEP_KIND, STEP_KERNEL, ...) and the
element types (common/dtypes.def, which common/dtype.cpp and common/step.mk read too). Written
once there, read here: no tool names a step or a type."""
import functools
import os
import re
import subprocess
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
DTYPES_DEF = ROOT / "common" / "dtypes.def"


def _read_dtypes():
    """[(name, bytes)] in the order of common/dtypes.def."""
    found = re.findall(r"^LAB_DTYPE\((\w+),\s*(\d+),", DTYPES_DEF.read_text(), re.MULTILINE)
    return [(name, int(size)) for name, size in found]


DTYPES = [name for name, _ in _read_dtypes()]  # uint8, float16, ... as --dtype takes them
ELEM_BYTES = dict(_read_dtypes())
DEFAULT_DTYPE = "float32"


def _read_config():
    """The constants of common/config.hpp (constexpr TYPE NAME = VALUE;): numbers as int or
    float, strings without their quotes. The harness's values, read, never copied."""
    text = (ROOT / "common" / "config.hpp").read_text()
    config = {}
    for name, value in re.findall(r"constexpr [\w:<>* ]+?\b(k\w+)\s*=\s*([^;]+);", text):
        value = value.strip()
        if value.startswith('"'):
            config[name] = value.strip('"')
        elif re.fullmatch(r"-?\d+", value):
            config[name] = int(value)
        elif re.fullmatch(r"-?\d+\.\d*", value):
            config[name] = float(value)
    return config


CONFIG = _read_config()
# The exit codes every program shares, and the timing defaults the Python rows follow.
EXIT_OK, EXIT_FAILED, EXIT_USAGE, EXIT_NO_MEMORY, EXIT_SKIPPED = (
    CONFIG[name] for name in ("kExitOk", "kExitFailed", "kExitUsage", "kExitNoMemory",
                              "kExitSkipped"))
WARMUP_RUNS, MIN_WARMUP_MS, MAX_WARMUP_MS = (
    CONFIG["kWarmupRuns"], CONFIG["kMinWarmupMs"], CONFIG["kMaxWarmupMs"])
DEFAULT_GPU_REPS, MAX_REPS = CONFIG["kDefaultGpuReps"], CONFIG["kMaxReps"]
# The variable that sets the programs' warm-up minimum (the tests set it to 0), and the one that
# picks the GPU's L2 flush (write, the default, or read), and the CPU's (on, the default, or off).
WARMUP_VARIABLE = CONFIG["kWarmupVariable"]
L2_FLUSH_VARIABLE = CONFIG["kL2FlushVariable"]
CPU_FLUSH_VARIABLE = CONFIG["kCpuFlushVariable"]
L2_READ_FLUSH_MULTIPLE = CONFIG["kL2ReadFlushMultiple"]  # "read" reads this many L2s


def measuring_environment(extra=None):
    """The environment for a run that measures (a reference run, the grader's speed check): this
    one, with `extra` set and the warm-up and the cache flushes as the lab defines them
    (WARMUP_VARIABLE, L2_FLUSH_VARIABLE and CPU_FLUSH_VARIABLE left out)."""
    lab_defined = (WARMUP_VARIABLE, L2_FLUSH_VARIABLE, CPU_FLUSH_VARIABLE)
    kept = {k: v for k, v in os.environ.items() if k not in lab_defined}
    return {**kept, **(extra or {})}


def _make_print(folder, variable, extra_makefiles=()):
    command = ["make", "--no-print-directory", "-s", "-C", str(folder)]
    for makefile in extra_makefiles:
        command += ["-f", str(makefile)]
    done = subprocess.run(command + [f"print-{variable}"], capture_output=True, text=True,
                          check=True)
    return done.stdout.split()


@functools.lru_cache(maxsize=None)
def steps(variable):
    """A list of the top Makefile (CPU_STEPS, CUDA_STEPS, REFERENCE_STEPS, PROGRESSION,
    PIPELINE_STEPS, DISTRIBUTED_STEPS, ALL_STEPS, LAST_STEP, ...)."""
    return tuple(_make_print(ROOT, variable))


@functools.lru_cache(maxsize=None)
def step_variable(step, variable):
    """What a step's own Makefile declares (STEP_KIND, STEP_DTYPES, STEP_KERNEL, ...), as a list."""
    folder = ROOT / step
    return tuple(_make_print(folder, variable,
                             (folder / "Makefile", ROOT / "common" / "print.mk")))


def step_kind(step):
    return step_variable(step, "STEP_KIND")[0]


def step_kernel(step):
    """The kernel step whose launcher a step runs (its STEP_KERNEL: a step of another kind, or a
    chapter-3 step that hands some problems to the step before it), or None."""
    kernel = step_variable(step, "STEP_KERNEL")
    return kernel[0] if kernel else None


def last_step():
    """The last kernel step of the progression."""
    return steps("LAST_STEP")[0]
