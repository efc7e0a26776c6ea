"""CUDA.v8_streams, the host pipeline: bad input is refused (exit 2, one clear line, before any GPU
is looked for), sizes past host memory exit 3, the timeline picture is drawn from a timeline file;
with a GPU, every piece count, stream count, element type and odd shape is verified bitwise and
reported in the one CSV schema."""
import csv
import subprocess
import sys

import pytest

from conftest import (DTYPES, ELEM_BYTES, EXIT_NO_MEMORY, EXIT_SKIPPED, EXIT_USAGE, ROOT, binary,
                      gpu_unavailable_reason, run, skip_unless_memory)

STEP = "CUDA.v8_streams"
PLOT = ROOT / "transpose_lab" / "plot_timeline.py"
TIMELINE_COLUMNS = ["piece", "stream", "first_row", "rows", "up_start_ms", "up_end_ms",
                    "kernel_start_ms", "kernel_end_ms", "down_start_ms", "down_end_ms",
                    "first_col", "cols"]
ODD_SHAPES = [(1, 4099), (4099, 1), (37, 4111), (2049, 1025), (1000, 999)]
# (streams, pieces): one piece, pieces that do not divide the rows, more streams than pieces,
# one stream (the serial pipeline), the step's defaults (None).
PIPELINES = [(1, 1), (1, 7), (2, 3), (3, 5), (4, 2), (8, 64), (3, None)]


@pytest.fixture(autouse=True)
def built():
    if not binary(STEP).exists():
        pytest.skip(f"{STEP} is not built (make -C {STEP}; no nvcc?)")


def read_rows(path):
    with open(path) as f:
        return list(csv.DictReader(f))


def run_pipeline(tmp_path, rows, cols, *args, dtype="float32"):
    csv_path = tmp_path / "out.csv"
    done = run(STEP, rows, cols, "--dtype", dtype, "--reps", 2, "--csv", csv_path, *args)
    assert done.returncode == 0, done.stderr
    assert done.stdout.count("verified: all") >= 2, done.stdout  # the first run and the last
    measured = {row["variant"]: row for row in read_rows(csv_path)}
    row = measured.get("pipeline") or measured.get("copy-engine-down") or measured["pageable"]
    assert row["verified"] == "yes" and row["kind"] == "host_pipeline" and row["step"] == STEP
    assert (int(row["rows"]), int(row["cols"])) == (rows, cols)
    assert (row["dtype"], int(row["elem_bytes"])) == (dtype, ELEM_BYTES[dtype])
    assert float(row["median_ms"]) > 0 and float(row["e2e_ms"]) == float(row["median_ms"])
    assert float(row["ceiling_gbps"]) > 0
    return done, measured


def pieces_in(row):
    """'3 streams x 5 pieces of 7-8 rows, grid ...' -> (3, 5)."""
    words = row["launch"].split()
    return int(words[0]), int(words[3])


# ---- Without a GPU: the command line, host memory, the plot ----

