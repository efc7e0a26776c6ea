"""The reference rows a user would otherwise pick: CUDA.cublaslt (cublasLtMatrixTransform, every
element type the library takes, n/a for those it refuses) and the PyTorch script
(transpose_lab.torch_reference: x.t().contiguous()). Both verified bitwise before they are timed;
both skipped in one line where there is no GPU (or no torch)."""
import csv

import pytest

from conftest import (DTYPES, ELEM_BYTES, EXIT_SKIPPED, EXIT_USAGE, ROOT, binary,
                      gpu_unavailable_reason, run, run_torch_or_skip, step_variable,
                      torch_importable, torch_reference)
from transpose_lab.lab import EXIT_FAILED
from transpose_lab.results_csv import COLUMNS, read_results

STEP = "CUDA.cublaslt"
REFUSAL = f"{STEP}: cublasLtMatrixTransform does not support"
# Types cuBLASLt must take whatever the version: the ones geam takes too. A layout mistake would
# make the library refuse every type, which must not pass as "n/a everywhere".
MUST_SUPPORT = ["float32", "float64"]
ODD_SHAPES = [(1, 4099), (4099, 1), (37, 4111), (2049, 1025)]


def needs_built():
    if not binary(STEP).exists():
        pytest.skip(f"{STEP} is not built (make -C {STEP}; needs nvcc)")


def read_rows(csv_path):
    with open(csv_path, newline="") as handle:
        return list(csv.DictReader(handle))


# --- CUDA.cublaslt

def test_cublaslt_is_a_kernel_step_that_links_cublaslt():
    assert step_variable(STEP, "STEP_KIND") == ["kernel"]
    assert "-lcublasLt" in step_variable(STEP, "STEP_LDLIBS")
    assert (ROOT / STEP / "README.md").is_file()


def test_cublaslt_builds_and_prints_its_usage():
    needs_built()
    done = run(STEP, "--help")
    assert done.returncode == 0, done.stderr
    assert f"usage: {STEP}/transpose" in done.stdout + done.stderr


@pytest.mark.parametrize("args", [["abc"], ["0"], ["-5"], ["64x"], ["64", "64", "64"],
                                  ["64", "--dtype", "int8"], ["64", "--reps", "0"]],
                         ids=lambda a: " ".join(a))
def test_cublaslt_bad_input_prints_usage_and_exits_2(args):
    needs_built()
    done = run(STEP, *args)
    assert done.returncode == EXIT_USAGE, done.stderr
    assert done.stdout == ""
    assert "usage" in done.stderr or "error" in done.stderr


def test_cublaslt_without_a_gpu_says_so_in_one_line_and_exits_77():
    needs_built()
    if gpu_unavailable_reason() is None:
        pytest.skip("a GPU is present: the no-GPU path cannot be exercised here")
    done = run(STEP, 64, "--dtype", "uint8")
    assert done.returncode == EXIT_SKIPPED
    assert done.stdout == ""
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith(f"{STEP}: skipped: no CUDA device")


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("rows,cols", ODD_SHAPES, ids=lambda v: str(v))
def test_cublaslt_is_exact_or_says_it_does_not_support_the_type(dtype, rows, cols, needs_gpu,
                                                               tmp_path):
    needs_built()
    csv_path = tmp_path / "out.csv"
    done = run(STEP, rows, cols, "--dtype", dtype, "--reps", 2, "--csv", csv_path)
    if done.returncode == EXIT_USAGE and "does not support" in done.stderr:
        assert dtype not in MUST_SUPPORT, done.stderr
        lines = [line for line in done.stderr.splitlines() if "does not support" in line]
        assert len(lines) == 1 and lines[0].startswith(f"{REFUSAL} {dtype} (CUBLAS_STATUS_")
        assert done.stdout == "" and not csv_path.exists()
        return
    assert done.returncode == 0, done.stderr
    assert "verified: all" in done.stdout
    (row,) = read_rows(csv_path)
    assert row["step"] == STEP and row["kind"] == "kernel" and row["verified"] == "yes"
    assert (row["dtype"], int(row["elem_bytes"])) == (dtype, ELEM_BYTES[dtype])
    assert (int(row["rows"]), int(row["cols"])) == (rows, cols)
    assert row["launch"] == "library call" and row["threads"] == "0"


@pytest.mark.parametrize("dtype", DTYPES)
def test_cublaslt_refuses_or_takes_a_type_the_same_way_on_every_shape(dtype, needs_gpu):
    needs_built()
    refused = set()
    for rows, cols in [(64, 64), (31, 33)]:
        done = run(STEP, rows, cols, "--dtype", dtype, "--reps", 1)
        assert done.returncode in (0, EXIT_USAGE), done.stderr
        refused.add(done.returncode == EXIT_USAGE and "does not support" in done.stderr)
    assert len(refused) == 1


# --- The PyTorch script

