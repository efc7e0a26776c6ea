"""The plots (transpose_lab.plot_*) and their shared CSV reader (transpose_lab.results_csv).

Each plot runs as a student would run it (python -m transpose_lab.plot_NAME, a subprocess from the
repository root) on the hand-made fixtures in tests/fixtures/, and must write a real PNG; bad
input must fail with a message naming the file.
"""

import csv
import re
import subprocess
import sys
from pathlib import Path

import pytest

from transpose_lab import plot_style, report_tables, results_csv
from transpose_lab.results_csv import (COLUMNS, DTYPES, PERMUTE_COLUMNS, ResultsError,
                                       read_permute_results, read_results)

REPO = Path(__file__).resolve().parent.parent
FIXTURES = Path(__file__).resolve().parent / "fixtures"
PNG_MAGIC = b"\x89PNG\r\n\x1a\n"

# Each plot with the fixture it is meant for.
SCRIPTS = {
    "plot_progression": "run_all.csv",
    "plot_bandwidth": "sweep.csv",
    "plot_scaling": "scaling.csv",
    "plot_e2e": "sweep.csv",
    "plot_profile": "profile.csv",
    "plot_dtypes": "dtypes.csv",
    "plot_multigpu": "multigpu.csv",
    "plot_permute": "permute.csv",
}


def run_module(module, *args):
    return subprocess.run([sys.executable, "-m", f"transpose_lab.{module}", *map(str, args)],
                          capture_output=True, text=True, timeout=120, cwd=REPO)


def run_script(script, csv_path, out_path, *extra):
    return run_module(script, "--csv", csv_path, "--out", out_path, *extra)


def write_csv(path, lines):
    path.write_text("".join(line + "\n" for line in lines))
    return path


def fixture_lines(name):
    return (FIXTURES / name).read_text().splitlines()


# --- The scripts on good input.

@pytest.mark.parametrize("script", SCRIPTS)
def test_script_writes_a_png(script, tmp_path):
    out = tmp_path / "sub" / "plot.png"  # a folder that does not exist yet
    result = run_script(script, FIXTURES / SCRIPTS[script], out)
    assert result.returncode == 0, result.stderr
    assert out.read_bytes()[:8] == PNG_MAGIC
    assert out.stat().st_size > 10_000  # a drawn figure, not an empty canvas
    assert "error" not in result.stderr


@pytest.mark.parametrize("script", SCRIPTS)
def test_help_exits_zero(script):
    result = run_module(script, "--help")
    assert result.returncode == 0
    assert "--csv" in result.stdout and "--out" in result.stdout


# --- The scripts on bad input: non-zero exit, the file named, no PNG.

@pytest.mark.parametrize("script", SCRIPTS)
@pytest.mark.parametrize("bad, problem", [
    ("missing.csv", "no such file"),
    ("empty.csv", "empty"),
    ("bad_header.csv", "header"),
])
def test_script_rejects_bad_input(script, bad, problem, tmp_path):
    out = tmp_path / "plot.png"
    result = run_script(script, FIXTURES / bad, out)
    assert_clean_failure(result, bad, problem, out)


@pytest.mark.parametrize("script", SCRIPTS)
def test_script_rejects_a_short_row(script, tmp_path):
    # Cut a row of the script's own input short: the header is right, line 3 is not.
    lines = fixture_lines(SCRIPTS[script])
    fields = next(csv.reader([lines[2]]))[:-3]
    lines[2] = ",".join(f'"{field}"' if "," in field else field for field in fields)
    out = tmp_path / "plot.png"
    result = run_script(script, write_csv(tmp_path / "short.csv", lines), out)
    assert_clean_failure(result, "short.csv", "line 3 has", out)


def assert_clean_failure(result, file_name, problem, out):
    assert result.returncode == 1
    assert result.stderr.startswith("error: ")
    assert file_name in result.stderr
    assert problem in result.stderr
    assert "Traceback" not in result.stderr
    assert not out.exists()


def test_results_header_is_not_a_profile(tmp_path):
    result = run_script("plot_profile", FIXTURES / "run_all.csv", tmp_path / "plot.png")
    assert result.returncode == 1
    assert "missing column(s) kernel" in result.stderr


# --- Valid files with nothing for a plot: "skipped:", exit 0, no PNG.

