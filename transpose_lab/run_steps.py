"""Runs the steps' programs and prints comparison tables from the CSV they write.

    python -m transpose_lab.run_steps run-all --steps S... [--rows R --cols C --reps N]
                                              [--dtype T] --csv FILE
    python -m transpose_lab.run_steps scaling --steps CPU.omp --rows R --cols C
                                              [--threads 1 2 4 ...] [--dtype T] --csv FILE
    python -m transpose_lab.run_steps sweep   --steps S... --sizes N... [--dtype T] --csv FILE
    python -m transpose_lab.run_steps bench   --steps LIBRARY... LAST --shapes RxC...
                                              [--dtype T | --dtypes T...] --csv FILE
    python -m transpose_lab.run_steps dtypes  --steps S... [--rows R --cols C]
                                              [--dtypes T...] --csv FILE

A step with variants (CPU.omp's loops, CUDA.v2's read- and write-coalesced kernels: the names its
program prints for --list-variants) is run with --variant all: every variant, a row each. A variant
beyond its step's lesson (CUDA.v7_packed's tma) is measured by bench alone, beside the step's own
kernel; where the GPU or the shape refuses it, bench says so in one line.

Every number comes from the CSV the programs write (never from their printed text). Exit codes of
the programs: 0 ran and verified, 77 skipped (no CUDA device), 2 with "does not support" on
stderr: the step does not take that element type (n/a, not a failure), anything else failed.
The tables say which, and this command exits 1 if any step failed.
"""
import argparse
import functools
import os
import subprocess
import sys
from pathlib import Path

from .report_tables import (bench_table, devices, dtypes_table, format_text,
                            progression_table, scaling_table)
from .results_csv import DEFAULT_DTYPE, DTYPES, ResultsError, read_results

from transpose_lab.lab import EXIT_NO_MEMORY, EXIT_SKIPPED, EXIT_USAGE, ROOT  # noqa: E402
NOT_SUPPORTED_MARK = "does not support"  # a step's one line for an element type it refuses
LEFT_OUT_MARK = "--variant all leaves out "  # a variant this GPU or shape cannot run, and why
# Variants beyond their step's lesson (CUDA.v7_packed's tma: Hopper's bulk copies). The tables of
# run-all, sweep and dtypes, and the texts quoting them, take one row per step and type: the step's
# own kernel, its first variant. Only bench runs these, in the same run as that kernel.
BEYOND_THE_LESSON = ("tma",)


class StepRun:
    """The outcome of one program run: 'ok', 'skipped', 'n/a' (the step does not support the
    element type), 'not built' or 'failed', and why."""

    def __init__(self, step, status, reason=""):
        self.step, self.status, self.reason = step, status, reason
        self.left_out = []  # "VARIANT: why" for each variant that --variant all left out
        self.shape = self.dtype = None  # where bench ran it (its left-out lines name them)


def classify(step, returncode, stderr):
    """What a program's exit status and stderr mean, as a StepRun."""
    lines = stderr.strip().splitlines()
    last_line = lines[-1] if lines else ""
    if returncode == 0:
        run = StepRun(step, "ok")
        run.left_out = [line.split(LEFT_OUT_MARK, 1)[1] for line in lines if LEFT_OUT_MARK in line]
        return run
    if returncode == EXIT_SKIPPED:  # the program's own line says why
        return StepRun(step, "skipped", last_line.split("skipped: ", 1)[-1])
    if returncode == EXIT_NO_MEMORY:  # a shape too large for this machine, said in one line
        return StepRun(step, "skipped", last_line)
    refusal = next((line for line in lines if NOT_SUPPORTED_MARK in line), None)
    if returncode == EXIT_USAGE and refusal is not None:
        return StepRun(step, "n/a", refusal.strip())
    return StepRun(step, "failed", f"exit {returncode}: {last_line}")


@functools.lru_cache(maxsize=None)
def variants_of(binary):
    """The names the program's --variant takes; none for a step with one kernel."""
    done = subprocess.run([str(binary), "--list-variants"], capture_output=True, text=True)
    return tuple(done.stdout.split()) if done.returncode == 0 else ()


