"""Bad input gets a usage message on stderr and exit 2, with nothing on stdout that looks like a
result; --help prints usage and exits 0. Every step shares the parser, so every built step is
checked (the CUDA ones too: parsing comes before looking for a device)."""
import os
import subprocess
import sys

import pytest

from conftest import (CPU_STEPS, CUDA_STEPS, DTYPES, EXIT_SKIPPED, EXIT_USAGE, PIPELINE_STEPS,
                      ROOT, WARMUP_VARIABLE, binary, run, steps_from_makefile)
from transpose_lab.lab import CPU_FLUSH_VARIABLE, L2_FLUSH_VARIABLE

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


def test_v7_lists_its_packed_kernel_first_and_tma():
    needs_built("CUDA.v7_packed")
    done = run("CUDA.v7_packed", "--list-variants")
    assert done.returncode == 0 and done.stdout.split() == ["kernel", "tma"]
    assert "default kernel" in run("CUDA.v7_packed", "--help").stdout


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


@pytest.mark.parametrize("variable,message", [(WARMUP_VARIABLE, "use milliseconds from 0 to 60000"),
                                              (L2_FLUSH_VARIABLE, "use write or read")])
def test_a_bad_setting_is_refused_by_the_pytorch_row_before_torch(tmp_path, variable, message):
    done = subprocess.run([sys.executable, "-m", "transpose_lab.torch_reference", "--rows", "4",
                           "--cols", "4", "--csv", tmp_path / "t.csv"], capture_output=True,
                          text=True, cwd=ROOT, env=dict(os.environ, **{variable: "x"}), timeout=120)
    assert done.returncode == EXIT_USAGE
    assert done.stderr.strip() == f"error: {variable}=x: {message}"
    assert not (tmp_path / "t.csv").exists()


def test_measuring_runs_take_the_labs_warm_up_and_l2_flush(monkeypatch):
    from transpose_lab.lab import measuring_environment
    monkeypatch.setenv(L2_FLUSH_VARIABLE, "read")
    monkeypatch.setenv(CPU_FLUSH_VARIABLE, "off")
    assert WARMUP_VARIABLE not in measuring_environment()
    assert L2_FLUSH_VARIABLE not in measuring_environment()
    assert CPU_FLUSH_VARIABLE not in measuring_environment()
    assert measuring_environment({"NCCL_NVLS_ENABLE": "0"})["NCCL_NVLS_ENABLE"] == "0"


# ---- The GPU's L2 flush: a memset (write), unless LAB_L2_FLUSH=read (common/cuda_harness.cuh).

FLUSHED_PROGRAMS = [(CUDA_STEPS[0], ["33", "65"]),
                    ("PERMUTE.v5_packed", ["--shape", "33,65", "--perm", "1,0"])]
# The host pipeline flushes nothing (its matrix comes from host memory) but refuses a bad value too.
FLUSH_PROGRAMS = FLUSHED_PROGRAMS + [(PIPELINE_STEPS[0], ["33", "65"])]


@pytest.mark.parametrize("value", ["sometimes", "", "READ"])
@pytest.mark.parametrize("program,args", FLUSH_PROGRAMS, ids=[p for p, _ in FLUSH_PROGRAMS])
def test_a_bad_l2_flush_is_one_line_and_exit_2_with_or_without_a_gpu(program, args, value):
    done = run(program, *args, "--reps", 1, env_extra={L2_FLUSH_VARIABLE: value})
    assert done.returncode == EXIT_USAGE, done.stdout + done.stderr
    assert done.stderr.strip() == f"error: {L2_FLUSH_VARIABLE}={value}: use write or read"
    assert done.stdout == ""


@pytest.mark.parametrize("value,header", [(None, "L2 flushed before each"),
                                          ("write", "L2 flushed before each"),
                                          ("read", "L2 flushed (read) before each")])