@pytest.mark.parametrize("script, fixture, reason", [
    ("plot_progression", "scaling.csv", "no GPU rows"),
    ("plot_e2e", "scaling.csv", "no GPU rows"),
])
def test_script_skips_without_relevant_rows(script, fixture, reason, tmp_path):
    out = tmp_path / "plot.png"
    result = run_script(script, FIXTURES / fixture, out)
    assert result.returncode == 0, result.stderr
    assert result.stdout.startswith("skipped: ")
    assert reason in result.stdout
    assert not out.exists()


@pytest.mark.parametrize("script", [s for s in SCRIPTS if s != "plot_profile"])
def test_header_only_file_is_skipped(script, tmp_path):
    header = PERMUTE_COLUMNS if script == "plot_permute" else COLUMNS
    csv_path = write_csv(tmp_path / "header_only.csv", [",".join(header)])
    result = run_script(script, csv_path, tmp_path / "plot.png")
    assert result.returncode == 0, result.stderr
    assert result.stdout.startswith("skipped: ")


def test_scaling_with_one_thread_count_is_skipped(tmp_path):
    lines = fixture_lines("scaling.csv")
    one_count = [lines[0]] + [line for line in lines[1:] if ",8192,8192,1," in line]
    result = run_script("plot_scaling", write_csv(tmp_path / "one.csv", one_count),
                        tmp_path / "plot.png")
    assert result.returncode == 0, result.stderr
    assert "one thread count" in result.stdout


def marked_unverified(lines, step):
    """The CSV lines with every row of step marked as failing verification."""
    return [line.replace(",yes,", ",no,") if line.startswith(f"{step},") else line
            for line in lines]


def test_unverified_rows_are_left_out_with_a_warning(tmp_path):
    wrong = marked_unverified(fixture_lines("run_all.csv"), "CUDA.v3")
    result = run_script("plot_progression", write_csv(tmp_path / "wrong.csv", wrong),
                        tmp_path / "plot.png")
    assert result.returncode == 0, result.stderr
    assert "CUDA.v3 kernel float32 8192 x 8192 failed verification" in result.stderr


def test_mixed_gpus_in_one_file_are_an_error(tmp_path):
    lines = fixture_lines("run_all.csv")
    mixed = [line.replace("NVIDIA H100 80GB HBM3", "Tesla T4") if line.startswith("CUDA.v1,")
             else line for line in lines]
    result = run_script("plot_progression", write_csv(tmp_path / "mixed.csv", mixed),
                        tmp_path / "plot.png")
    assert result.returncode == 1
    assert "several devices" in result.stderr and "Tesla T4" in result.stderr


# --- read_results directly.

def test_read_results_converts_every_field():
    rows = read_results(FIXTURES / "run_all.csv")
    assert [row["step"] for row in rows] == [
        "CPU.omp", "CPU.omp", "CUDA.v1", "CUDA.v2", "CUDA.v3", "CUDA.v4", "CUDA.v5_unroll",
        "CUDA.cublas"]
    first = rows[0]
    assert list(first) == COLUMNS
    assert (first["rows"], first["cols"], first["threads"], first["reps"]) == (8192, 8192, 32, 10)
    assert all(isinstance(first[name], int) for name in ("rows", "cols", "threads", "reps"))
    assert first["median_ms"] == pytest.approx(29.020049)
    assert first["gbps"] == pytest.approx(18.5)
    assert isinstance(first["pct_of_ceiling"], float)
    assert first["verified"] is True
    assert (first["dtype"], first["elem_bytes"], first["kind"]) == ("float32", 4, "cpu")
    assert rows[2]["kind"] == "kernel"
    cublas = rows[-1]
    assert cublas["threads"] == 0 and cublas["launch"] == "cublasSgeam"


def test_read_results_unquotes_fields():
    summaries = {row["step"]: row["summary"] for row in read_results(FIXTURES / "run_all.csv")}
    assert summaries["CUDA.v3"] == ("shared-memory tile: both global streams coalesced, "
                                    "bank conflicts in the tile")
    assert summaries["CUDA.v4"] == 'padded tile "[TILE][TILE+1]": no bank conflicts'


