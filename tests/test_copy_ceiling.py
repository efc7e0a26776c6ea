"""The ceiling of a kernel step's rows: the faster of cudaMemcpy and the lab's vector copy
(common/vector_copy.cuh), both timed in the same run. The vector copy is exact for every element
type and shape (through CUDA.copy --variant vector and a probe that copies from and to every byte
offset), and the CSV says which copy each row was held against. GPU tests skip without a GPU."""
import csv
import subprocess

import pytest

from conftest import ROOT, run
from transpose_lab.results_csv import DTYPES

# Every size class of the copy: one element, one row, one column, odd shapes past a block's
# worth, a square, and byte counts that are not a multiple of 16 for the smaller types (3 x 5).
SHAPES = [(1, 1), (1, 17), (17, 1), (3, 5), (8191, 8193), (4096, 4096)]
CEILING_KINDS = {"memcpy", "vector_copy"}


def read_rows(csv_path):
    with open(csv_path) as f:
        return list(csv.DictReader(f))


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("rows,cols", SHAPES, ids=lambda v: str(v))
def test_the_vector_copy_is_exact(dtype, rows, cols, needs_gpu, tmp_path):
    csv_path = tmp_path / "out.csv"
    done = run("CUDA.copy", rows, cols, "--variant", "vector", "--dtype", dtype, "--reps", 2,
               "--csv", csv_path)
    assert done.returncode == 0, done.stderr
    (row,) = read_rows(csv_path)
    assert (row["variant"], row["verified"], row["dtype"]) == ("vector", "yes", dtype)
    assert (int(row["rows"]), int(row["cols"])) == (rows, cols)
    # The driver's own vector copy, the ceiling, is verified in the same run.
    assert "vector copy ceiling, last timed run (fill 1): verified" in done.stdout


def test_the_vector_copy_is_exact_from_and_to_every_byte_offset(needs_gpu, tmp_path):
    nvcc = subprocess.run(["make", "--no-print-directory", "-s", "-C", str(ROOT), "print-NVCC"],
                          capture_output=True, text=True).stdout.strip()
    if not nvcc:
        pytest.skip("nvcc not found")
    program = tmp_path / "vector_copy_probe"
    built = subprocess.run([nvcc, "-std=c++17", "-arch=native", "-I", str(ROOT / "common"),
                            str(ROOT / "tests" / "vector_copy_probe.cu"), "-o", str(program)],
                           capture_output=True, text=True)
    assert built.returncode == 0, built.stderr
    done = subprocess.run([str(program)], capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stdout + done.stderr
    assert done.stdout.startswith("exact: ")


@pytest.mark.parametrize("dtype", ["uint8", "float32", "complex128"])
def test_the_csv_names_the_ceiling_and_keeps_the_memcpy(dtype, needs_gpu, tmp_path):
    csv_path = tmp_path / "out.csv"
    done = run("CUDA.v1", 1024, 1000, "--dtype", dtype, "--reps", 3, "--csv", csv_path)
    assert done.returncode == 0, done.stderr
    (row,) = read_rows(csv_path)
    assert row["ceiling_kind"] in CEILING_KINDS
    ceiling, memcpy = float(row["ceiling_gbps"]), float(row["memcpy_gbps"])
    assert ceiling >= memcpy > 0
    if row["ceiling_kind"] == "memcpy":
        assert ceiling == memcpy
    assert float(row["pct_of_ceiling"]) == pytest.approx(100 * float(row["gbps"]) / ceiling,
                                                         abs=0.01)
    # The table shows both copies, the faster marked as the ceiling.
    table = done.stdout.splitlines()
    shown = {line.split()[0] for line in table if line.split()[:1] in (["memcpy"],
                                                                       ["vector_copy"])}
    assert shown == CEILING_KINDS, done.stdout
    assert any(line.split()[:1] == [row["ceiling_kind"]] and "(ceiling)" in line
               for line in table), done.stdout
