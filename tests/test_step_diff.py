"""`make diff` within its limits: a step of the progression shows its one idea in at most 30
changed lines of code (transpose_lab/step_diff.py counts them), and CUDA.v7_packed, a new kernel
in place of v6's, in at most 150. Counted without a GPU."""
import pytest

from conftest import ROOT, steps_from_makefile

from transpose_lab import step_diff

LIMIT = 30
LIMITS = {"CUDA.v7_packed": 150}
KERNEL_STEPS = steps_from_makefile("CUDA_STEPS")


@pytest.mark.parametrize("step", KERNEL_STEPS[1:])  # v1 is the first kernel: nothing before it
def test_each_step_changes_at_most_its_limit(step):
    previous = KERNEL_STEPS[KERNEL_STEPS.index(step) - 1]
    count = step_diff.changed_count(step_diff.diff_lines(previous, step))
    assert 0 < count <= LIMITS.get(step, LIMIT), f"{step}: {count} changed lines"


def test_the_step_transpose_files_stay_short():
    for step in KERNEL_STEPS:
        lines = (ROOT / step / "transpose.cu").read_text().count("\n")
        assert lines <= 200, f"{step}/transpose.cu: {lines} lines"
