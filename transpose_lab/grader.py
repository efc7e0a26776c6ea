"""Grades one step, a solution or a student's exercise: `make check STEP=CUDA.v4 [FROM=exercises]`.

    python -m transpose_lab.grader STEP [--from DIR] [--full] [--cuda-arch 90] [--report F.json]
    python -m transpose_lab.grader --make-expected RESULTS_CSV > docs/expected/<gpu-slug>.csv
    python -m transpose_lab.grader --slug-of RESULTS_CSV      the <gpu-slug> of that run's GPU

What is graded, in order, one PASS/FAIL line per check and a summary line at the end:
  build        `make` in the step's folder (the compiler's errors are shown)
  correctness  exact (bitwise) verification by the program itself on shapes the student does not
               choose (1 x N, N x 1, odd and ragged ones, 8192 x 8192), and on every element
               type the step supports; with --full (make check FULL=1) also one shape past 2^31
               elements where memory allows (17 GB of host memory, minutes on a CPU)
  sanitizer    compute-sanitizer memcheck and racecheck on two small ragged shapes, where
               compute-sanitizer is installed (CUDA steps)
  speed        % of the same-run copy at 8192 x 8192 float32 against the expected range for
               this step on this GPU model, from docs/expected/<gpu-slug>.csv; below the range
               fails, above it passes with a note. Another GPU (no file for it): the figure is
               shown, no verdict. CPU steps: shown, no verdict (it depends on the machine).
A step with variants (the names its program prints for --list-variants) is graded with
--variant all: every variant is verified, and each gets its own speed line.
Exit 0 when every check passed, 1 when one failed, 2 for a bad command line, 77 without a GPU for
a CUDA step (one line: skipped). SKIP and INFO lines are neither pass nor fail.

Where the source comes from: without --from, the step's own folder (the solution), built in
place. With --from DIR: DIR/STEP when it exists (exercises/CUDA.v4, built in place when DIR has
the link to common/ that `make exercises` makes), else DIR itself when it holds a transpose.cu
or transpose.cpp (a planted bug in tests/planted_bugs/NAME), built in a scratch copy of the step
with the step's Makefile.
"""
import argparse
import csv
import json
import os
import re
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import asdict, dataclass
from pathlib import Path

from .results_csv import CPU_KINDS, GPU_KINDS, ResultsError, read_results

from transpose_lab.lab import (EXIT_FAILED, EXIT_NO_MEMORY, EXIT_OK, EXIT_SKIPPED,  # noqa: E402
                              EXIT_USAGE, ROOT, measuring_environment)
from transpose_lab.lab import steps as lab_steps  # noqa: E402
EXPECTED_DIR = ROOT / "docs" / "expected"
SOURCES = ("transpose.cu", "transpose.cpp")
from transpose_lab.lab import DTYPES as ALL_DTYPES  # noqa: E402

# The shapes a student does not choose. float32 on every one; every other supported element
# type on DTYPE_SHAPE (odd rows and columns: the ragged edges, and v6's partial-sector rows).
SHAPES = [(1, 4099), (4099, 1), (37, 4111), (2049, 1025), (8192, 8192)]
DTYPE_SHAPE = (2049, 1025)
LARGE_SHAPE = (46341, 46341)  # float32: 2,147,488,281 elements, past 2^31; 17.2 GB in all
SANITIZER_SHAPES = [(67, 45), (72, 40)]  # rows not a multiple of 32, then of 32 but not 64
SANITIZER_TOOLS = ("memcheck", "racecheck")
SPEED_SHAPE, SPEED_DTYPE = (8192, 8192), "float32"
# The expected range around a reference measurement: --make-expected writes it.
RANGE_LOW, RANGE_HIGH = 0.85, 1.15
EXPECTED_COLUMNS = ["step", "variant", "dtype", "rows", "cols", "device", "measured_pct",
                    "min_pct", "max_pct"]

TIMEOUT_S, LARGE_TIMEOUT_S, BUILD_TIMEOUT_S = 300, 1200, 1200
SANITIZER_ERROR_EXIT = 86  # --error-exitcode: told apart from the program's own codes


class UsageError(Exception):
    pass


