"""Chapter 3, N-d permutations: every step verified exactly on every type and a set of shapes and
permutations (the CPU step here, the GPU steps where a GPU is), bad input refused in one line,
axis fusion as --explain prints it, the verifier shown to catch planted wrong outputs (through
tests/permute_probe.cpp, which links common/permute.cpp), and the chapter kept apart from the
matrix targets."""
import csv
import itertools
import math
import os
import random
import subprocess
import sys

import pytest

from conftest import (run_case, DTYPES, EXIT_NO_MEMORY, EXIT_SKIPPED, EXIT_USAGE, PERMUTE_CUDA_STEPS,
                      ROOT, binary, gpu_is_here, gpu_unavailable_reason, run,
                      steps_from_makefile)
from transpose_lab import permute_cases

PERMUTE_STEPS = steps_from_makefile("PERMUTE_STEPS")
PERMUTE_CPU_STEPS = steps_from_makefile("PERMUTE_CPU_STEPS")
CPU_STEP = PERMUTE_CPU_STEPS[0]

# (shape, perm): 1-d, identity, 2-d, every perm of a 3-d shape, NCHW <-> NHWC, extents of 1,
# primes, 8-d, and one with more than 256 elements that takes two fills for uint8.
CASES = [
    ("7", "0"),
    ("3,4,5", "0,1,2"),
    ("33,17", "1,0"),
    *[("5,6,7", ",".join(map(str, p))) for p in itertools.permutations(range(3))],
    ("2,3,8,9", "0,2,3,1"),
    ("2,8,9,3", "0,3,1,2"),
    ("1,5,1,7", "3,1,2,0"),
    ("1,1", "1,0"),
    ("13,7,11", "1,2,0"),
    ("2,3,2,3,2,3,2,2", "7,5,3,1,0,2,4,6"),
    ("17,19,3", "2,0,1"),
]


def case_id(case):
    return f"{case[0].replace(',', 'x')}:{case[1].replace(',', '')}"


def elements(shape):
    count = 1
    for extent in shape.split(","):
        count *= int(extent)
    return count


def csv_rows(csv_path):
    with open(csv_path, newline="") as handle:
        return list(csv.DictReader(handle))


def check_verified_run(done, shape, perm, dtype, rows, kind):
    assert done.returncode == 0, done.stdout + done.stderr
    count = elements(shape)
    assert f"verified: all {count} elements bitwise equal to the definition" in done.stdout
    assert "last timed" in done.stdout and "FAILED" not in done.stdout
    assert len(rows) == 1
    row = rows[0]
    assert (row["shape"], row["perm"], row["dtype"]) == (shape.replace(",", "x"), perm, dtype)
    assert row["verified"] == "yes" and row["kind"] == kind
    assert int(row["rows"]) * int(row["cols"]) == count  # the bytes the bandwidth counts


def check_cpu_case(case, dtype, tmp_path, threads, reps=1, stores=None):
    """PERMUTE.omp on one case: exit 0, every element verified, its one CSV row."""
    shape, perm = case
    csv_path = tmp_path / "permute.csv"
    done = run(CPU_STEP, "--shape", shape, "--perm", perm, "--dtype", dtype, "--reps", reps,
               "--csv", csv_path, threads=threads,
               env_extra={"LAB_STREAMING_STORES": stores} if stores else None)
    check_verified_run(done, shape, perm, dtype, csv_rows(csv_path), "cpu")


# Input rows of a tile a multiple of 4 KiB apart (a row stride of 4096 elements): PERMUTE.omp moves
# those tiles through a buffer (move_tile_buffered); whole tiles and partial ones.
SHARED_SET_CASES = [("3,64,64", "2,1,0"), ("130,2,2048", "2,1,0"), ("2,3,4096", "0,2,1")]


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("case", CASES + SHARED_SET_CASES, ids=case_id)
def test_cpu_step_is_exact_on_every_type(case, dtype, tmp_path):
    check_cpu_case(case, dtype, tmp_path, threads=2)


# With streaming stores (forced on: by default the store plan takes them where they are faster)
# PERMUTE.omp writes each whole 64-byte line of an output row of 4-, 8- or 16-byte elements past
# the cache, and the ragged ends plainly: output rows that start on a line and end inside one
# (70 x 300), that start inside one (the 67-element rows of 5x129x67), rows shorter than a line
# (3 channels), whole and partial tiles, with and without the buffered tile.
STREAMING_CASES = [("70,300", "1,0"), ("5,129,67", "0,2,1"), ("3,64,64", "2,1,0"),
                   ("130,2,2048", "2,1,0"), ("2,3,4096", "0,2,1"), ("16,8,16,8,16", "4,2,0,3,1")]


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("case", STREAMING_CASES, ids=case_id)
def test_cpu_step_is_exact_with_streaming_stores(case, dtype, tmp_path):
    check_cpu_case(case, dtype, tmp_path, threads=3, stores="on")


# Elements of up to 4 bytes move through PERMUTE.omp's tiles in blocks transposed in registers:
# 16 bytes along b (16 rows of bytes, 8 of 2-byte elements, 4 of 4-byte ones) by one vector along
# a (32 bytes with AVX2, then 16-byte blocks for the rest of a, 16 with SSE2 alone); the rows past
# the last whole block of b and the columns past the last block of a go one element at a time.
# Counted for bytes (tiles of 128): ragged blocks both ways (37 x 53), one block a way and a piece
# of the next (17 x 49), several tiles with a last one too short along b for a block (131 x 150),
# whole wide and narrow blocks (64 x 48), a tile narrower than any block (40 x 9), the buffered
# tile (input rows 4 KiB apart), and a 4-d permutation; with plain stores and streaming ones.
REGISTER_BLOCK_CASES = [("3,37,53", "0,2,1"), ("2,17,49", "0,2,1"), ("2,131,150", "0,2,1"),
                        ("2,64,48", "0,2,1"), ("3,40,9", "0,2,1"), ("2,40,4096", "0,2,1"),
                        ("37,3,4096", "2,1,0"), ("5,33,3,35", "2,0,3,1")]


