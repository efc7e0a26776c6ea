"""Is the GPU faster for one transpose once the bus copies count?

Left: time against matrix size for each GPU step, kernel only (solid) and end to end (dashed:
host-to-device copy + kernel + device-to-host copy), with the best CPU variant's time at the same
size. Right: the same as speedup over that CPU time; above 1 the GPU wins.
"""

import sys


from .plot_style import (CPU_COLOR, devices_line, IDEAL_COLOR, matrix_size_axis, new_figure,
                         plain_log_axis, plot_arguments, save, set_titles, step_colors,
                         step_markers)
from .results_csv import (DTYPES, best_per_step_and_size, choose_dtype, cpu_threads_label,
                          is_cpu, is_gpu, matrix_mib, NothingToPlot, of_dtype, only_device,
                          read_results, run_plot, shape, steps_in_order, usable_rows)


def draw(csv_path, out, wanted_dtype=None):
    from matplotlib.lines import Line2D
    rows = usable_rows(read_results(csv_path), csv_path)
    gpu_rows = [row for row in rows if is_gpu(row) and row["e2e_ms"] is not None]
    cpu_rows = [row for row in rows if is_cpu(row)]
    if not gpu_rows:
        raise NothingToPlot(f"{csv_path} has no GPU rows with an end-to-end time")
    if not cpu_rows:
        raise NothingToPlot(f"{csv_path} has no CPU rows to compare the GPU times with")
    dtype = choose_dtype(gpu_rows + cpu_rows, csv_path, wanted_dtype)
    elem_bytes = DTYPES[dtype]
    gpu_rows, cpu_rows = of_dtype(gpu_rows, dtype), of_dtype(cpu_rows, dtype)
    if not gpu_rows or not cpu_rows:
        raise NothingToPlot(f"{csv_path} has no {'GPU' if not gpu_rows else 'CPU'} rows of "
                            f"{dtype} to compare")

    def mib(size):
        return matrix_mib(*size, elem_bytes)

    def by_size(rows):
        return sorted(rows, key=lambda row: mib(shape(row)))

    best = best_per_step_and_size(cpu_rows + gpu_rows)
    cpu_ms_at = {}  # the best CPU time at each size: the bar every GPU time is held against
    for (step, _, size), row in best.items():
        if is_cpu(row) and (size not in cpu_ms_at or row["median_ms"] < cpu_ms_at[size]):
            cpu_ms_at[size] = row["median_ms"]

    steps = steps_in_order(gpu_rows)
    colors = step_colors(cpu_rows + gpu_rows)
    markers = step_markers(steps)
    figure, (time_axis, speedup_axis) = new_figure(panels=2, width=14.0, height=6.0)
    for step in steps:
        points = by_size(row for (name, _, _), row in best.items() if name == step)
        sizes = [mib(shape(row)) for row in points]
        style = dict(color=colors[step], marker=markers[step], markersize=5)
        time_axis.plot(sizes, [row["median_ms"] for row in points], linewidth=2, **style)
        time_axis.plot(sizes, [row["e2e_ms"] for row in points], linewidth=1.5,
                       linestyle="--", **style)
        # Speedup only where the CPU was measured at the same size.
        compared = [row for row in points if shape(row) in cpu_ms_at]
        compared_sizes = [mib(shape(row)) for row in compared]
        speedup_axis.plot(compared_sizes,
                          [cpu_ms_at[shape(row)] / row["median_ms"] for row in compared],
                          linewidth=2, **style)
        speedup_axis.plot(compared_sizes,
                          [cpu_ms_at[shape(row)] / row["e2e_ms"] for row in compared],
                          linewidth=1.5, linestyle="--", **style)
    cpu_sizes = sorted(cpu_ms_at, key=mib)
    cpu_threads = cpu_threads_label(cpu_rows)
    time_axis.plot([mib(size) for size in cpu_sizes], [cpu_ms_at[s] for s in cpu_sizes],
                   color=CPU_COLOR, linewidth=3, marker="o", zorder=3)
    speedup_axis.axhline(1.0, color=CPU_COLOR, linewidth=3, zorder=1)
    speedup_axis.text(0.01, 1.0, " best CPU variant = 1x: above this line the GPU wins",
                      transform=speedup_axis.get_yaxis_transform(), va="bottom", fontsize=9,
                      color=CPU_COLOR)

    all_shapes = set(shape(row) for row in gpu_rows) | set(cpu_ms_at)
    for axis in (time_axis, speedup_axis):
        matrix_size_axis(axis, all_shapes, dtype)
        plain_log_axis(axis, "y")
    time_axis.set_ylabel("time for one transpose (ms, log scale)")
    time_axis.set_title("Time: kernel only vs end to end")
    speedup_axis.set_ylabel("speedup over the best CPU variant at that size (x, log scale)")
    speedup_axis.set_title("Speedup over the CPU")

    # One legend in two parts: colour = step, line style = what the time includes.
    handles = [Line2D([], [], color=CPU_COLOR, linewidth=3, marker="o",
                      label=f"CPU, best variant ({cpu_threads})")]
    handles += [Line2D([], [], color=colors[step], marker=markers[step], linewidth=2,
                       label=step) for step in steps]
    handles += [Line2D([], [], color=IDEAL_COLOR, linewidth=2, label="GPU kernel only"),
                Line2D([], [], color=IDEAL_COLOR, linewidth=1.5, linestyle="--",
                       label="GPU end to end (H2D + kernel + D2H)")]
    figure.legend(handles=handles, loc="outside right center")

    devices = devices_line(only_device(gpu_rows, "GPU", csv_path),
                           only_device(cpu_rows, "CPU", csv_path))
    set_titles(figure, "Is the GPU faster for one transpose once the bus copies count?",
               f"{dtype}   |   {devices}")
    save(figure, out)


def main(argv=None):
    args = plot_arguments(__doc__, "sweep.csv", "end_to_end.png", "make sweep").parse_args(argv)
    return run_plot(draw, args.csv, args.out, args.dtype)


if __name__ == "__main__":
    sys.exit(main())