@dataclass
class Check:
    verdict: str  # PASS, FAIL, SKIP (not run) or INFO (a figure without a verdict)
    category: str  # build, correctness, sanitizer, speed
    name: str
    detail: str = ""

    def line(self):
        detail = f": {self.detail}" if self.detail else ""
        return f"{self.verdict} {self.category} {self.name}{detail}"


@dataclass
class Outcome:
    returncode: int  # None: timed out
    output: str  # stdout and stderr together
    stderr: str
    seconds: float


def run_program(command, timeout, cwd=None, env=None):
    """Runs a command in its own process group; on timeout kills that group (and only it)."""
    start = time.monotonic()
    process = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                               cwd=cwd, env=env, start_new_session=True)
    try:
        out, err = process.communicate(timeout=timeout)
        code = process.returncode
    except subprocess.TimeoutExpired:
        os.killpg(process.pid, signal.SIGKILL)
        out, err = process.communicate()
        code = None
    return Outcome(code, (out or "") + (err or ""), err or "", time.monotonic() - start)


NO_GPU = "no NVIDIA GPU found"


def nvidia_smi_lists_a_gpu():
    """Whether the driver's own tool sees a GPU (no nvidia-smi: no driver, so no GPU)."""
    smi = shutil.which("nvidia-smi")
    if smi is None:
        return False
    done = run_program([smi, "-L"], TIMEOUT_S)
    return done.returncode == 0 and "GPU" in done.output


def skip_reason(step_stderr):
    """Why a CUDA step exited 77, in the words a student should read. Without any GPU, CUDA's own
    message is about driver versions and sends a student to update a driver: NO_GPU instead.
    Where nvidia-smi does see a GPU that CUDA cannot use, CUDA's words are the useful ones."""
    if not nvidia_smi_lists_a_gpu():
        return NO_GPU
    said = last_line(step_stderr)
    return f"nvidia-smi lists a GPU, but CUDA cannot use it: {said.split('skipped: ')[-1]}"


def last_line(text):
    lines = [line.strip() for line in text.strip().splitlines() if line.strip()]
    return lines[-1] if lines else ""


def shape_name(shape):
    return f"{shape[0]}x{shape[1]}"


def gpu_slug(device):
    """'NVIDIA H100 80GB HBM3' -> 'nvidia-h100-80gb-hbm3': the file name of its expected CSV."""
    return re.sub(r"[^a-z0-9]+", "-", device.lower()).strip("-")


# --- Where the source is, and its build.

def step_source(folder):
    return next((folder / name for name in SOURCES if (folder / name).is_file()), None)


def permute_steps():
    """Chapter 3's steps take a tensor, not ROWS COLS: the grader's shapes and ranges do not fit
    them."""
    return set(lab_steps("PERMUTE_STEPS"))


def known_steps():
    chapter_3 = permute_steps()
    return sorted(p.name for p in ROOT.iterdir()
                  if p.is_dir() and (p / "Makefile").is_file() and step_source(p)
                  and p.name not in chapter_3)


def prepare(step, source_from):
    """(build folder, label, scratch folder to remove or None)."""
    if step in permute_steps():
        raise UsageError(f"{step} is a chapter 3 step: the grader checks the matrix steps; "
                         "tests/test_permute.py and `make permute` check chapter 3")
    solution = ROOT / step
    if not (solution / "Makefile").is_file() or step_source(solution) is None:
        raise UsageError(f"unknown step '{step}' (steps: {' '.join(known_steps())})")
    if source_from is None:
        return solution, f"{step}, the solution", None
    base = Path(source_from)
    if (base / step).is_dir():
        folder = base / step
        if step_source(folder) is None:
            raise UsageError(f"{folder} holds no transpose.cu or transpose.cpp")
        if (folder / "Makefile").is_file() and (base / "common" / "step.mk").is_file():
            return folder, str(folder), None
    elif step_source(base) is not None:
        folder = base
    else:
        hint = " (make exercises writes it)" if base.name == "exercises" else ""
        raise UsageError(f"neither {base / step} nor {base}/transpose.cu exists{hint}")
    scratch = Path(tempfile.mkdtemp(prefix="transpose-check-"))
    (scratch / "common").symlink_to(ROOT / "common", target_is_directory=True)
    build = scratch / step
    build.mkdir()
    source = step_source(folder)
    shutil.copyfile(source, build / source.name)
    makefile = folder / "Makefile" if (folder / "Makefile").is_file() else solution / "Makefile"
    shutil.copyfile(makefile, build / "Makefile")
    return build, str(source), scratch


