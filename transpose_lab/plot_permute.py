"""Chapter 3's named cases: how close each step comes to the copy of the same bytes (make permute
writes results/permute.csv).

One panel per element type; in each, a group of bars per case (the tensor and its permutation),
one bar per step and the PyTorch row where it ran, each the % of the copy ceiling its own
program measured in the same run (the CPU step: an OpenMP copy; the GPU steps and PyTorch: a
device-to-device copy). A case a step did not run, or whose result was wrong, has no bar.
"""

import sys

from .plot_style import (IDEAL_COLOR, devices_line, plot_arguments, pyplot, save, set_titles,
                         step_colors)
from .results_csv import (NothingToPlot, dtypes_in_order, is_cpu, measurement_key,
                          read_permute_results, run_plot, steps_in_order, usable_rows)

PANEL_COLUMNS = 2  # panels side by side; as many rows as the types need


def case_key(row):
    """One measurement of chapter 3: the matrix key with the tensor and its permutation."""
    return measurement_key(row) + (row["shape"], row["perm"])


def case_label(shape, perm):
    """'64x64x56x56\\n(0,2,3,1)': the tensor over its permutation, as --shape and --perm."""
    return f"{shape}\n({perm})"


def draw(csv_path, out):
    rows = usable_rows(read_permute_results(csv_path), csv_path, key=case_key)
    if not rows:
        raise NothingToPlot(f"{csv_path} holds no verified measurement")
    steps = steps_in_order(rows)
    colors = step_colors(rows)
    dtypes = dtypes_in_order(rows)
    cases = list(dict.fromkeys((row["shape"], row["perm"]) for row in rows))
    found = {(row["step"], row["dtype"], row["shape"], row["perm"]): row for row in rows}

    panel_rows = (len(dtypes) + PANEL_COLUMNS - 1) // PANEL_COLUMNS
    columns = min(PANEL_COLUMNS, len(dtypes))
    figure, axes = pyplot().subplots(panel_rows, columns, squeeze=False, layout="constrained",
                                     figsize=(max(12.0, 1.1 * len(cases) * columns + 2.0),
                                              3.4 * panel_rows + 1.4))
    width = 0.8 / len(steps)
    for index, dtype in enumerate(dtypes):
        axis = axes[index // columns][index % columns]
        for s, step in enumerate(steps):
            xs, pcts = [], []
            for c, (shape, perm) in enumerate(cases):
                row = found.get((step, dtype, shape, perm))
                if row is not None:
                    xs.append(c - 0.4 + (s + 0.5) * width)
                    pcts.append(row["pct_of_ceiling"])
            axis.bar(xs, pcts, width, color=colors[step], label=step if index == 0 else None,
                     edgecolor="black", linewidth=0.3)
        axis.axhline(100, color=IDEAL_COLOR, linewidth=0.8)
        axis.set_title(dtype)
        axis.set_xticks(range(len(cases)))
        axis.set_xticklabels([case_label(*case) for case in cases], fontsize=7)
        axis.set_ylabel("% of the same-run copy")
        axis.set_ylim(0, max(110, max(r["pct_of_ceiling"] for r in rows) + 5))
    for index in range(len(dtypes), panel_rows * columns):
        axes[index // columns][index % columns].set_visible(False)
    figure.legend(loc="outside lower center", ncols=len(steps))
    gpu = next((row["device"] for row in rows if not is_cpu(row)), None)
    cpu = next((row for row in rows if is_cpu(row)), None)
    set_titles(figure, "Chapter 3: permutations of tensors against the copy",
               devices_line(gpu, cpu and cpu["device"], cpu and f"{cpu['threads']} threads")
               + "   |   every result verified bitwise")
    save(figure, out)


def main(argv=None):
    parser = plot_arguments(__doc__, "permute.csv", "permute.png", "make permute",
                            dtype_option=False)
    args = parser.parse_args(argv)
    return run_plot(draw, args.csv, args.out)


if __name__ == "__main__":
    sys.exit(main())
