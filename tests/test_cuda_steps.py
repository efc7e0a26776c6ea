"""Every kernel step, cuBLAS included, verified bitwise on awkward shapes and every element type it
supports when a GPU is present; reported as skipped, by name, when not. Without a GPU the programs
themselves must say so in one line and exit 77."""
import csv
import functools

import pytest

from conftest import (CUDA_STEPS, DTYPES, ELEM_BYTES, EXIT_NO_MEMORY, EXIT_SKIPPED, EXIT_USAGE,
                      binary, gpu_unavailable_reason, run, run_case, skip_unless_memory,
                      step_variable, steps_from_makefile, supported_dtypes)

ODD_SHAPES = [(1, 4099), (4099, 1), (3, 4101), (4101, 7), (37, 4111), (2049, 1025)]
SMALL_SHAPES = [(1, 1), (31, 33), (1000, 999)]
# Past 2^32 elements: a uint8 matrix needs 5 fills to tell every position apart, and every index
# product needs 64 bits.
OVER_2_POW_32 = (65537, 65536)
OVER_2_POW_31 = (46341, 46341)  # float32: 2,147,488,281 elements, 2 fills


def read_rows(csv_path):
    with open(csv_path) as f:
        return list(csv.DictReader(f))


def step_dtype_pairs():
    return [(step, dtype) for step in CUDA_STEPS for dtype in DTYPES
            if dtype in supported_dtypes(step)]


def typed_cases(dtypes, shapes):
    """The arguments of a run for each (type, shape): one batch (conftest.run_case)."""
    return [[rows, cols, "--dtype", dtype] for dtype in dtypes for rows, cols in shapes]


@pytest.mark.batched
@pytest.mark.parametrize("step,dtype", step_dtype_pairs())
@pytest.mark.parametrize("rows,cols", ODD_SHAPES, ids=lambda v: str(v))
def test_gpu_step_is_exact_for_every_type(step, dtype, rows, cols, needs_gpu):
    done = run_case(step, [rows, cols, "--dtype", dtype],
                    typed_cases(supported_dtypes(step), ODD_SHAPES), "--reps", 2)
    assert done.returncode == 0, done.stderr
    assert "verified: all" in done.stdout
    (row,) = done.rows
    assert row["verified"] == "yes" and (int(row["rows"]), int(row["cols"])) == (rows, cols)
    assert (row["dtype"], int(row["elem_bytes"])) == (dtype, ELEM_BYTES[dtype])
    assert row["kind"] == step_variable(step, "STEP_KIND")[0]


FLOAT32_SHAPES = SMALL_SHAPES + [(8192, 8192)]


@pytest.mark.batched
@pytest.mark.parametrize("step", CUDA_STEPS)
@pytest.mark.parametrize("rows,cols", FLOAT32_SHAPES, ids=lambda v: str(v))
def test_gpu_step_is_exact_for_float32(step, rows, cols, needs_gpu):
    done = run_case(step, [rows, cols], [list(shape) for shape in FLOAT32_SHAPES], "--reps", 2)
    assert done.returncode == 0, done.stderr
    (row,) = done.rows
    assert row["verified"] == "yes" and row["dtype"] == "float32"
    kernel_ms, e2e_ms = float(row["median_ms"]), float(row["e2e_ms"])
    assert kernel_ms > 0 and e2e_ms > 0
    # The copies to and from the host dwarf the kernel once the matrix is large; on a tiny one
    # both times are mostly launch latency, and either median can come out the larger.
    if rows * cols >= 1 << 24:
        assert e2e_ms >= kernel_ms


def run_large(step, shape, dtype):
    skip_unless_memory(2 * shape[0] * shape[1] * ELEM_BYTES[dtype])  # host input and output
    done = run(step, *shape, "--dtype", dtype, "--reps", 1, timeout=900)
    if done.returncode == EXIT_NO_MEMORY:
        pytest.skip(f"not enough memory for {shape} {dtype}: {done.stderr.strip()}")
    assert done.returncode == 0, done.stderr
    return done


@pytest.mark.large_memory
@pytest.mark.parametrize("step", [s for s in CUDA_STEPS if "uint8" in supported_dtypes(s)])
def test_gpu_step_is_exact_past_2_pow_32_uint8_elements(step, needs_gpu):
    done = run_large(step, OVER_2_POW_32, "uint8")
    count = OVER_2_POW_32[0] * OVER_2_POW_32[1]
    assert f"verified: all {count} elements bitwise equal to the reference over 5 fills" in done.stdout


