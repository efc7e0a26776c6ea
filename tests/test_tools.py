"""The make targets' runner: run-all prints one table, skips CUDA rows without a GPU, and fails
loudly when a step fails."""
import subprocess
import sys

from conftest import CPU_STEPS, CUDA_STEPS, ROOT, gpu_unavailable_reason

RUNNER = ROOT / "tools" / "run_steps.py"


def runner(*args):
    return subprocess.run([sys.executable, str(RUNNER), *map(str, args)], capture_output=True,
                          text=True, timeout=600)


def test_run_all_prints_one_table_with_every_step(tmp_path):
    csv_path = tmp_path / "run_all.csv"
    done = runner("run-all", "--steps", *CPU_STEPS, *CUDA_STEPS, "--rows", 96, "--cols", 80,
                  "--reps", 2, "--csv", csv_path)
    assert done.returncode == 0, done.stdout + done.stderr
    for step in CPU_STEPS + CUDA_STEPS:
        assert step in done.stdout
    assert "CPU.omp blocked" in done.stdout and "verified" in done.stdout
    if gpu_unavailable_reason():
        assert "skipped" in done.stdout or "not built" in done.stdout
    else:
        assert "WRONG" not in done.stdout and "skipped" not in done.stdout


def test_run_all_fails_when_a_step_fails(tmp_path):
    # A size the programs reject is a failure of that step, and the runner must say so.
    done = runner("run-all", "--steps", *CPU_STEPS, "--rows", 0, "--cols", 8, "--csv",
                  tmp_path / "x.csv")
    assert done.returncode == 1
    assert "CPU.omp: failed: exit 2" in done.stdout


FIXTURES = ROOT / "tests" / "fixtures"


def test_readme_tables_fill_only_their_markers(tmp_path):
    for name in ("run_all.csv", "scaling.csv", "profile.csv"):
        (tmp_path / name).write_text((FIXTURES / name).read_text())
    readme = tmp_path / "README.md"
    readme.write_text("intro\n<!-- table:progression -->\nstale\n<!-- end:progression -->\n"
                      "<!-- table:bench -->\nkept\n<!-- end:bench -->\noutro\n")
    done = subprocess.run([sys.executable, str(ROOT / "tools" / "readme_tables.py"), "--results",
                           str(tmp_path), "--readme", str(readme)], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    text = readme.read_text()
    assert text.startswith("intro\n") and text.endswith("outro\n")
    assert "stale" not in text and "| CUDA.v2 |" in text and "| step | what it does |" in text
    assert "kept" in text and "table bench: skipped" in done.stdout  # no bench.csv: untouched


def test_make_plots_draws_what_it_can_and_names_what_it_cannot(tmp_path):
    (tmp_path / "run_all.csv").write_text((FIXTURES / "run_all.csv").read_text())
    done = subprocess.run([sys.executable, str(ROOT / "tools" / "make_plots.py"), "--results",
                           str(tmp_path)], capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    assert (tmp_path / "progression.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert "scaling.png: skipped" in done.stdout and "make scaling" in done.stdout


def make(*args):
    return subprocess.run(["make", "--no-print-directory", "-C", str(ROOT), *args],
                          capture_output=True, text=True, timeout=120)


def test_make_help_lists_every_target():
    done = make("help")
    assert done.returncode == 0
    for target in ("all", "run-all", "test", "scaling", "sweep", "bench", "profile", "plots",
                   "readme", "diff", "clean"):
        assert f"make {target}" in done.stdout


def test_without_nvcc_make_builds_the_cpu_steps_and_says_so_once():
    done = make("--dry-run", "all", "NVCC=")
    assert done.returncode == 0, done.stderr
    assert done.stdout.count("nvcc not found") == 1
    assert "nvcc" not in done.stdout.replace("nvcc not found", "")


def test_make_diff_shows_only_the_lesson_of_v4():
    done = make("diff", "STEP=CUDA.v4")
    assert done.returncode == 0
    changed = [line for line in done.stdout.splitlines()
               if line[:1] in "+-" and not line.startswith(("+++", "---"))]
    code = [line for line in changed if not line[1:].lstrip().startswith("//")]
    assert any("TILE_DIM + 1" in line for line in code)
    assert len(code) <= 6, code  # the padding and the summary string, nothing else


def test_make_diff_rejects_an_unknown_step():
    done = make("diff", "STEP=CUDA.v99")
    assert done.returncode != 0 and "usage: make diff STEP=X" in done.stderr


def test_a_step_readme_table_shows_every_variant_of_the_step_and_the_row_before(tmp_path):
    (tmp_path / "run_all.csv").write_text((FIXTURES / "run_all.csv").read_text())
    (tmp_path / "README.md").write_text("no tables here\n")
    for step in ("CPU.omp", "CUDA.v2"):
        (tmp_path / step).mkdir()
        empty_table = "<!-- table:step-run -->\n<!-- end:step-run -->\n"
        (tmp_path / step / "README.md").write_text(empty_table)
    done = subprocess.run([sys.executable, str(ROOT / "tools" / "readme_tables.py"), "--results",
                           str(tmp_path), "--readme", str(tmp_path / "README.md"), "--steps",
                           "CPU.omp", "CUDA.v2"], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    cpu = (tmp_path / "CPU.omp" / "README.md").read_text()
    assert "| CPU.omp naive |" in cpu and "| CPU.omp blocked |" in cpu and "CUDA" not in cpu
    v2_lines = (tmp_path / "CUDA.v2" / "README.md").read_text().splitlines()
    v2 = [line.split("|")[1].strip() for line in v2_lines
          if line.startswith("| ") and "---" not in line]
    assert v2 == ["step", "CUDA.v1", "CUDA.v2"]
