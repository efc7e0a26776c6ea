"""End-to-end tests of the CPU step: every variant verified on awkward shapes and thread counts,
and the CSV it writes."""
import csv

import pytest

from conftest import CPU_STEPS, DTYPES, ELEM_BYTES, EXIT_NO_MEMORY, cpu_streams, run

SHAPES = [(1, 1), (1, 7), (7, 1), (33, 17), (1000, 999), (4097, 4095)]


@pytest.mark.parametrize("step", CPU_STEPS)
@pytest.mark.parametrize("threads", [1, 2, 3])
@pytest.mark.parametrize("rows,cols", SHAPES, ids=lambda v: str(v))
def test_every_variant_is_exact(step, rows, cols, threads, tmp_path):
    csv_path = tmp_path / "out.csv"
    done = run(step, rows, cols, "--reps", 1, "--csv", csv_path, threads=threads)
    assert done.returncode == 0, done.stderr
    assert f"{threads} OpenMP threads" in done.stdout
    with open(csv_path) as f:
        rows_written = list(csv.DictReader(f))
    assert {row["variant"] for row in rows_written} == {"naive", "blocked"}
    for row in rows_written:
        assert row["verified"] == "yes"
        assert (int(row["rows"]), int(row["cols"]), int(row["threads"])) == (rows, cols, threads)


@pytest.mark.parametrize("step", CPU_STEPS)
@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("rows,cols", [(1, 300), (300, 1), (37, 411), (257, 129)],
                         ids=lambda v: str(v))
def test_every_variant_is_exact_for_every_type(step, dtype, rows, cols, tmp_path):
    csv_path = tmp_path / "out.csv"
    done = run(step, rows, cols, "--dtype", dtype, "--reps", 1, "--csv", csv_path, threads=3)
    assert done.returncode == 0, done.stderr
    with open(csv_path) as f:
        rows_written = list(csv.DictReader(f))
    assert len(rows_written) == 2
    for row in rows_written:
        assert row["verified"] == "yes" and row["kind"] == "cpu"
        assert (row["dtype"], int(row["elem_bytes"])) == (dtype, ELEM_BYTES[dtype])
        # Bandwidth counts the element's bytes: 2 * rows * cols * elem_bytes / time.
        expected = 2 * rows * cols * ELEM_BYTES[dtype] / (float(row["median_ms"]) * 1e6)
        assert float(row["gbps"]) == pytest.approx(expected, rel=1e-3)


def test_uint8_takes_several_fills_and_says_so():
    done = run("CPU.omp", 300, 300, "--dtype", "uint8", "--reps", 1)
    assert done.returncode == 0, done.stderr
    assert "the first run of each of 3 fills, then the last timed run" in done.stdout


# Rows a multiple of 16 take the blocked variant's whole-vector path (streamed where streaming is
# on): one band, several bands, a band cut short at the bottom, ragged columns, columns past one
# piece of work (2048).
ALIGNED_SHAPES = [(32, 16), (48, 1031), (64, 80), (1040, 1000), (2080, 2056)]


@pytest.mark.parametrize("stores", ["on", "off"])
@pytest.mark.parametrize("rows,cols", SHAPES + ALIGNED_SHAPES + [(129, 1031), (1031, 129)],
                         ids=lambda v: str(v))
def test_streaming_and_plain_stores_are_both_exact(rows, cols, stores):
    # Small matrices take plain stores on their own; "on" forces the streaming path, with its
    # ragged heads and tails at every alignment.
    done = run("CPU.omp", rows, cols, "--reps", 1, threads=3,
               env_extra={"LAB_STREAMING_STORES": stores})
    assert done.returncode == 0, done.stderr
    assert done.stdout.count("verified") == 2
    kind = "streaming" if stores == "on" else "plain"
    assert f"omp copy, {kind} stores (ceiling)" in done.stdout
    # The blocked row says which stores it timed: the copy's, where the shape takes them.
    blocked_kind = "streaming" if stores == "on" and cpu_streams(rows, cols, 4) else "plain"
    assert f"prefetch, {blocked_kind} stores" in done.stdout, done.stdout


@pytest.mark.parametrize("step,args", [("CPU.omp", ["1000", "600"]),
                                       ("PERMUTE.omp", ["--shape", "6,250,400", "--perm", "2,0,1"])],
                         ids=["matrix", "permute"])
