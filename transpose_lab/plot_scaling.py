"""How the CPU transpose scales with OpenMP threads: speedup and parallel efficiency.

Left: each variant's speedup over itself at the smallest thread count (1 when measured), with the
ideal (linear) line and the scaling of the OpenMP copy ceiling measured in the same runs: a
transpose cannot scale past the memory system the copy shows. Right: parallel efficiency,
speedup / (threads / base threads), in %.
"""

import statistics
import sys

from .plot_style import (CEILING_COLOR, CPU_COLOR, IDEAL_COLOR, new_figure, plain_log_axis,
                         plot_arguments, save, set_titles)
from .results_csv import (at_size, choose_dtype, choose_size, is_cpu, NothingToPlot, of_dtype,
                          only_device, read_results, run_plot, size_label, usable_rows)

VARIANT_COLORS = [CPU_COLOR, "#2f6db5", "#2ca02c", "#9467bd"]


def scaling_series(thread_counts, value_at, base_threads):
    """[(threads, speedup, efficiency %)] for the counts where value_at has a value; value is a
    rate (bigger is better)."""
    base = value_at[base_threads]
    series = []
    for threads in thread_counts:
        if threads in value_at:
            speedup = value_at[threads] / base
            series.append((threads, speedup, 100.0 * speedup / (threads / base_threads)))
    return series


def draw_series(axes, series, **style):
    threads = [point[0] for point in series]
    axes[0].plot(threads, [point[1] for point in series], **style)
    axes[1].plot(threads, [point[2] for point in series], **style)


def draw(csv_path, out, wanted_dtype=None):
    rows = [row for row in usable_rows(read_results(csv_path), csv_path) if is_cpu(row)]
    if not rows:
        raise NothingToPlot(f"{csv_path} has no verified CPU rows")
    dtype = choose_dtype(rows, csv_path, wanted_dtype)
    rows = of_dtype(rows, dtype)
    size = choose_size(rows, csv_path)
    rows = at_size(rows, size)
    thread_counts = sorted(set(row["threads"] for row in rows))
    if len(thread_counts) < 2:
        raise NothingToPlot(f"{csv_path} has CPU rows for one thread count only "
                            f"({thread_counts[0]}): nothing to scale")
    base_threads = thread_counts[0]

    figure, axes = new_figure(panels=2, width=13.0, height=5.6)
    ideal = [(t, t / base_threads, 100.0) for t in thread_counts]
    draw_series(axes, ideal, color=IDEAL_COLOR, linestyle=":", linewidth=1.5,
                label="ideal (linear in threads)")

    series_names = list(dict.fromkeys((row["step"], row["variant"]) for row in rows))
    several_steps = len(set(step for step, _ in series_names)) > 1
    for index, (step, variant) in enumerate(series_names):
        mine = [row for row in rows if (row["step"], row["variant"]) == (step, variant)]
        gbps_at = {row["threads"]: row["gbps"] for row in mine}
        if base_threads not in gbps_at:
            print(f"warning: {csv_path}: {step} {variant} has no run at {base_threads} "
                  "thread(s); left out", file=sys.stderr)
            continue
        widest = max(gbps_at)
        name = f"{step} {variant}" if several_steps else variant
        draw_series(axes, scaling_series(thread_counts, gbps_at, base_threads),
                    color=VARIANT_COLORS[index % len(VARIANT_COLORS)], marker="o", linewidth=2,
                    label=f"{name} ({gbps_at[base_threads]:.3g} → {gbps_at[widest]:.3g} GB/s)")

    # Every process measures its own ceiling; the variants of one run share it: take the median.
    ceiling_at = {t: statistics.median(row["ceiling_gbps"] for row in rows if row["threads"] == t)
                  for t in thread_counts}
    draw_series(axes, scaling_series(thread_counts, ceiling_at, base_threads),
                color=CEILING_COLOR, linestyle="--", marker="s", markersize=4, linewidth=1.5,
                label=f"copy ceiling, OpenMP copy ({ceiling_at[base_threads]:.3g} → "
                      f"{ceiling_at[thread_counts[-1]]:.3g} GB/s)")

    base_text = ("1 thread" if base_threads == 1 else
                 f"{base_threads} threads (the file has no 1-thread run)")
    for axis in axes:
        plain_log_axis(axis, "x", base=2)
        axis.set_xticks(thread_counts, [str(t) for t in thread_counts])
        axis.set_xlabel("OpenMP threads (log scale)")
    speedup_axis, efficiency_axis = axes
    plain_log_axis(speedup_axis, "y", base=2)
    speedup_axis.set_ylabel(f"speedup (x, log scale)\nover the same variant at "
                            f"{base_threads} thread{'s' if base_threads > 1 else ''}")
    speedup_axis.set_title("Speedup")
    speedup_axis.legend(loc="upper left")
    efficiency_axis.set_ylabel("parallel efficiency (%)\n= speedup / (threads / base threads)")
    efficiency_axis.set_title("Parallel efficiency")
    efficiency_axis.set_ylim(0, max(110, efficiency_axis.get_ylim()[1]))
    efficiency_axis.axhline(100, color=IDEAL_COLOR, linewidth=0.8)

    set_titles(figure, "CPU scaling with OpenMP threads",
               f"{size_label(*size, dtype)}   |   CPU: {only_device(rows, 'CPU', csv_path)}   |   "
               f"baseline: {base_text}")
    save(figure, out)


def main(argv=None):
    args = plot_arguments(__doc__, "scaling.csv", "scaling.png", "make scaling").parse_args(argv)
    return run_plot(draw, args.csv, args.out, args.dtype)


if __name__ == "__main__":
    sys.exit(main())