@pytest.mark.parametrize("stores", ["on", "off"])
@pytest.mark.parametrize("dtype", ["uint8", "float16", "bfloat16", "float32"])
@pytest.mark.parametrize("case", REGISTER_BLOCK_CASES, ids=case_id)
def test_cpu_step_register_blocks_are_exact_on_ragged_tiles(case, dtype, stores, tmp_path):
    check_cpu_case(case, dtype, tmp_path, threads=2, reps=2, stores=stores)


# A plane with a side under 8 elements moves in tiles of that side whole by a long stretch of the
# other: 3 to 7 input rows interleaved into one output run (NCHW to NHWC), one input run spread
# over 2 to 7 output rows (the way back), several tiles along the long side with a ragged last
# one, both sides short, and short sides whose runs lie apart (the square tiles' loop, longer).
SHORT_SIDE_CASES = [("2,3,20000", "0,2,1"), ("3,7,2500", "0,2,1"), ("2,20000,3", "0,2,1"),
                    ("3,2500,2", "0,2,1"), ("100,3,5", "0,2,1"), ("4,3,1000", "2,1,0"),
                    ("3,1000,5", "2,1,0"), ("4,3,56,56", "0,2,3,1")]


@pytest.mark.parametrize("stores", ["on", "off"])
@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("case", SHORT_SIDE_CASES, ids=case_id)
def test_cpu_step_is_exact_on_short_plane_sides(case, dtype, stores, tmp_path):
    check_cpu_case(case, dtype, tmp_path, threads=3, reps=2, stores=stores)


# Where the input's or the output's innermost axis is short, PERMUTE.omp's tile takes the axes just
# outside it too (tiles of runs): whole axes (6 x 5 x 6), an axis split to a divisor that fills the
# tile (300 = 10 x 30), the 6-d permutation's pattern on small extents, a reversal, sides longer
# than a tile with a ragged last one (1000 rows), prime extents, and runs of moved rows (0,2,1,3).
RUNS_TILE_CASES = [("4,6,5,6", "3,2,1,0"), ("30,300,5", "2,1,0"), ("4,6,4,6,4,4", "5,3,1,4,0,2"),
                   ("12,12,12,12", "3,2,1,0"), ("1000,3,40", "2,1,0"),
                   ("7,5,3,11,13", "4,1,3,0,2"), ("3,33,5,48", "0,2,1,3"), ("2,7,3,5", "0,2,1,3")]


@pytest.mark.parametrize("stores", ["on", "off"])
@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("case", RUNS_TILE_CASES, ids=case_id)
def test_cpu_step_is_exact_on_tiles_of_runs(case, dtype, stores, tmp_path):
    check_cpu_case(case, dtype, tmp_path, threads=3, reps=2, stores=stores)


# Where the input's innermost axes together are the output's innermost (a batch of small planes),
# PERMUTE.omp moves planes of 1- and 2-byte elements as units, 16 / element size at a time
# (moved_units): whole groups (64 planes), a last group short (37), fewer planes than a group of
# bytes (15), planes of 21 bytes and of one vector (3 x 7, 2 x 8), the largest unit of bytes
# (31 x 33, past it for 2-byte elements), planes of whole register blocks (tiles instead), two
# batch axes moved too, and a unit of three axes; 4-byte elements take the tiles on the same shapes.
UNIT_CASES = [("64,17,19", "0,2,1"), ("37,17,19", "0,2,1"), ("15,17,19", "0,2,1"),
              ("40,3,7", "0,2,1"), ("40,2,8", "0,2,1"), ("20,31,33", "0,2,1"),
              ("20,32,32", "0,2,1"), ("16,24,20", "0,2,1"), ("3,5,17,19", "1,0,3,2"),
              ("30,3,5,7", "0,3,1,2")]


@pytest.mark.parametrize("stores", ["on", "off"])
@pytest.mark.parametrize("dtype", ["uint8", "float16", "bfloat16", "float32"])
@pytest.mark.parametrize("case", UNIT_CASES, ids=case_id)
def test_cpu_step_is_exact_on_batches_of_small_planes(case, dtype, stores, tmp_path):
    check_cpu_case(case, dtype, tmp_path, threads=3, reps=2, stores=stores)


# Units' tables are worked out once a problem and kept (unit_tables): in one process, each problem
# must find its own. The first two units have the same extents in output order (3, 2, 3, 2) and
# other input strides; then planes of 17 x 19 and 19 x 17, and 17 x 19 again in another batch.
KEPT_UNIT_CASES = [("32,2,2,3,3", "0,3,1,4,2"), ("32,2,2,3,3", "0,4,1,3,2"), ("64,17,19", "0,2,1"),
                   ("64,19,17", "0,2,1"), ("2,64,17,19", "1,0,3,2")]


@pytest.mark.parametrize("dtype", ["uint8", "float16"])
def test_cpu_step_keeps_each_units_tables_apart(dtype, tmp_path):
    cases = tmp_path / "cases"
    cases.write_text("".join(f"--shape {shape} --perm {perm}\n" for shape, perm in KEPT_UNIT_CASES))
    csv_path = tmp_path / "permute.csv"
    done = run(CPU_STEP, "--dtype", dtype, "--reps", 2, "--cases", cases, "--csv", csv_path,
               threads=2)
    assert done.returncode == 0, done.stdout + done.stderr
    rows = csv_rows(csv_path)
    assert len(rows) == len(KEPT_UNIT_CASES) and all(row["verified"] == "yes" for row in rows)