def make_variable(folder, name):
    done = subprocess.run(["make", "--no-print-directory", "-s", "-C", str(folder), "-f",
                           "Makefile", "-f", str(ROOT / "common" / "print.mk"), f"print-{name}"],
                          capture_output=True, text=True)
    return done.stdout.split() if done.returncode == 0 else []


def build(folder, cuda_arch):
    jobs = min(4, os.cpu_count() or 1)
    command = ["make", "--no-print-directory", "-C", str(folder), f"-j{jobs}"]
    if cuda_arch:
        command.append(f"CUDA_ARCH={cuda_arch}")
    done = run_program(command, BUILD_TIMEOUT_S)
    if done.returncode == 0 and (folder / "transpose").is_file():
        return Check("PASS", "build", "make", f"{done.seconds:.0f} s"), ""
    if done.returncode is None:
        return Check("FAIL", "build", "make", f"did not finish in {BUILD_TIMEOUT_S} s"), ""
    errors = [line for line in done.output.splitlines() if "error" in line.lower()]
    shown = errors[:15] or done.output.strip().splitlines()[-15:]
    return Check("FAIL", "build", "make", f"exit {done.returncode}"), "\n".join(
        "    " + line for line in shown)


def find_sanitizer():
    found = shutil.which("compute-sanitizer")
    if found:
        return found
    nvcc = os.environ.get("NVCC") or shutil.which("nvcc")
    candidates = ([Path(nvcc).parent / "compute-sanitizer"] if nvcc else []) + [
        Path("/usr/local/cuda/bin/compute-sanitizer")]
    return next((str(c) for c in candidates if c.is_file()), None)


# --- The checks.

def variant_arguments(program):
    """['--variant', 'all'] for a program with variants (an exercise may leave any of them
    unsolved), else nothing."""
    done = run_program([str(program), "--list-variants"], TIMEOUT_S)
    return ["--variant", "all"] if done.returncode == EXIT_OK and done.output.split() else []


def correctness(program, shape, dtype, timeout=TIMEOUT_S, extra=()):
    done = run_program([str(program), *map(str, shape), "--dtype", dtype, "--reps", "1", *extra],
                       timeout)
    return correctness_verdict(shape, dtype, done, timeout)


def takes_cases(program):
    """Whether the program runs many cases in one process (--cases FILE, common/cli.hpp)."""
    return "--cases FILE" in run_program([str(program), "--help"], TIMEOUT_S).output


CASE_HEADING = re.compile(r"^case (\d+) of \d+: .*$", re.M)


def correctness_of_each(program, runs, extra=()):
    """One check per (shape, dtype) of `runs`. A program that takes --cases makes them in one
    process (each process pays for its own CUDA context); after a case that fails, a new process
    goes on from the next, so every case gets its verdict."""
    if not takes_cases(program):
        return [correctness(program, shape, dtype, extra=extra) for shape, dtype in runs]
    checks = []
    with tempfile.TemporaryDirectory() as scratch:
        while len(checks) < len(runs):
            rest = runs[len(checks):]
            cases = Path(scratch) / "cases"
            cases.write_text("".join(f"{shape[0]} {shape[1]} --dtype {dtype}\n"
                                     for shape, dtype in rest))
            done = run_program([str(program), "--reps", "1", *extra, "--cases", str(cases)],
                               TIMEOUT_S)  # a hang ends its case, and the next process goes on
            headings = list(CASE_HEADING.finditer(done.output))
            for shape, dtype in rest[:max(0, len(headings) - 1)]:
                checks.append(Check("PASS", "correctness", f"{shape_name(shape)} {dtype}",
                                    "exact"))
            ended = Outcome(done.returncode, done.output[headings[-1].start():] if headings
                            else done.output, done.stderr, done.seconds)
            shape, dtype = rest[max(0, len(headings) - 1)]
            checks.append(correctness_verdict(shape, dtype, ended, TIMEOUT_S, timed=False))
    return checks