def test_fixture_rows_are_self_consistent():
    # The fixtures stand in for real runs: their numbers must obey the schema's formulas.
    for name in ("run_all.csv", "sweep.csv", "scaling.csv", "dtypes.csv", "multigpu.csv",
                 "permute.csv"):
        read = read_permute_results if name == "permute.csv" else read_results
        for row in read(FIXTURES / name):
            assert row["elem_bytes"] == DTYPES[row["dtype"]]
            traffic = 2 * row["rows"] * row["cols"] * row["elem_bytes"]
            assert row["gbps"] == pytest.approx(traffic / row["median_ms"] / 1e6, rel=1e-3)
            assert row["pct_of_ceiling"] == pytest.approx(
                100 * row["gbps"] / row["ceiling_gbps"], abs=0.01)


def test_empty_e2e_is_none(tmp_path):
    lines = fixture_lines("run_all.csv")
    fields = lines[-1].split(",")
    fields[COLUMNS.index("e2e_ms")] = ""
    rows = read_results(write_csv(tmp_path / "r.csv", [lines[0], ",".join(fields)]))
    assert rows[0]["e2e_ms"] is None


def test_blank_lines_are_ignored(tmp_path):
    lines = fixture_lines("scaling.csv")
    rows = read_results(write_csv(tmp_path / "r.csv", lines[:2] + [""] + lines[2:] + [""]))
    assert len(rows) == len(lines) - 1


def replace_field(tmp_path, column, value, line_index=2):
    """The scaling fixture with one field of one line replaced."""
    lines = fixture_lines("scaling.csv")
    fields = lines[line_index - 1].split(",")
    fields[COLUMNS.index(column)] = value
    lines[line_index - 1] = ",".join(fields)
    return write_csv(tmp_path / "r.csv", lines)


@pytest.mark.parametrize("column, value, problem", [
    ("median_ms", "fast", "'fast' is not a number"),
    ("gbps", "nan", "not a finite number"),
    ("rows", "8192.5", "not a whole number"),
    ("rows", "0", "must be positive"),
    ("threads", "-1", "must not be negative"),
    ("median_ms", "", "'' is not a number"),
    ("verified", "maybe", "neither 'yes' nor 'no'"),
    ("dtype", "fp32", "'fp32' is not an element type (one of uint8, float16,"),
    ("dtype", "", "'' is not an element type"),
    ("kind", "gpu", "'gpu' is not a kind of step (one of cpu, kernel,"),
    ("kind", "CPU", "'CPU' is not a kind of step"),
    ("elem_bytes", "0", "must be positive"),
    ("elem_bytes", "four", "not a whole number"),
    ("elem_bytes", "8", "8 is not the size of float32 (4 bytes)"),
])
def test_bad_field_names_line_and_column(column, value, problem, tmp_path):
    path = replace_field(tmp_path, column, value, line_index=3)
    with pytest.raises(ResultsError) as error:
        read_results(path)
    message = str(error.value)
    assert message.startswith(f"{path}: line 3, column '{column}': ")
    assert problem in message


def test_missing_file(tmp_path):
    with pytest.raises(ResultsError, match=r"nope\.csv: no such file"):
        read_results(tmp_path / "nope.csv")


def test_empty_file():
    with pytest.raises(ResultsError, match=r"empty\.csv: the file is empty"):
        read_results(FIXTURES / "empty.csv")


def test_header_names_missing_and_extra_columns():
    with pytest.raises(ResultsError) as error:
        read_results(FIXTURES / "bad_header.csv")
    message = str(error.value)
    assert "bad_header.csv: line 1" in message
    assert "missing column(s) median_ms" in message
    assert "unexpected column(s) median, notes" in message


def test_header_in_another_order(tmp_path):
    swapped = COLUMNS[1:2] + COLUMNS[:1] + COLUMNS[2:]
    with pytest.raises(ResultsError, match="another order"):
        read_results(write_csv(tmp_path / "r.csv", [",".join(swapped)]))


def test_short_row_gives_line_and_counts():
    with pytest.raises(ResultsError) as error:
        read_results(FIXTURES / "short_row.csv")
    assert "short_row.csv: line 3 has 12 field(s), the header has 18" in str(error.value)


