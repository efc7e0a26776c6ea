"""`make permute`: every step of chapter 3 on the chapter's named cases, for each element type.

    python -m transpose_lab.permute_cases --steps S... [--dtypes T...] [--cases NAME...]
                                          [--reps N] [--torch-python PYTHON] --csv FILE
    python -m transpose_lab.permute_cases --list          the cases, one a line

Each step runs once per type, every case a line of its --cases file (one CUDA context a step and
type, not one a case: about 0.3 s each, a minute and a half of a reference run), and appends a row
a case to FILE (written fresh; the programs' output goes to the .log beside it): the lab's results
schema with the tensor's `shape` and `perm` appended. The table
printed at the end is read from that CSV, never from the programs' text: % of the copy ceiling
that each program measured in the same run. With --torch-python, PYTHON runs the PyTorch row
too (transpose_lab.torch_reference: x.permute(perm).contiguous(), verified and timed like the
steps), once a case for every type, its rows in the same CSV and a column of the table. Exit
codes as run_steps: a step skipped (no GPU, no torch) or not built is said in one line and is no
failure; a step that failed makes this exit 1.
"""
import argparse
import csv
import sys

from transpose_lab import lab, torch_reference
from transpose_lab.report_tables import format_text
from transpose_lab.run_steps import fresh_csv, report_problems, run_program, run_step

# The named cases: (shape, perm), as --shape and --perm take them. The layouts users move every
# day: images between NCHW and NHWC, attention heads, batches of small matrices (one of them
# with a 3-element side), the 3-D FFT's axis swap, and a 6-d permutation of every axis.
CASES = {
    "nchw-to-nhwc": ("64,64,56,56", "0,2,3,1"),
    "nhwc-to-nchw": ("64,56,56,64", "0,3,1,2"),
    "nchw-to-nhwc-rgb": ("256,3,224,224", "0,2,3,1"),
    "nhwc-to-nchw-rgb": ("256,224,224,3", "0,3,1,2"),
    "attention-heads": ("32,512,16,64", "0,2,1,3"),
    "batched-64x64": ("4096,64,64", "0,2,1"),
    "batched-3x1000": ("4096,3,1000", "0,2,1"),
    "batched-17x19": ("4096,17,19", "0,2,1"),
    "reverse-512^3": ("512,512,512", "2,1,0"),
    "reverse-96^4": ("96,96,96,96", "3,2,1,0"),
    "six-axes": ("16,32,16,32,16,16", "5,3,1,4,0,2"),
}


def shape_column(shape):
    """The CSV's shape column: '64x64x56x56' for --shape 64,64,56,56."""
    return shape.replace(",", "x")


def run_torch_row(python, shape, perm, args, csv_path, log):
    """The PyTorch row of one case, every type in one run (one start of torch and CUDA)."""
    arguments = ["--shape", shape, "--perm", perm, "--dtypes", *args.dtypes]
    if args.reps:
        arguments += ["--reps", args.reps]
    # Run from the lab's root, so that a python3 outside the lab's venv finds the package.
    command = [python, "-m", "transpose_lab.torch_reference", *map(str, arguments), "--csv",
               str(csv_path.resolve())]
    return run_program(torch_reference.STEP, command, arguments, log=log, cwd=lab.ROOT)


def read_rows(path):
    try:
        with open(path, newline="") as handle:
            return list(csv.DictReader(handle))
    except FileNotFoundError:
        return []


def results_table(rows, steps, cases, dtypes):
    """One line per case and type, one column per step: its % of the copy, or '-' for none."""
    found = {(row["step"], row["shape"], row["perm"], row["dtype"]): row for row in rows}
    header = ["case", "dtype", *steps]
    lines = []
    for name in cases:
        shape, perm = CASES[name]
        for dtype in dtypes:
            cells = []
            for step in steps:
                row = found.get((step, shape_column(shape), perm, dtype))
                cells.append("-" if row is None else
                             f"{float(row['pct_of_ceiling']):.1f}%"
                             + ("" if row["verified"] == "yes" else " WRONG"))
            lines.append([name, dtype, *cells])
    return header, lines


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--steps", nargs="+", default=list(lab.steps("PERMUTE_STEPS")))
    parser.add_argument("--dtypes", nargs="+", default=["float32"], choices=lab.DTYPES)
    parser.add_argument("--cases", nargs="+", default=list(CASES), choices=list(CASES))
    parser.add_argument("--reps", type=int)
    parser.add_argument("--csv")
    parser.add_argument("--torch-python", metavar="PYTHON",
                        help="also the PyTorch row, run by PYTHON (one that imports torch)")
    parser.add_argument("--list", action="store_true")
    args = parser.parse_args(argv)
    if args.list:
        for name, (shape, perm) in CASES.items():
            print(f"{name}  --shape {shape} --perm {perm}")
        return 0
    if not args.csv:
        parser.error("--csv FILE is needed")
    csv_path = fresh_csv(args.csv)
    columns = [*args.steps, torch_reference.STEP] if args.torch_python else args.steps
    runs = []
    cases_path = csv_path.with_suffix(".cases")  # a line a case (a step stops at its first failure)
    cases_path.write_text("".join(f"# {name}\n--shape {CASES[name][0]} --perm {CASES[name][1]}\n"
                                  for name in args.cases))
    with open(csv_path.with_suffix(".log"), "w") as log:
        for dtype in args.dtypes:
            arguments = ["--dtype", dtype, *(["--reps", args.reps] if args.reps else []),
                         "--cases", cases_path]
            for step in args.steps:
                runs.append(run_step(step, arguments, csv_path, log=log))
        if args.torch_python:
            for name in args.cases:
                shape, perm = CASES[name]
                runs.append(run_torch_row(args.torch_python, shape, perm, args, csv_path, log))
                if runs[-1].status == "skipped":  # no torch or no GPU: said once
                    break
    cases_path.unlink()
    rows = read_rows(csv_path)
    devices = "; ".join(dict.fromkeys(row["device"] for row in rows)) or "no device"
    print(f"\nPermutations on {devices}: % of the copy ceiling measured in the same program run")
    print(format_text(*results_table(rows, columns, args.cases, args.dtypes)))
    print(f"\nCSV: {csv_path}   program output: {csv_path.with_suffix('.log')}")
    return 1 if report_problems(runs) else 0


if __name__ == "__main__":
    sys.exit(main())