def correctness_verdict(shape, dtype, done, timeout, timed=True):
    """The check of one run; `timed`: the run was this case's alone, so its time is the case's."""
    name = f"{shape_name(shape)} {dtype}"
    if done.returncode is None:
        return Check("FAIL", "correctness", name, f"did not finish in {timeout} s (a hang?)")
    if done.returncode == EXIT_OK:
        return Check("PASS", "correctness", name, f"exact, {done.seconds:.1f} s" if timed
                     else "exact")
    if done.returncode == EXIT_NO_MEMORY:
        return Check("SKIP", "correctness", name,
                     f"not enough memory here: {last_line(done.stderr)}")
    failed = next((line.strip() for line in done.stderr.splitlines()
                   if "verification FAILED" in line), None)
    return Check("FAIL", "correctness", name, failed or
                 f"exit {done.returncode}: {last_line(done.stderr) or last_line(done.output)}")


def sanitizer(tool_path, tool, program, shape, extra=(), dtype=SPEED_DTYPE, tool_options=()):
    name = f"{tool} {shape_name(shape)} {dtype}"
    command = [tool_path, "--tool", tool, *tool_options, "--error-exitcode",
               str(SANITIZER_ERROR_EXIT), "--print-limit", "20", str(program), *map(str, shape),
               "--reps", "1", *extra]
    done = run_program(command, TIMEOUT_S)
    if done.returncode is None:
        return Check("FAIL", "sanitizer", name, f"did not finish in {TIMEOUT_S} s")
    errors = 0
    for pattern in (r"ERROR SUMMARY:\s+(\d+) error", r"RACECHECK SUMMARY:.*?\((\d+) error"):
        errors += sum(int(n) for n in re.findall(pattern, done.output))
    if errors or done.returncode == SANITIZER_ERROR_EXIT:
        first = next((line.replace("=========", "").strip() for line in done.output.splitlines()
                      if re.match(r"=+\s+(Invalid|Error|Race|Program hit|Uninitialized)",
                                  line)), "")
        return Check("FAIL", "sanitizer", name,
                     f"{errors or 'some'} error(s)" + (f", first: {first}" if first else ""))
    if done.returncode != 0:
        return Check("FAIL", "sanitizer", name,
                     f"exit {done.returncode} under {tool}: {last_line(done.stderr)}")
    return Check("PASS", "sanitizer", name, f"0 errors, {done.seconds:.1f} s")


def read_expected(path):
    """{(step, variant, dtype, rows, cols): (min_pct, max_pct, device)} from an expected CSV."""
    table = {}
    with open(path, newline="") as handle:
        reader = csv.DictReader(handle)
        if reader.fieldnames != EXPECTED_COLUMNS:
            raise ResultsError(f"{path}: the header is not {','.join(EXPECTED_COLUMNS)}")
        for row in reader:
            key = (row["step"], row["variant"], row["dtype"], int(row["rows"]), int(row["cols"]))
            table[key] = (float(row["min_pct"]), float(row["max_pct"]), row["device"])
    return table


def speed_verdict(step, row, expected_dir=EXPECTED_DIR):
    """The speed check of one measured row (a results CSV row): PASS/FAIL against the range for
    its GPU, or INFO where there is no range (CPU, or a GPU without an expected CSV)."""
    pct, device = row["pct_of_ceiling"], row["device"]
    name = f"{shape_name((row['rows'], row['cols']))} {row['dtype']}"
    if row["kind"] in CPU_KINDS:
        return Check("INFO", "speed", f"{name} {row['variant']}",
                     f"{pct:.1f}% of the OpenMP copy ({row['threads']} threads on {device}); "
                     "no verdict: CPU figures depend on the machine")
    if row["variant"] != "kernel":  # a kernel step with variants: one line each
        name += f" {row['variant']}"
    path = Path(expected_dir) / f"{gpu_slug(device)}.csv"
    if not path.is_file():
        shown = os.path.relpath(path, ROOT) if str(path).startswith(str(ROOT)) else str(path)
        return Check("INFO", "speed", name, f"{pct:.1f}% of the copy on {device}; no verdict: no "
                     f"reference for this GPU ({shown})")
    key = (step, row["variant"], row["dtype"], row["rows"], row["cols"])
    expected = read_expected(path).get(key)
    if expected is None:
        return Check("INFO", "speed", name, f"{pct:.1f}% of the copy on {device}; no verdict: "
                     f"{path.name} has no row for {step}")
    low, high, _ = expected
    where = f"expected {low:.1f}-{high:.1f}% on {device}"
    if pct < low:
        return Check("FAIL", "speed", name, f"{pct:.1f}% of the copy, below the range: {where}")
    note = " (above the range: faster than the reference run)" if pct > high else ""
    return Check("PASS", "speed", name, f"{pct:.1f}% of the copy, {where}{note}")