@pytest.mark.large_memory
@pytest.mark.parametrize("step", [s for s in CUDA_STEPS if "uint8" not in supported_dtypes(s)])
def test_library_row_is_exact_past_2_pow_31_float32_elements(step, needs_gpu):
    done = run_large(step, OVER_2_POW_31, "float32")
    count = OVER_2_POW_31[0] * OVER_2_POW_31[1]
    assert f"verified: all {count} elements bitwise equal to the reference over 2 fills" in done.stdout


@pytest.mark.parametrize("step", CUDA_STEPS)
def test_an_unsupported_type_is_refused_in_one_line_before_the_gpu_is_looked_for(step):
    if not binary(step).exists():
        pytest.skip(f"{step} is not built (no nvcc?)")
    refused = [dtype for dtype in DTYPES if dtype not in supported_dtypes(step)]
    if not refused:
        pytest.skip(f"{step} supports every type")
    done = run(step, 64, "--dtype", refused[0])
    assert done.returncode == EXIT_USAGE
    lines = done.stderr.splitlines()
    assert len(lines) == 1 and f"does not support {refused[0]}" in lines[0], done.stderr
    assert all(dtype in lines[0] for dtype in supported_dtypes(step))  # it lists its types
    assert done.stdout == ""


@pytest.mark.parametrize("step", CUDA_STEPS)
def test_without_a_gpu_the_step_says_so_in_one_line_and_exits_77(step):
    if not binary(step).exists():
        pytest.skip(f"{step} is not built (no nvcc?)")
    if gpu_unavailable_reason() is None:
        pytest.skip("a GPU is present: the no-GPU path cannot be exercised here")
    done = run(step, 64, "--dtype", "float64")
    assert done.returncode == EXIT_SKIPPED
    assert done.stdout == ""
    assert len(done.stderr.strip().splitlines()) == 1 and "skipped: no CUDA device" in done.stderr


# --- A kernel step with several launchers (CUDA.v2) and the copy reference row (CUDA.copy).

V2_VARIANTS = ["read-coalesced", "write-coalesced"]


@pytest.mark.batched
@pytest.mark.parametrize("variant", V2_VARIANTS)
@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("rows,cols", ODD_SHAPES, ids=lambda v: str(v))
def test_each_v2_variant_is_exact_and_named_in_the_csv(variant, dtype, rows, cols, needs_gpu):
    done = run_case("CUDA.v2", [rows, cols, "--dtype", dtype, "--variant", variant],
                    [case + ["--variant", v] for case in typed_cases(DTYPES, ODD_SHAPES)
                     for v in V2_VARIANTS], "--reps", 2)
    assert done.returncode == 0, done.stderr
    (row,) = done.rows
    assert (row["variant"], row["verified"], row["dtype"]) == (variant, "yes", dtype)
    assert (int(row["rows"]), int(row["cols"])) == (rows, cols)


def test_v2_runs_its_default_alone_and_every_variant_with_all(needs_gpu, tmp_path):
    csv_path = tmp_path / "out.csv"
    assert run("CUDA.v2", 37, 41, "--reps", 2, "--csv", csv_path).returncode == 0
    assert [row["variant"] for row in read_rows(csv_path)] == V2_VARIANTS[:1]
    done = run("CUDA.v2", 37, 41, "--variant", "all", "--reps", 2, "--csv", csv_path)
    assert done.returncode == 0, done.stderr
    assert [row["variant"] for row in read_rows(csv_path)] == V2_VARIANTS[:1] + V2_VARIANTS
    summaries = {row["variant"]: row["summary"] for row in read_rows(csv_path)}
    assert summaries["read-coalesced"] != summaries["write-coalesced"]


def test_steps_without_variants_still_report_kernel(needs_gpu, tmp_path):
    csv_path = tmp_path / "out.csv"
    assert run("CUDA.v3", 37, 41, "--reps", 2, "--csv", csv_path).returncode == 0
    assert [row["variant"] for row in read_rows(csv_path)] == ["kernel"]


def test_the_copy_step_is_declared_a_copy_and_the_others_transpose():
    assert step_variable("CUDA.copy", "STEP_OPERATION") == ["copy"]
    assert step_variable("CUDA.copy", "STEP_KIND") == ["kernel"]
    for step in CUDA_STEPS:
        if step != "CUDA.copy":
            assert step_variable(step, "STEP_OPERATION") == ["transpose"], step


