"""Bad input gets a usage message on stderr and exit 2, with nothing on stdout that looks like a
result; --help prints usage and exits 0. Every step shares the parser, so every built step is
checked (the CUDA ones too: parsing comes before looking for a device)."""
import os
import subprocess
import sys

import pytest

from conftest import (CPU_STEPS, CUDA_STEPS, DTYPES, EXIT_SKIPPED, EXIT_USAGE, ROOT,
                      WARMUP_VARIABLE, binary, run)

BAD_ARGUMENTS = [
    ["abc"], ["12x"], ["0"], ["-5"], ["64", "0"], ["64", "-1"], ["1e3"], ["64", "64", "64"],
    ["3000000000"], ["--reps", "0"], ["--reps", "x"], ["--reps"], ["--csv"], ["--bogus"],
    ["64", "+64"], [" 64"], ["64", ""],
    ["--dtype"], ["--dtype", "float"], ["--dtype", "FLOAT32"], ["--dtype", ""], ["64", "--dtype"],
]


def built_steps():
    return [step for step in CPU_STEPS + CUDA_STEPS if binary(step).exists()]


@pytest.mark.parametrize("step", CPU_STEPS + CUDA_STEPS)
@pytest.mark.parametrize("arguments", BAD_ARGUMENTS, ids=lambda a: " ".join(a) or "empty")
def test_bad_arguments_exit_2_with_usage(step, arguments):
    if not binary(step).exists():
        pytest.skip(f"{step} is not built (no nvcc?)")
    done = run(step, *arguments)
    assert done.returncode == EXIT_USAGE, done.stdout + done.stderr
    assert "error:" in done.stderr and "usage:" in done.stderr
    assert done.stdout == ""


def test_unknown_variant_is_rejected():
    done = run("CPU.omp", 8, "--variant", "fastest")
    assert done.returncode == EXIT_USAGE
    assert "unknown variant 'fastest'" in done.stderr


@pytest.mark.parametrize("step", CPU_STEPS + CUDA_STEPS)
def test_help_prints_usage_and_exits_0(step):
    if not binary(step).exists():
        pytest.skip(f"{step} is not built (no nvcc?)")
    done = run(step, "--help")
    assert done.returncode == 0
    assert done.stdout.startswith("usage:")


@pytest.mark.parametrize("step", CPU_STEPS + CUDA_STEPS)
def test_unknown_dtype_lists_the_names(step):
    if not binary(step).exists():
        pytest.skip(f"{step} is not built (no nvcc?)")
    done = run(step, 64, "--dtype", "int4")
    assert done.returncode == EXIT_USAGE
    first = done.stderr.splitlines()[0]
    assert "unknown --dtype 'int4'" in first
    assert all(name in first for name in DTYPES)


# --- Kernel steps with variants (CUDA.v2) and the copy reference row (CUDA.copy).

V2_VARIANTS = ["read-coalesced", "write-coalesced"]


def needs_built(step):
    if not binary(step).exists():
        pytest.skip(f"{step} is not built (no nvcc?)")


def test_v2_lists_its_variants_the_default_first():
    needs_built("CUDA.v2")
    done = run("CUDA.v2", "--list-variants")
    assert done.returncode == 0 and done.stdout.split() == V2_VARIANTS
    usage = run("CUDA.v2", "--help").stdout
    assert f"default {V2_VARIANTS[0]}" in usage and "--variant" in usage


def test_the_copy_step_lists_the_plain_copy_first_and_the_vector_copy():
    needs_built("CUDA.copy")
    done = run("CUDA.copy", "--list-variants")
    assert done.returncode == 0 and done.stdout.split() == ["kernel", "vector"]
    assert "default kernel" in run("CUDA.copy", "--help").stdout
    refused = run("CUDA.copy", 8, "--variant", "read-coalesced")
    assert refused.returncode == EXIT_USAGE and "unknown variant 'read-coalesced'" in refused.stderr


@pytest.mark.parametrize("step", ["CUDA.v1", "CUDA.cublas"])
def test_a_kernel_step_without_variants_lists_none_and_refuses_variant(step):
    needs_built(step)
    done = run(step, "--list-variants")
    assert done.returncode == 0 and done.stdout == ""
    refused = run(step, 8, "--variant", "read-coalesced")
    assert refused.returncode == EXIT_USAGE and "unknown option '--variant'" in refused.stderr


def test_an_unknown_v2_variant_exits_2_naming_the_variants_before_looking_for_a_gpu():
    needs_built("CUDA.v2")
    done = run("CUDA.v2", 64, "--variant", "fastest")
    assert done.returncode == EXIT_USAGE, done.stderr  # not 77: no device was looked for
    first = done.stderr.splitlines()[0]
    assert "unknown variant 'fastest'" in first
    assert all(name in first for name in V2_VARIANTS)
    assert "skipped" not in done.stderr and done.stdout == ""


@pytest.mark.parametrize("dtype", DTYPES)
def test_the_copy_step_takes_every_dtype(dtype):
    needs_built("CUDA.copy")
    done = run("CUDA.copy", 33, 17, "--dtype", dtype, "--reps", 1)
    assert done.returncode in (0, EXIT_SKIPPED), done.stderr
    assert "does not support" not in done.stderr


def test_the_copy_step_says_it_copies():
    needs_built("CUDA.copy")
    assert "Copies a ROWS x COLS matrix" in run("CUDA.copy", "--help").stdout


# ---- The warm-up's minimum: the lab's, unless LAB_WARMUP_MS sets it (the tests set it to 0).

def test_the_tests_run_without_the_warm_up_minimum_and_the_programs_say_so():
    assert os.environ[WARMUP_VARIABLE] == "0"
    done = run(CPU_STEPS[0], 33, 65, "--reps", 1)
    assert done.returncode == 0, done.stderr
    assert "after >= 0 ms of warm-up" in done.stdout
    done = run(CPU_STEPS[0], 33, 65, "--reps", 1, env_extra={WARMUP_VARIABLE: "150"})
    assert "after >= 150 ms of warm-up" in done.stdout


@pytest.mark.parametrize("value", ["abc", "-1", "60001", ""])
@pytest.mark.parametrize("program", [CPU_STEPS[0], "PERMUTE.omp"])
def test_a_bad_warm_up_is_one_line_and_exit_2(program, value):
    done = run(program, 33, 65, "--reps", 1, env_extra={WARMUP_VARIABLE: value})
    assert done.returncode == EXIT_USAGE
    assert done.stderr.strip() == (f"error: {WARMUP_VARIABLE}={value}: use milliseconds from 0 "
                                   "to 60000")


def test_a_bad_warm_up_is_refused_by_the_pytorch_row_before_torch(tmp_path):
    done = subprocess.run([sys.executable, "-m", "transpose_lab.torch_reference", "--rows", "4",
                           "--cols", "4", "--csv", tmp_path / "t.csv"], capture_output=True,
                          text=True, cwd=ROOT,
                          env=dict(os.environ, **{WARMUP_VARIABLE: "x"}), timeout=120)
    assert done.returncode == EXIT_USAGE
    assert done.stderr.strip() == f"error: {WARMUP_VARIABLE}=x: use milliseconds from 0 to 60000"
    assert not (tmp_path / "t.csv").exists()


def test_measuring_runs_take_the_labs_warm_up():
    from transpose_lab.lab import measuring_environment
    assert WARMUP_VARIABLE not in measuring_environment()
    assert measuring_environment({"NCCL_NVLS_ENABLE": "0"})["NCCL_NVLS_ENABLE"] == "0"