def speed(step, program, kind, expected_dir=EXPECTED_DIR, extra=()):
    with tempfile.TemporaryDirectory() as scratch:
        csv_path = Path(scratch) / "speed.csv"
        done = run_program([str(program), *map(str, SPEED_SHAPE), "--dtype", SPEED_DTYPE,
                            "--csv", str(csv_path), *extra], TIMEOUT_S,
                           env=measuring_environment())
        name = f"{shape_name(SPEED_SHAPE)} {SPEED_DTYPE}"
        if done.returncode is None:
            return [Check("FAIL", "speed", name, f"did not finish in {TIMEOUT_S} s")]
        if done.returncode != 0 or not csv_path.is_file():
            return [Check("FAIL", "speed", name, f"exit {done.returncode}: "
                          f"{last_line(done.stderr)}")]
        rows = read_results(csv_path)
    return [speed_verdict(step, row, expected_dir) for row in rows]


def grade(step, source_from=None, full=False, cuda_arch=None, keep=False, out=print):
    """Runs every check, printing each line as it comes; returns (exit code, checks)."""
    folder, label, scratch = prepare(step, source_from)
    checks = []

    def record(check, extra=""):
        checks.append(check)
        out(check.line() + ("\n" + extra if extra else ""))

    try:
        built, errors = build(folder, cuda_arch)
        if built.verdict == "FAIL":
            record(built, errors)
            return finish(step, label, checks, out)
        program = folder / "transpose"
        kind = (make_variable(folder, "STEP_KIND") or ["kernel"])[0]
        dtypes = make_variable(folder, "STEP_DTYPES") or ALL_DTYPES
        if kind not in CPU_KINDS:
            probe = run_program([str(program), "1", "1", "--reps", "1"], TIMEOUT_S)
            if probe.returncode == EXIT_SKIPPED:
                out(f"{step} ({label}): skipped: {skip_reason(probe.stderr)} (it builds; "
                    "nothing is graded without a GPU)")
                return EXIT_SKIPPED, checks
        record(built)
        every_variant = variant_arguments(program)
        runs = [(shape, SPEED_DTYPE) for shape in SHAPES] + [
            (DTYPE_SHAPE, dtype) for dtype in dtypes if dtype != SPEED_DTYPE]
        for check in correctness_of_each(program, runs, every_variant):
            record(check)
        large = f"{shape_name(LARGE_SHAPE)} {SPEED_DTYPE}"
        if full:
            record(correctness(program, LARGE_SHAPE, SPEED_DTYPE, LARGE_TIMEOUT_S, every_variant))
        else:
            record(Check("SKIP", "correctness", large, "past 2^31 elements: left out (--full "
                         "or make check FULL=1 runs it)"))
        if kind not in CPU_KINDS:
            tool_path = find_sanitizer()
            if tool_path is None:
                record(Check("INFO", "sanitizer", "compute-sanitizer", "not installed: not run"))
            else:
                for tool in SANITIZER_TOOLS:
                    for shape in SANITIZER_SHAPES:
                        record(sanitizer(tool_path, tool, program, shape, every_variant))
        if any(c.verdict == "FAIL" and c.category == "correctness" for c in checks):
            record(Check("SKIP", "speed", shape_name(SPEED_SHAPE),
                         "not measured: a correctness check failed"))
        else:
            for check in speed(step, program, kind, extra=every_variant):
                record(check)
        return finish(step, label, checks, out)
    finally:
        if scratch is not None and not keep:
            shutil.rmtree(scratch, ignore_errors=True)


def finish(step, label, checks, out):
    failed = [c for c in checks if c.verdict == "FAIL"]
    passed = sum(c.verdict == "PASS" for c in checks)
    not_run = sum(c.verdict == "SKIP" for c in checks)
    text = f"{passed} passed, {len(failed)} failed" + (f", {not_run} not run" if not_run else "")
    if failed:
        names = ", ".join(f"{c.category} {c.name}" for c in failed[:6])
        more = f" and {len(failed) - 6} more" if len(failed) > 6 else ""
        out(f"{step} ({label}): FAIL: {text} ({names}{more})")
        return EXIT_FAILED, checks
    out(f"{step} ({label}): PASS: {text}")
    return EXIT_OK, checks