def test_read_profile_converts_counters():
    rows = results_csv.read_profile(FIXTURES / "profile.csv")
    assert [row["step"] for row in rows][:2] == ["CUDA.v1", "CUDA.v2"]
    assert (rows[0]["rows"], rows[0]["cols"]) == (4096, 4096)
    assert (rows[0]["dtype"], rows[0]["elem_bytes"]) == ("float32", 4)
    assert rows[1]["gst_sectors"] == 8 * rows[1]["gld_sectors"]
    assert rows[-1]["kernel"].startswith("void geam_kernel<float")
    with pytest.raises(ResultsError, match="missing column"):
        results_csv.read_profile(FIXTURES / "run_all.csv")


def test_directory_is_an_error(tmp_path):
    with pytest.raises(ResultsError, match="is a directory"):
        read_results(tmp_path)


# --- The shared selections.

def test_steps_in_order_is_first_appearance():
    rows = [{"step": name} for name in ("CPU.omp", "CUDA.v2", "CPU.omp", "CUDA.v10", "CUDA.v2")]
    assert results_csv.steps_in_order(rows) == ["CPU.omp", "CUDA.v2", "CUDA.v10"]


def test_best_per_step_and_size_picks_the_faster_cpu_variant():
    best = results_csv.best_per_step_and_size(read_results(FIXTURES / "sweep.csv"))
    assert best[("CPU.omp", "float32", (8192, 8192))]["variant"] == "blocked"
    assert best[("CUDA.v4", "float32", (2048, 8192))]["gbps"] == pytest.approx(1750.0)
    assert len(best) == 5 * 4  # five steps at four sizes


def test_usable_rows_keeps_the_last_repeat_and_drops_unverified(capsys):
    rows = read_results(FIXTURES / "run_all.csv")
    rerun = dict(rows[2], median_ms=1.0)
    wrong = dict(rows[3], verified=False)
    kept = results_csv.usable_rows(rows + [rerun, wrong], "f.csv")
    assert len(kept) == len(rows) - 1
    assert [row["median_ms"] for row in kept if row["step"] == "CUDA.v1"] == [1.0]
    assert all(row["step"] != "CUDA.v2" for row in kept)
    messages = capsys.readouterr().err
    assert "2 repeated measurement(s)" in messages
    assert "CUDA.v2 kernel float32 8192 x 8192 failed verification" in messages


def test_choose_size_takes_the_largest(capsys):
    rows = read_results(FIXTURES / "sweep.csv")
    assert results_csv.choose_size(rows, "sweep.csv") == (16384, 16384)
    assert "4 matrix sizes" in capsys.readouterr().err


# --- Element types: rows that differ only in dtype stay apart everywhere.

def as_dtype(rows, dtype, slower=2.0):
    """Copies of rows as measurements of another element type (slower, so they differ)."""
    return [dict(row, dtype=dtype, elem_bytes=DTYPES[dtype], median_ms=row["median_ms"] * slower,
                 gbps=row["gbps"] / slower * DTYPES[dtype] / row["elem_bytes"])
            for row in rows]


def test_usable_rows_keeps_rows_that_differ_only_in_dtype(capsys):
    rows = read_results(FIXTURES / "run_all.csv")
    both = rows + as_dtype(rows, "float16") + as_dtype(rows, "bfloat16")
    kept = results_csv.usable_rows(both, "f.csv")
    assert len(kept) == 3 * len(rows)
    assert "repeated" not in capsys.readouterr().err


def test_best_per_step_and_size_keeps_dtypes_apart():
    rows = read_results(FIXTURES / "sweep.csv")
    best = results_csv.best_per_step_and_size(rows + as_dtype(rows, "float16"))
    assert len(best) == 2 * 5 * 4
    f32, f16 = (best[("CUDA.v4", dtype, (2048, 8192))] for dtype in ("float32", "float16"))
    assert (f32["dtype"], f16["dtype"]) == ("float32", "float16")
    assert f16["median_ms"] == pytest.approx(2 * f32["median_ms"])


def test_choose_dtype_prefers_float32_and_says_so(capsys):
    rows = read_results(FIXTURES / "dtypes.csv")
    assert results_csv.choose_dtype(rows, "d.csv") == "float32"
    assert "7 element types" in capsys.readouterr().err
    assert results_csv.choose_dtype(rows, "d.csv", "bfloat16") == "bfloat16"
    only16 = [row for row in rows if row["dtype"] in ("float16", "bfloat16")]
    assert results_csv.choose_dtype(only16, "d.csv") == "float16"
    with pytest.raises(results_csv.NothingToPlot, match="no rows of dtype uint8"):
        results_csv.choose_dtype(only16, "d.csv", "uint8")


