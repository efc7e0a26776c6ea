"""Regenerates the README's result tables from the CSV files of a run (make readme).

    python -m transpose_lab.readme_tables --results docs/results --readme README.md --steps S...

A table lives between `<!-- table:NAME -->` and `<!-- end:NAME -->`; everything else in the
README is left as it is. Tables whose CSV is missing are left untouched, with one line saying so;
the dtypes table then says that `make dtypes` has not been run yet.
"""
import argparse
import re
import sys
from pathlib import Path

from .report_tables import (bench_table, devices, dtype_table_steps, dtypes_label, dtypes_table,
                            format_markdown, profile_table, progression_table, scaling_table)
from .results_csv import REFERENCE_MARK, ResultsError, read_profile, read_results

# The reference rows (the top Makefile's REFERENCE_STEPS, which `make readme` passes): always
# columns of the dtypes table.
REFERENCE_STEPS = ["CUDA.copy", "CUDA.cublas", "CUDA.cublaslt"]
LIBRARY_REFERENCES = ["CUDA.cublas", "CUDA.cublaslt"]  # what the bench table measures against


def progression(results):
    rows = read_results(results / "run_all.csv")
    steps = list(dict.fromkeys(row["step"] for row in rows))
    size = f"{rows[0]['rows']} x {rows[0]['cols']}" if rows else "?"
    caption = f"{size} {dtypes_label(rows)} on {devices(rows)}, median times."
    return caption, progression_table(rows, steps)


def bench(results):
    rows = read_results(results / "bench.csv")
    steps = list(dict.fromkeys(row["step"] for row in rows))
    reference = next(step for step in steps if step in LIBRARY_REFERENCES)
    last = next(step for step in steps if step != reference)
    shapes = list(dict.fromkeys(f"{row['rows']}x{row['cols']}" for row in rows))
    return (f"{dtypes_label(rows)} on {devices(rows)}, median kernel times.",
            bench_table(rows, shapes, reference, last))


def scaling(results):
    rows = read_results(results / "scaling.csv")
    size = f"{rows[0]['rows']} x {rows[0]['cols']}" if rows else "?"
    return f"{size} {dtypes_label(rows)} on {devices(rows)}.", scaling_table(rows)


def profile(results):
    rows = read_profile(results / "profile.csv")
    size = f"{rows[0]['rows']} x {rows[0]['cols']}" if rows else "?"
    device = rows[0]["device"] if rows else "?"
    return (f"Nsight Compute, one launch each, {size} {dtypes_label(rows)} on {device}.",
            profile_table(rows))


def dtypes(results, reference_steps=None):
    """Element type x (the last two kernel steps and the reference): % of copy and GB/s."""
    rows = read_results(results / "dtypes.csv")
    steps = dtype_table_steps(rows, reference_steps or REFERENCE_STEPS)
    rows = [row for row in rows if row["step"] in steps]
    size = f"{rows[0]['rows']} x {rows[0]['cols']}" if rows else "?"
    caption = (f"{size} on {devices(rows)}: % of the copy ceiling measured in the same run "
               "(effective GB/s); n/a: the step does not support the type.")
    return caption, dtypes_table(rows, steps, with_gbps=True)


def progression_side_by_side(results):
    """Chapter 2's run-all (every step, its variants and the references, float32) on the GPU of
    results/run_all_chapter2.csv next to results/h100/run_all_chapter2.csv: % of each GPU's own
    copy and the kernel time."""
    runs = [read_results(results / "run_all_chapter2.csv"),
            read_results(results / "h100" / "run_all_chapter2.csv")]
    names = [devices([row for row in rows if row["kind"] not in ("cpu",)]) for rows in runs]
    keyed = [{(row["step"], row["variant"]): row for row in rows} for rows in runs]
    header = ["step", "variant"]
    for name in names:
        header += [f"{name} ms", f"{name} % of copy"]
    lines = []
    for key, first in keyed[0].items():
        line = [key[0], key[1]]
        for rows in keyed:
            row = rows.get(key)
            line += [f"{row['median_ms']:.3f}", f"{row['pct_of_ceiling']:.1f}%"] if row else ["-", "-"]
        lines.append(line)
    size = runs[0][0]
    caption = (f"{size['rows']} x {size['cols']} {dtypes_label(runs[0])}, L2 flushed before each "
               "launch; CPU rows are % of each host's OpenMP copy.")
    return caption, (header, lines)


