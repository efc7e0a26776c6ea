"""Every CUDA step, cuBLAS included, verified bitwise on awkward shapes when a GPU is present;
reported as skipped, by name, when not. Without a GPU the programs themselves must say so in one
line and exit 77."""
import csv

import pytest

from conftest import CUDA_STEPS, EXIT_NO_MEMORY, EXIT_SKIPPED, binary, gpu_unavailable_reason, run

SHAPES = [(1, 1), (1, 33), (33, 1), (31, 33), (1000, 999), (4097, 4095), (8192, 8192)]
OVER_2_POW_31 = (46341, 46341)  # 2,147,488,281 elements: 64-bit indexing or bust


@pytest.mark.parametrize("step", CUDA_STEPS)
@pytest.mark.parametrize("rows,cols", SHAPES, ids=lambda v: str(v))
def test_gpu_step_is_exact(step, rows, cols, needs_gpu, tmp_path):
    csv_path = tmp_path / "out.csv"
    done = run(step, rows, cols, "--reps", 2, "--csv", csv_path)
    assert done.returncode == 0, done.stderr
    assert "verified: all" in done.stdout
    with open(csv_path) as f:
        (row,) = list(csv.DictReader(f))
    assert row["verified"] == "yes" and (int(row["rows"]), int(row["cols"])) == (rows, cols)
    kernel_ms, e2e_ms = float(row["median_ms"]), float(row["e2e_ms"])
    assert kernel_ms > 0 and e2e_ms > 0
    # The copies to and from the host dwarf the kernel once the matrix is large; on a tiny one
    # both times are mostly launch latency, and either median can come out the larger.
    if rows * cols >= 1 << 24:
        assert e2e_ms >= kernel_ms


@pytest.mark.parametrize("step", CUDA_STEPS)
def test_gpu_step_is_exact_past_2_pow_31_elements(step, needs_gpu):
    done = run(step, *OVER_2_POW_31, "--reps", 1, timeout=900)
    if done.returncode == EXIT_NO_MEMORY:
        pytest.skip(f"not enough memory for {OVER_2_POW_31}: {done.stderr.strip()}")
    assert done.returncode == 0, done.stderr
    assert f"verified: all {OVER_2_POW_31[0] * OVER_2_POW_31[1]} elements" in done.stdout


@pytest.mark.parametrize("step", CUDA_STEPS)
def test_without_a_gpu_the_step_says_so_in_one_line_and_exits_77(step):
    if not binary(step).exists():
        pytest.skip(f"{step} is not built (no nvcc?)")
    if gpu_unavailable_reason() is None:
        pytest.skip("a GPU is present: the no-GPU path cannot be exercised here")
    done = run(step, 64)
    assert done.returncode == EXIT_SKIPPED
    assert done.stdout == ""
    assert len(done.stderr.strip().splitlines()) == 1 and "skipped: no CUDA device" in done.stderr
