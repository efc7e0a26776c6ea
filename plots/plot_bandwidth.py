"""Effective bandwidth against matrix size, one line per step, under its copy ceilings.

Each step's line is its best variant at each size (for CPU.omp: naive or blocked, whichever was
faster there). The dashed lines are the copy ceilings measured in the same runs: cudaMemcpy
device-to-device for the GPU, an OpenMP copy for the CPU (median over the runs at each size).
"""

from results_csv import (best_per_step_and_size, cpu_threads_label, is_cpu, is_cpu_step, is_gpu,
                         matrix_mib, median_ceiling_per_size, NothingToPlot, only_device,
                         read_results, run_script, shape, steps_in_order, usable_rows)
from style import (CEILING_COLOR, CPU_COLOR, devices_line, matrix_size_axis, new_figure,
                   plain_log_axis, plot_arguments, save, set_titles, step_colors,
                   step_markers)


def plot_ceiling(axis, rows, color, label):
    ceilings = median_ceiling_per_size(rows)
    sizes = sorted(ceilings, key=lambda size: matrix_mib(*size))
    axis.plot([matrix_mib(*size) for size in sizes], [ceilings[size] for size in sizes],
              linestyle="--", linewidth=1.8, color=color, label=label, zorder=1,
              marker="_", markersize=14)  # the marker keeps a one-size sweep visible


def main():
    args = plot_arguments(__doc__, "sweep.csv", "bandwidth.png", "make sweep").parse_args()
    rows = [row for row in usable_rows(read_results(args.csv), args.csv)
            if is_cpu(row) or is_gpu(row)]
    if not rows:
        raise NothingToPlot(f"{args.csv} holds no verified CPU or GPU measurements")
    cpu_rows = [row for row in rows if is_cpu(row)]
    gpu_rows = [row for row in rows if is_gpu(row)]

    steps = steps_in_order(rows)
    colors = step_colors(steps)
    markers = step_markers(steps)
    best = best_per_step_and_size(rows)
    figure, axis = new_figure(width=11.0, height=6.0)
    for step in steps:
        points = sorted((row for (name, _), row in best.items() if name == step),
                        key=lambda row: matrix_mib(*shape(row)))
        label = step
        if is_cpu_step(step):
            label += f" (best variant at each size, {cpu_threads_label(cpu_rows)})"
        axis.plot([matrix_mib(*shape(row)) for row in points], [row["gbps"] for row in points],
                  marker=markers[step], linewidth=2, color=colors[step], label=label, zorder=2)
    if gpu_rows:
        plot_ceiling(axis, gpu_rows, CEILING_COLOR, "GPU copy ceiling (cudaMemcpy D2D)")
    if cpu_rows:
        plot_ceiling(axis, cpu_rows, CPU_COLOR, "CPU copy ceiling (OpenMP copy)")

    matrix_size_axis(axis, set(shape(row) for row in rows))
    plain_log_axis(axis, "y")
    axis.set_ylabel("effective bandwidth (GB/s, log scale)\n"
                    "= 2 x rows x cols x 4 bytes / median time")
    axis.legend(loc="center left", bbox_to_anchor=(1.01, 0.5))

    set_titles(figure, "Effective bandwidth against matrix size",
               "fp32, every element read once and written once   |   " +
               devices_line(only_device(gpu_rows, "GPU", args.csv),
                            only_device(cpu_rows, "CPU", args.csv)))
    save(figure, args.out)


if __name__ == "__main__":
    run_script(main)
