"""Unit tests of common/: the verifier, the fill and the CSV schema, through tests/harness_probe."""
import subprocess
import sys

import pytest

from conftest import ROOT

PROBE = ROOT / "tests" / ".build" / "harness_probe"


def probe(*args):
    return subprocess.run([str(PROBE), *map(str, args)], capture_output=True, text=True)


@pytest.mark.parametrize("rows,cols", [(1, 1), (1, 7), (7, 1), (33, 17), (64, 64)])
def test_verifier_passes_a_correct_transpose(rows, cols):
    done = probe("verify", rows, cols)
    assert done.returncode == 0, done.stdout
    assert f"all {rows * cols} elements" in done.stdout


@pytest.mark.parametrize("rows,cols,out_row,out_col", [(33, 17, 5, 20), (7, 1, 0, 6), (1, 7, 6, 0)])
def test_verifier_catches_one_wrong_element(rows, cols, out_row, out_col):
    done = probe("verify", rows, cols, "--wrong", out_row, out_col)
    assert done.returncode == 1
    assert f"FAILED: 1 of {rows * cols} elements wrong" in done.stdout
    assert f"first at output row {out_row}, col {out_col}" in done.stdout


def test_verifier_catches_an_unwritten_element():
    done = probe("verify", 33, 17, "--unwritten", 16, 32)
    assert done.returncode == 1
    assert "FAILED: 1 of 561 elements wrong; first at output row 16, col 32: got nan" in done.stdout \
        or "got -nan" in done.stdout
    assert "0xffffffff" in done.stdout


@pytest.mark.parametrize("start,count", [(0, 1 << 20),
                                          ((254 << 23) - 500_000, 1_000_000),  # sign boundary
                                          ((1 << 31) - 500_000, 1_000_000)])   # past 2^31
def test_fill_values_are_distinct_normal_floats(start, count):
    done = probe("fill-distinct", start, count)
    assert done.returncode == 0, done.stdout


def test_csv_header_matches_the_python_reader():
    sys.path.insert(0, str(ROOT / "plots"))
    from results_csv import COLUMNS
    done = probe("csv-header")
    assert done.stdout.strip().split(",") == list(COLUMNS)


@pytest.mark.parametrize("threads", [1, 3])
def test_streaming_and_plain_copies_are_exact_at_every_alignment(threads):
    # The CPU ceiling and the blocked transpose's copy-out: a short or misplaced write here
    # would flatter the ceiling or corrupt the output.
    done = subprocess.run([str(PROBE), "copies"], capture_output=True, text=True,
                          env={"OMP_NUM_THREADS": str(threads)})
    assert done.returncode == 0, done.stdout + done.stderr
    assert done.stdout.strip() == f"{2 * 2 * 16 * 71} copies exact"