def run_step(step, args, csv_path, env=None, log=None, root=None, beyond_the_lesson=False):
    """One program run into csv_path: every variant of the step's lesson, and with
    beyond_the_lesson those beyond it too."""
    binary = Path(root or ROOT) / step / "transpose"
    if not binary.exists():
        return StepRun(step, "not built", f"{step}/transpose does not exist (make all)")
    variants = variants_of(binary)
    if not variants:
        chosen = []
    elif beyond_the_lesson or not set(variants) & set(BEYOND_THE_LESSON):
        chosen = ["--variant", "all"]
    else:  # a step with a variant beyond its lesson has one kernel of its own, listed first
        chosen = ["--variant", variants[0]]
    command = [str(binary), *map(str, args), *chosen, "--csv", str(csv_path)]
    return run_program(step, command, args, env=env, log=log)


def run_program(step, command, args, env=None, log=None, cwd=None):
    """One run of a program that answers like the steps (exit codes, one line on stderr), its
    output into log: its outcome as a StepRun."""
    print(f"  running {step} {' '.join(map(str, args))}", file=sys.stderr, flush=True)
    done = subprocess.run(command, capture_output=True, text=True, env=env, cwd=cwd)
    if log is not None:
        log.write(f"$ {' '.join(command)}\n{done.stdout}{done.stderr}\n")
    return classify(step, done.returncode, done.stderr)


def step_arguments(rows, cols, args, dtype=None):
    """A program's arguments: the size, --dtype and --reps where given."""
    extra = ["--dtype", dtype or args.dtype]
    if args.reps:
        extra += ["--reps", args.reps]
    return [rows, cols, *extra]


def fresh_csv(path):
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    if path.exists():
        path.unlink()
    return path


def rows_of(csv_path):
    try:
        return read_results(csv_path) if Path(csv_path).exists() else []
    except ResultsError as error:
        sys.exit(f"error: {error}")


def report_left_out(runs):
    """One line per step and variant that a program left out (a GPU or a shape it cannot take):
    the program's words at the first run, then where (each run's words are in the .log)."""
    first, where = {}, {}
    for run in runs:
        for words in run.left_out:
            variant, why = (part.strip() for part in (words.split(":", 1) + [""])[:2])
            key = (run.step, variant)
            first.setdefault(key, f"{run.shape} {run.dtype}: {why}" if why else "")
            where.setdefault(key, {}).setdefault(run.shape, []).append(run.dtype)
    for (step, variant), why in first.items():
        shapes = "; ".join(f"{shape} {' '.join(dtypes)}"
                           for shape, dtypes in where[step, variant].items())
        print(f"{step}: left out {variant} at {shapes}" + (f" (the first, {why})" if why else ""))


def report_problems(runs):
    """One line for each run that did not give a result; True if any of them failed (a step
    that is skipped, not built, or does not support the type is no failure)."""
    problems = [run for run in runs if run.status != "ok"]
    for run in problems:
        print(f"{run.step}: {run.status}: {run.reason}")
    return any(run.status == "failed" for run in problems)


def run_each_at_size(steps, csv_path, args):
    """Each step once at args.rows x args.cols into csv_path, their output in the .log beside it."""
    with open(csv_path.with_suffix(".log"), "w") as log:
        return [run_step(step, step_arguments(args.rows, args.cols, args), csv_path, log=log,
                         root=args.root)
                for step in steps]


def command_run_all(args):
    csv_path = fresh_csv(args.csv)
    runs = run_each_at_size(args.steps, csv_path, args)
    rows = rows_of(csv_path)
    print(f"\nTranspose of {args.rows} x {args.cols} {args.dtype} on {devices(rows)}; median "
          "times; % of the copy ceiling measured in the same program run")
    statuses = {run.step: run.status for run in runs}
    print(format_text(*progression_table(rows, args.steps, statuses)))
    print(f"\nCSV: {csv_path}   program output: {csv_path.with_suffix('.log')}")
    other_runs = run_other_kinds(args) if args.other_steps else []
    return 1 if report_problems(runs + other_runs) else 0


