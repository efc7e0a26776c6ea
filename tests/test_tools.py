"""The make targets' runner: run-all prints one table, skips CUDA rows without a GPU, and fails
loudly when a step fails."""
import subprocess
import sys

from conftest import CPU_STEPS, CUDA_STEPS, ROOT, gpu_unavailable_reason

RUNNER = ROOT / "tools" / "run_steps.py"


def runner(*args):
    return subprocess.run([sys.executable, str(RUNNER), *map(str, args)], capture_output=True,
                          text=True, timeout=600)


def test_run_all_prints_one_table_with_every_step(tmp_path):
    csv_path = tmp_path / "run_all.csv"
    done = runner("run-all", "--steps", *CPU_STEPS, *CUDA_STEPS, "--rows", 96, "--cols", 80,
                  "--reps", 2, "--csv", csv_path)
    assert done.returncode == 0, done.stdout + done.stderr
    for step in CPU_STEPS + CUDA_STEPS:
        assert step in done.stdout
    assert "CPU.omp blocked" in done.stdout and "verified" in done.stdout
    if gpu_unavailable_reason():
        assert "skipped" in done.stdout or "not built" in done.stdout
    else:
        assert "WRONG" not in done.stdout and "skipped" not in done.stdout


def test_run_all_fails_when_a_step_fails(tmp_path):
    # A size the programs reject is a failure of that step, and the runner must say so.
    done = runner("run-all", "--steps", *CPU_STEPS, "--rows", 0, "--cols", 8, "--csv",
                  tmp_path / "x.csv")
    assert done.returncode == 1
    assert "CPU.omp: failed: exit 2" in done.stdout
