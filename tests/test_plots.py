"""The plot scripts and their shared CSV reader (plots/results_csv.py).

Each script runs as a student would run it (a subprocess) on the hand-made fixtures in
tests/fixtures/, and must write a real PNG; bad input must fail with a message naming the file.
"""

import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent
PLOTS = REPO / "plots"
FIXTURES = Path(__file__).resolve().parent / "fixtures"
PNG_MAGIC = b"\x89PNG\r\n\x1a\n"

sys.path.insert(0, str(PLOTS))
import results_csv  # noqa: E402  (lives in plots/, found through the path above)
from results_csv import COLUMNS, ResultsError, read_results  # noqa: E402

# Each script with the fixture it is meant for.
SCRIPTS = {
    "plot_progression.py": "run_all.csv",
    "plot_bandwidth.py": "sweep.csv",
    "plot_scaling.py": "scaling.csv",
    "plot_e2e.py": "sweep.csv",
    "plot_profile.py": "profile.csv",
}


def run_script(script, csv_path, out_path):
    return subprocess.run([sys.executable, str(PLOTS / script), "--csv", str(csv_path),
                           "--out", str(out_path)],
                          capture_output=True, text=True, timeout=120)


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
    result = subprocess.run([sys.executable, str(PLOTS / script), "--help"],
                            capture_output=True, text=True, timeout=60)
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
    lines[2] = lines[2].rsplit(",", 3)[0]
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
    result = run_script("plot_profile.py", FIXTURES / "run_all.csv", tmp_path / "plot.png")
    assert result.returncode == 1
    assert "missing column(s) kernel" in result.stderr


# --- Valid files with nothing for a plot: "skipped:", exit 0, no PNG.

@pytest.mark.parametrize("script, fixture, reason", [
    ("plot_progression.py", "scaling.csv", "no GPU rows"),
    ("plot_e2e.py", "scaling.csv", "no GPU rows"),
])
def test_script_skips_without_relevant_rows(script, fixture, reason, tmp_path):
    out = tmp_path / "plot.png"
    result = run_script(script, FIXTURES / fixture, out)
    assert result.returncode == 0, result.stderr
    assert result.stdout.startswith("skipped: ")
    assert reason in result.stdout
    assert not out.exists()


@pytest.mark.parametrize("script", [s for s in SCRIPTS if s != "plot_profile.py"])
def test_header_only_file_is_skipped(script, tmp_path):
    csv_path = write_csv(tmp_path / "header_only.csv", [",".join(COLUMNS)])
    result = run_script(script, csv_path, tmp_path / "plot.png")
    assert result.returncode == 0, result.stderr
    assert result.stdout.startswith("skipped: ")


def test_scaling_with_one_thread_count_is_skipped(tmp_path):
    lines = fixture_lines("scaling.csv")
    one_count = [lines[0]] + [line for line in lines[1:] if ",8192,8192,1," in line]
    result = run_script("plot_scaling.py", write_csv(tmp_path / "one.csv", one_count),
                        tmp_path / "plot.png")
    assert result.returncode == 0, result.stderr
    assert "one thread count" in result.stdout


def test_unverified_rows_are_left_out_with_a_warning(tmp_path):
    lines = fixture_lines("run_all.csv")
    wrong = [line.replace(",yes,", ",no,") if line.startswith("CUDA.v3,") else line
             for line in lines]
    result = run_script("plot_progression.py", write_csv(tmp_path / "wrong.csv", wrong),
                        tmp_path / "plot.png")
    assert result.returncode == 0, result.stderr
    assert "CUDA.v3 kernel 8192 x 8192 failed verification" in result.stderr


def test_mixed_gpus_in_one_file_are_an_error(tmp_path):
    lines = fixture_lines("run_all.csv")
    mixed = [line.replace("NVIDIA H100 80GB HBM3", "Tesla T4") if line.startswith("CUDA.v1,")
             else line for line in lines]
    result = run_script("plot_progression.py", write_csv(tmp_path / "mixed.csv", mixed),
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
    cublas = rows[-1]
    assert cublas["threads"] == 0 and cublas["launch"] == "cublasSgeam"


def test_read_results_unquotes_fields():
    summaries = {row["step"]: row["summary"] for row in read_results(FIXTURES / "run_all.csv")}
    assert summaries["CUDA.v3"] == ("shared-memory tile: both global streams coalesced, "
                                    "bank conflicts in the tile")
    assert summaries["CUDA.v4"] == 'padded tile "[TILE][TILE+1]": no bank conflicts'


def test_fixture_rows_are_self_consistent():
    # The fixtures stand in for real runs: their numbers must obey the schema's formulas.
    for name in ("run_all.csv", "sweep.csv", "scaling.csv"):
        for row in read_results(FIXTURES / name):
            traffic = 2 * row["rows"] * row["cols"] * 4
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
    assert "short_row.csv: line 3 has 9 field(s), the header has 15" in str(error.value)


def test_read_profile_converts_counters():
    rows = results_csv.read_profile(FIXTURES / "profile.csv")
    assert [row["step"] for row in rows][:2] == ["CUDA.v1", "CUDA.v2"]
    assert (rows[0]["rows"], rows[0]["cols"]) == (4096, 4096)
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
    assert best[("CPU.omp", (8192, 8192))]["variant"] == "blocked"
    assert best[("CUDA.v4", (2048, 8192))]["gbps"] == pytest.approx(1750.0)
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
    assert "CUDA.v2 kernel 8192 x 8192 failed verification" in messages


def test_choose_size_takes_the_largest(capsys):
    rows = read_results(FIXTURES / "sweep.csv")
    assert results_csv.choose_size(rows, "sweep.csv") == (16384, 16384)
    assert "4 matrix sizes" in capsys.readouterr().err
