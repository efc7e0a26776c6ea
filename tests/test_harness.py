"""Unit tests of common/: the fills, the verifier and the CSV schema, through tests/harness_probe."""
import os
import re
import subprocess

import pytest

from conftest import DTYPES, ROOT, skip_unless_memory

PROBE = ROOT / "tests" / ".build" / "harness_probe"


def probe(*args, env=None):
    return subprocess.run([str(PROBE), *map(str, args)], capture_output=True, text=True, env=env)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("rows,cols", [(1, 1), (1, 7), (7, 1), (33, 17), (64, 64), (300, 301)])
def test_verifier_passes_a_correct_transpose(dtype, rows, cols):
    done = probe("verify", dtype, rows, cols)
    assert done.returncode == 0, done.stdout + done.stderr
    assert f"all {rows * cols} elements" in done.stdout


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("rows,cols,out_row,out_col", [(33, 17, 5, 20), (7, 1, 0, 6), (1, 7, 6, 0)])
def test_verifier_catches_one_wrong_element(dtype, rows, cols, out_row, out_col):
    done = probe("verify", dtype, rows, cols, "--wrong", out_row, out_col)
    assert done.returncode == 1
    assert f"1 of {rows * cols} elements wrong" in done.stdout
    assert f"first at output row {out_row}, col {out_col}: got 0x" in done.stdout


@pytest.mark.parametrize("dtype", ["uint8", "float16", "complex128"])
def test_verifier_catches_an_unwritten_element(dtype):
    done = probe("verify", dtype, 33, 17, "--unwritten", 16, 32)
    assert done.returncode == 1
    assert "1 of 561 elements wrong; first at output row 16, col 32: got 0x" in done.stdout
    got, want = re.search(r"got 0x([0-9a-f]+), want 0x([0-9a-f]+)", done.stdout).groups()
    assert int(got, 16) == ~int(want, 16) & ((1 << 4 * len(want)) - 1), done.stdout  # the poison


def test_two_equal_bytes_swapped_are_caught_by_a_later_fill():
    # 300 x 300 uint8: input elements 0 and 256 hold the same byte in fill 1 (the lowest digit),
    # so one fill alone would pass this swap; the second digit tells them apart.
    # Output (0, 0) comes from input element 0, output (256, 0) from input element 256.
    done = probe("verify", "uint8", 300, 300, "--swap", 0, 0, 256, 0)
    assert done.returncode == 1
    assert "verification FAILED (fill 2 of 3): 2 of 90000 elements wrong; first at output " \
           "row 0, col 0: got 0x01, want 0x00" in done.stdout


@pytest.mark.parametrize("dtype,shift,caught_by", [("uint8", 65536, "fill 3 of 3"),
                                                   ("float16", 1 << 15, "fill 2 of 2"),
                                                   ("bfloat16", 1 << 15, "fill 2 of 2")])
def test_an_element_read_from_a_position_with_the_same_low_digits_is_caught(dtype, shift,
                                                                            caught_by):
    done = probe("verify", dtype, 300, 300, "--shift", 2, 3, shift)
    assert done.returncode == 1
    assert f"({caught_by}): 1 of 90000 elements wrong; first at output row 2, col 3" in done.stdout


@pytest.mark.large_memory
def test_an_element_moved_by_2_pow_32_positions_is_caught():
    # 2 x (2^31 + 8) uint8: past 2^32 elements, 5 fills; only the fifth digit (bits 32-39 of the
    # position) differs between the right element and the one 2^32 further on.
    cols = (1 << 31) + 8
    skip_unless_memory(2 * 2 * cols)  # the input and the output
    done = probe("verify", "uint8", 2, cols, "--shift", 3, 0, 1 << 32)
    if done.returncode != 1 and "could not allocate" in done.stderr:
        pytest.skip(f"not enough memory: {done.stderr.strip()}")
    assert "verification FAILED (fill 5 of 5): 1 of 4294967312 elements wrong; first at output " \
           "row 3, col 0: got 0x01, want 0x00" in done.stdout, done.stdout + done.stderr


@pytest.mark.parametrize("dtype,count,fills", [
    ("uint8", 1, 1), ("uint8", 256, 1), ("uint8", 257, 2), ("uint8", 1 << 26, 4),
    ("uint8", (1 << 32) + 1, 5), ("float16", 1 << 15, 1), ("float16", (1 << 15) + 1, 2),
    ("float32", 1 << 31, 1), ("float32", (1 << 31) + 1, 2), ("float64", 1 << 40, 1),
    ("complex64", 1 << 40, 1), ("complex128", 1 << 40, 1)])
def test_fills_needed(dtype, count, fills):
    assert probe("fills", dtype, count).stdout.strip() == str(fills)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("start,count", [(0, 70_000), ((1 << 31) - 30_000, 60_000)])