# --- Expected ranges, from a measured run.

def expected_rows(results_path, low=RANGE_LOW, high=RANGE_HIGH):
    """The expected CSV's rows from a results CSV: every verified GPU row at the speed shape,
    repeats reduced to their median, the range low x .. high x around it."""
    groups, devices = {}, set()
    for row in read_results(results_path):
        if row["kind"] not in GPU_KINDS or not row["verified"]:
            continue
        if (row["rows"], row["cols"]) != SPEED_SHAPE:
            continue
        devices.add(row["device"])
        key = (row["step"], row["variant"], row["dtype"], row["rows"], row["cols"])
        groups.setdefault(key, []).append(row["pct_of_ceiling"])
    if not groups:
        raise ResultsError(f"{results_path}: no verified GPU rows at {shape_name(SPEED_SHAPE)} "
                           "(make run-all writes them)")
    if len(devices) > 1:
        raise ResultsError(f"{results_path}: rows from several GPUs ({', '.join(sorted(devices))});"
                           " one expected file per GPU model")
    (device,) = devices
    table = []
    for (step, variant, dtype, rows, cols), pcts in groups.items():
        measured = statistics.median(pcts)
        table.append({"step": step, "variant": variant, "dtype": dtype, "rows": rows,
                      "cols": cols, "device": device, "measured_pct": f"{measured:.2f}",
                      "min_pct": f"{measured * low:.2f}", "max_pct": f"{measured * high:.2f}"})
    return device, table


def write_expected(results_path, stream=sys.stdout):
    device, table = expected_rows(results_path)
    writer = csv.DictWriter(stream, fieldnames=EXPECTED_COLUMNS, lineterminator="\n")
    writer.writeheader()
    writer.writerows(table)
    print(f"{len(table)} row(s) from {device}: save as docs/expected/{gpu_slug(device)}.csv",
          file=sys.stderr)


def main(argv=None):
    parser = argparse.ArgumentParser(
        description="Grade one step (make check STEP=... [FROM=...] [FULL=1]); see the module's "
        "text.")
    parser.add_argument("step", nargs="?", help="the step to grade, e.g. CUDA.v4")
    parser.add_argument("--from", dest="source_from", metavar="DIR",
                        help="grade DIR/STEP (exercises) or DIR/transpose.cu (a planted bug)")
    size = parser.add_mutually_exclusive_group()
    size.add_argument("--full", action="store_true",
                      help="also the shape past 2^31 elements (17 GB of host memory; minutes)")
    size.add_argument("--quick", action="store_true",
                      help="without the shape past 2^31 elements: the default, named for scripts")
    parser.add_argument("--cuda-arch", help="build for these architectures only (e.g. 90)")
    parser.add_argument("--report", metavar="FILE.json", help="also write the checks as JSON")
    parser.add_argument("--keep", action="store_true", help="keep the scratch build folder")
    parser.add_argument("--make-expected", metavar="RESULTS_CSV",
                        help="print the expected CSV made from a measured run (make run-all)")
    parser.add_argument("--slug-of", metavar="RESULTS_CSV",
                        help="print the GPU slug (the expected file's name) of a results CSV")
    args = parser.parse_args(argv)
    try:
        if args.make_expected:
            write_expected(args.make_expected)
            return EXIT_OK
        if args.slug_of:
            print(gpu_slug(expected_rows(args.slug_of)[0]))
            return EXIT_OK
        if not args.step:
            raise UsageError("which step? make check STEP=CUDA.v4 [FROM=exercises]")
        code, checks = grade(args.step, args.source_from, args.full, args.cuda_arch, args.keep,
                             out=lambda line: print(line, flush=True))
    except (UsageError, ResultsError) as error:
        print(f"error: {error}", file=sys.stderr)
        return EXIT_USAGE
    if args.report:
        Path(args.report).write_text(json.dumps(
            {"step": args.step, "from": args.source_from, "exit": code,
             "checks": [asdict(c) for c in checks]}, indent=1))
    return code


if __name__ == "__main__":
    sys.exit(main())