@pytest.mark.parametrize("program,args", FLUSHED_PROGRAMS, ids=[p for p, _ in FLUSHED_PROGRAMS])
def test_either_l2_flush_times_a_verified_run_and_says_which(program, args, value, header,
                                                             needs_gpu):
    env = {L2_FLUSH_VARIABLE: value} if value else None
    done = run(program, *args, "--reps", 3, env_extra=env)
    assert done.returncode == 0, done.stdout + done.stderr
    assert header in done.stdout
    assert "verified" in done.stdout and "WRONG" not in done.stdout


# --- --cases FILE: many runs in one process (common/cli.hpp), as the tests and the grader use it.

CASE_STEPS = ["CPU.omp", "PERMUTE.omp"]  # a matrix step and a chapter-3 step, both on the CPU


@pytest.mark.parametrize("step", CASE_STEPS)
def test_cases_run_in_turn_each_under_its_heading_with_its_own_rows(step, tmp_path):
    lines = ["37 53 --dtype uint8", "", "# a comment", "64 --dtype complex128  # 64 x 64",
             "1 4099"]
    (tmp_path / "cases").write_text("\n".join(lines) + "\n")
    done = run(step, "--reps", "1", "--csv", tmp_path / "rows.csv", "--cases", tmp_path / "cases",
               threads=2)
    assert done.returncode == 0, done.stderr
    headings = [line for line in done.stdout.splitlines() if line.startswith("case ")]
    assert headings == ["case 1 of 3: 37 53 --dtype uint8",
                        "case 2 of 3: 64 --dtype complex128  # 64 x 64", "case 3 of 3: 1 4099"]
    for count in (37 * 53, 64 * 64, 4099):
        assert f"all {count} elements" in done.stdout
    with open(tmp_path / "rows.csv") as rows:
        dtypes = [row.split(",")[3] for row in rows.read().splitlines()[1:]]
    assert dtypes[0] == "uint8" and dtypes[-1] == "float32" and "complex128" in dtypes


@pytest.mark.parametrize("step", CASE_STEPS + CUDA_STEPS)
@pytest.mark.parametrize("text,reason", [
    ("37 53\n64 --dtype float\n", "(FILE line 2): error: unknown --dtype 'float'"),
    ("37 53\n0\n", "(FILE line 2): error: ROWS must be at least 1"),
    ("# nothing\n\n", "error: --cases FILE holds no case"),
    ("37 53 --cases FILE\n", "(FILE line 1): error: unknown option '--cases'"),
])
def test_a_bad_case_is_refused_naming_its_line_before_any_case_runs(step, text, reason,
                                                                   tmp_path):
    if not binary(step).exists():
        pytest.skip(f"{step} is not built (no nvcc?)")
    path = tmp_path / "cases"
    path.write_text(text.replace("FILE", str(path)))
    done = run(step, "--reps", "1", "--cases", path)
    assert done.returncode == EXIT_USAGE, done.stdout + done.stderr
    assert reason.replace("FILE", str(path)) in done.stderr
    assert "case 1 of" not in done.stdout


@pytest.mark.parametrize("arguments,reason", [
    (["--cases"], "--cases needs a file name"),
    (["--cases", "no-such-file"], "--cases no-such-file cannot be read"),
])
def test_cases_without_a_readable_file_is_refused_in_one_line(arguments, reason):
    done = run("CPU.omp", *arguments)
    assert done.returncode == EXIT_USAGE and done.stderr.strip().endswith(reason), done.stderr


@pytest.mark.parametrize("step", CPU_STEPS + CUDA_STEPS + PIPELINE_STEPS
                         + steps_from_makefile("DISTRIBUTED_STEPS"))
def test_a_program_takes_cases_exactly_when_its_help_says_so(step):
    if not binary(step).exists():
        pytest.skip(f"{step} is not built (no nvcc?)")
    offered = "--cases FILE" in run(step, "--help").stdout
    done = run(step, "--cases", "no-such-file")
    assert done.returncode == EXIT_USAGE, done.stdout + done.stderr
    said = "--cases no-such-file cannot be read" if offered else "unknown option '--cases'"
    assert said in done.stderr, done.stderr