def test_uint8_past_256_elements_takes_two_fills():
    done = run(CPU_STEP, "--shape", "17,19,3", "--perm", "2,0,1", "--dtype", "uint8", "--reps", 1)
    assert done.returncode == 0, done.stderr
    assert "over 2 fills" in done.stdout


def test_rows_cols_is_the_short_form_of_a_transpose(tmp_path):
    done = run(CPU_STEP, 37, 53, "--reps", 1, "--csv", tmp_path / "p.csv")
    check_verified_run(done, "37,53", "1,0", "float32", csv_rows(tmp_path / "p.csv"), "cpu")


BAD_INPUT = [
    (["--shape", "3,4", "--perm", "0,0"], "not a permutation"),
    (["--shape", "3,4", "--perm", "0,2"], "not a permutation"),
    (["--shape", "3,4", "--perm", "1,-0"], "not a permutation"),
    (["--shape", "3,4", "--perm", "1"], "has 1 axes and --shape"),
    (["--shape", "3,4,5", "--perm", "0,1"], "has 2 axes and --shape"),
    (["--shape", "3,0", "--perm", "1,0"], "must be at least 1"),
    (["--shape", "3,-4", "--perm", "1,0"], "positive whole number"),
    (["--shape", "3,x", "--perm", "1,0"], "positive whole number"),
    (["--shape", "3,4 ", "--perm", "1,0"], "positive whole number"),
    (["--shape", "3,,4", "--perm", "0,1,2"], "empty field"),
    (["--shape", "1,2,3,4,5,6,7,8,9", "--perm", "0,1,2,3,4,5,6,7,8"], "at most 8"),
    (["--shape", "4294967296,4294967296", "--perm", "1,0"], "bytes"),
    (["--shape", "3,4"], "--shape needs --perm"),
    (["--perm", "1,0"], "--perm needs --shape"),
    (["5", "--shape", "3,4", "--perm", "1,0"], "not both"),
    (["--shape", "3,4", "--perm", "1,0", "--dtype", "int4"], "unknown --dtype"),
    (["--shape", "3,4", "--perm", "1,0", "--reps", "0"], "at least 1"),
    (["--bogus"], "unknown option"),
]


@pytest.mark.parametrize("step", PERMUTE_STEPS)
@pytest.mark.parametrize("arguments,reason", BAD_INPUT, ids=lambda a: " ".join(a)
                         if isinstance(a, list) else "")
def test_bad_input_is_one_line_and_exit_2(step, arguments, reason):
    if not binary(step).exists():
        pytest.skip(f"{step} is not built (no nvcc?)")
    done = run(step, *arguments)  # parsing comes first: the GPU steps refuse without a GPU too
    assert done.returncode == EXIT_USAGE, done.stdout + done.stderr
    assert done.stdout == ""
    lines = done.stderr.splitlines()
    assert len(lines) == 1 and "error:" in lines[0] and reason in lines[0], done.stderr


def test_too_large_for_memory_names_the_bytes():
    done = run(CPU_STEP, "--shape", "200000,200000,10", "--perm", "2,1,0")
    assert done.returncode == EXIT_NO_MEMORY, done.stderr
    lines = done.stderr.splitlines()
    assert len(lines) == 1 and "3200000000000 bytes" in lines[0]


def test_help_prints_the_usage():
    done = run(CPU_STEP, "--help")
    assert done.returncode == 0 and done.stdout.startswith("usage:")
    assert "--shape" in done.stdout and "--perm" in done.stdout


# --explain: the problem after axis fusion (extents of 1 dropped, neighbours in both orders merged).
FUSIONS = [
    ("64,3,224,224", "0,2,3,1", "64x3x50176", "0,2,1", "a batch of 64 transposes of 3 x 50176"),
    ("64,224,224,3", "0,3,1,2", "64x50176x3", "0,2,1", "a batch of 64 transposes of 50176 x 3"),
    ("3,4,5", "0,1,2", "60", "0", "a copy of 60 elements"),
    ("1,1", "1,0", "1", "0", "a copy of 1 elements"),
    ("1,5,1,7", "3,1,2,0", "5x7", "1,0", "a transpose of 5 x 7"),
    ("2,3,4,5", "2,3,0,1", "6x20", "1,0", "a transpose of 6 x 20"),
    ("8,512,16,64", "0,2,1,3", "8x512x16x64", "0,2,1,3", "runs of 64 contiguous elements"),
    ("512,512,512", "2,1,0", "512x512x512", "2,1,0", "a permutation of 3 axes"),
    ("2,1,3,4,1,5", "4,5,3,2,0,1", "2x3x4x5", "3,2,1,0", "a permutation of 4 axes"),
]


@pytest.mark.parametrize("shape,perm,fused_shape,fused_perm,what", FUSIONS,
                         ids=lambda v: str(v).replace(",", "."))
def test_explain_prints_the_fused_problem(shape, perm, fused_shape, fused_perm, what):
    for step in PERMUTE_STEPS:  # no GPU is needed to explain
        if not binary(step).exists():
            continue
        done = run(step, "--shape", shape, "--perm", perm, "--explain")
        assert done.returncode == 0, done.stderr
        assert f"fuses to shape {fused_shape} perm {fused_perm}: {what}" in done.stdout


# --- The verifier itself, on outputs made right or planted wrong by tests/permute_probe.cpp.