@pytest.mark.batched
@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("rows,cols", ODD_SHAPES + [(1, 1)], ids=lambda v: str(v))
def test_the_copy_step_is_verified_as_a_copy(dtype, rows, cols, needs_gpu):
    done = run_case("CUDA.copy", [rows, cols, "--dtype", dtype],
                    typed_cases(DTYPES, ODD_SHAPES + [(1, 1)]), "--reps", 2)
    assert done.returncode == 0, done.stderr
    assert f"verified: all {rows * cols} elements bitwise equal" in done.stdout
    (row,) = done.rows
    assert (row["step"], row["variant"], row["verified"]) == ("CUDA.copy", "kernel", "yes")
    assert row["summary"].startswith("reference:")  # how the tables tell a reference row


# --- CUDA.v7_packed --variant tma (tma.cu): Hopper's bulk copies, for rows of whole 16-byte units.

def tma_shapes(dtype):
    """Shapes whose input and output rows are whole 16-byte units: whole tiles; tiles cut at the
    bottom and right edges (1040 x 4112 for uint8); n rows (1 for complex128) and n columns; and
    enough tiles that every block of the GPU walks several, through both of its buffers."""
    n = 16 // ELEM_BYTES[dtype]  # elements in 16 bytes
    tile = 16 * n
    many = {1: 24, 2: 32}.get(ELEM_BYTES[dtype], 48)  # tiles a side: 2 to 4 a block on 132 SMs
    return [(4 * tile, 8 * tile), (4 * tile + n, 16 * tile + n), (n, 64 * tile + 3 * n),
            (64 * tile + 3 * n, n), (many * tile + n, many * tile + 5 * n)]


@functools.lru_cache(maxsize=None)
def tma_unavailable_reason():
    """None where --variant tma runs (a GPU of compute capability 9.0 or later, a build with sm_90
    code), else the program's own words."""
    done = run("CUDA.v7_packed", 16, 16, "--dtype", "uint8", "--variant", "tma", "--reps", 1)
    return done.stderr.strip().splitlines()[-1] if done.returncode == EXIT_SKIPPED else None


@pytest.fixture
def needs_tma(needs_gpu):
    reason = tma_unavailable_reason()
    if reason:
        pytest.skip(reason)


@pytest.mark.batched
@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("shape", range(5), ids=["tiles", "edges", "n-rows", "n-cols", "many"])
def test_v7_tma_is_exact_for_every_type(dtype, shape, needs_tma):
    rows, cols = tma_shapes(dtype)[shape]
    done = run_case("CUDA.v7_packed", [rows, cols, "--dtype", dtype, "--variant", "tma"],
                    [[r, c, "--dtype", d, "--variant", "tma"] for d in DTYPES
                     for r, c in tma_shapes(d)], "--reps", 2)
    assert done.returncode == 0, done.stderr
    assert f"verified: all {rows * cols} elements" in done.stdout
    (row,) = done.rows
    assert (row["variant"], row["verified"], row["dtype"]) == ("tma", "yes", dtype)
    assert (int(row["rows"]), int(row["cols"])) == (rows, cols)


@pytest.mark.parametrize("dtype", [d for d in DTYPES if ELEM_BYTES[d] < 16])
@pytest.mark.parametrize("ragged", ["rows", "cols"])
def test_v7_tma_refuses_rows_of_part_of_16_bytes_in_one_line_before_looking_for_a_gpu(dtype,
                                                                                      ragged):
    if not binary("CUDA.v7_packed").exists():
        pytest.skip("CUDA.v7_packed is not built (no nvcc?)")
    n = 16 // ELEM_BYTES[dtype]
    rows, cols = (64 * n + 1, 64 * n) if ragged == "rows" else (64 * n, 64 * n + 1)
    done = run("CUDA.v7_packed", rows, cols, "--dtype", dtype, "--variant", "tma")
    assert done.returncode == EXIT_USAGE, done.stderr  # not 77: no device was looked for
    assert done.stdout == ""
    (line,) = done.stderr.splitlines()
    assert f"--variant tma cannot take {rows} x {cols}" in line and "16 bytes" in line