@pytest.mark.parametrize("args", [[], ["--rows", 0, "--cols", 8], ["--rows", 8, "--cols", "x"],
                                  ["--rows", 8, "--cols", 8, "--dtypes", "int8"],
                                  ["--rows", 8, "--cols", 8, "--reps", 0]],
                         ids=lambda a: " ".join(map(str, a)) or "nothing")
def test_torch_reference_bad_arguments_exit_2(args, tmp_path):
    done = torch_reference(*args, "--csv", tmp_path / "x.csv")
    assert done.returncode == EXIT_USAGE
    assert "usage" in done.stderr
    assert not (tmp_path / "x.csv").exists()


def test_torch_reference_is_skipped_in_one_line_without_torch(tmp_path):
    if torch_importable():
        pytest.skip("torch is importable here")
    csv_path = tmp_path / "torch.csv"
    done = torch_reference("--rows", 64, "--cols", 64, "--csv", csv_path)
    assert done.returncode == EXIT_SKIPPED
    assert done.stdout == ""
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("PyTorch reference: skipped: torch is not")
    assert not csv_path.exists()


def test_torch_reference_is_skipped_in_one_line_without_a_gpu(tmp_path):
    if not torch_importable():
        pytest.skip("torch is not importable here")
    if gpu_unavailable_reason() is None:
        pytest.skip("a GPU is present: the no-GPU path cannot be exercised here")
    done = torch_reference("--rows", 64, "--cols", 64, "--csv", tmp_path / "torch.csv")
    assert done.returncode == EXIT_SKIPPED
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("PyTorch reference: skipped: no CUDA device")


# Not 1 x N: there x.t() is already contiguous and PyTorch copies nothing.
@pytest.mark.parametrize("rows,cols", [(37, 4111), (2049, 1025), (31, 33)],
                         ids=lambda v: str(v))
def test_torch_reference_rows_are_verified_and_in_the_lab_schema(rows, cols, needs_torch_on_gpu,
                                                                 tmp_path):
    csv_path = tmp_path / "torch.csv"
    done = run_torch_or_skip("--rows", rows, "--cols", cols, "--reps", 3, "--csv", csv_path)
    assert done.returncode == 0, done.stdout + done.stderr
    assert csv_path.read_text().splitlines()[0] == ",".join(COLUMNS)
    table = read_results(csv_path)  # the one reader: every field converts, elem_bytes checked
    assert [row["dtype"] for row in table] == DTYPES
    for row in table:
        assert (row["step"], row["variant"], row["kind"]) == ("PyTorch", "t().contiguous()",
                                                              "reference")
        assert (row["rows"], row["cols"], row["threads"], row["reps"]) == (rows, cols, 0, 3)
        assert row["launch"].startswith("torch ") and row["verified"] and row["e2e_ms"] is None
        assert row["elem_bytes"] == ELEM_BYTES[row["dtype"]]
        moved = 2 * rows * cols * row["elem_bytes"]
        assert row["gbps"] == pytest.approx(moved / row["median_ms"] / 1e6, rel=1e-3)
        assert row["pct_of_ceiling"] == pytest.approx(100 * row["gbps"] / row["ceiling_gbps"],
                                                      abs=0.01)
    assert done.stdout.count("verified: all") == len(DTYPES)


def test_torch_reference_checks_every_fill_of_a_small_type(needs_torch_on_gpu, tmp_path):
    # 4099 x 4111 uint8: 2^24 positions need 4 fills of 256 values, float16 2 of 2^16.
    done = run_torch_or_skip("--rows", 4099, "--cols", 4111, "--dtypes", "uint8", "float16",
                             "--reps", 2, "--csv", tmp_path / "torch.csv")
    assert done.returncode == 0, done.stderr
    assert "over 4 fills" in done.stdout and "over 2 fills" in done.stdout


def test_torch_reference_appends_to_a_lab_csv_and_refuses_another_header(needs_torch_on_gpu,
                                                                         tmp_path):
    if not binary("CUDA.cublas").exists():
        pytest.skip("CUDA.cublas is not built")
    lab_csv = tmp_path / "dtypes.csv"
    # A CUDA step's row first, then the PyTorch rows into the same file.
    done = run("CUDA.cublas", 64, 96, "--reps", 2, "--csv", lab_csv)
    assert done.returncode == 0, done.stderr
    done = run_torch_or_skip("--rows", 64, "--cols", 96, "--dtypes", "float32", "--reps", 2,
                             "--csv", lab_csv)
    assert done.returncode == 0, done.stderr
    assert [row["kind"] for row in read_results(lab_csv)] == ["kernel", "reference"]

    other = tmp_path / "other.csv"
    other.write_text("step,rows,cols\nx,1,1\n")
    done = torch_reference("--rows", 8, "--cols", 8, "--dtypes", "float32", "--csv", other)
    assert done.returncode == EXIT_FAILED
    assert "another header" in done.stderr
    assert other.read_text() == "step,rows,cols\nx,1,1\n"