def build_probe(name):
    """tests/NAME.cpp linked with the chapter's common/ sources, built into tests/.build/NAME."""
    out = ROOT / "tests" / ".build" / name
    out.parent.mkdir(parents=True, exist_ok=True)
    parts = ("permute", "cli", "matrix", "dtype", "report", "host_memory")
    sources = [f"tests/{name}.cpp"] + [f"common/{part}.cpp" for part in parts]
    # Built under a name of its own, then renamed: test workers that build it at the same time
    # never run a half-written file.
    scratch = out.with_name(f"{name}.{os.getpid()}")
    built = subprocess.run(["g++", "-O2", "-std=c++17", "-Wall", "-Wextra", "-Werror",
                            "-fopenmp", *sources, "-o", str(scratch)], cwd=ROOT,
                           capture_output=True, text=True)
    assert built.returncode == 0, built.stderr
    os.replace(scratch, out)
    return out


@pytest.fixture(scope="module")
def probe():
    out = build_probe("permute_probe")

    def run_probe(mode, dtype, shape, perm):
        return subprocess.run([str(out), mode, dtype, shape, perm], capture_output=True,
                              text=True, timeout=120)
    return run_probe


@pytest.mark.parametrize("dtype", DTYPES)
def test_a_wrong_permutation_fails_verification(probe, dtype):
    done = probe("swapped", dtype, "17,19,3", "2,0,1")
    assert done.returncode == 1, done.stdout + done.stderr
    assert "verification FAILED" in done.stdout and "first at output index (" in done.stdout


@pytest.mark.parametrize("dtype", DTYPES)
def test_one_misplaced_element_is_caught_and_named(probe, dtype):
    done = probe("misplaced", dtype, "17,19,3", "2,0,1")
    assert done.returncode == 1, done.stdout + done.stderr
    assert "1 of 969 elements wrong; first at output index (0, 0, 0): got" in done.stdout


@pytest.mark.parametrize("dtype", DTYPES)
def test_one_unwritten_element_is_caught(probe, dtype):
    done = probe("unwritten", dtype, "17,19,3", "2,0,1")
    assert done.returncode == 1, done.stdout + done.stderr
    assert "1 of 969 elements wrong; first at output index (2, 16, 18)" in done.stdout


def random_cases(count, seed, max_elements):
    """Seeded shapes of rank 1 to 8 with random permutations, at most max_elements each."""
    rng = random.Random(seed)
    cases = []
    while len(cases) < count:
        rank = rng.randint(1, 8)
        shape = [rng.choice([1, 2, 3, 5, 7, 16, 17, 33]) for _ in range(rank)]
        if elements(",".join(map(str, shape))) > max_elements:
            continue
        perm = list(range(rank))
        rng.shuffle(perm)
        cases.append((",".join(map(str, shape)), ",".join(map(str, perm)),
                      rng.choice(DTYPES)))
    return cases


@pytest.mark.parametrize("shape,perm,dtype", random_cases(40, seed=3, max_elements=1 << 16))
def test_the_verifier_agrees_with_an_independent_scatter(probe, shape, perm, dtype):
    done = probe("right", dtype, shape, perm)
    assert done.returncode == 0, done.stdout + done.stderr


# --- The GPU steps, on the same cases, where a GPU is.

@pytest.mark.batched
@pytest.mark.parametrize("step", PERMUTE_CUDA_STEPS)
@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("case", CASES, ids=case_id)
def test_gpu_steps_are_exact_on_every_type(step, case, dtype, needs_gpu):
    done = check_gpu_case(step, case, dtype, itertools.product(CASES, DTYPES), reps=2)
    assert "last end-to-end run (fill 1): verified" in done.stdout


RANDOM_GPU_CASES = random_cases(300, seed=7, max_elements=1 << 20)


@pytest.mark.batched
@pytest.mark.parametrize("step", PERMUTE_CUDA_STEPS)
@pytest.mark.parametrize("shape,perm,dtype", RANDOM_GPU_CASES)
def test_gpu_steps_on_random_shapes(step, shape, perm, dtype, needs_gpu):
    check_gpu_case(step, (shape, perm), dtype,
                   [((s, p), d) for s, p, d in RANDOM_GPU_CASES], reps=1)


@pytest.mark.parametrize("step", PERMUTE_CUDA_STEPS)
def test_gpu_steps_without_a_gpu_say_so_in_one_line(step):
    if not binary(step).exists():
        pytest.skip(f"{step} is not built (no nvcc?)")
    if gpu_is_here():
        pytest.skip("a GPU is here")
    done = run(step, "--shape", "3,4", "--perm", "1,0")
    assert done.returncode == EXIT_SKIPPED
    assert done.stderr.splitlines() == [f"{step}: skipped: no CUDA device (no NVIDIA GPU found)"]


# --- The chapter apart from the matrix targets.

def test_chapter_3_steps_stay_out_of_the_matrix_lists():
    for variable in ("PROGRESSION", "STEPS", "CPU_STEPS", "CUDA_STEPS", "REFERENCE_STEPS",
                     "DTYPES_STEPS", "SANITIZE_STEPS", "LAST_STEP"):
        assert not set(steps_from_makefile(variable)) & set(PERMUTE_STEPS), variable
    assert set(PERMUTE_STEPS) <= set(steps_from_makefile("ALL_STEPS"))  # make all builds them


def make(*args):
    return subprocess.run(["make", "--no-print-directory", "-C", str(ROOT), *args],
                          capture_output=True, text=True, timeout=120)