def test_v7_variant_all_leaves_tma_out_where_it_cannot_run(needs_gpu, tmp_path):
    csv_path = tmp_path / "out.csv"
    done = run("CUDA.v7_packed", 37, 41, "--variant", "all", "--reps", 2, "--csv", csv_path)
    assert done.returncode == 0, done.stderr
    assert [row["variant"] for row in read_rows(csv_path)] == ["kernel"]
    assert "--variant all leaves out tma" in done.stderr
    done = run("CUDA.v7_packed", 64, 128, "--variant", "all", "--reps", 2, "--csv", csv_path)
    assert done.returncode == 0, done.stderr
    runs_tma = tma_unavailable_reason() is None
    assert [row["variant"] for row in read_rows(csv_path)] == ["kernel", "kernel"] + (
        ["tma"] if runs_tma else [])
    assert ("leaves out tma" in done.stderr) != runs_tma


def assert_last_step_exact(dtype, rows, cols, batch):
    """The last step's run of rows x cols, one of `batch`, verified over every element."""
    done = run_case(steps_from_makefile("CUDA_STEPS")[-1], [rows, cols, "--dtype", dtype], batch,
                    "--reps", 2)
    assert done.returncode == 0, done.stderr
    assert f"verified: all {rows * cols} elements" in done.stdout
    (row,) = done.rows
    assert row["verified"] == "yes" and (int(row["rows"]), int(row["cols"])) == (rows, cols)


# --- The last step's realigning kernel (1- to 8-byte elements whose rows or cols are not whole
# 16-byte vectors): the first blocks take the edge tiles, the rest the bulk tiles. Shapes where
# every tile is an edge tile (one row of tiles: 100 x 300, and 100 x 260, whose last tile column
# is 4 elements wide); where the bulk tiles end exactly where a tile's borrowed rows reach the
# bottom (800 = 2 uint8 tiles + 288 rows) and one row past it; partial last columns; a last row of
# tiles with rows past its own but within the borrowed ones (290 x 1037); and more than 65535 tile
# columns (9 x 16777729 uint8: 65539 tiles, the grid's z, one block past the last).
REALIGN_SHAPES = [(300, 300), (100, 300), (100, 260), (800, 1000), (801, 1000), (290, 1037),
                  (8191, 8193), (8193, 8191), (4097, 4099), (9, 16777729)]
REALIGN_DTYPES = ["uint8", "float16", "float32", "float64"]


@pytest.mark.parametrize("dtype", REALIGN_DTYPES)
@pytest.mark.parametrize("rows,cols", REALIGN_SHAPES, ids=lambda v: str(v))
def test_last_step_realigns_edge_tiles_first_exactly(dtype, rows, cols, needs_gpu):
    assert_last_step_exact(dtype, rows, cols, typed_cases(REALIGN_DTYPES, REALIGN_SHAPES))


# Every row shift the bulk tiles' loads are compiled for (load_octets in ragged.cu: cols x size % 8
# bytes, a kernel for each of 8 values for uint8, 4 for 2-byte and 2 for 4-byte elements), with
# the output rows on sectors (800 rows) and not (801: two more groups of rows a tile). Both leave a
# row of bulk tiles for every type; 1025 to 1032 columns give every residue.
SHIFT_SHAPES = [(rows, 1024 + extra) for rows in (800, 801) for extra in range(1, 9)]
SHIFT_DTYPES = ["uint8", "float16", "float32"]


@pytest.mark.parametrize("dtype", SHIFT_DTYPES)
@pytest.mark.parametrize("rows,cols", SHIFT_SHAPES, ids=lambda v: str(v))
def test_last_step_loads_every_row_shift_exactly(dtype, rows, cols, needs_gpu):
    assert_last_step_exact(dtype, rows, cols, typed_cases(SHIFT_DTYPES, SHIFT_SHAPES))


# --- The last step's thin kernels (2 to 7 rows or columns): a block takes 256 threads x 16 bytes
# of the long axis (2048 float16, 256 complex128) staged in shared memory, or for uint8 256
# indices, one a thread. Shorter than one block; a partial last block; exactly whole blocks (4096
# and 256); every count of short rows; and the mirror images.
THIN_SHAPES = [(2, 5), (3, 1000003), (7, 4099), (5, 65537), (6, 4096), (4, 8191), (2, 257),
               (1000003, 3), (4099, 7), (65537, 5), (4096, 6), (8191, 4), (257, 2)]


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("rows,cols", THIN_SHAPES, ids=lambda v: str(v))
def test_last_step_thin_kernel_is_exact(dtype, rows, cols, needs_gpu):
    assert_last_step_exact(dtype, rows, cols, typed_cases(DTYPES, THIN_SHAPES))