BAD_INPUT = [
    (["--streams", "0"], "--streams must be at least 1, got '0'"),
    (["--pieces", "0"], "--pieces must be at least 1, got '0'"),
    (["--pieces", "65"], "--pieces 65 is more than the 64 rows"),
    # 3 streams x (in + out) of one row of 64 float32: 1536 bytes.
    (["--device-mem", "100"], "--device-mem 100 is too small for one piece"),
    (["--device-mem", "1535"], "needs 1536 bytes"),
    # 4 pieces of 16 rows on 3 streams: 3 x 2 x 16 x 256 bytes.
    (["--pieces", "4", "--device-mem", "2048"], "need 24576 bytes"),
    (["--streams", "x"], "--streams must be a positive whole number, got 'x'"),
    (["--streams", "-1"], "--streams must be a positive whole number"),
    (["--streams", "100000"], "--streams is too large"),
    (["--pieces", "2.5"], "--pieces must be a positive whole number"),
    (["--device-mem", "2G"], "--device-mem must be a positive whole number, got '2G'"),
    (["--device-mem", ""], "--device-mem must be a positive whole number"),
    (["--host-memory", "locked"], "--host-memory must be pinned, huge or pageable, got 'locked'"),
    (["--ramp", "9"], "--ramp must be a whole number from 0 to 8, got '9'"),
    (["--ramp", "-1"], "--ramp must be a whole number from 0 to 8, got '-1'"),
    (["--ramp", "x"], "--ramp must be a whole number from 0 to 8, got 'x'"),
    (["--pieces", "1", "--ramp", "1"], "--ramp 1 needs at least 2 bands (a first and a last)"),
    (["--pieces", "7", "--ramp", "1"], "--ramp 1 needs equal bands, and 64 rows do not divide into 7"),
    (["--pieces", "32", "--ramp", "2"], "--ramp 2 needs bands of at least 2^2 rows, not 2"),
    (["--piece-cols", "2", "--ramp", "1"], "--ramp 1 needs bands of whole rows (not --piece-cols)"),
    (["--down", "dma"], "--down must be kernel or copy-engine, got 'dma'"),
    (["--down", "kernel", "--host-memory", "pageable"], "--down kernel needs pinned host memory"),
    (["--piece-cols", "0"], "--piece-cols must be at least 1, got '0'"),
    (["--piece-cols", "x"], "--piece-cols must be a positive whole number, got 'x'"),
    (["--piece-cols", "65"], "--piece-cols 65 is more than the 64 columns"),
    (["--timeline"], "--timeline needs a value"),
    (["--timeline", ""], "--timeline needs a file name"),
    (["--streams"], "--streams needs a value"),
]


@pytest.mark.parametrize("arguments,message", BAD_INPUT, ids=lambda v: " ".join(v)
                         if isinstance(v, list) else None)
def test_bad_input_exits_2_with_its_message_before_looking_for_a_gpu(arguments, message):
    done = run(STEP, 64, *arguments)
    assert done.returncode == EXIT_USAGE, done.stdout + done.stderr
    first = done.stderr.splitlines()[0]
    assert first.startswith(f"{STEP}/transpose: error: ") and message in first, first
    assert "usage:" in done.stderr and "--device-mem" in done.stderr
    assert done.stdout == ""