def test_progression_table_keeps_dtypes_apart_and_compares_within_one():
    rows = read_results(FIXTURES / "run_all.csv")
    steps = results_csv.steps_in_order(rows)
    header, one = report_tables.progression_table(rows, steps)
    header, lines = report_tables.progression_table(rows + as_dtype(rows, "float16"), steps)
    assert len(lines) == 2 * len(one)
    names = [line[0] for line in lines]
    assert "CUDA.v2 float32" in names and "CUDA.v2 float16" in names
    assert "CPU.omp blocked float16" in names
    # vs best CPU and vs previous compare rows of the same dtype: the float16 copies are all
    # twice as slow, so their ratios equal the float32 ones.
    by_name = {line[0]: line for line in lines}
    for line in one:
        name = line[0].split(" float32")[0]
        assert by_name[f"{name} float16"][5:7] == by_name[f"{name} float32"][5:7] == line[5:7]
    assert all(" float" not in line[0] for line in one)  # one dtype: names as before


def test_scaling_and_bench_tables_keep_dtypes_apart():
    rows = read_results(FIXTURES / "scaling.csv")
    header, lines = report_tables.scaling_table(rows + as_dtype(rows, "float64"))
    assert len(lines) == 2 * len(rows)
    assert any(line[0] == "CPU.omp naive float64" for line in lines)
    assert all(line[-1] != "-" for line in lines)  # each against its own dtype at 1 thread
    rows = read_results(FIXTURES / "run_all.csv")
    header, lines = report_tables.bench_table(rows + as_dtype(rows, "complex64"), ["8192x8192"],
                                              "CUDA.cublas", "CUDA.v5_unroll")
    assert [line[0] for line in lines] == ["8192x8192 float32", "8192x8192 complex64"]


def test_dtypes_table_has_a_line_per_dtype_and_n_a_for_a_refused_one():
    rows = read_results(FIXTURES / "dtypes.csv")
    steps = ["CUDA.v5_unroll", "CUDA.v6_locality", "CUDA.cublas"]
    header, lines = report_tables.dtypes_table(rows, steps, with_gbps=True)
    assert header == ["dtype", "bytes", *steps]
    assert [line[0] for line in lines] == list(DTYPES)
    by_dtype = {line[0]: line for line in lines}
    assert by_dtype["uint8"][4] == "n/a"  # the fixture's cuBLAS has no uint8 row
    assert by_dtype["float16"][1] == by_dtype["bfloat16"][1] == "2"
    assert by_dtype["float16"][3] != by_dtype["bfloat16"][3]  # two measurements, not one
    assert by_dtype["float32"][3] == "97.0% (2784 GB/s)"
    assert report_tables.dtype_table_steps(rows, ["CUDA.cublas"]) == steps


def test_dtypes_table_takes_the_best_cpu_variant_and_names_statuses():
    rows = read_results(FIXTURES / "dtypes.csv")
    statuses = {("CUDA.v9", "uint8"): "skipped"}
    header, lines = report_tables.dtypes_table(rows, ["CPU.omp", "CUDA.v9"], statuses)
    by_dtype = {line[0]: line for line in lines}
    assert by_dtype["float32"][2] == "50.0%"  # blocked, not naive
    assert by_dtype["uint8"][3] == "skipped" and by_dtype["float32"][3] == "n/a"


# --- CPU or GPU: the kind column, never the step's name.

def renamed(lines, old, new, kind=None):
    out = [lines[0]]
    for line in lines[1:]:
        if line.startswith(old + ","):
            line = new + line[len(old):]
            if kind:
                fields = line.split(",")
                fields[COLUMNS.index("kind")] = kind
                line = ",".join(fields)
        out.append(line)
    return out