def other_kinds_table(rows):
    """Steps whose ceiling is not the device copy (a host pipeline: the bus; distributed: the
    all-to-all): each row against its own ceiling, grouped by kind."""
    header = ["step", "kind", "variant", "ms", "GB/s", "ceiling GB/s", "% of its ceiling", "check"]
    lines = [[row["step"], row["kind"], row["variant"], f"{row['median_ms']:.3f}",
              f"{row['gbps']:.1f}", f"{row['ceiling_gbps']:.1f}", f"{row['pct_of_ceiling']:.1f}%",
              "verified" if row["verified"] else "WRONG"]
             for row in sorted(rows, key=lambda row: row["kind"])]
    return header, lines


def run_other_kinds(args):
    """The steps of other kinds, in their own section: their ceilings differ from the kernels'."""
    csv_path = fresh_csv(Path(args.csv).with_name(Path(args.csv).stem + "_other_kinds.csv"))
    runs = run_each_at_size(args.other_steps, csv_path, args)
    rows = rows_of(csv_path)
    print(f"\nOther kinds of step, {args.rows} x {args.cols} {args.dtype}: each against its own "
          "ceiling (host pipeline: both bus directions at once; distributed: the all-to-all)")
    if rows:
        print(format_text(*other_kinds_table(rows), name_columns=3))
    print(f"CSV: {csv_path}")
    return runs


def thread_counts(limit):
    counts, threads = [], 1
    while threads < limit:
        counts.append(threads)
        threads *= 2
    return counts + [limit]


def command_scaling(args):
    csv_path = fresh_csv(args.csv)
    threads = args.threads or thread_counts(os.cpu_count() or 1)
    runs = []
    with open(csv_path.with_suffix(".log"), "w") as log:
        for count in threads:
            env = dict(os.environ, OMP_NUM_THREADS=str(count))
            runs += [run_step(step, step_arguments(args.rows, args.cols, args), csv_path,
                              env=env, log=log, root=args.root)
                     for step in args.steps]
    rows = rows_of(csv_path)
    print(f"\nOpenMP scaling, {args.rows} x {args.cols} {args.dtype}, "
          f"OMP_PROC_BIND={os.environ.get('OMP_PROC_BIND', 'unset')} "
          f"OMP_PLACES={os.environ.get('OMP_PLACES', 'unset')}")
    print(format_text(*scaling_table(rows)))
    return 1 if report_problems(runs) else 0


def command_sweep(args):
    csv_path = fresh_csv(args.csv)
    runs = []
    with open(csv_path.with_suffix(".log"), "w") as log:
        for size in args.sizes:
            for step in args.steps:
                run = run_step(step, step_arguments(size, size, args), csv_path, log=log,
                               root=args.root)
                runs.append(run)
    rows = rows_of(csv_path)
    steps = list(dict.fromkeys(row["step"] for row in rows))
    print(f"\nEffective GB/s by size (square matrices, {args.dtype}); best variant per step")
    lines = []
    for size in args.sizes:
        line = [f"{size} x {size}"]
        for step in steps:
            found = [row["gbps"] for row in rows if row["step"] == step and row["rows"] == size
                     and row["dtype"] == args.dtype]
            line.append(f"{max(found):.1f}" if found else "-")
        lines.append(line)
    print(format_text(["size", *steps], lines))
    return 1 if report_problems(once_per_step(runs)) else 0


def once_per_step(runs):
    """One run per step and outcome: a step that could not run says so once, not once per
    size."""
    seen, kept = set(), []
    for run in runs:
        if run.status != "ok" and (run.step, run.status) not in seen:
            seen.add((run.step, run.status))
            kept.append(run)
    return kept


def command_bench(args):
    """The last step against one library, or against the fastest of several per shape and type,
    over the shapes and element types given; a library that refuses a type is n/a there."""
    csv_path = fresh_csv(args.csv)
    *libraries, last = args.steps
    dtypes = args.dtypes or [args.dtype]
    runs = []
    with open(csv_path.with_suffix(".log"), "w") as log:
        for dtype in dtypes:
            for shape in args.shapes:
                rows_count, cols_count = shape.split("x")
                for step in args.steps:
                    run = run_step(step, step_arguments(rows_count, cols_count, args, dtype),
                                   csv_path, log=log, root=args.root, beyond_the_lesson=True)
                    run.shape, run.dtype = shape, dtype
                    runs.append(run)
    rows = rows_of(csv_path)
    reference = libraries[0] if len(libraries) == 1 else libraries
    print(f"\n{last} against {' and '.join(libraries)} and the device-to-device copy, "
          f"{', '.join(dtypes)}, median kernel times, on {devices(rows)}")
    header, lines = bench_table(rows, args.shapes, reference, last)
    print(format_text(header, lines, name_columns=3 if "variant" in header else 2))
    report_left_out(runs)
    # A library without the type is not a failure (cuBLAS geam has no 1- or 2-byte types).
    return 1 if report_problems([run for run in runs if run.status != "n/a"]) else 0


