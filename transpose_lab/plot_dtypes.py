"""How close each step comes to its copy ceiling for every element type, against element size.

One line per step (its best variant for each type), % of the copy ceiling measured in the same
run (y) against the element's size in bytes (x, log 2). Types of one size (float16 and bfloat16;
float64 and complex64) are both drawn, each with its own marker; the line goes through the
better of them. A type a step does not support has no point.
"""

import sys


from .plot_style import (devices_line, IDEAL_COLOR, new_figure, plot_arguments, save,
                         set_titles, step_colors)
from .results_csv import (at_size, choose_size, DTYPES, is_cpu, is_gpu, only_device,
                          plottable_rows, run_plot, shape_label, steps_in_order)

# One marker per element type, the same in every line: the legend's second half.
DTYPE_MARKERS = {"uint8": "o", "float16": "s", "bfloat16": "D", "float32": "P",
                 "float64": "^", "complex64": "v", "complex128": "X"}
ELEMENT_SIZES = sorted(set(DTYPES.values()))


def best_per_step_and_dtype(rows):
    """{(step, dtype): the row of the step's best variant for that type} (rows of one size)."""
    best = {}
    for row in rows:
        key = (row["step"], row["dtype"])
        if key not in best or row["gbps"] > best[key]["gbps"]:
            best[key] = row
    return best


def size_tick_labels():
    """'2\\nfloat16\\nbfloat16': each element size with the types that have it."""
    return [f"{size} B\n" + "\n".join(name for name, bytes_ in DTYPES.items() if bytes_ == size)
            for size in ELEMENT_SIZES]


def draw(csv_path, out):
    from matplotlib.lines import Line2D
    rows = plottable_rows(csv_path)
    size = choose_size(rows, csv_path)
    rows = at_size(rows, size)
    best = best_per_step_and_dtype(rows)
    steps = steps_in_order(rows)
    colors = step_colors(rows)

    figure, axis = new_figure(width=11.0, height=6.2)
    for step in steps:
        mine = [row for (name, _), row in best.items() if name == step]
        line_points = {}  # element size -> the better type's % (the line through them)
        for row in mine:
            pct = row["pct_of_ceiling"]
            axis.plot([row["elem_bytes"]], [pct], linestyle="none", color=colors[step],
                      marker=DTYPE_MARKERS[row["dtype"]], markersize=7,
                      markeredgecolor="black", markeredgewidth=0.4, zorder=3)
            line_points[row["elem_bytes"]] = max(pct, line_points.get(row["elem_bytes"], pct))
        sizes = sorted(line_points)
        axis.plot(sizes, [line_points[s] for s in sizes], color=colors[step], linewidth=2,
                  zorder=2)
    axis.axhline(100, color=IDEAL_COLOR, linewidth=1, linestyle="--", zorder=1)
    axis.set_xscale("log", base=2)
    axis.set_xticks(ELEMENT_SIZES, size_tick_labels())
    axis.set_xlim(ELEMENT_SIZES[0] / 1.4, ELEMENT_SIZES[-1] * 1.4)
    axis.set_xlabel("element size (bytes, log scale) and the types of that size")
    axis.set_ylabel("% of the copy ceiling measured in the same run\n"
                    "(GPU: cudaMemcpy D2D; CPU: OpenMP copy; of the same bytes)")
    axis.set_ylim(0, max(110, max(row["pct_of_ceiling"] for row in rows) * 1.08))

    handles = [Line2D([], [], color=colors[step], linewidth=2, label=step) for step in steps]
    handles += [Line2D([], [], color=IDEAL_COLOR, linestyle="none", label=" ")]
    handles += [Line2D([], [], color=IDEAL_COLOR, linestyle="none", marker=DTYPE_MARKERS[name],
                       markeredgecolor="black", markeredgewidth=0.4, label=name)
                for name in DTYPES if any(row["dtype"] == name for row in rows)]
    figure.legend(handles=handles, loc="outside right center")

    cpu_rows = [row for row in rows if is_cpu(row)]
    gpu_rows = [row for row in rows if is_gpu(row)]
    set_titles(figure, "Every element type: % of the copy ceiling against element size",
               f"{shape_label(*size)}, best variant per step   |   " +
               devices_line(only_device(gpu_rows, "GPU", csv_path),
                            only_device(cpu_rows, "CPU", csv_path)))
    save(figure, out)


def main(argv=None):
    args = plot_arguments(__doc__, "dtypes.csv", "dtypes.png", "make dtypes",
                          dtype_option=False).parse_args(argv)
    return run_plot(draw, args.csv, args.out)


if __name__ == "__main__":
    sys.exit(main())
