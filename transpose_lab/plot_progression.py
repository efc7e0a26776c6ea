"""Bar chart of the progression: each step's speedup over the best CPU variant.

One bar per step in the order the runner wrote them (a CPU step shows its best variant), on a log
axis; each bar is labelled with its effective bandwidth and its % of the copy ceiling measured in
the same run, and a short dash over each bar marks that ceiling. The reference rows (the copy
kernel, the libraries) come after the progression, hatched, past a dotted line: yardsticks, not
steps.
"""

import sys


from .plot_style import (CEILING_COLOR, devices_line, new_figure, plain_log_axis, plot_arguments,
                         save, set_titles, step_colors)
from .results_csv import (at_size, best_row, choose_dtype, choose_size, cpu_threads_label, is_cpu,
                          is_gpu, NothingToPlot, of_dtype, only_device, plottable_rows,
                          reference_steps, run_plot, shape_label, size_label, steps_in_order)

BAR_WIDTH = 0.7
REFERENCE_HATCH = "//"


def bar_label(step, best, rows_of_step):
    """The step name, and which variant won where the step has several."""
    variants = set(row["variant"] for row in rows_of_step)
    return f"{step}\n({best['variant']})" if len(variants) > 1 else step


def draw(csv_path, out, wanted_dtype=None):
    from matplotlib.lines import Line2D
    from matplotlib.patches import Patch
    rows = plottable_rows(csv_path)
    dtype = choose_dtype(rows, csv_path, wanted_dtype)
    rows = of_dtype(rows, dtype)
    size = choose_size(rows, csv_path)
    rows = at_size(rows, size)
    cpu_rows = [row for row in rows if is_cpu(row)]
    gpu_rows = [row for row in rows if is_gpu(row)]
    if not cpu_rows:
        raise NothingToPlot(f"{csv_path} has no CPU rows at {shape_label(*size)} {dtype} to "
                            "measure the speedups against")
    if not gpu_rows:
        raise NothingToPlot(f"{csv_path} has no GPU rows at {shape_label(*size)} {dtype} "
                            "(no GPU where it was run?)")
    baseline = best_row(cpu_rows)

    references = reference_steps(rows)
    steps = [step for step in steps_in_order(rows) if step not in references] + references
    colors = step_colors(rows)
    figure, axis = new_figure(width=max(8.0, 1.25 * len(steps) + 2.5), height=6.0)
    labels, speedups, tops = [], [], []
    for position, step in enumerate(steps):
        rows_of_step = [row for row in rows if row["step"] == step]
        best = best_row(rows_of_step)
        labels.append(bar_label(step, best, rows_of_step))
        speedup = baseline["median_ms"] / best["median_ms"]
        # Bandwidths are at the same size, so a bandwidth ratio is a speedup too.
        ceiling = best["ceiling_gbps"] / baseline["gbps"]
        axis.bar(position, speedup, BAR_WIDTH, color=colors[step], edgecolor="black",
                 linewidth=0.5, hatch=REFERENCE_HATCH if step in references else None)
        axis.hlines(ceiling, position - BAR_WIDTH / 2, position + BAR_WIDTH / 2,
                    colors=CEILING_COLOR, linestyles="--", linewidth=1.5)
        top = max(speedup, ceiling)
        axis.annotate(f"{speedup:.3g}x\n{best['gbps']:,.0f} GB/s\n"
                      f"{best['pct_of_ceiling']:.0f}% of copy",
                      (position, top), xytext=(0, 3), textcoords="offset points",
                      ha="center", va="bottom", fontsize=8.5)
        speedups.append(speedup)
        tops.append(top)
    axis.set_xticks(range(len(steps)), labels)
    if references and len(references) < len(steps):
        axis.axvline(len(steps) - len(references) - 0.5, color=CEILING_COLOR, linestyle=":",
                     linewidth=1)

    plain_log_axis(axis, "y")
    axis.set_ylim(min(0.5, min(speedups) / 2), max(tops) * 10)  # room for the labels, legend
    axis.axhline(1.0, color="black", linewidth=0.8)
    axis.set_ylabel(f"speedup over the best CPU variant (x, log scale)\n"
                    f"1x = {baseline['step']} {baseline['variant']}, "
                    f"{baseline['median_ms']:.3g} ms")
    axis.set_xlabel("step (in the order of the progression)"
                    + (", then the reference rows" if references else ""))
    axis.grid(axis="x", visible=False)

    legend_handles = [
        Patch(color=colors[cpu_rows[0]["step"]], label="CPU step (OpenMP)"),
        Patch(color=colors[gpu_rows[0]["step"]], label="GPU step (CUDA)"),
        Line2D([], [], color=CEILING_COLOR, linestyle="--",
               label="copy ceiling, same run (CPU: OpenMP copy; GPU: cudaMemcpy D2D)"),
    ]
    if references:
        legend_handles.append(Patch(facecolor="white", edgecolor="black", hatch=REFERENCE_HATCH,
                                    label="reference row, not a step (copy kernel, libraries)"))
    axis.legend(handles=legend_handles, loc="upper left", ncols=3)

    set_titles(figure, "Speedup of every step over the best CPU variant",
               f"{size_label(*size, dtype)}   |   " +
               devices_line(only_device(gpu_rows, "GPU", csv_path),
                            only_device(cpu_rows, "CPU", csv_path), cpu_threads_label(cpu_rows)))
    save(figure, out)


def main(argv=None):
    args = plot_arguments(__doc__, "run_all.csv", "progression.png",
                          "make run-all").parse_args(argv)
    return run_plot(draw, args.csv, args.out, args.dtype)


if __name__ == "__main__":
    sys.exit(main())