def test_a_cpu_row_is_known_by_its_kind_whatever_its_name():
    rows = read_results(FIXTURES / "run_all.csv")
    odd = [dict(row, step="omp") if row["kind"] == "cpu" else row for row in rows]
    odd += [dict(rows[2], step="CPU.lookalike")]  # a GPU row with a CPU-like name
    assert [row["step"] for row in odd if results_csv.is_cpu(row)] == ["omp", "omp"]
    assert results_csv.is_gpu(odd[-1]) and not results_csv.is_cpu(odd[-1])
    assert results_csv.cpu_steps(odd) == ["omp"]
    assert report_tables.best_cpu(odd)["variant"] == "blocked"
    colors = plot_style.step_colors(odd)
    assert colors["omp"] == plot_style.CPU_COLOR
    assert colors["CPU.lookalike"] != plot_style.CPU_COLOR


def test_plots_find_the_cpu_rows_by_kind(tmp_path):
    lines = renamed(fixture_lines("run_all.csv"), "CPU.omp", "omp")
    out = tmp_path / "plot.png"
    result = run_script("plot_progression", write_csv(tmp_path / "odd.csv", lines), out)
    assert result.returncode == 0, result.stderr
    assert out.read_bytes()[:8] == PNG_MAGIC
    # Named like a CPU step but of the kernel kind: no CPU rows, so nothing to compare against.
    lines = renamed(fixture_lines("run_all.csv"), "CPU.omp", "CPU.gpu", kind="kernel")
    result = run_script("plot_progression", write_csv(tmp_path / "no_cpu.csv", lines), out)
    assert result.returncode == 0 and "no CPU rows" in result.stdout


# --- The plots on several element types.

@pytest.mark.parametrize("script", ["plot_progression", "plot_bandwidth", "plot_e2e"])
def test_a_one_dtype_plot_picks_float32_from_several_and_takes_dtype(script, tmp_path):
    out = tmp_path / "plot.png"
    result = run_script(script, FIXTURES / "dtypes.csv", out)
    assert result.returncode == 0, result.stderr
    assert "plotting float32" in result.stderr and "repeated" not in result.stderr
    out.unlink()
    result = run_script(script, FIXTURES / "dtypes.csv", out, "--dtype", "bfloat16")
    assert result.returncode == 0, result.stderr
    assert out.read_bytes()[:8] == PNG_MAGIC


def test_a_dtype_the_file_lacks_is_a_skip(tmp_path):
    out = tmp_path / "plot.png"
    result = run_script("plot_progression", FIXTURES / "run_all.csv", out, "--dtype", "uint8")
    assert result.returncode == 0
    assert "no rows of dtype uint8" in result.stdout and not out.exists()


def test_the_dtypes_plot_draws_both_types_of_one_size():
    from transpose_lab import plot_dtypes
    rows = read_results(FIXTURES / "dtypes.csv")
    best = plot_dtypes.best_per_step_and_dtype(rows)
    assert best[("CUDA.v6_locality", "float16")] is not best[("CUDA.v6_locality", "bfloat16")]
    assert best[("CPU.omp", "float32")]["variant"] == "blocked"
    assert plot_dtypes.size_tick_labels()[1] == "2 B\nfloat16\nbfloat16"
    assert set(plot_dtypes.DTYPE_MARKERS) == set(DTYPES)
    assert len(set(plot_dtypes.DTYPE_MARKERS.values())) == len(DTYPES)


# --- The multi-GPU picture's table.

def test_multigpu_table_derives_the_exchange_figures(tmp_path):
    table = tmp_path / "multigpu.md"
    result = run_script("plot_multigpu", FIXTURES / "multigpu.csv", tmp_path / "m.png",
                        "--table", table)
    assert result.returncode == 0, result.stderr
    lines = table.read_text().splitlines()
    assert len(lines) == 2 + 12  # header, rule, 2 types x 2 sizes x 3 runs
    cells = {(c[1], c[2], c[3]): c for c in (
        [cell.strip() for cell in line.split("|")] for line in lines[2:])}
    two = cells[("2", "single-process", "32768\u00b2 float32")]
    # 4 GiB over 2 GPUs in 17.6 ms: algbw 122.0 GB/s, busbw half of it; the fixture's
    # all-to-all took 15.2 ms (86.4%); v7 alone 2.112 ms, so 2 GPUs take 8.3x its time.
    scale = 16
    assert two[4] == f"{1.10 * scale:.4f}" and two[5] == f"{0.95 * scale:.4f}"
    assert two[6] == "86.4%"
    algbw = 32768 * 32768 * 4 / 2 / (1.10 * scale * 1e-3) / 1e9
    assert two[7] == f"{algbw:.1f}" and two[8] == f"{algbw / 2:.1f}"
    assert two[9] == f"{0.132 * scale:.4f}" and two[10] == f"{0.132 / 1.10:.2f}x"
    one = cells[("1", "single-process", "8192\u00b2 complex128")]
    assert one[5:9] == ["-", "-", "-", "-"]  # one GPU: nothing exchanged