def test_fill_values_are_safe_and_together_distinct(dtype, start, count):
    # Safe: every float part a normal number (cuBLAS's 1 * x + 0 gives back x's bits).
    done = probe("fill-distinct", dtype, start, count)
    assert done.returncode == 0, done.stdout


def test_csv_header_matches_the_python_reader():
    from transpose_lab.results_csv import COLUMNS
    done = probe("csv-header")
    assert done.stdout.strip().split(",") == list(COLUMNS)


@pytest.mark.parametrize("threads", [1, 3])
def test_streaming_and_plain_copies_are_exact_at_every_alignment(threads):
    # The CPU ceiling and the blocked transpose's copy-out: a short or misplaced write here
    # would flatter the ceiling or corrupt the output.
    done = probe("copies", env={"OMP_NUM_THREADS": str(threads)})
    assert done.returncode == 0, done.stdout + done.stderr
    assert done.stdout.strip() == f"{2 * 2 * 16 * 71} copies exact"


# The copy reference row (CUDA.copy) is verified as a copy. A copy and a transpose of a matrix
# that is neither 1 x N nor N x 1 differ almost everywhere: each verifier must reject the other's
# output, or a step with the wrong STEP_OPERATION would pass.

@pytest.mark.parametrize("dtype", DTYPES)
def test_copy_verifier_passes_a_copy_and_rejects_a_transpose(dtype):
    assert probe("verify-copy", dtype, 33, 17).returncode == 0
    done = probe("verify-copy", dtype, 33, 17, "--other-operation")
    assert done.returncode == 1 and "verification FAILED" in done.stdout


@pytest.mark.parametrize("dtype", DTYPES)
def test_transpose_verifier_rejects_a_copy(dtype):
    done = probe("verify", dtype, 33, 17, "--other-operation")
    assert done.returncode == 1 and "verification FAILED" in done.stdout


@pytest.mark.parametrize("dtype", ["uint8", "float16", "float32", "complex128"])
def test_copy_verifier_catches_one_wrong_element_at_its_output_position(dtype):
    done = probe("verify-copy", dtype, 33, 17, "--wrong", 20, 9)  # output is 33 x 17
    assert done.returncode == 1
    assert "1 of 561 elements wrong; first at output row 20, col 9" in done.stdout


def test_copy_verifier_catches_two_equal_bytes_swapped_by_the_other_fill():
    # Elements 0 and 256 of a uint8 copy hold the same byte in fill 0; fill 1 tells them apart.
    done = probe("verify-copy", "uint8", 2, 300, "--swap", 0, 0, 0, 256)
    assert done.returncode == 1 and "2 of 600 elements wrong" in done.stdout


def test_copy_verifier_catches_an_unwritten_element():
    done = probe("verify-copy", "bfloat16", 33, 17, "--unwritten", 32, 16)
    assert done.returncode == 1 and "first at output row 32, col 16" in done.stdout


@pytest.mark.parametrize("slower,kept", [("plain", "streaming"), ("streaming", "plain")])
def test_the_store_plan_keeps_the_faster_kind_once_per_work(slower, kept):
    # The first run of a work tries each kind twice, each kind's runs in a row (as a loop of
    # calls would run them), then runs with the faster; the same work again runs once, as
    # planned; another work plans again.
    done = probe("store-plan", slower)
    assert done.returncode == 0, done.stderr
    k = kept[0]
    assert done.stdout.splitlines() == [f"a: runs ppss{k}, {kept}", f"a: runs {k}, {kept}",
                                        f"b: runs ppss{k}, {kept}"]


@pytest.mark.parametrize("setting", ["on", "off"])
def test_a_forced_store_setting_skips_the_plan(setting):
    kind = "streaming" if setting == "on" else "plain"
    done = probe("store-plan", "plain", env={**os.environ, "LAB_STREAMING_STORES": setting})
    assert done.returncode == 0, done.stderr
    k = kind[0]
    assert done.stdout.splitlines() == [f"a: runs {k}, {kind}", f"a: runs {k}, {kind}",
                                        f"b: runs {k}, {kind}"]


def _ns_a_load(flush):
    done = probe("cache-flush", env={**os.environ, "LAB_CPU_FLUSH": flush})
    assert done.returncode == 0, done.stderr
    return float(done.stdout.split()[0])


def test_the_cpu_flush_sends_every_timed_run_to_memory():
    # A chase of dependent loads through 1 MiB, timed as the CPU drivers time a step: warm, each
    # load hits L2; with the flush before each timed run (the default), each waits for memory.
    # Several times slower flushed, or the flush left the lines in some cache. The warm chase is the
    # fastest of three runs: the tests beside it on a shared machine can only slow it (a warm run
    # once read 47 ns a load there, against 14 ns alone).
    warm, flushed = min(_ns_a_load("off") for _ in range(3)), _ns_a_load("on")
    assert flushed > 3 * warm, (warm, flushed)