def test_the_ceiling_is_the_faster_of_both_copies(step, args, tmp_path):
    # With the default setting both copies are timed; the faster, and only it, is the ceiling, and
    # every row's share is of that one.
    csv_path = tmp_path / "out.csv"
    done = run(step, *args, "--reps", 3, "--csv", csv_path, threads=2)
    assert done.returncode == 0, done.stderr
    copies = {}  # stores -> (median ms, whether the row says ceiling)
    for line in done.stdout.splitlines():
        if line.split()[:1] == ["copy"]:
            stores = "streaming" if "streaming stores" in line else "plain"
            after = line.split(" stores")[1].replace("(ceiling)", "").split()
            copies[stores] = (float(after[0]), "(ceiling)" in line)
    assert set(copies) == {"plain", "streaming"}, done.stdout
    marked = [stores for stores, (_, ceiling) in copies.items() if ceiling]
    assert len(marked) == 1, done.stdout
    ceiling_ms = copies[marked[0]][0]
    assert ceiling_ms <= min(ms for ms, _ in copies.values()), done.stdout
    assert "ceiling  the faster of the OpenMP copy with plain stores and with streaming" in done.stdout
    with open(csv_path) as f:
        for row in csv.DictReader(f):
            copy_ms = 2 * int(row["rows"]) * int(row["cols"]) * int(row["elem_bytes"]) / (
                float(row["ceiling_gbps"]) * 1e6)
            assert copy_ms == pytest.approx(ceiling_ms, rel=0.01), (row, done.stdout)


def test_a_bad_streaming_setting_is_refused_before_any_work():
    done = run("CPU.omp", 64, "--reps", 1, env_extra={"LAB_STREAMING_STORES": "sometimes"})
    assert done.returncode == 2
    assert done.stderr.strip() == "error: LAB_STREAMING_STORES=sometimes: use on, off or auto"
    assert done.stdout == ""


@pytest.mark.parametrize("step,args", [("CPU.omp", ["64"]),
                                       ("PERMUTE.omp", ["--shape", "6,25,40", "--perm", "2,0,1"])])
@pytest.mark.parametrize("value", ["sometimes", "", "OFF"])
def test_a_bad_cpu_flush_is_one_line_and_exit_2(step, args, value):
    done = run(step, *args, "--reps", 1, env_extra={"LAB_CPU_FLUSH": value})
    assert done.returncode == 2, done.stdout + done.stderr
    assert done.stderr.strip() == f"error: LAB_CPU_FLUSH={value}: use on or off"
    assert done.stdout == ""


@pytest.mark.parametrize("step,args", [("CPU.omp", ["64", "48"]),
                                       ("PERMUTE.omp", ["--shape", "6,25,40", "--perm", "2,0,1"])])
@pytest.mark.parametrize("value,header", [(None, "caches   input and output flushed"),
                                          ("on", "caches   input and output flushed"),
                                          ("off", "caches   warm")])
def test_either_cpu_cache_state_times_a_verified_run_and_says_which(step, args, value, header):
    done = run(step, *args, "--reps", 2, env_extra={"LAB_CPU_FLUSH": value} if value else None)
    assert done.returncode == 0, done.stdout + done.stderr
    assert header in done.stdout
    assert "verified" in done.stdout and "WRONG" not in done.stdout


def test_csv_has_the_schema_header_once_and_one_row_per_measurement(tmp_path):
    from test_harness import probe
    csv_path = tmp_path / "results.csv"
    for variant in ("naive", "all"):
        assert run("CPU.omp", 64, 48, "--variant", variant, "--reps", 2, "--csv", csv_path).returncode == 0
    lines = csv_path.read_text().splitlines()
    assert lines[0] == probe("csv-header").stdout.strip()
    assert lines.count(lines[0]) == 1
    rows = list(csv.DictReader(lines))
    assert [row["variant"] for row in rows] == ["naive", "naive", "blocked"]
    for row in rows:
        assert float(row["median_ms"]) > 0 and float(row["gbps"]) > 0
        assert float(row["ceiling_gbps"]) > 0 and row["reps"] == "2"
        expected_pct = 100 * float(row["gbps"]) / float(row["ceiling_gbps"])
        assert float(row["pct_of_ceiling"]) == pytest.approx(expected_pct, rel=1e-3, abs=0.01)


def test_csv_with_another_schema_is_refused(tmp_path):
    csv_path = tmp_path / "other.csv"
    csv_path.write_text("a,b,c\n1,2,3\n")
    done = run("CPU.omp", 8, "--reps", 1, "--csv", csv_path)
    assert done.returncode != 0 and "another header" in done.stderr
    assert csv_path.read_text() == "a,b,c\n1,2,3\n"


@pytest.mark.parametrize("dtype", ["uint8", "complex128"])
def test_a_matrix_larger_than_memory_is_refused_cleanly(dtype):
    done = run("CPU.omp", 2_000_000_000, 2_000_000_000, "--dtype", dtype)
    assert done.returncode == EXIT_NO_MEMORY
    needed = 2 * 2_000_000_000 ** 2 * ELEM_BYTES[dtype]  # the input and the output
    assert f"needs {needed} bytes" in done.stderr and "available" in done.stderr
    assert done.stdout == ""