def test_multigpu_plot_leaves_out_virtual_ranks(tmp_path):
    lines = [line for line in fixture_lines("multigpu.csv")
             if not line.startswith("CUDA.v9_multigpu,gpus=")]
    lines += [line.replace("gpus=1 single-process", "virtual=3")
              for line in fixture_lines("multigpu.csv") if "gpus=1 single-process" in line]
    result = run_script("plot_multigpu", write_csv(tmp_path / "virtual.csv", lines),
                        tmp_path / "m.png")
    assert result.returncode == 0, result.stderr
    assert result.stdout.startswith("skipped: ") and "on real GPUs" in result.stdout


def test_multigpu_table_keeps_the_peer_exchange_apart(tmp_path):
    lines = fixture_lines("multigpu.csv")
    peer = [line.replace("gpus=2 single-process,", "gpus=2 single-process peer,")
            for line in lines if "gpus=2 single-process," in line]
    table = tmp_path / "multigpu.md"
    result = run_script("plot_multigpu", write_csv(tmp_path / "peer.csv", lines + peer),
                        tmp_path / "m.png", "--table", table)
    assert result.returncode == 0, result.stderr
    modes = [line.split("|")[2].strip() for line in table.read_text().splitlines()[2:]]
    assert modes.count("single-process peer") == len(peer) > 0
    assert modes.count("single-process") == len(modes) - len(peer) - modes.count("mpi")


def test_multigpu_table_names_registered_buffers_and_windows(tmp_path):
    # The launch text is all that tells --nccl-buffers registered and windows from plain: each
    # way gets its own mode in the table, and plain rows keep theirs.
    lines = fixture_lines("multigpu.csv")
    two = [line for line in lines if "gpus=2 single-process," in line]
    ways = {"registered": "registered NCCL buffers, ",
            "windows": "symmetric NCCL windows (ncclAlltoAll, zero CTAs), "}
    extra = [line.replace("chunks, ", "chunks, " + words, 1)
             for words in ways.values() for line in two]
    assert all(any(words in line for line in extra) for words in ways.values())
    table = tmp_path / "multigpu.md"
    result = run_script("plot_multigpu", write_csv(tmp_path / "ways.csv", lines + extra),
                        tmp_path / "m.png", "--table", table)
    assert result.returncode == 0, result.stderr
    modes = [line.split("|")[2].strip() for line in table.read_text().splitlines()[2:]]
    for way in ways:
        assert modes.count(f"single-process {way}") == len(two) > 0
    plain_row = re.compile(r"CUDA\.v9_multigpu,gpus=\d+ single-process,")
    plain = [line for line in lines if plain_row.match(line)]
    assert modes.count("single-process") == len(plain)


# --- Chapter 3's picture.

def test_permute_plot_leaves_a_wrong_result_out_and_reads_a_matrix_csv_as_an_error(tmp_path):
    wrong = marked_unverified(fixture_lines("permute.csv"), "PERMUTE.v3_tiled")
    result = run_script("plot_permute", write_csv(tmp_path / "wrong.csv", wrong),
                        tmp_path / "plot.png")
    assert result.returncode == 0, result.stderr
    assert result.stderr.count("PERMUTE.v3_tiled kernel") == 6  # 3 cases x 2 types
    assert "failed verification" in result.stderr
    result = run_script("plot_permute", FIXTURES / "run_all.csv", tmp_path / "matrix.png")
    assert result.returncode == 1 and "shape, perm" in result.stderr


def test_two_cases_of_one_matrix_shape_are_two_measurements():
    from transpose_lab.plot_permute import case_key
    rows = read_permute_results(FIXTURES / "permute.csv")
    assert len({case_key(row) for row in rows}) == len(rows)
    first = dict(rows[0])
    other = dict(first, shape="x".join(reversed(first["shape"].split("x"))))
    assert case_key(first) != case_key(other)