@pytest.mark.parametrize("args,plan", [
    # Out of core (input and output together past --device-mem): tiles whose rows go up 32 KiB
    # wide, as tall as two streams' buffers allow, both ways by the copy engines.
    (["65536", "131072", "--device-mem", "2147483648"],
     "64 pieces of 16384 rows x 8192 columns over 2 streams, 2147483648 bytes"),
    (["65536", "131072", "--device-mem", "2147483648"], "down by 2D copies"),
    (["65536", "65536", "--device-mem", "2147483648"],
     "32 pieces of 16384 rows x 8192 columns over 2 streams"),
    (["65536", "131072", "--device-mem", "2147483648", "--streams", "3"],
     "112 pieces of 9362-9363 rows x 8192 columns over 3 streams"),
    (["65536", "65536", "--dtype", "complex128", "--device-mem", "2147483648"],
     "128 pieces of 16384 rows x 2048 columns over 2 streams"),
    # Bands where the tiles would be too few to fill the pipeline (8 here), or the way down or
    # the pieces are named: 2 GiB needs 97 bands or more; 128 of 512 rows keep every band's
    # segments on 16 bytes (97 of 675-676 rows did not).
    (["32768", "32768", "--device-mem", "2147483648"], "64 pieces of 512 rows over 3 streams"),
    (["65536", "131072", "--device-mem", "2147483648", "--down", "kernel"],
     "128 pieces of 512 rows over 3 streams, 1610612736 bytes"),
    # A ramp asks for bands, even out of core.
    (["65536", "131072", "--device-mem", "2147483648", "--ramp", "3"],
     "134 pieces of 64-512 rows over 3 streams, 1610612736 bytes"),
    (["65536", "131072", "--device-mem", "2147483648", "--pieces", "128"],
     "128 pieces of 512 rows over 3 streams"),
    # The defaults the lab text's measurements used are unchanged: equal bands, no ramp.
    (["16384", "16384"], "64 pieces of 256 rows over 3 streams"),
    (["8192", "8192", "--dtype", "float64"], "64 pieces of 128 rows"),
    (["8192", "8192"], "32 pieces of 256 rows"),
    (["8192", "8192", "--ramp", "0"], "32 pieces of 256 rows"),
    # A ramp where asked: the first and last band cut in halves R times.
    (["16384", "16384", "--ramp", "3"], "70 pieces of 32-256 rows over 3 streams"),
    (["8192", "8192", "--dtype", "float64", "--ramp", "3"], "70 pieces of 16-128 rows"),
    (["16384", "16384", "--pieces", "32"], "32 pieces of 512 rows over 3 streams"),
    (["1024", "1024", "--pieces", "4"], "4 pieces of 256 rows over 3 streams"),
    (["16384", "16384", "--pieces", "32", "--ramp", "2"], "36 pieces of 128-512 rows"),
    (["64", "64", "--pieces", "4", "--ramp", "4"], "12 pieces of 1-16 rows"),
    (["8191", "8193", "--dtype", "float16"], "15 pieces of 546-547 rows"),  # no divisor: as it was
    # The way down: the SMs where their words are 8 bytes or wider, else 2D copies.
    (["16384", "16384"], "down by the SMs (the SMs would write 16-byte words)"),
    (["8191", "8193", "--dtype", "float16"],
     "down by 2D copies (the SMs would write 2-byte words)"),
    (["8191", "8193", "--dtype", "uint8"], "down by 2D copies (the SMs would write 1-byte words)"),
    (["8191", "8193"], "down by 2D copies (the SMs would write 4-byte words)"),
    (["8191", "8193", "--dtype", "float64"], "down by the SMs (the SMs would write 8-byte words)"),
    (["8191", "8193", "--dtype", "float16", "--down", "kernel"], "down by the SMs"),
    (["1000", "999", "--pieces", "7", "--streams", "2"], "7 pieces of 142-143 rows over 2 streams"),
    # Tiles: 7 bands x 2 column ranges; device memory for the largest tile only.
    (["1000", "999", "--pieces", "7", "--piece-cols", "2", "--streams", "2"],
     "14 pieces of 142-143 rows x 499-500 columns over 2 streams, 1144000 bytes"),
])
def test_plan_prints_the_pieces_without_a_gpu(args, plan):
    done = run(STEP, *args, "--plan")
    assert done.returncode == 0, done.stderr
    assert plan in done.stdout, done.stdout


def test_plan_still_refuses_bad_input():
    done = run(STEP, 64, "--pieces", 65, "--plan")
    assert done.returncode == EXIT_USAGE and "--pieces 65 is more than the 64 rows" in done.stderr


def test_the_shared_options_still_work_and_are_checked():
    done = run(STEP, 64, "--streams", "2", "--reps", "0")
    assert done.returncode == EXIT_USAGE and "--reps must be at least 1" in done.stderr
    done = run(STEP, 64, "--dtype", "int4", "--pieces", "2")
    assert done.returncode == EXIT_USAGE and "unknown --dtype 'int4'" in done.stderr


def test_help_lists_the_pipeline_options():
    done = run(STEP, "--help")
    assert done.returncode == 0 and done.stdout.startswith("usage:")
    for flag in ("--streams", "--pieces", "--piece-cols", "--device-mem", "--host-memory",
                 "--timeline", "--ramp"):
        assert flag in done.stdout


def test_a_size_past_host_memory_exits_3_naming_the_bytes():
    done = run(STEP, 1000000, 1000000)  # 2 x 4 TB of float32
    assert done.returncode == EXIT_NO_MEMORY, done.stderr
    assert "8000000000000 bytes" in done.stderr and "host memory" in done.stderr
    assert done.stdout == ""