def test_make_diff_of_the_fused_step_is_the_line_that_fuses():
    done = make("diff", "STEP=PERMUTE.v2_fused")
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("# PERMUTE.v2_fused against PERMUTE.v1_naive")
    code = [line for line in done.stdout.split("\n# the code", 1)[1].splitlines()
            if line[:1] in ("+", "-") and not line.startswith(("+++", "---"))]
    assert any("fuse_axes" in line for line in code)
    assert len(code) <= 4, code  # the fusing line and the summary


def test_the_named_cases_are_the_layouts_users_move():
    named = set(permute_cases.CASES.values())
    for shape, perm in [("64,64,56,56", "0,2,3,1"), ("64,56,56,64", "0,3,1,2"),
                        ("256,3,224,224", "0,2,3,1"), ("256,224,224,3", "0,3,1,2"),
                        ("32,512,16,64", "0,2,1,3"), ("4096,64,64", "0,2,1"),
                        ("4096,3,1000", "0,2,1"), ("4096,17,19", "0,2,1"),
                        ("512,512,512", "2,1,0")]:
        assert (shape, perm) in named
    six = [(s, p) for s, p in named if p == "5,3,1,4,0,2"]
    assert len(six) == 1 and math.prod(map(int, six[0][0].split(","))) == 1 << 26


def test_make_permute_runner_writes_the_cases_to_one_csv(tmp_path):
    csv_path = tmp_path / "permute.csv"
    done = subprocess.run([sys.executable, "-m", "transpose_lab.permute_cases", "--steps",
                           *PERMUTE_STEPS, "--cases", "batched-17x19", "--dtypes", "uint8",
                           "--reps", "1", "--csv", str(csv_path)],
                          capture_output=True, text=True, cwd=ROOT, timeout=600)
    assert done.returncode == 0, done.stdout + done.stderr
    with open(csv_path, newline="") as handle:
        rows = list(csv.DictReader(handle))
    steps = {row["step"] for row in rows}
    assert CPU_STEP in steps and all(row["verified"] == "yes" for row in rows)
    shape, perm = permute_cases.CASES["batched-17x19"]
    assert {(row["shape"], row["perm"]) for row in rows} == {(permute_cases.shape_column(shape),
                                                              perm)}
    if gpu_unavailable_reason() is None:
        assert steps == set(PERMUTE_STEPS)
    else:
        assert "skipped" in done.stdout


@pytest.mark.parametrize("step", PERMUTE_STEPS)
def test_the_grader_refuses_chapter_3_in_one_line(step):
    done = subprocess.run([sys.executable, "-m", "transpose_lab.grader", step],
                          capture_output=True, text=True, cwd=ROOT, timeout=120)
    assert done.returncode == EXIT_USAGE, done.stdout + done.stderr
    lines = done.stderr.splitlines()
    assert len(lines) == 1 and "the grader checks the matrix steps" in lines[0], done.stderr
    assert "tests/test_permute.py" in lines[0] and "make permute" in lines[0]
    from transpose_lab.grader import known_steps
    assert not set(known_steps()) & set(PERMUTE_STEPS)


# --- PERMUTE.v3_tiled's index arithmetic on the host (tests/permute_plan_probe.cpp includes the
# step's own plan.hpp and fast_division.hpp), and its edges on the GPU.

# Tile edges (innermost extents 1, 2, 31, 33, 63, 65, primes) and grids past 65535 blocks: batches
# (z), tile rows (y), runs (y) and run pieces or tile columns (x) that loop.
EDGE_CASES = [
    ("31,33", "1,0"), ("33,31", "1,0"), ("63,65", "1,0"), ("65,63", "1,0"), ("2,1", "1,0"),
    ("1,2", "1,0"), ("5,7,1", "2,1,0"), ("97,89,3", "2,0,1"), ("13,127,61", "1,2,0"),
    ("65,63,31,33", "3,1,0,2"), ("2,5,3,33", "1,0,3,2"), ("17,2,19,2", "2,3,0,1"),
]
LARGE_GRID_CASES = [
    ("70000,2,3", "0,2,1"), ("3,70001,2", "2,1,0"), ("600000,2,3", "1,0,2"),
    ("3000000,3", "1,0"), ("3,3000000", "1,0"), ("2,2,9000000", "1,0,2"),
    # Runs of 4: complex128's 4 vectors a run pass 65535 blocks of 1024 vectors by 1032.
    ("3,5592406,4", "1,0,2"),
]


def probe_runner(name):
    """tests/NAME.cpp built (build_probe), as a function of its arguments that runs it."""
    out = build_probe(name)

    def run_probe(*args):
        return subprocess.run([str(out), *map(str, args)], capture_output=True, text=True,
                              timeout=300)
    return run_probe


@pytest.fixture(scope="module")
def plan_probe():
    return probe_runner("permute_plan_probe")


def test_fast_division_equals_division(plan_probe):
    done = plan_probe("division")
    assert done.returncode == 0, done.stdout + done.stderr
    assert "quotients by" in done.stdout and "equal to /" in done.stdout


# The kernel's cap, and a cap of 2 blocks a grid axis so that every loop of the kernels turns.
PLAN_CASES = ([(s, p, "uint8", cap) for s, p in CASES + EDGE_CASES for cap in (65535, 2)]
              + [(s, p, "uint8", 65535) for s, p in LARGE_GRID_CASES]
              + [(s, p, d, 3) for s, p, d in random_cases(100, seed=7, max_elements=1 << 20)])


@pytest.mark.parametrize("shape,perm,dtype,cap", PLAN_CASES)
def test_the_tiled_plan_moves_every_element_where_the_definition_says(plan_probe, shape, perm,
                                                                      dtype, cap):
    done = plan_probe("plan", dtype, shape, perm, cap)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "bitwise equal to the definition" in done.stdout


