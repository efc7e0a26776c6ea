import re
"""The make targets' runner (transpose_lab.run_steps): run-all prints one table, skips CUDA rows
without a GPU, takes a step's refusal of an element type as n/a, and fails loudly when a step
fails. Also make_plots, the reference runner and the Makefile's own targets."""
import os
import shutil
import subprocess
import sys

import pytest

from conftest import CPU_STEPS, CUDA_STEPS, ROOT, gpu_unavailable_reason
from transpose_lab import run_steps
from transpose_lab.results_csv import COLUMNS, DTYPES, read_results


def module(name, *args, timeout=600):
    return subprocess.run([sys.executable, "-m", f"transpose_lab.{name}", *map(str, args)],
                          capture_output=True, text=True, timeout=timeout, cwd=ROOT)


def runner(*args):
    return module("run_steps", *args)


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


def test_make_plots_draws_what_it_can_and_names_what_it_cannot(tmp_path):
    (tmp_path / "run_all.csv").write_text((FIXTURES / "run_all.csv").read_text())
    (tmp_path / "dtypes.csv").write_text((FIXTURES / "dtypes.csv").read_text())
    done = module("make_plots", "--results", tmp_path, timeout=300)
    assert done.returncode == 0, done.stderr
    assert (tmp_path / "progression.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert (tmp_path / "dtypes.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert "scaling.png: skipped" in done.stdout and "make scaling" in done.stdout


def test_make_plots_reads_a_reference_folder_by_its_file_names(tmp_path):
    # docs/results/<machine>/ names the run-all and dtypes CSVs kernels.csv and types.csv.
    (tmp_path / "kernels.csv").write_text((FIXTURES / "run_all.csv").read_text())
    (tmp_path / "types.csv").write_text((FIXTURES / "dtypes.csv").read_text())
    done = module("make_plots", "--results", tmp_path, timeout=300)
    assert done.returncode == 0, done.stderr
    assert (tmp_path / "progression.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert (tmp_path / "dtypes.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert "progression.png: skipped" not in done.stdout
    assert "dtypes.png: skipped" not in done.stdout


def make(*args):
    return subprocess.run(["make", "--no-print-directory", "-C", str(ROOT), *args],
                          capture_output=True, text=True, timeout=120)


def test_make_help_lists_every_target():
    done = make("help")
    assert done.returncode == 0
    for target in ("all", "run-all", "test", "scaling", "sweep", "bench", "dtypes", "profile",
                   "plots", "texts", "texts-check", "reference", "diff", "clean", "streams", "streams-sweep", "out-of-core",
                   "multigpu", "probes", "exercises", "check"):
        assert f"make {target}" in done.stdout
    # ...and every target the Makefile declares phony is in the list (none hidden).
    phony = " ".join(line.split(":", 1)[1] for line in (ROOT / "Makefile").read_text()
                     .replace("\\\n", " ").splitlines() if line.startswith(".PHONY:"))
    internal = {"tests-build", "help", "$(ALL_STEPS)"}  # each step: make CUDA.v4 builds one
    missing = [t for t in phony.split() if t not in internal and f"make {t}" not in done.stdout]
    assert not missing, missing
    assert "DTYPE" in done.stdout


def test_without_nvcc_make_builds_the_cpu_steps_and_says_so_once():
    done = make("--dry-run", "all", "NVCC=")
    assert done.returncode == 0, done.stderr
    assert done.stdout.count("nvcc not found") == 1
    assert "nvcc" not in done.stdout.replace("nvcc not found", "")


def diff_code(stdout):
    """The changed lines of the code part of `make diff` (below its header), blank ones left out."""
    code = stdout.split("\n# the code", 1)[1].splitlines()[1:]
    return [line for line in code if line[:1] in ("+", "-") and not line.startswith(("+++", "---"))
            and line[1:].strip()]


def test_make_diff_shows_the_header_apart_and_only_the_lesson_of_v4():
    done = make("diff", "STEP=CUDA.v4")
    assert done.returncode == 0, done.stderr
    header, code_part = done.stdout.split("\n# the code", 1)
    assert "CUDA.v4" in header and "TILE_DIM + 1" in header  # the header, once, as it stands
    labels = [line for line in code_part.splitlines() if line.startswith(("---", "+++"))][:2]
    assert labels == ["--- CUDA.v3/transpose.cu", "+++ CUDA.v4/transpose.cu"]  # no dates
    code = diff_code(done.stdout)
    assert any("TILE_DIM + 1" in line for line in code)
    assert not any(line[1:].lstrip().startswith("// CUDA.v") for line in code)  # no header lines
    assert len(code) <= 6, code  # the padding and the summary string, nothing else


def test_make_diff_works_from_inside_a_step_folder():
    done = subprocess.run(["make", "--no-print-directory", "-C", str(ROOT / "CUDA.v4"), "diff"],
                          capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines()[0].startswith("# CUDA.v4 against CUDA.v3")
    assert done.stdout == make("diff", "STEP=CUDA.v4").stdout


# At most 30 changed lines of code for a step of one idea. v1 is the first kernel (nothing to
# diff in kernel terms); v6 makes three changes with one aim (its text names them); v7 replaces
# v6's kernel by the packed one.
DIFF_LIMITS = {"CUDA.v6_locality": 80, "CUDA.v7_packed": 180}


@pytest.mark.parametrize("step", ["CUDA.v2", "CUDA.v3", "CUDA.v4", "CUDA.v5_unroll",
                                  "CUDA.v6_locality", "CUDA.v7_packed"])
def test_a_step_diff_is_small_and_counts_its_lines_right(step):
    done = make("diff", f"STEP={step}")
    assert done.returncode == 0, done.stderr
    code = diff_code(done.stdout)
    said = re.search(r"# the code \((\d+) changed lines\)", done.stdout)
    assert said and len(code) <= int(said.group(1)), (said and said.group(0), len(code))
    assert int(said.group(1)) <= DIFF_LIMITS.get(step, 30), f"{step}: {said.group(0)}"


def test_make_diff_rejects_an_unknown_step():
    done = make("diff", "STEP=CUDA.v99")
    assert done.returncode != 0 and "usage: make diff STEP=X" in done.stderr


# --- The Makefile passes DTYPE on.

@pytest.mark.parametrize("target", ["run-all", "scaling", "sweep", "bench", "profile"])
def test_make_passes_dtype_to_the_runner(target):
    done = make("--dry-run", target, "DTYPE=float16", "NVCC=")
    assert done.returncode == 0, done.stderr
    lines = done.stdout.replace("\\\n", " ").splitlines()  # a recipe's continued lines as one
    command = next(line for line in lines if "transpose_lab." in line)
    flag = "--dtypes float16" if target == "bench" else "--dtype float16"  # bench: BENCH_DTYPES
    assert "-m transpose_lab." in command and flag in command


def test_make_dtypes_runs_every_dtype_then_draws_the_picture():
    done = make("--dry-run", "dtypes", "ROWS=256", "NVCC=")
    assert done.returncode == 0, done.stderr
    assert "transpose_lab.run_steps dtypes --steps" in done.stdout
    assert "--rows 256 --cols 256" in done.stdout and "dtypes.csv" in done.stdout
    assert "transpose_lab.plot_dtypes" in done.stdout and "dtypes.png" in done.stdout


# --- Exit codes of a program: ok, skipped (no GPU; too large for this machine), n/a (an element
# type it does not support), failed.

@pytest.mark.parametrize("code, stderr, status", [
    (0, "", "ok"),
    (77, "CUDA.v2: skipped: no CUDA device", "skipped"),
    (2, "CUDA.cublas: error: --dtype uint8: CUDA.cublas does not support uint8", "n/a"),
    (2, "error: bad size 'x'\nusage: transpose ROWS [COLS]", "failed"),
    (1, "verification failed: 3 does not support the claim", "failed"),
    (3, "S: 65536 x 65536 complex128 needs 68.7 GB of device memory", "skipped"),
])
def test_classify_exit_codes(code, stderr, status):
    run = run_steps.classify("S", code, stderr)
    assert run.status == status
    if code == 3:  # too large for this machine: said, and not a failure of the lab
        assert run.reason == stderr
    if status == "n/a":
        assert "does not support" in run.reason


FAKE_STEP = """#!{python}
# A fake step: writes one row of the results schema for the --dtype it is given, refuses the
# types in REFUSED (exit 2, one 'does not support' line) and fails on the ones in FAILS. With
# VARIANTS, a row per variant --variant names (all: each; a variant named tma is left out of all,
# in one line, where the columns are odd), each 5 points below the one before.
import sys
args = sys.argv[1:]
variants = {variants!r}
if "--list-variants" in args:
    print("\\n".join(variants))
    sys.exit(0)
chosen = args[args.index("--variant") + 1] if "--variant" in args else "all"
ran = [name for name in variants if chosen in ("all", name)] or ["kernel"]
if chosen == "all" and "tma" in ran and int(args[1]) % 2:
    ran.remove("tma")
    print("{step}: --variant all leaves out tma: cannot take " + args[0] + " x " + args[1],
          file=sys.stderr)
dtype = args[args.index("--dtype") + 1] if "--dtype" in args else "float32"
csv_path = args[args.index("--csv") + 1]
if dtype in {refused!r}:
    print("{step}: error: {step} does not support --dtype " + dtype, file=sys.stderr)
    sys.exit(2)
if dtype in {fails!r}:
    print("{step}: wrong answer", file=sys.stderr)
    sys.exit(1)
sizes = {sizes!r}
rows, cols = int(args[0]), int(args[1])
elem_bytes = sizes[dtype]
ms = {ms_scale} * elem_bytes
gbps = 2 * rows * cols * elem_bytes / ms / 1e6
ceiling = gbps * 100 / {pct}
import os
new = not os.path.exists(csv_path)
with open(csv_path, "a") as out:
    if new:
        out.write(",".join({columns!r}) + "\\n")
    for index, variant in enumerate(ran):
        out.write(",".join(map(str, ["{step}", variant, "fake device", dtype, elem_bytes,
            "{kind}", rows, cols, 1, "fake", 3, ms, round(gbps, 6), round(ceiling, 6),
            {pct} - 5 * index, "", "yes", "a fake step", "memcpy", round(ceiling, 6)])) + "\\n")
"""


def fake_step(root, step, kind="kernel", pct=50, refused=(), fails=(), ms_scale=1.0,
              variants=()):
    folder = root / step
    folder.mkdir(parents=True)
    program = folder / "transpose"
    program.write_text(FAKE_STEP.format(python=sys.executable, step=step, kind=kind, pct=pct,
                                        refused=set(refused), fails=set(fails),
                                        sizes=DTYPES, columns=COLUMNS, ms_scale=ms_scale,
                                        variants=list(variants)))
    program.chmod(0o755)


def table_cells(stdout, step):
    line = next(line for line in stdout.splitlines() if line.startswith(step + " "))
    return line.split()[1:]


def test_dtypes_runs_every_step_for_every_dtype_and_refusals_are_n_a(tmp_path):
    root = tmp_path / "lab"
    fake_step(root, "omp", kind="cpu", pct=40)
    fake_step(root, "CUDA.lib", pct=80, refused=("uint8",))
    csv_path = tmp_path / "out" / "dtypes.csv"
    done = runner("dtypes", "--steps", "omp", "CUDA.lib", "--rows", 64, "--cols", 32,
                  "--csv", csv_path, "--root", root)
    assert done.returncode == 0, done.stdout + done.stderr
    rows = read_results(csv_path)
    assert len(rows) == 2 * len(DTYPES) - 1
    assert {row["dtype"] for row in rows if row["step"] == "CUDA.lib"} == set(DTYPES) - {"uint8"}
    header = next(line for line in done.stdout.splitlines() if line.startswith("step "))
    assert header.split()[1:] == list(DTYPES)
    assert table_cells(done.stdout, "CUDA.lib") == ["n/a"] + ["80.0%"] * (len(DTYPES) - 1)
    assert table_cells(done.stdout, "omp") == ["40.0%"] * len(DTYPES)
    assert "CUDA.lib uint8: n/a: CUDA.lib: error: CUDA.lib does not support" in done.stdout
    assert "failed" not in done.stdout
    log = csv_path.with_suffix(".log").read_text()
    assert "--dtype complex128" in log and "--rows" not in log  # sizes go as ROWS COLS


def test_dtypes_reports_a_failure_and_exits_one(tmp_path):
    root = tmp_path / "lab"
    fake_step(root, "CUDA.bad", fails=("float64",))
    csv_path = tmp_path / "dtypes.csv"
    done = runner("dtypes", "--steps", "CUDA.bad", "CUDA.missing", "--rows", 8, "--cols", 8,
                  "--dtypes", "float32", "float64", "--csv", csv_path, "--root", root)
    assert done.returncode == 1
    assert table_cells(done.stdout, "CUDA.bad") == ["50.0%", "failed"]
    assert table_cells(done.stdout, "CUDA.missing") == ["not", "built", "not", "built"]
    assert "CUDA.bad float64: failed: exit 1: CUDA.bad: wrong answer" in done.stdout


def test_run_all_passes_dtype_and_a_refusal_is_not_a_failure(tmp_path):
    root = tmp_path / "lab"
    fake_step(root, "omp", kind="cpu", pct=40)
    fake_step(root, "CUDA.lib", pct=80, refused=("uint8",))
    csv_path = tmp_path / "run_all.csv"
    done = runner("run-all", "--steps", "omp", "CUDA.lib", "--rows", 16, "--cols", 16,
                  "--dtype", "uint8", "--csv", csv_path, "--root", root)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "16 x 16 uint8" in done.stdout
    assert "CUDA.lib: n/a: " in done.stdout
    (row,) = read_results(csv_path)
    assert (row["step"], row["dtype"], row["elem_bytes"], row["kind"]) == ("omp", "uint8", 1, "cpu")
    with open(csv_path.with_suffix(".log")) as log:
        assert "--dtype uint8" in log.read()


@pytest.mark.parametrize("command, extra", [
    ("sweep", ["--sizes", 8, 16]),
    ("bench", ["--shapes", "8x16"]),
    ("scaling", ["--rows", 8, "--cols", 8, "--threads", 1, 2]),
])
def test_every_command_passes_dtype_on(command, extra, tmp_path):
    root = tmp_path / "lab"
    steps = ["omp", "CUDA.lib"]
    fake_step(root, "omp", kind="cpu")
    fake_step(root, "CUDA.lib")
    csv_path = tmp_path / "out.csv"
    done = runner(command, "--steps", *steps, *extra, "--dtype", "complex128",
                  "--csv", csv_path, "--root", root)
    assert done.returncode == 0, done.stdout + done.stderr
    rows = read_results(csv_path)
    assert rows and all(row["dtype"] == "complex128" and row["elem_bytes"] == 16 for row in rows)


def test_the_runner_rejects_an_unknown_dtype(tmp_path):
    done = runner("run-all", "--steps", "omp", "--dtype", "fp32", "--csv", tmp_path / "x.csv")
    assert done.returncode == 2 and "invalid choice: 'fp32'" in done.stderr


def test_run_all_shows_the_other_kinds_in_their_own_section(tmp_path):
    root = tmp_path / "lab"
    fake_step(root, "CUDA.k", pct=90)
    fake_step(root, "CUDA.pipe", kind="host_pipeline", pct=60)
    fake_step(root, "CUDA.multi", kind="distributed", pct=85)
    csv_path = tmp_path / "run_all.csv"
    done = runner("run-all", "--steps", "CUDA.k", "--other-steps", "CUDA.pipe", "CUDA.multi",
                  "--rows", 16, "--cols", 16, "--csv", csv_path, "--root", root)
    assert done.returncode == 0, done.stdout + done.stderr
    main_table, other_section = done.stdout.split("Other kinds of step")
    assert "CUDA.pipe" not in main_table and "CUDA.multi" not in main_table
    assert [row["step"] for row in read_results(csv_path)] == ["CUDA.k"]  # the progression alone
    other = read_results(tmp_path / "run_all_other_kinds.csv")
    assert {(row["step"], row["kind"]) for row in other} == {("CUDA.pipe", "host_pipeline"),
                                                             ("CUDA.multi", "distributed")}
    assert table_cells(other_section, "CUDA.pipe")[:2] == ["host_pipeline", "kernel"]
    assert "60.0%" in other_section and "85.0%" in other_section


# --- Reference rows (CUDA.copy, the libraries) and kernel steps with variants.

REFERENCE_STEPS = subprocess.run(["make", "-s", "--no-print-directory", "-C", str(ROOT),
                                  "print-REFERENCE_STEPS"], capture_output=True, text=True,
                                 check=True).stdout.split()


def test_the_copy_kernel_is_the_first_reference_row_and_bench_keeps_the_libraries():
    assert REFERENCE_STEPS[0] == "CUDA.copy" and "CUDA.cublas" in REFERENCE_STEPS
    bench = make("--dry-run", "bench", "BENCH_DTYPES=uint8 float64")
    assert bench.returncode == 0, bench.stderr
    assert "bench --steps CUDA.cublas CUDA.cublaslt CUDA.v7_packed " in bench.stdout
    assert "--dtypes uint8 float64" in bench.stdout


def test_bench_compares_with_the_fastest_library_that_takes_the_type(tmp_path):
    root = tmp_path / "lab"
    fake_step(root, "CUDA.geam", pct=90, refused=("uint8",), ms_scale=1.1)
    fake_step(root, "CUDA.lt", pct=60, ms_scale=1.6)
    fake_step(root, "CUDA.last", pct=95)
    csv_path = tmp_path / "bench.csv"
    done = runner("bench", "--steps", "CUDA.lt", "CUDA.geam", "CUDA.last", "--shapes", "8x16",
                  "16x8", "--dtypes", "uint8", "float32", "--csv", csv_path, "--root", root)
    assert done.returncode == 0, done.stdout + done.stderr  # geam's refusal is not a failure
    lines = {tuple(line.split()[:2]): line.split()[2:] for line in done.stdout.splitlines()
             if line.split()[:1] in (["uint8"], ["float32"])}
    assert set(lines) == {(d, s) for d in ("uint8", "float32") for s in ("8x16", "16x8")}
    assert lines["uint8", "8x16"][:3] == ["95.0%", "CUDA.lt", "60.0%"]
    assert lines["float32", "16x8"] == ["95.0%", "CUDA.geam", "90.0%", "1.10x"]  # the faster
    rows = read_results(csv_path)
    assert {(row["step"], row["dtype"]) for row in rows} >= {("CUDA.last", "uint8"),
                                                             ("CUDA.lt", "uint8")}
    assert ("CUDA.geam", "uint8") not in {(row["step"], row["dtype"]) for row in rows}


def test_bench_measures_the_last_steps_tma_beside_its_kernel_and_says_in_one_line_where_not(
        tmp_path):
    root = tmp_path / "lab"
    fake_step(root, "CUDA.geam", pct=90, ms_scale=1.1)
    fake_step(root, "CUDA.lt", pct=60, ms_scale=1.6)
    fake_step(root, "CUDA.last", pct=95, variants=("kernel", "tma"))
    csv_path = tmp_path / "bench.csv"
    done = runner("bench", "--steps", "CUDA.lt", "CUDA.geam", "CUDA.last", "--shapes", "8x16",
                  "8x15", "--dtypes", "uint8", "float32", "--csv", csv_path, "--root", root)
    assert done.returncode == 0, done.stdout + done.stderr
    ran = {(row["variant"], row["dtype"], row["cols"]) for row in read_results(csv_path)
           if row["step"] == "CUDA.last"}
    assert ran == {(v, d, c) for d in ("uint8", "float32") for v, c in
                   (("kernel", 16), ("tma", 16), ("kernel", 15))}
    assert "CUDA.last/transpose 8 15 --dtype uint8 --variant all" in csv_path.with_suffix(
        ".log").read_text()
    lines = {tuple(line.split()[:3]): line.split()[3:] for line in done.stdout.splitlines()
             if line.split()[:1] in (["uint8"], ["float32"])}
    assert set(lines) == {(d, s, v) for d in ("uint8", "float32") for s, v in
                          (("8x16", "kernel"), ("8x16", "tma"), ("8x15", "kernel"))}
    assert lines["float32", "8x16", "tma"][:3] == ["90.0%", "CUDA.geam", "90.0%"]
    (left_out,) = [line for line in done.stdout.splitlines() if "left out" in line]
    assert left_out == ("CUDA.last: left out tma at 8x15 uint8 float32"
                        " (the first, 8x15 uint8: cannot take 8 x 15)")


@pytest.mark.parametrize("command, extra", [
    ("run-all", ["--rows", 8, "--cols", 16]),
    ("sweep", ["--sizes", 8, 16]),
    ("dtypes", ["--rows", 8, "--cols", 16, "--dtypes", "uint8", "float32"]),
])
def test_only_bench_runs_a_variant_beyond_the_lesson(command, extra, tmp_path):
    root = tmp_path / "lab"
    fake_step(root, "CUDA.last", variants=("kernel", "tma"))
    fake_step(root, "CUDA.two", variants=("first", "second"))
    csv_path = tmp_path / "out.csv"
    done = runner(command, "--steps", "CUDA.last", "CUDA.two", *extra, "--csv", csv_path,
                  "--root", root)
    assert done.returncode == 0, done.stdout + done.stderr
    rows = read_results(csv_path)
    assert {row["variant"] for row in rows if row["step"] == "CUDA.last"} == {"kernel"}
    assert {row["variant"] for row in rows if row["step"] == "CUDA.two"} == {"first", "second"}
    log = csv_path.with_suffix(".log").read_text()
    assert "--variant kernel" in log and "--variant all" in log  # the other step: every one


@pytest.mark.parametrize("step", REFERENCE_STEPS + ["CUDA.v8_streams", "CUDA.v9_multigpu"])
def test_make_diff_of_a_step_outside_the_progression_says_why_in_one_line(step):
    done = make("diff", f"STEP={step}")
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert len(lines) == 1 and lines[0].startswith(f"{step} is a "), done.stdout


def test_make_diff_offers_only_the_progression_and_never_diffs_against_a_reference():
    usage = make("diff", "STEP=CUDA.v99").stderr
    assert not any(step in usage for step in REFERENCE_STEPS)
    done = make("diff", "STEP=CUDA.v1")
    assert done.returncode == 0 and done.stdout.splitlines()[0].startswith("# CUDA.v1 against CPU.omp")


def result_row(step, ms, variant="kernel", kind="kernel", summary="a step"):
    return {"step": step, "variant": variant, "kind": kind, "dtype": "float32", "summary": summary,
            "launch": "grid", "median_ms": ms, "gbps": 1.0, "pct_of_ceiling": 1.0, "e2e_ms": None,
            "verified": True}


def test_a_reference_row_is_compared_with_the_last_step_and_never_becomes_the_previous_one():
    from transpose_lab.report_tables import progression_table
    rows = [result_row("CPU", 8.0, "blocked", kind="cpu"), result_row("S1", 2.0),
            result_row("S2", 1.0, "read-coalesced", summary="reads coalesced"),
            result_row("S2", 0.5, "write-coalesced", summary="writes coalesced"),
            result_row("COPY", 0.25, summary="reference: the copy kernel"),
            result_row("LIB", 1.0, summary="reference: a library")]
    _, lines = progression_table(rows, ["CPU", "S1", "S2", "COPY", "LIB"])
    by_name = {line[0]: line for line in lines}
    assert by_name["S2 write-coalesced"][1] == "writes coalesced"  # a kernel variant's summary
    assert by_name["CPU blocked"][1] == "grid"  # a CPU variant's split of the work
    assert by_name["COPY"][6] == "2.00x"  # against S2 write-coalesced, the last step's last row
    assert by_name["LIB"][6] == "0.50x"  # against the same row, not against COPY


FAKE_STEP_WITH_VARIANTS = """#!{python}
import sys
args = sys.argv[1:]
if "--list-variants" in args:
    print("first\\nsecond")
    sys.exit(0)
every = "--variant" in args and args[args.index("--variant") + 1] == "all"
csv_path = args[args.index("--csv") + 1]
import os
new = not os.path.exists(csv_path)
with open(csv_path, "a") as out:
    if new:
        out.write(",".join({columns!r}) + "\\n")
    for variant in (["first", "second"] if every else ["first"]):
        out.write(",".join(map(str, ["CUDA.var", variant, "fake device", "float32", 4, "kernel",
            16, 16, 1, "fake", 3, 1.0, 1.0, 2.0, 50.0, "", "yes", "a fake " + variant, "memcpy",
            2.0])) + "\\n")
"""


def test_run_all_runs_every_variant_of_a_step_that_lists_them(tmp_path):
    root = tmp_path / "lab"
    fake_step(root, "CUDA.k", pct=90)
    (root / "CUDA.var").mkdir()
    program = root / "CUDA.var" / "transpose"
    program.write_text(FAKE_STEP_WITH_VARIANTS.format(python=sys.executable, columns=COLUMNS))
    program.chmod(0o755)
    csv_path = tmp_path / "run_all.csv"
    done = runner("run-all", "--steps", "CUDA.k", "CUDA.var", "--rows", 16, "--cols", 16,
                  "--csv", csv_path, "--root", root)
    assert done.returncode == 0, done.stdout + done.stderr
    assert [(row["step"], row["variant"]) for row in read_results(csv_path)] == [
        ("CUDA.k", "kernel"), ("CUDA.var", "first"), ("CUDA.var", "second")]
    log = csv_path.with_suffix(".log").read_text()
    assert "CUDA.var/transpose 16 16 --dtype float32 --variant all" in log
    assert "CUDA.k/transpose 16 16 --dtype float32 --csv" in log  # no variants: no --variant


def test_the_benchmarks_of_the_other_kinds_are_make_targets_that_skip_without_a_gpu(tmp_path):
    done = make("streams", f"RESULTS={tmp_path}", "STREAMS_CASES=96x40:float64")
    assert done.returncode == 0, done.stdout + done.stderr
    assert "CPU.omp blocked 96x40 float64: verified" in done.stdout
    rows = read_results(tmp_path / "streams.csv")
    assert any(r["step"] == "CPU.omp" and r["dtype"] == "float64" for r in rows)
    if gpu_unavailable_reason() is None:  # with a GPU: the pipeline's rows, both ways down
        assert {"pipeline", "copy-engine-down"} <= {r["variant"] for r in rows}, rows
        assert (tmp_path / "streams_timeline.png").is_file()
    else:
        assert done.stdout.count("skipped") >= 4  # the pipeline runs, each said, never silent
    for target in ("multigpu", "out-of-core"):
        done = make(target, f"RESULTS={tmp_path}", "MULTIGPU_SIZES=64",
                    "OUT_OF_CORE_SHAPE=64x48:uint8", "OUT_OF_CORE_DEVICE_MEM=4096")
        assert done.returncode == 0, done.stdout + done.stderr


def test_a_bad_streams_case_is_refused_in_one_line():
    done = subprocess.run([sys.executable, "-m", "transpose_lab.other_kinds", "streams",
                           "--cases", "16384:float32"], cwd=ROOT, capture_output=True, text=True)
    assert done.returncode == 2 and "expected ROWSxCOLS[:DTYPE]" in done.stderr


def test_every_probe_fits_its_step_exactly_once():
    from transpose_lab import probes
    for probe in probes.PROBES:
        source = probes.probe_source(probe)
        original = (ROOT / probe.step / probe.file).read_text()
        changed = [(a, b) for a, b in zip(original.split("\n"), source.split("\n")) if a != b]
        assert changed == [(probe.line, probe.instead)], probe.name


def test_a_probe_that_no_longer_fits_is_refused(tmp_path):
    from transpose_lab import probes
    stale = probes.Probe("stale", "CUDA.v7_packed", "constexpr int NOT_THERE = 1;", "", "")
    with pytest.raises(probes.ProbeError, match="0 times, not once"):
        probes.probe_source(stale)
    done = subprocess.run([sys.executable, "-m", "transpose_lab.probes", "--probes", "nope"],
                          cwd=ROOT, capture_output=True, text=True)
    assert done.returncode == 2 and "unknown probe" in done.stderr


# --- make sanitize: compute-sanitizer of steps on every type (transpose_lab/sanitize.py).
def sanitize(*args, env=None):
    return subprocess.run([sys.executable, "-m", "transpose_lab.sanitize", *map(str, args)],
                          cwd=ROOT, capture_output=True, text=True, env=env)


def test_sanitize_refuses_bad_input_in_one_line():
    for args, message in ((["CPU.omp"], "runs on the CPU"), (["tests"], "is not a step"),
                          (["CUDA.v7_packed", "--dtypes", "int4"], "unknown type int4")):
        done = sanitize(*args)
        assert done.returncode == 2 and message in done.stderr, (args, done.stderr)
        assert len(done.stderr.strip().splitlines()) == 1


def test_sanitize_runs_every_supported_type_and_both_ways_down_for_a_pipeline(tmp_path):
    """A stand-in compute-sanitizer that only runs the program: the runs it is asked for, and
    the program's own verdict (skipped without a GPU, said in one line)."""
    from transpose_lab import sanitize as tool
    runs = tool.runs_of("CUDA.cublas", tool.grader.ALL_DTYPES)
    assert {dtype for _, dtype, *_ in runs} == {"float32", "float64", "complex64", "complex128"}
    pipeline = tool.runs_of("CUDA.v8_streams", ["uint8"])
    assert len(pipeline) == 2 * len(tool.SHAPES) + 1
    assert {tuple(extra[-2:]) for _, _, _, extra, _ in pipeline} == {
        ("--down", "kernel"), ("--down", "copy-engine")}
    assert [extra[extra.index("--ramp") + 1] for _, _, _, extra, _ in pipeline
            if "--ramp" in extra] == ["6"]
    if (ROOT / "CUDA.v9_multigpu" / "transpose").is_file():  # built where NCCL is found
        distributed = tool.runs_of("CUDA.v9_multigpu", ["uint8"], gpus=1)
        assert len(distributed) == 2 * len(tool.SHAPES) + 1
        assert all("--virtual-ranks" in extra for _, _, _, extra, _ in distributed)
        assert sum("peer" in extra for _, _, _, extra, _ in distributed) == len(tool.SHAPES) + 1
        assert all(options == () for *_, options in distributed)
        # Two GPUs: each exchange between them too, NCCL's failing probes left unreported.
        two = tool.runs_of("CUDA.v9_multigpu", ["uint8"], gpus=2)[len(distributed):]
        assert [" ".join(extra[2:]) for _, _, _, extra, _ in two] == [
            "--exchange nccl", "--exchange nccl --nccl-buffers registered",
            "--exchange nccl --nccl-buffers windows", "--exchange peer"]
        assert all(extra[:2] == ["--gpus", "2"] and options == ("--report-api-errors", "no")
                   and rows % 2 == 0 and cols % 2 == 0 for _, _, (rows, cols), extra, options
                   in two)
    fake = tmp_path / "compute-sanitizer"
    fake.write_text('#!/bin/sh\nwhile [ "$1" != "${1#--}" ]; do shift 2; done\nexec "$@"\n')
    fake.chmod(0o755)
    env = dict(os.environ, PATH=f"{tmp_path}:{os.environ['PATH']}")
    done = sanitize("CUDA.v7_packed", "--dtypes", "uint8", "--tools", "memcheck",
                    "--log", tmp_path / "log", env=env)
    if gpu_unavailable_reason() is None:
        assert done.returncode == 0, done.stdout
        count = len(tool.runs_of("CUDA.v7_packed", ["uint8"]))  # with v7's shape for tma
        assert count == len(tool.SHAPES) + 1
        assert f"sanitize: {count} of {count} runs clean" in done.stdout
    else:
        assert done.returncode == 77 and done.stdout.startswith("sanitize: skipped:"), done.stdout
        assert len(done.stdout.strip().splitlines()) == 1


def test_multigpu_runs_powers_of_two_up_to_the_visible_gpus():
    from transpose_lab.other_kinds import gpu_counts_to_run
    assert gpu_counts_to_run(0) == [1]  # no GPU: one run, which says it is skipped
    assert gpu_counts_to_run(1) == [1]
    assert gpu_counts_to_run(2) == [1, 2]
    assert gpu_counts_to_run(6) == [1, 2, 4, 6]
    assert gpu_counts_to_run(8) == [1, 2, 4, 8]


def test_multigpu_runs_only_the_modes_asked_for(tmp_path):
    from transpose_lab.other_kinds import multigpu

    class Recorded:
        skipped = []

        def __init__(self):
            self.labels = []

        def __call__(self, label, command, log=None, env=None):
            self.labels.append(label)
            return 0

    def labels(modes):
        runs = Recorded()
        multigpu(tmp_path, [64], ["float32"], [1, 2], ["nccl", "peer"], 1, runs, modes)
        return runs.labels

    single = labels(["single"])
    assert single == ["CUDA.v9_multigpu 64x64 float32 --gpus 1 --exchange nccl",
                      "CUDA.v9_multigpu 64x64 float32 --gpus 2 --exchange nccl",
                      "CUDA.v9_multigpu 64x64 float32 --gpus 2 --exchange peer"]
    assert labels(["one-gpu"]) == ["CUDA.v7_packed 64x64 float32 (one GPU)"]
    everything = labels(["single", "mpi", "one-gpu"])
    assert everything[0] == single[0]
    assert everything[-1] == "CUDA.v7_packed 64x64 float32 (one GPU)"
    if shutil.which("mpirun"):
        assert sum(label.startswith("mpirun -np ") for label in everything) == 3
    bad = subprocess.run([sys.executable, "-m", "transpose_lab.other_kinds", "multigpu",
                          "--modes", "both"], cwd=ROOT, capture_output=True, text=True)
    assert bad.returncode == 2 and "invalid choice: 'both'" in bad.stderr


def test_multigpu_mpirun_leaves_ranks_unbound():
    from transpose_lab.other_kinds import mpi_command
    command = mpi_command("/usr/bin/mpirun", 4)
    assert command[-4:] == ["--bind-to", "none", "-np", 4]


# --- make reference: a machine's folder of docs/results, part by part.

def test_reference_names_the_machine_from_its_gpus():
    from transpose_lab.reference import machine_name
    assert machine_name(["NVIDIA H100 80GB HBM3"]) == "h100"
    assert machine_name(["NVIDIA H200", "NVIDIA H200"]) == "h200x2"
    assert machine_name(["NVIDIA A100-SXM4-80GB"]) == "a100"
    assert machine_name([]) == "cpu-dev"


def test_reference_names_the_commit_the_copier_gives(monkeypatch):
    from transpose_lab.reference import machine_txt
    monkeypatch.setenv("LAB_COMMIT", "abc1234")
    assert "commit: abc1234\n" in machine_txt([], ["kernels"])
    monkeypatch.delenv("LAB_COMMIT")
    commit = [line for line in machine_txt([], ["kernels"]).splitlines()
              if line.startswith("commit: ")]
    assert len(commit) == 1 and "abc1234" not in commit[0]


def test_reference_keeps_the_notes_and_each_parts_commit(monkeypatch):
    from transpose_lab.reference import machine_txt
    previous = ("gpu: GPU X\ncommit: old1\n"
                "made_by: make reference PART=kernels; make reference PART=types\n"
                "extra.csv: made by hand, this way\n")
    monkeypatch.setenv("LAB_COMMIT", "new1")
    text = machine_txt([], ["kernels", "types"], previous, ["types"])
    assert "commit: new1\n" in text
    assert ("made_by: make reference PART=kernels at old1; make reference PART=types at new1\n"
            in text)
    assert "extra.csv: made by hand, this way\n" in text
    assert "earlier_commit" not in text  # a bare commit: made_by says it all
    # Run again on its own output: each part keeps the commit it was made with.
    again = machine_txt([], ["kernels", "types"], text, ["kernels"])
    assert "PART=kernels at new1; make reference PART=types at new1" in again
    # A part not made again keeps its commit as it reads, without the separator after it.
    monkeypatch.setenv("LAB_COMMIT", "new2")
    later = machine_txt([], ["kernels", "types"], text, ["types"])
    assert "PART=kernels at old1; make reference PART=types at new2\n" in later
    assert ";;" not in later


def test_reference_keeps_an_earlier_commit_line_until_every_part_is_made_again(monkeypatch):
    from transpose_lab.reference import machine_txt
    previous = ("commit: old1 (PART=types: old0, with rows from old2)\n"
                "made_by: make reference PART=kernels; make reference PART=types\n")
    monkeypatch.setenv("LAB_COMMIT", "new1")
    some = machine_txt([], ["kernels", "types"], previous, ["kernels"])
    assert "earlier_commit: old1 (PART=types: old0, with rows from old2)\n" in some
    assert "PART=types at old1" in some
    every = machine_txt([], ["kernels", "types"], some, ["kernels", "types"])
    assert "earlier_commit" not in every and every.count("at new1") == 2


def test_reference_dry_run_prints_every_part_and_writes_nothing():
    out = ROOT / "docs" / "results" / "cpu-test-tmp"
    done = make("reference", "DRY_RUN=1", "MACHINE=cpu-test-tmp")
    assert done.returncode == 0, done.stderr
    assert not out.exists()
    assert f"RESULTS={out}" in done.stdout and f"{out}/machine.txt" in done.stdout
    targets = ["run-all", "sweep", "scaling", "dtypes"]
    if not gpu_unavailable_reason():
        targets += ["bench", "streams", "out-of-core", "bus-probe", "multigpu", "profile"]
    for target in targets:
        assert f" {target} RESULTS={out}" in done.stdout, target
        assert f"{out}/make-{target}.log" in done.stdout
    assert "NCCL_NVLS_ENABLE=0" in done.stdout and " plots RESULTS=" in done.stdout


def test_reference_dry_run_of_one_part_runs_only_its_targets():
    done = make("reference", "DRY_RUN=1", "MACHINE=cpu-test-tmp", "PART=types")
    assert done.returncode == 0, done.stderr
    assert " dtypes RESULTS=" in done.stdout and " run-all RESULTS=" not in done.stdout


def test_reference_refuses_a_bad_part_or_machine_in_one_line():
    done = make("reference", "DRY_RUN=1", "PART=nope")
    assert done.returncode != 0 and "invalid choice: 'nope'" in done.stderr
    done = make("reference", "DRY_RUN=1", "MACHINE=../x")
    assert done.returncode != 0 and "bad machine name" in done.stderr
