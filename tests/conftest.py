"""Shared helpers: where the programs are, how to run them, and whether a GPU is here."""
import functools
import os
import subprocess
from pathlib import Path

import pytest

from transpose_lab.lab import DTYPES, ELEM_BYTES, ROOT  # noqa: E402  common/dtypes.def
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
    """None when the CUDA steps can run here, else why not (printed in the skip)."""
    # Any built CUDA step can ask: a session that builds only some steps still learns the truth.
    built = [step for step in CUDA_STEPS + PIPELINE_STEPS if binary(step).exists()]
    if not built:
        return "no CUDA step is built (no nvcc?)"
    done = run(built[0], 1, 1, "--reps", 1)
    if done.returncode == EXIT_SKIPPED:
        return done.stderr.strip() or "no CUDA device"
    return None


@pytest.fixture
def needs_gpu(request):
    reason = gpu_unavailable_reason()
    if reason:  # the test's own name in the reason, so the summary lists every skipped test
        pytest.skip(f"{request.node.name}: {reason}")
