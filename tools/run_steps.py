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
from results_csv import ResultsError, read_results  # noqa: E402

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
    if done.returncode == EXIT_SKIPPED:
        return StepRun(step, "skipped", last_line)
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


def ratio(numerator, denominator):
    return f"{numerator / denominator:.2f}x" if numerator and denominator else "-"


def print_table(header, lines):
    widths = [max(len(str(cell)) for cell in column) for column in zip(header, *lines)]
    for index, line in enumerate([header, *lines]):
        print("  ".join(str(cell).ljust(width) if i < 2 else str(cell).rjust(width)
                        for i, (cell, width) in enumerate(zip(line, widths))))
        if index == 0:
            print("  ".join("-" * width for width in widths))


def report_problems(runs):
    problems = [run for run in runs if run.status != "ok"]
    for run in problems:
        print(f"{run.step}: {run.status}: {run.reason}")
    return any(run.status == "failed" for run in problems)


def best_cpu(rows):
    cpu = [row for row in rows if row["step"].startswith("CPU.")]
    return min(cpu, key=lambda row: row["median_ms"]) if cpu else None


def command_run_all(args):
    csv_path = fresh_csv(args.csv)
    extra = ["--reps", args.reps] if args.reps else []
    with open(csv_path.with_suffix(".log"), "w") as log:
        runs = [run_step(step, [args.rows, args.cols, *extra], csv_path, log=log)
                for step in args.steps]
    rows = rows_of(csv_path)
    cpu = best_cpu(rows)
    device = " / ".join(dict.fromkeys(row["device"] for row in rows))
    print(f"\nTranspose of {args.rows} x {args.cols} fp32 on {device or 'no device'}; "
          "median times; % of the copy ceiling measured in the same program run")
    lines, previous = [], None
    for run in runs:
        step_rows = [row for row in rows if row["step"] == run.step]
        if not step_rows:
            lines.append([run.step, run.status, "-", "-", "-", "-", "-", "-", "-"])
            continue
        for row in step_rows:
            name = run.step if row["variant"] == "kernel" else f"{run.step} {row['variant']}"
            lines.append([name, row["summary"] if row["variant"] == "kernel" else row["launch"],
                          f"{row['median_ms']:.3f}", f"{row['gbps']:.1f}",
                          f"{row['pct_of_ceiling']:.1f}%",
                          ratio(cpu["median_ms"], row["median_ms"]) if cpu else "-",
                          ratio(previous["median_ms"], row["median_ms"]) if previous else "-",
                          f"{row['e2e_ms']:.2f}" if row["e2e_ms"] is not None else "-",
                          "verified" if row["verified"] else "WRONG"])
            previous = row
    print_table(["step", "what it does", "ms", "GB/s", "% copy", "vs best CPU", "vs previous",
                 "e2e ms", "check"], lines)
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
    single = {row["variant"]: row for row in rows if row["threads"] == min(threads)}
    lines = [[f"{row['step']} {row['variant']}", row["threads"], f"{row['median_ms']:.2f}",
              f"{row['gbps']:.1f}", f"{row['ceiling_gbps']:.1f}", f"{row['pct_of_ceiling']:.1f}%",
              ratio(single[row["variant"]]["median_ms"], row["median_ms"])
              if row["variant"] in single else "-"] for row in rows]
    print_table(["variant", "threads", "ms", "GB/s", "copy GB/s", "% copy",
                 f"vs {min(threads)} thread(s)"], lines)
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
    print(f"\nEffective GB/s by size (square matrices); best variant per step")
    lines = []
    for size in args.sizes:
        line = [f"{size} x {size}"]
        for step in steps:
            found = [row["gbps"] for row in rows if row["step"] == step and row["rows"] == size]
            line.append(f"{max(found):.1f}" if found else "-")
        lines.append(line)
    print_table(["size", *steps], lines)
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
    print(f"\n{last} against {reference} and the device-to-device copy, median kernel times")
    lines = []
    for shape in args.shapes:
        r, c = map(int, shape.split("x"))
        ref = next((row for row in rows if row["step"] == reference and (row["rows"], row["cols"]) == (r, c)), None)
        own = next((row for row in rows if row["step"] == last and (row["rows"], row["cols"]) == (r, c)), None)
        if not ref or not own:
            lines.append([shape, "-", "-", "-", "-", "-", "-"])
            continue
        lines.append([shape, f"{own['ceiling_gbps']:.1f}", f"{ref['gbps']:.1f}", f"{own['gbps']:.1f}",
                      f"{own['pct_of_ceiling']:.1f}%", f"{ref['pct_of_ceiling']:.1f}%",
                      ratio(ref["median_ms"], own["median_ms"])])
    device = " / ".join(dict.fromkeys(row["device"] for row in rows)) or "no device"
    print(f"device: {device}")
    print_table(["shape", "copy GB/s", f"{reference} GB/s", f"{last} GB/s", f"{last} % copy",
                 f"{reference} % copy", f"{last} vs {reference}"], lines)
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