def test_the_plan_probe_refuses_bad_input_in_one_line(plan_probe):
    done = plan_probe("plan", "float32", "0,2", "1,0", 1)
    assert done.returncode == EXIT_USAGE and done.stderr.count("\n") == 1


@pytest.mark.batched
@pytest.mark.parametrize("step", PERMUTE_CUDA_STEPS)
@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("case", EDGE_CASES, ids=case_id)
def test_gpu_steps_are_exact_on_tile_edges(step, case, dtype, needs_gpu):
    check_gpu_case(step, case, dtype, itertools.product(EDGE_CASES, DTYPES), reps=2)


def gpu_case_arguments(case, dtype):
    shape, perm = case
    return ["--shape", shape, "--perm", perm, "--dtype", dtype]


def check_gpu_case(step, case, dtype, batch, reps):
    """One verified run of a GPU step on (shape, perm), its CSV row checked: made by one process
    that runs every (case, dtype) of `batch` (conftest.run_case)."""
    done = run_case(step, gpu_case_arguments(case, dtype),
                    [gpu_case_arguments(c, d) for c, d in batch], "--reps", reps)
    check_verified_run(done, *case, dtype, done.rows, "kernel")
    return done


THREE_SIZES = ["uint8", "float32", "complex128"]


@pytest.mark.batched
@pytest.mark.parametrize("step", PERMUTE_CUDA_STEPS)
@pytest.mark.parametrize("dtype", THREE_SIZES)
@pytest.mark.parametrize("case", LARGE_GRID_CASES, ids=case_id)
def test_gpu_steps_are_exact_past_65535_blocks(step, case, dtype, needs_gpu):
    check_gpu_case(step, case, dtype, itertools.product(LARGE_GRID_CASES, THREE_SIZES), reps=1)


# --- PERMUTE.v4_small_planes's plan on the host (the same probe, mode `small`: v4's launcher
# replayed, its own kernel where a plane axis is short, v3's elsewhere).

# The named cases where a plane axis is short, and the tile each gets (the rest keep v3's).
SMALL_PLANE_NAMED = {
    "nchw-to-nhwc-rgb": "tiles of 1 planes x 3 x 320 along the columns, 157 tiles x batch of 256",
    "nhwc-to-nchw-rgb": "tiles of 1 planes x 320 x 3 along the rows, 157 tiles x batch of 256",
    "batched-3x1000": "tiles of 1 planes x 3 x 256 along the columns, 4 tiles x batch of 4096",
    "batched-17x19": "tiles of 3 planes x 17 x 19 along the planes, 1366 tiles x batch of 1",
    "six-axes": "tiles of 4 planes x 16 x 16 along the planes, 4 tiles x batch of 16384",
}
SHORT_EXTENTS = [1, 2, 3, 16, 17, 31, 32, 33]
# A short axis against a long one, each way; two short axes with batches that are no multiple of
# the planes a tile holds (7, 1001); a long axis just past a tile's chunk; planes across the batch.
SMALL_PLANE_EDGES = (
    [(f"5,{s},1000", "0,2,1") for s in SHORT_EXTENTS]
    + [(f"5,1000,{s}", "0,2,1") for s in SHORT_EXTENTS]
    + [(f"{b},{r},{c}", "0,2,1") for b in (7, 1001) for r in SHORT_EXTENTS for c in (2, 17, 33)]
    + [("3,50177", "1,0"), ("50177,3", "1,0"), ("2,31,34", "0,2,1"), ("3,3,31,34", "1,0,3,2"),
       ("5,16,3,16", "3,0,1,2"), ("3,16,5,16", "0,3,1,2"), ("2,17,3,19,2", "4,2,1,0,3")])


def small_plane_random_cases(count, seed):
    """Seeded shapes of rank 2 to 6 whose extents are the edges of a short axis, and a few long."""
    rng = random.Random(seed)
    cases = []
    while len(cases) < count:
        shape = [rng.choice(SHORT_EXTENTS + [5, 64, 100, 1000]) for _ in range(rng.randint(2, 6))]
        if elements(",".join(map(str, shape))) > 1 << 20:
            continue
        perm = list(range(len(shape)))
        rng.shuffle(perm)
        cases.append((",".join(map(str, shape)), ",".join(map(str, perm)), rng.choice(DTYPES)))
    return cases


@pytest.mark.parametrize("name", permute_cases.CASES)
def test_the_named_cases_take_the_small_planes_tile_where_a_plane_axis_is_short(plan_probe, name):
    shape, perm = permute_cases.CASES[name]
    done = plan_probe("small", "float32", shape, perm, 65535)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "bitwise equal to the definition" in done.stdout
    if name in SMALL_PLANE_NAMED:
        assert SMALL_PLANE_NAMED[name] in done.stdout, done.stdout
        # Every sector a warp touches is full, as a copy's, where the element is 4 bytes and the
        # tiles start on a sector (not the 17 x 19 planes: 969 elements a tile).
        if name != "batched-17x19":
            assert "sectors used 100.0% loading, 100.0% storing" in done.stdout, done.stdout
    else:
        assert done.stdout.startswith("small planes not used, v3's kernels"), done.stdout


SMALL_PLAN_CASES = ([(s, p, "uint8", cap) for s, p in SMALL_PLANE_EDGES for cap in (65535, 2)]
                    + [(s, p, d, 2) for s, p in SMALL_PLANE_EDGES[:16] for d in ("float16",
                                                                                 "complex128")]
                    + [(s, p, d, 3) for s, p, d in small_plane_random_cases(80, seed=11)]
                    + [(s, p, d, 3) for s, p, d in random_cases(40, seed=7, max_elements=1 << 20)])


