#!/usr/bin/env python3
"""Runs the steps' programs and prints comparison tables from the CSV they write.

    run_steps.py run-all --steps S... [--rows R --cols C --reps N] --csv FILE
    run_steps.py scaling --steps CPU.omp --rows R --cols C [--threads 1 2 4 ...] --csv FILE
    run_steps.py sweep   --steps S... --sizes N... --csv FILE
    run_steps.py bench   --steps REFERENCE LAST --shapes RxC... --csv FILE

Every number comes from the CSV the programs write (never from their printed text). Exit codes of
the programs: 0 ran and verified, 77 skipped (no CUDA device), anything else failed. The tables
say which, and this script exits 1 if any step failed.
"""
import argparse
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "plots"))
sys.path.insert(0, str(ROOT / "tools"))
from results_csv import ResultsError, read_results  # noqa: E402
from tables import (bench_table, devices, format_text, progression_table,  # noqa: E402
                    scaling_table)

EXIT_SKIPPED = 77


class StepRun:
    """The outcome of one program run: 'ok', 'skipped', 'not built' or 'failed', and why."""

    def __init__(self, step, status, reason=""):
        self.step, self.status, self.reason = step, status, reason


def run_step(step, args, csv_path, env=None, log=None):
    binary = ROOT / step / "transpose"
    if not binary.exists():
        return StepRun(step, "not built", f"{step}/transpose does not exist (make all)")
    command = [str(binary), *map(str, args), "--csv", str(csv_path)]
    print(f"  running {step} {' '.join(map(str, args))}", file=sys.stderr, flush=True)
    done = subprocess.run(command, capture_output=True, text=True, env=env)
    if log is not None:
        log.write(f"$ {' '.join(command)}\n{done.stdout}{done.stderr}\n")
    last_line = (done.stderr.strip().splitlines() or [""])[-1]
    if done.returncode == 0:
        return StepRun(step, "ok")
    if done.returncode == EXIT_SKIPPED:  # the program's own line says why
        return StepRun(step, "skipped", last_line.split("skipped: ", 1)[-1])
    return StepRun(step, "failed", f"exit {done.returncode}: {last_line}")


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


def report_problems(runs):
    problems = [run for run in runs if run.status != "ok"]
    for run in problems:
        print(f"{run.step}: {run.status}: {run.reason}")
    return any(run.status == "failed" for run in problems)


def command_run_all(args):
    csv_path = fresh_csv(args.csv)
    extra = ["--reps", args.reps] if args.reps else []
    with open(csv_path.with_suffix(".log"), "w") as log:
        runs = [run_step(step, [args.rows, args.cols, *extra], csv_path, log=log)
                for step in args.steps]
    rows = rows_of(csv_path)
    print(f"\nTranspose of {args.rows} x {args.cols} fp32 on {devices(rows)}; median times; "
          "% of the copy ceiling measured in the same program run")
    statuses = {run.step: run.status for run in runs}
    print(format_text(*progression_table(rows, args.steps, statuses)))
    print(f"\nCSV: {csv_path}   program output: {csv_path.with_suffix('.log')}")
    return 1 if report_problems(runs) else 0


def thread_counts(limit):
    counts, threads = [], 1
    while threads < limit:
        counts.append(threads)
        threads *= 2
    return counts + [limit]


def command_scaling(args):
    csv_path = fresh_csv(args.csv)
    threads = args.threads or thread_counts(os.cpu_count() or 1)
    extra = ["--reps", args.reps] if args.reps else []
    runs = []
    with open(csv_path.with_suffix(".log"), "w") as log:
        for count in threads:
            env = dict(os.environ, OMP_NUM_THREADS=str(count))
            runs += [run_step(step, [args.rows, args.cols, *extra], csv_path, env=env, log=log)
                     for step in args.steps]
    rows = rows_of(csv_path)
    print(f"\nOpenMP scaling, {args.rows} x {args.cols} fp32, "
          f"OMP_PROC_BIND={os.environ.get('OMP_PROC_BIND', 'unset')} "
          f"OMP_PLACES={os.environ.get('OMP_PLACES', 'unset')}")
    print(format_text(*scaling_table(rows)))
    return 1 if report_problems(runs) else 0


def command_sweep(args):
    csv_path = fresh_csv(args.csv)
    extra = ["--reps", args.reps] if args.reps else []
    runs = []
    with open(csv_path.with_suffix(".log"), "w") as log:
        for size in args.sizes:
            for step in args.steps:
                run = run_step(step, [size, size, *extra], csv_path, log=log)
                runs.append(run)
    rows = rows_of(csv_path)
    steps = list(dict.fromkeys(row["step"] for row in rows))
    print("\nEffective GB/s by size (square matrices); best variant per step")
    lines = []
    for size in args.sizes:
        line = [f"{size} x {size}"]
        for step in steps:
            found = [row["gbps"] for row in rows if row["step"] == step and row["rows"] == size]
            line.append(f"{max(found):.1f}" if found else "-")
        lines.append(line)
    print(format_text(["size", *steps], lines))
    seen, problems = set(), []
    for run in runs:  # one line per step that could not run, not one per size
        if run.status != "ok" and (run.step, run.status) not in seen:
            seen.add((run.step, run.status))
            problems.append(run)
    return 1 if report_problems(problems) else 0


def command_bench(args):
    csv_path = fresh_csv(args.csv)
    reference, last = args.steps
    extra = ["--reps", args.reps] if args.reps else []
    runs = []
    with open(csv_path.with_suffix(".log"), "w") as log:
        for shape in args.shapes:
            rows_count, cols_count = shape.split("x")
            runs += [run_step(step, [rows_count, cols_count, *extra], csv_path, log=log)
                     for step in args.steps]
    rows = rows_of(csv_path)
    print(f"\n{last} against {reference} and the device-to-device copy, median kernel times, "
          f"on {devices(rows)}")
    print(format_text(*bench_table(rows, args.shapes, reference, last)))
    return 1 if report_problems(runs) else 0


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    commands = parser.add_subparsers(dest="command", required=True)
    for name in ("run-all", "scaling", "sweep", "bench"):
        sub = commands.add_parser(name)
        sub.add_argument("--steps", nargs="+", required=True)
        sub.add_argument("--csv", required=True)
        sub.add_argument("--reps", type=int)
        if name in ("run-all", "scaling"):
            sub.add_argument("--rows", type=int, default=8192)
            sub.add_argument("--cols", type=int, default=8192)
        if name == "scaling":
            sub.add_argument("--threads", type=int, nargs="+")
        if name == "sweep":
            sub.add_argument("--sizes", type=int, nargs="+", required=True)
        if name == "bench":
            sub.add_argument("--shapes", nargs="+", required=True)
    args = parser.parse_args()
    if args.command == "bench" and len(args.steps) != 2:
        parser.error("bench takes two steps: the reference and the last step")
    handlers = {"run-all": command_run_all, "scaling": command_scaling,
                "sweep": command_sweep, "bench": command_bench}
    sys.exit(handlers[args.command](args))


if __name__ == "__main__":
    main()