def command_dtypes(args):
    """Every step for every element type at one size: one CSV, one step x dtype table."""
    csv_path = fresh_csv(args.csv)
    runs = []
    with open(csv_path.with_suffix(".log"), "w") as log:
        for dtype in args.dtypes:
            for step in args.steps:
                run = run_step(step, step_arguments(args.rows, args.cols, args, dtype), csv_path,
                               log=log, root=args.root)
                run.dtype = dtype
                runs.append(run)
    rows = rows_of(csv_path)
    print(f"\nEvery element type, {args.rows} x {args.cols} on {devices(rows)}: % of the copy "
          "ceiling measured in the same run (best variant per step); n/a: the step does not "
          "support the type")
    statuses = {(run.step, run.dtype): run.status for run in runs if run.status != "ok"}
    header, lines = dtypes_table(rows, args.steps, statuses)
    # The table's lines are types: turn it round, one line per step, a column per type.
    columns = [header[0]] + [line[0] for line in lines]
    turned = [[step] + [line[2 + index] for line in lines]
              for index, step in enumerate(args.steps)]
    print(format_text(["step"] + columns[1:], turned, name_columns=1))
    print(f"\nCSV: {csv_path}   program output: {csv_path.with_suffix('.log')}")
    # Per type where it depends on the type (n/a, failed); once per step where it does not.
    for run in runs:
        if run.status in ("n/a", "failed"):
            print(f"{run.step} {run.dtype}: {run.status}: {run.reason}")
    report_problems([run for run in once_per_step(runs) if run.status in ("skipped", "not built")])
    return 1 if any(run.status == "failed" for run in runs) else 0


def parse_arguments(argv=None):
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    commands = parser.add_subparsers(dest="command", required=True)
    for name in ("run-all", "scaling", "sweep", "bench", "dtypes"):
        sub = commands.add_parser(name)
        sub.add_argument("--steps", nargs="+", required=True)
        sub.add_argument("--csv", required=True)
        sub.add_argument("--reps", type=int)
        sub.add_argument("--root", type=Path, default=ROOT,
                         help="the folder holding the step folders (default: this lab)")
        if name == "dtypes":
            sub.add_argument("--dtypes", nargs="+", choices=list(DTYPES), default=list(DTYPES),
                             help="the element types to run (default: every one)")
        else:
            sub.add_argument("--dtype", choices=list(DTYPES), default=DEFAULT_DTYPE,
                             help=f"the element type (default {DEFAULT_DTYPE})")
        if name == "run-all":
            sub.add_argument("--other-steps", nargs="*", default=[],
                             help="steps of other kinds (host_pipeline, distributed): own section")
        if name in ("run-all", "scaling", "dtypes"):
            sub.add_argument("--rows", type=int, default=8192)
            sub.add_argument("--cols", type=int, default=8192)
        if name == "scaling":
            sub.add_argument("--threads", type=int, nargs="+")
        if name == "sweep":
            sub.add_argument("--sizes", type=int, nargs="+", required=True)
        if name == "bench":
            sub.add_argument("--shapes", nargs="+", required=True)
            sub.add_argument("--dtypes", nargs="+", choices=list(DTYPES),
                             help="several element types in one CSV (default: --dtype)")
    args = parser.parse_args(argv)
    if args.command == "bench" and len(args.steps) < 2:
        parser.error("bench takes the library steps, then the last step")
    return args


def main(argv=None):
    args = parse_arguments(argv)
    handlers = {"run-all": command_run_all, "scaling": command_scaling,
                "sweep": command_sweep, "bench": command_bench, "dtypes": command_dtypes}
    return handlers[args.command](args)


if __name__ == "__main__":
    sys.exit(main())
