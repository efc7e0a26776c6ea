"""The CPU steps under AddressSanitizer, UndefinedBehaviorSanitizer and glibc's strictest buffer
checks (`make checked`, CHECK_FLAGS in common/toolchain.mk): a read or write past a buffer, a
misaligned access, an overflow, or a pointer that leaves its array ends the run with a report,
even where the transpose itself comes out exact. Small shapes of every path, every element type,
streaming and plain stores, several threads, all in one process a step."""
import os
import re
import subprocess

import pytest

from conftest import DTYPES, ROOT

# CPU.omp: one element, one row, one column; small primes; rows a multiple of a line and not;
# output bands (8191 x 8193 in small: a step that is also the last, several steps, columns past
# the last band); shapes too narrow or short for a band; a band cut short; two pieces of work.
MATRIX_SHAPES = [(1, 1), (1, 1000), (1000, 1), (17, 19), (64, 80), (300, 301), (129, 1031),
                 (1031, 129), (275, 389), (3, 1000), (1000, 3), (257, 8195), (1000, 1025)]

# PERMUTE.omp: one of each of its paths (runs copied whole, tiles, small planes, tiles of runs,
# short sides, reversals up to 8 axes) in small.
PERMUTE_CASES = [
    ("1000", "0"),
    ("4,6,1001", "1,0,2"),
    ("2,3,56,56", "0,2,3,1"),
    ("2,56,56,3", "0,3,1,2"),
    ("33,17,19", "0,2,1"),
    ("2,5,17,19", "0,1,3,2"),
    ("7,3,1000", "0,2,1"),
    ("16,3,16,2,16,16", "5,3,1,4,0,2"),
    ("5,3,48,64", "3,1,0,2"),
    ("48,5,48", "2,1,0"),
    ("96,7,9,96", "3,2,1,0"),
    ("2,3,2,3,2,3,2,3", "7,6,5,4,3,2,1,0"),
    ("129,1031", "1,0"),
]

SANITIZER_REPORT = ("AddressSanitizer", "runtime error", "buffer overflow detected")
VERIFIED_ROW = re.compile(r"^  (naive|blocked) .* verified$", re.M)  # a variant's timed row


def checked_binary(step):
    """Builds the step's checked program once; skips in one line where the compiler has no
    sanitizers."""
    done = subprocess.run(["make", "-s", "-C", str(ROOT / step), "checked"], capture_output=True,
                          text=True)
    if done.returncode != 0 and any(word in done.stderr for word in ("sanitize", "asan", "ubsan")):
        pytest.skip(f"{step}: the compiler cannot build with sanitizers: "
                    f"{done.stderr.strip().splitlines()[-1]}")
    assert done.returncode == 0, done.stderr
    return ROOT / step / ".build" / "transpose_checked"


def run_checked(binary, cases, stores, tmp_path):
    cases_file = tmp_path / f"cases_{stores}"
    cases_file.write_text("".join(" ".join(case) + "\n" for case in cases))
    env = dict(os.environ, OMP_NUM_THREADS="3", LAB_STREAMING_STORES=stores)
    done = subprocess.run([str(binary), "--reps", "1", "--cases", str(cases_file)],
                          capture_output=True, text=True, env=env, timeout=1800)
    reports = [line for line in done.stderr.splitlines()
               if any(word in line for word in SANITIZER_REPORT)]
    assert not reports, done.stderr[-4000:]
    assert done.returncode == 0, done.stderr[-4000:]
    return done.stdout


@pytest.mark.parametrize("stores", ["on", "off"])
def test_cpu_omp_is_clean_under_the_sanitizers(stores, tmp_path):
    binary = checked_binary("CPU.omp")
    cases = [(str(rows), str(cols), "--dtype", dtype)
             for dtype in DTYPES for rows, cols in MATRIX_SHAPES]
    out = run_checked(binary, cases, stores, tmp_path)
    assert len(VERIFIED_ROW.findall(out)) == 2 * len(cases)  # naive and blocked, every case


@pytest.mark.parametrize("stores", ["on", "off"])
def test_permute_omp_is_clean_under_the_sanitizers(stores, tmp_path):
    binary = checked_binary("PERMUTE.omp")
    cases = [("--shape", shape, "--perm", perm, "--dtype", dtype)
             for dtype in DTYPES for shape, perm in PERMUTE_CASES]
    out = run_checked(binary, cases, stores, tmp_path)
    assert len(VERIFIED_ROW.findall(out)) == len(cases)