@pytest.mark.parametrize("shape,perm,dtype,cap", SMALL_PLAN_CASES)
def test_the_small_planes_plan_moves_every_element_where_the_definition_says(plan_probe, shape,
                                                                             perm, dtype, cap):
    done = plan_probe("small", dtype, shape, perm, cap)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "bitwise equal to the definition" in done.stdout
    assert "WRONG" not in done.stdout


def test_make_diff_of_the_small_planes_step_is_its_kernel():
    done = make("diff", "STEP=PERMUTE.v4_small_planes")
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("# PERMUTE.v4_small_planes against PERMUTE.v3_tiled")
    added = [line for line in done.stdout.splitlines() if line.startswith("+")]
    assert any("small_planes_of" in line for line in added)
    assert any("launch_reused_permute" in line for line in added)  # v3's linked, not copied


@pytest.mark.batched
@pytest.mark.parametrize("step", PERMUTE_CUDA_STEPS)
@pytest.mark.parametrize("dtype", THREE_SIZES)
@pytest.mark.parametrize("case", SMALL_PLANE_EDGES, ids=case_id)
def test_gpu_steps_are_exact_on_short_plane_axes(step, case, dtype, needs_gpu):
    check_gpu_case(step, case, dtype, itertools.product(SMALL_PLANE_EDGES, THREE_SIZES), reps=1)


# --- PERMUTE.v5_packed: 16-byte blocks where every vector of the plane is whole and aligned.

# Shapes that take the packed tile for every type of 1 to 8 bytes (plane extents multiples of 16,
# both at least 32, at least a tile's elements), shapes at its edges (a partial last tile, a tile
# of 2 groups, many batches), planes under one tile (flat_kernel), and shapes that fall back to
# v4's launcher (extents not multiples of N).
PACKED_EDGES = (
    ("64,64,56,56", "0,2,3,1"),  # NCHW to NHWC, 64 channels: planes of 64 x 3136
    ("32,2048", "1,0"),          # the smallest uint8 plane: one tile of 2 groups of 16 rows
    ("3,128,1024", "0,2,1"),     # uint8's tile of 8 groups (each count of groups has its kernel)
    ("3,96,1040", "0,2,1"),      # a partial last tile along both plane axes
    ("5,64,7,1024", "2,0,3,1"),  # batch axes on both sides of the plane
    ("4096,64,64", "0,2,1"),     # planes under one tile: flat for 1 byte, a fitted tile for 2 to 8
    ("32,48", "1,0"),            # under one tile for every type but 8 bytes; a tile fits float32's
    ("3,160,96", "0,2,1"),       # tiles fitted to planes of 20 x 12, 40 x 24, 80 x 48 blocks
    ("2,112,80", "0,2,1"),       # ... of 14 x 10, 28 x 20, 56 x 40: no power of two fits them
    ("4,33,64", "0,2,1"),        # 33 rows: v3's tiles (through v4) for every type
    ("48,50", "1,0"),            # 50 columns: packed for 8-byte elements only, v4 for the rest
    ("2,64,3,64", "3,1,2,0"),    # planes of 2 x 64: v4's short-axis tile
    # Short sides (under 8) with 16-byte accesses: interleaved into runs, spread back into rows,
    # a last piece shorter than a block's 4 KiB of each row, K from 2 to 7, past 65535 planes.
    ("2,3,9008", "0,2,1"),
    ("2,9008,5", "0,2,1"),
    ("3,7,2048", "0,2,1"),
    ("5,2048,2", "0,2,1"),
    ("4,3,1000", "0,2,1"),       # 1000 columns: uint8 rows cut from vectors, wider ones interleave
    ("70000,3,16", "0,2,1"),
    # Runs (the innermost axis stays): vectors of 16, 8 or 4 bytes where every run, stride and
    # address allows, v4's element copy where none does (3 uint8, 6 bytes of float16).
    ("32,64,16,64", "0,2,1,3"),
    # ... short runs whose batch axes lie in other orders on the two sides, extents with no common
    # divisor, the input's innermost batch axis the output's outermost.
    ("3,96,40,32", "0,2,1,3"),
    ("2,13,11,48", "0,2,1,3"),
    ("5,7,12,16", "2,1,0,3"),
    ("6,10,4", "1,0,2"),
    ("9,2,8", "1,0,2"),
    ("7,5,3", "1,0,2"),
    ("4,6,1001", "1,0,2"),
    ("1000", "0"),
    # flat_kernel: batches no multiple of the planes a block of threads takes, both plane orders,
    # sides of an odd count of blocks (48 and 16 of uint8, 40 and 8 of float16), interleaved planes.
    ("7,64,64", "0,2,1"),
    ("4097,64,64", "0,2,1"),
    ("1001,96,96", "0,2,1"),
    ("96,7,9,96", "3,2,1,0"),    # 96^4 reversed, in small: each plane's rows lie far apart
    ("7,32,48", "0,2,1"),
    ("7,48,32", "0,2,1"),
    ("1001,8,40", "0,2,1"),
    ("1001,40,8", "0,2,1"),
    ("4097,16,16", "0,2,1"),
    ("5,3136,64", "0,2,1"),      # NHWC to NCHW's plane: 64 columns, a quarter of a uint8 tile's
    ("3,1024,48", "0,2,1"),      # such a plane with 3 blocks of uint8 across
    # Whole planes in a row, staged: partial last stretches, a batch fused from two axes, a tail
    # past the last whole vector (105 bytes of uint8), a plane too large for a stage (v4's tiles).
    ("33,17,19", "0,2,1"),
    ("2,5,17,19", "0,1,3,2"),
    ("7,19,17", "0,2,1"),
    ("7,3,1000", "0,2,1"),
    ("17,19", "1,0"),
    ("5,3,7", "0,2,1"),
    ("3,100,101", "0,2,1"),
    # ... planes of 2 to 7 rows, under N for the narrow types: a vector steps over several columns
    # and, near a plane's end, into the next plane.
    ("13,2,37", "0,2,1"),
    ("9,5,33", "0,2,1"),
    ("3,6,1001", "0,2,1"),
    ("11,7,45", "0,2,1"),
    # ... short rows of 1- and 2-byte elements that are not whole vectors, cut from the vectors
    # they straddle (uint8 rows of 512 or more, as 6 x 1001 above, and planes too long for a
    # stage): a thread's indices running into the next plane (9001 and 8195 columns), 7 rows, one
    # plane (3 x 6007 after fusion) whose last indices, and the vectors past it, go one by one.
    ("3,2,9001", "0,2,1"),
    ("5,2,8195", "0,2,1"),
    ("2,7,2501", "0,2,1"),
    ("1,3,6007", "0,2,1"),
    # ... more pieces than the GPU holds at once, so that each thread takes two or three: of 4 rows
    # one a round, of 3 two a round (three pieces on an H200: a round of two, then one of one).
    ("3000,4,1001", "0,2,1"),
    ("6000,3,1000", "0,2,1"),
    # Borrowed axes: a plane side that is not whole tiles takes in the batch axis right after it.
    ("16,3,16,2,16,16", "5,3,1,4,0,2"),  # the 6-d case in small: 16 x 16 planes, both sides borrow
    ("32,40,24,48", "3,2,1,0"),          # a reversal: 32 x 48 planes widened to 1280 x 1152
    ("5,3,48,64", "3,1,0,2"),            # only the rows borrow (the columns have no such axis)
    ("48,5,3,64", "2,1,3,0"),            # only the columns borrow
    ("48,5,48", "2,1,0"),                # the middle axis lies after both sides: the columns take it
)