def test_without_a_gpu_the_step_says_so_in_one_line_and_exits_77():
    if gpu_unavailable_reason() is None:
        pytest.skip("a GPU is present: the no-GPU path cannot be exercised here")
    done = run(STEP, 64, "--streams", "2")
    assert done.returncode == EXIT_SKIPPED
    assert done.stdout == ""
    assert done.stderr.startswith(f"{STEP}: skipped: no CUDA device (")
    assert len(done.stderr.strip().splitlines()) == 1


def write_timeline(path, streams, pieces):
    with open(path, "w") as f:
        f.write(",".join(TIMELINE_COLUMNS) + "\n")
        for p in range(pieces):
            t = 1.1 * p
            f.write(f"{p},{p % streams},{10 * p},10,{t},{t + 1},{t + 1},{t + 1.05},"
                    f"{t + 1.05},{t + 2.1}\n")


def test_the_timeline_picture_is_drawn_from_a_timeline_file(tmp_path):
    pytest.importorskip("matplotlib")
    write_timeline(tmp_path / "timeline.csv", streams=3, pieces=8)
    out = tmp_path / "timeline.png"
    done = subprocess.run([sys.executable, str(PLOT), str(tmp_path / "timeline.csv"), "-o",
                           str(out), "--title", "test"], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    assert out.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_the_plot_refuses_a_file_that_is_not_a_timeline(tmp_path):
    pytest.importorskip("matplotlib")
    (tmp_path / "bad.csv").write_text("step,variant\nx,y\n")
    done = subprocess.run([sys.executable, str(PLOT), str(tmp_path / "bad.csv"), "-o",
                           str(tmp_path / "bad.png")], capture_output=True, text=True)
    assert done.returncode == 1 and "not a timeline CSV" in done.stderr


# ---- With a GPU ----

@pytest.mark.parametrize("streams,pieces", PIPELINES, ids=lambda v: str(v))
@pytest.mark.parametrize("rows,cols", ODD_SHAPES, ids=lambda v: str(v))
def test_every_piece_and_stream_count_is_exact_on_odd_shapes(rows, cols, streams, pieces,
                                                             needs_gpu, tmp_path):
    args = ["--streams", streams]
    if pieces is not None:
        pieces = min(pieces, rows)
        args += ["--pieces", pieces]
    _, measured = run_pipeline(tmp_path, rows, cols, *args)
    used_streams, used_pieces = pieces_in(measured["pipeline"])
    if pieces is not None:
        assert used_pieces == pieces
    assert used_streams == min(streams, used_pieces)
    # The serial reference of the kernel step fits on the device at these sizes: its own row.
    serial = measured["serial"]
    assert serial["verified"] == "yes" and float(serial["median_ms"]) > 0
    assert serial["ceiling_gbps"] == measured["pipeline"]["ceiling_gbps"]


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("rows,cols", [(37, 4111), (2049, 1025)], ids=lambda v: str(v))
def test_every_type_is_exact(dtype, rows, cols, needs_gpu, tmp_path):
    run_pipeline(tmp_path, rows, cols, "--streams", 3, "--pieces", 5, dtype=dtype)


@pytest.mark.parametrize("dtype", ["uint8", "float64"])
def test_one_stream_is_the_serial_pipeline_with_the_same_bits(dtype, needs_gpu, tmp_path):
    """Both runs equal the reference bit for bit, so they equal each other."""
    lines = []
    for streams in (1, 4):
        done, _ = run_pipeline(tmp_path, 1001, 777, "--streams", streams, "--pieces", 9,
                               dtype=dtype)
        lines.append([line.split("first run")[-1].strip() for line in done.stdout.splitlines()
                      if "first run verified" in line])
    assert lines[0] == lines[1] and lines[0] and "bitwise equal" in lines[0][0]


def test_a_small_device_memory_forces_many_pieces(needs_gpu, tmp_path):
    rows, cols = 1000, 999
    row_bytes = cols * 4
    device_mem = 3 * 2 * 10 * row_bytes  # 3 streams of 10-row pieces: at least 100 pieces
    _, measured = run_pipeline(tmp_path, rows, cols, "--streams", 3, "--device-mem", device_mem)
    streams, pieces = pieces_in(measured["pipeline"])
    assert streams == 3 and pieces >= 100
    # Any other count the memory allows is exact too, and one more row per piece is refused.
    run_pipeline(tmp_path, rows, cols, "--streams", 3, "--pieces", 100, "--device-mem",
                 device_mem)
    done = run(STEP, rows, cols, "--streams", 3, "--pieces", 99, "--device-mem", device_mem)
    assert done.returncode == EXIT_USAGE and "too small for 99 pieces" in done.stderr


@pytest.mark.parametrize("dtype", ["uint8", "float16", "float32", "complex128"])
@pytest.mark.parametrize("rows,cols", [(1000, 999), (2048, 1024), (37, 4111)],
                         ids=lambda v: str(v))
def test_both_ways_down_give_the_same_bits(dtype, rows, cols, needs_gpu, tmp_path):
    """The SMs writing host memory (every word width the band allows) and the copy engine's 2D
    copy: both equal the reference bit for bit, so they equal each other."""
    lines = []
    for down in ("kernel", "copy-engine"):
        done, measured = run_pipeline(tmp_path, rows, cols, "--pieces", 7, "--down", down,
                                      dtype=dtype)
        assert ("pipeline" if down == "kernel" else "copy-engine-down") in measured
        lines.append([line.split("first run")[-1].strip() for line in done.stdout.splitlines()
                      if "first run verified" in line])
    assert lines[0] == lines[1] and lines[0] and "bitwise equal" in lines[0][0]


# Tiles: ranges of columns that do not divide the columns, one range per column at the narrow end,
# with every way down, one stream and several, and pieces that do not divide the rows.
TILES = [((37, 4111), 3, 5, 3, "kernel"), ((2049, 1025), 7, 4, 1, "copy-engine"),
         ((1000, 999), 2, 1, 2, "kernel"), ((4099, 1), 1, 9, 3, "copy-engine"),
         ((64, 7), 7, 3, 4, "kernel"), ((2048, 1024), 16, 8, 3, "kernel")]


@pytest.mark.parametrize("shape,ranges,pieces,streams,down", TILES, ids=lambda v: str(v))
def test_tiles_are_exact(shape, ranges, pieces, streams, down, needs_gpu, tmp_path):
    rows, cols = shape
    done, measured = run_pipeline(tmp_path, rows, cols, "--piece-cols", ranges, "--pieces",
                                  pieces, "--streams", streams, "--down", down)
    row = measured["pipeline" if down == "kernel" else "copy-engine-down"]
    assert pieces_in(row) == (min(streams, pieces * ranges), pieces * ranges)
    assert ("columns" in row["launch"]) == (ranges > 1)


@pytest.mark.parametrize("dtype", DTYPES)
def test_tiles_are_exact_for_every_type(dtype, needs_gpu, tmp_path):
    run_pipeline(tmp_path, 2049, 1025, "--piece-cols", 3, "--pieces", 5, dtype=dtype)


def test_the_timeline_of_tiles_covers_the_matrix_once(needs_gpu, tmp_path):
    timeline = tmp_path / "timeline.csv"
    rows, cols, ranges, pieces = 1001, 777, 3, 4
    run_pipeline(tmp_path, rows, cols, "--piece-cols", ranges, "--pieces", pieces, "--timeline",
                 timeline)
    entries = read_rows(timeline)
    assert len(entries) == ranges * pieces
    assert sum(int(e["rows"]) * int(e["cols"]) for e in entries) == rows * cols
    # Range by range, band by band within a range.
    assert [int(e["first_col"]) for e in entries] == sorted(int(e["first_col"]) for e in entries)


@pytest.mark.parametrize("dtype", DTYPES)
def test_a_ramp_is_exact_for_every_type(dtype, needs_gpu, tmp_path):
    _, measured = run_pipeline(tmp_path, 1024, 1001, "--pieces", 4, "--ramp", 3, dtype=dtype)
    assert pieces_in(measured["pipeline"])[1] == 4 + 2 * 3


@pytest.mark.parametrize("rows,cols,pieces,ramp,streams", [
    (1024, 999, 8, 3, 3), (2048, 1025, 16, 1, 2), (64, 4111, 4, 4, 3), (96, 7, 3, 5, 1)],
    ids=lambda v: str(v))
def test_the_ramp_halves_the_first_and_last_band(rows, cols, pieces, ramp, streams, needs_gpu,
                                                  tmp_path):
    timeline = tmp_path / "timeline.csv"
    run_pipeline(tmp_path, rows, cols, "--pieces", pieces, "--ramp", ramp, "--streams", streams,
                 "--timeline", timeline)
    got = [int(e["rows"]) for e in read_rows(timeline)]
    band = rows // pieces
    head = [band >> ramp] + [band >> (ramp - k + 1) for k in range(1, ramp + 1)]
    assert got == head + [band] * (pieces - 2) + head[::-1]
    assert [int(e["first_row"]) for e in read_rows(timeline)] == \
        [sum(got[:p]) for p in range(len(got))]


def test_pageable_host_memory_is_exact_and_reported(needs_gpu, tmp_path):
    _, measured = run_pipeline(tmp_path, 2049, 1025, "--host-memory", "pageable", "--pieces", 4)
    assert "pageable" in measured and "pipeline" not in measured


@pytest.mark.parametrize("dtype", ["uint8", "complex128"])
def test_host_memory_on_huge_pages_is_exact_and_reported(dtype, needs_gpu, tmp_path):
    for down in ("kernel", "copy-engine"):
        done, measured = run_pipeline(tmp_path, 2049, 1025, "--host-memory", "huge", "--down",
                                      down, "--pieces", 4, dtype=dtype)
        assert "host     pinned on 2 MiB pages (" in done.stdout, done.stdout


def test_the_timeline_has_every_piece_in_order_and_can_be_drawn(needs_gpu, tmp_path):
    timeline = tmp_path / "timeline.csv"
    rows, cols, streams, pieces = 2049, 1025, 3, 7
    run_pipeline(tmp_path, rows, cols, "--streams", streams, "--pieces", pieces, "--timeline",
                 timeline)
    entries = read_rows(timeline)
    assert list(entries[0]) == TIMELINE_COLUMNS and len(entries) == pieces
    assert sum(int(e["rows"]) for e in entries) == rows
    for p, e in enumerate(entries):
        assert int(e["piece"]) == p and int(e["stream"]) == p % streams
        times = [float(e[c]) for c in TIMELINE_COLUMNS if c.endswith("_ms")]
        assert times[0] >= 0 and times == sorted(times)
    # Pieces of one stream run one after another.
    for s in range(streams):
        mine = [e for e in entries if int(e["stream"]) == s]
        for before, after in zip(mine, mine[1:]):
            assert float(after["up_start_ms"]) >= float(before["down_end_ms"])
    pytest.importorskip("matplotlib")
    done = subprocess.run([sys.executable, str(PLOT), str(timeline), "-o",
                           str(tmp_path / "t.png")], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr


@pytest.mark.large_memory
def test_past_2_pow_32_uint8_elements_in_pieces(needs_gpu, tmp_path):
    rows, cols = 65537, 65536
    skip_unless_memory(2 * rows * cols)  # the pinned input and output
    done = run(STEP, rows, cols, "--dtype", "uint8", "--reps", 1, "--device-mem", 1 << 28,
               timeout=900)
    if done.returncode == EXIT_NO_MEMORY:
        pytest.skip(f"not enough memory: {done.stderr.strip()}")
    assert done.returncode == 0, done.stderr
    count = rows * cols
    assert f"verified: all {count} elements bitwise equal to the reference over 5 fills" \
        in done.stdout


def test_too_many_tiles_are_refused_without_a_gpu():
    done = run(STEP, 65536, 65536, "--pieces", 65536, "--piece-cols", 65536, "--plan")
    assert done.returncode == EXIT_USAGE
    assert "65536 bands x 65536 column ranges are too many pieces" in done.stderr
