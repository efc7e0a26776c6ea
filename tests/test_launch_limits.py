"""Shapes past a kernel step's grid are refused in words before launching (common/grid_limits.cuh):
one line naming the limit, the largest extent the step handles and the last step of the
progression, exit 2; never a raw CUDA error. Checked on paper, without a GPU: each step's own
launchers (its .build/kernel.o, as `make` built it) called by tests/launch_probe.cu."""
import subprocess

import pytest

from conftest import EXIT_USAGE, ROOT, steps_from_makefile

LAST_STEP = steps_from_makefile("CUDA_STEPS")[-1]
INT_MAX = 2**31 - 1
# (step, rows, cols, elem_bytes, what the refusal names)
REFUSED = [
    *[(step, 2100000, 3, 4, ["grid y of 65535 blocks", "at most 2097120 rows"])
      for step in ["CUDA.copy", "CUDA.v2", "CUDA.v3", "CUDA.v4", "CUDA.v5_unroll"]],
    ("CUDA.v6_locality", 3, 4200000, 4, ["grid y of 65535 blocks", "at most 4194240 cols"]),
    ("CUDA.v6_locality", 3, 2100000, 16, ["grid y of 65535 blocks", "at most 2097120 cols"]),
    ("CUDA.v1", 1, INT_MAX, 1, ["int indices below 2^31", "at most 2147483392 cols"]),
    ("CUDA.v2", 1, INT_MAX, 1, ["int indices below 2^31", "at most 2147483616 cols"]),
    # The last step: its thin path (fewer than 8 rows; 1 x N is a copy), its realigning path (1-
    # to 8-byte elements) and v6's launcher, which it links for ragged shapes of 16-byte elements;
    # it names no other step.
    (LAST_STEP, 2, INT_MAX, 1, ["int indices below 2^31", "cols"]),
    (LAST_STEP, 8, INT_MAX, 1, ["int indices below 2^31", "cols"]),
    (LAST_STEP, 9, 2100000, 16, ["grid y of 65535 blocks", "at most 2097120 cols"]),
]


@pytest.fixture(scope="module")
def probe_object(tmp_path_factory):
    """tests/launch_probe.cu compiled once (nvcc's front end is the slow part); each step's
    kernel.o is then linked to it."""
    nvcc = subprocess.run(["make", "--no-print-directory", "-s", "-C", str(ROOT), "print-NVCC"],
                          capture_output=True, text=True).stdout.strip()
    if not nvcc:
        pytest.skip("nvcc not found")
    target = tmp_path_factory.mktemp("launch_probe") / "launch_probe.o"
    built = subprocess.run([nvcc, "-std=c++17", "-I", str(ROOT / "common"), "-c",
                            str(ROOT / "tests" / "launch_probe.cu"), "-o", str(target)],
                           capture_output=True, text=True)
    assert built.returncode == 0, built.stderr
    return nvcc, target


def probe(step, probe_object, tmp_path):
    kernel = ROOT / step / ".build" / "kernel.o"
    if not kernel.is_file():
        pytest.skip(f"{step} is not built")
    nvcc, probe_o = probe_object
    program = tmp_path / "launch_probe"
    built = subprocess.run([nvcc, str(probe_o), str(kernel), "-o", str(program)],
                           capture_output=True, text=True)
    assert built.returncode == 0, built.stderr
    return program


@pytest.mark.parametrize("step,rows,cols,elem_bytes,words", REFUSED)
def test_a_shape_past_the_grid_is_refused_in_words(step, rows, cols, elem_bytes, words,
                                                   probe_object, tmp_path):
    done = subprocess.run([str(probe(step, probe_object, tmp_path)), str(rows), str(cols),
                           str(elem_bytes)],
                          capture_output=True, text=True, timeout=60)
    assert done.returncode == EXIT_USAGE, done.stdout + done.stderr
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1, done.stderr
    assert lines[0].startswith(f"{step}: error: cannot launch for {rows} x {cols}")
    for word in words:
        assert word in lines[0], lines[0]
    # The last step walks the rows in grid x: it is named where the rows are refused.
    assert (f"{LAST_STEP} handles this shape" in lines[0]) == words[-1].endswith("rows")