DTYPES_NOT_RUN = ("Not run yet: `make dtypes` runs every step for every element type and writes "
                  "`results/dtypes.csv`; `make readme` then fills this table.")


class MissingRow(LookupError):
    """The CSV has no row for the step a table asks for."""


def own_rows_and_the_one_before(lines, is_own):
    """The consecutive rows for which is_own holds, with the row before them for comparison."""
    own = [i for i, line in enumerate(lines) if is_own(line)]
    if not own:
        raise MissingRow
    return lines[max(0, own[0] - 1):own[-1] + 1]


def step_run(results, step):
    """The step's own rows of the run-all table (every variant), with the row before them: the
    last one of the progression, which a reference row is compared with."""
    caption, (header, lines) = progression(results)
    progression_or_own = [line for line in lines if line[0].split()[0] == step
                          or not line[1].startswith(REFERENCE_MARK)]
    rows = own_rows_and_the_one_before(progression_or_own, lambda line: line[0].split()[0] == step)
    return caption, (header, rows)


def step_profile(results, step):
    """The step's own profile row, with the row before it for comparison."""
    caption, (header, lines) = profile(results)
    return caption, (header, own_rows_and_the_one_before(lines, lambda line: line[0] == step))


TABLES = {"progression": (progression, "run_all.csv"), "bench": (bench, "bench.csv"),
          "scaling": (scaling, "scaling.csv"), "profile": (profile, "profile.csv"),
          "dtypes": (dtypes, "dtypes.csv"),
          "progression-chapter2": (progression_side_by_side, "run_all_chapter2.csv")}
# What a table says while its CSV has not been written yet (the others are left as they are).
NOT_RUN_TEXT = {"dtypes": DTYPES_NOT_RUN}
STEP_TABLES = {"step-run": (step_run, "run_all.csv"), "step-profile": (step_profile, "profile.csv")}


def fill(path, tables, results, *build_args):
    """Replaces every table of `tables` found in the file at path; returns what it said."""
    text = path.read_text()
    for name, (build, csv_name) in tables.items():
        pattern = re.compile(rf"(<!-- table:{name} -->\n).*?(<!-- end:{name} -->)", re.S)
        if not pattern.search(text):
            continue
        if not (results / csv_name).exists():
            if name in NOT_RUN_TEXT:
                text = pattern.sub(lambda m: m.group(1) + NOT_RUN_TEXT[name] + "\n\n"
                                   + m.group(2), text)
                print(f"{path}: table {name}: not run yet ({results / csv_name} does not exist)")
            else:
                print(f"{path}: table {name}: skipped: {results / csv_name} does not exist")
            continue
        try:
            caption, (header, lines) = build(results, *build_args)
        except ResultsError as error:
            sys.exit(f"error: {error}")
        except MissingRow:
            print(f"{path}: table {name}: skipped: no row for it in {results / csv_name}")
            continue
        body = f"{caption}\n\n{format_markdown(header, lines)}\n\n"
        text = pattern.sub(lambda m: m.group(1) + body + m.group(2), text)
        print(f"{path}: table {name} from {results / csv_name}")
    path.write_text(text)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--results", type=Path, default=Path("results"))
    parser.add_argument("--readme", type=Path, default=Path("README.md"))
    parser.add_argument("--steps", nargs="*", default=[],
                        help="steps whose own README.md gets its step-run/step-profile tables")
    parser.add_argument("--reference", nargs="*", default=REFERENCE_STEPS,
                        help="the reference steps: columns of the dtypes table besides the last "
                             f"two kernel steps (default: {' '.join(REFERENCE_STEPS)})")
    args = parser.parse_args(argv)
    tables = dict(TABLES, dtypes=(lambda results: dtypes(results, args.reference), "dtypes.csv"))
    fill(args.readme, tables, args.results)
    for step in args.steps:
        readme = args.readme.parent / step / "README.md"
        if readme.exists():
            fill(readme, STEP_TABLES, args.results, step)
    return 0


if __name__ == "__main__":
    sys.exit(main())