def test_make_diff_of_the_packed_step_is_its_kernel():
    done = make("diff", "STEP=PERMUTE.v5_packed")
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("# PERMUTE.v5_packed against PERMUTE.v4_small_planes")
    added = [line for line in done.stdout.splitlines() if line.startswith("+")]
    assert any("transpose_in_registers" in line for line in added)  # v7's block, not a copy
    assert any("launch_reused_permute" in line for line in added)  # v4's launcher, linked


@pytest.mark.batched
@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("case", PACKED_EDGES, ids=case_id)
def test_the_packed_step_is_exact_on_and_off_its_path(case, dtype, needs_gpu):
    check_gpu_case("PERMUTE.v5_packed", case, dtype,
                   itertools.product(PACKED_EDGES, DTYPES), reps=2)


# --- PERMUTE.v5_packed's tile on the host (tests/permute_tile_probe.cpp includes the step's own
# tile_shape.hpp): the shape its launcher picks for a plane, and the cells its kernel swizzles.

@pytest.fixture(scope="module")
def tile_probe():
    return probe_runner("permute_tile_probe")


def test_every_packed_tile_runs_fills_and_permutes_its_cells(tile_probe):
    done = tile_probe("check")
    assert done.returncode == 0, done.stdout + done.stderr
    assert "every tile runs, fills at least v7's" in done.stdout


# (row blocks, column blocks, N, keep v7's tile) -> the tile, groups x chunks: v7's where it keeps
# nine tenths of its threads busy, the best fitted one where it does not, v7's for uint8 always.
PACKED_TILES = [
    ((16, 784, 4, 0), "16 x 16"),  # float32 NCHW to NHWC, 64 channels: whole v7 tiles
    ((8, 392, 8, 0), "8 x 32"),    # float16 the same: v7's fills 94%, it stays
    ((392, 8, 8, 0), "28 x 8"),    # float16 NHWC to NCHW: v7's would idle half its threads
    ((24, 24, 4, 0), "8 x 24"),    # float32 96 x 96 planes: three tiles of 192 threads a plane
    ((12, 12, 8, 0), "12 x 12"),   # float16 96 x 96: 144 threads, a last warp half idle
    ((8, 8, 8, 0), "8 x 8"),       # float16 64 x 64: one tile of 64 threads a plane
    ((4, 196, 16, 1), "4 x 64"),   # uint8 keeps v7's, however little of it the plane fills
]


@pytest.mark.parametrize("plane,tile", PACKED_TILES, ids=lambda v: str(v).replace(" ", ""))
def test_the_packed_tile_fits_the_plane(tile_probe, plane, tile):
    done = tile_probe("shape", *plane)
    assert done.returncode == 0, done.stdout + done.stderr
    assert done.stdout.startswith(f"tile {tile}, fill "), done.stdout


# Grids of 65535 blocks that loop: 140000 planes of 32 x 16 are 17.9 million blocks of 2 x 2 for
# 8-byte elements (flat_kernel; narrower types get there at 1 to 4 GB a buffer), and 65600 planes of
# 3 x 341 complex128 are as many stretches of one plane each (staged_kernel, 1 GB a buffer).
SMALL_PLANE_LOOPS = [(("140000,32,16", "0,2,1"), "float64"), (("140000,32,16", "0,2,1"), "complex64"),
                     (("65600,3,341", "0,2,1"), "complex128")]


@pytest.mark.batched
@pytest.mark.parametrize("case,dtype", SMALL_PLANE_LOOPS)
def test_the_packed_steps_small_planes_are_exact_past_65535_blocks(case, dtype, needs_gpu):
    check_gpu_case("PERMUTE.v5_packed", case, dtype, SMALL_PLANE_LOOPS, reps=1)
