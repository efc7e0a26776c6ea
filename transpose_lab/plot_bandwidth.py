"""Effective bandwidth against matrix size, one line per step, under its copy ceilings.

Each step's line is its best variant at each size (for CPU.omp: naive or blocked, whichever was
faster there). The dashed lines are the copy ceilings measured in the same runs: cudaMemcpy
device-to-device for the GPU, an OpenMP copy for the CPU (median over the runs at each size).
The reference rows (the copy kernel, the libraries) are dotted lines: yardsticks, not steps.
"""

import sys

from .plot_style import (CEILING_COLOR, CPU_COLOR, devices_line, matrix_size_axis, new_figure,
                         plain_log_axis, plot_arguments, save, set_titles, step_colors,
                         step_markers)
from .results_csv import (best_per_step_and_size, choose_dtype, cpu_steps, cpu_threads_label,
                          DTYPES, is_cpu, is_gpu, matrix_mib, median_ceiling_per_size, of_dtype,
                          only_device, plottable_rows, reference_steps, run_plot, shape,
                          steps_in_order)


def plot_ceiling(axis, rows, elem_bytes, color, label):
    ceilings = median_ceiling_per_size(rows)
    sizes = sorted(ceilings, key=lambda size: matrix_mib(*size, elem_bytes))
    axis.plot([matrix_mib(*size, elem_bytes) for size in sizes],
              [ceilings[size] for size in sizes],
              linestyle="--", linewidth=1.8, color=color, label=label, zorder=1,
              marker="_", markersize=14)  # the marker keeps a one-size sweep visible


def draw(csv_path, out, wanted_dtype=None):
    rows = plottable_rows(csv_path)
    dtype = choose_dtype(rows, csv_path, wanted_dtype)
    elem_bytes = DTYPES[dtype]
    rows = of_dtype(rows, dtype)
    cpu_rows = [row for row in rows if is_cpu(row)]
    gpu_rows = [row for row in rows if is_gpu(row)]

    steps = steps_in_order(rows)
    on_cpu = set(cpu_steps(rows))
    colors = step_colors(rows)
    markers = step_markers(steps)
    references = set(reference_steps(rows))
    best = best_per_step_and_size(rows)
    figure, axis = new_figure(width=11.0, height=6.0)
    for step in steps:
        points = sorted((row for (name, _, _), row in best.items() if name == step),
                        key=lambda row: matrix_mib(*shape(row), elem_bytes))
        label = step
        if step in on_cpu:
            label += f" (best variant at each size, {cpu_threads_label(cpu_rows)})"
        if step in references:
            label += " (reference)"
        axis.plot([matrix_mib(*shape(row), elem_bytes) for row in points],
                  [row["gbps"] for row in points], marker=markers[step], linewidth=2,
                  linestyle=":" if step in references else "-", color=colors[step], label=label,
                  zorder=2)
    if gpu_rows:
        plot_ceiling(axis, gpu_rows, elem_bytes, CEILING_COLOR,
                     "GPU copy ceiling (cudaMemcpy D2D)")
    if cpu_rows:
        plot_ceiling(axis, cpu_rows, elem_bytes, CPU_COLOR, "CPU copy ceiling (OpenMP copy)")

    matrix_size_axis(axis, set(shape(row) for row in rows), dtype)
    plain_log_axis(axis, "y")
    axis.set_ylabel("effective bandwidth (GB/s, log scale)\n"
                    f"= 2 x rows x cols x {elem_bytes} bytes / median time")
    axis.legend(loc="center left", bbox_to_anchor=(1.01, 0.5))

    set_titles(figure, "Effective bandwidth against matrix size",
               f"{dtype}, every element read once and written once   |   " +
               devices_line(only_device(gpu_rows, "GPU", csv_path),
                            only_device(cpu_rows, "CPU", csv_path)))
    save(figure, out)


def main(argv=None):
    args = plot_arguments(__doc__, "sweep.csv", "bandwidth.png", "make sweep").parse_args(argv)
    return run_plot(draw, args.csv, args.out, args.dtype)


if __name__ == "__main__":
    sys.exit(main())
