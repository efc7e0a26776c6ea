"""What Nsight Compute counted for each step: global sectors, bank conflicts, DRAM throughput.

Left: global load and store sectors as a multiple of the minimum a copy of the same matrix needs
(rows x cols x element bytes / 32-byte sectors): 1x is perfect coalescing. Right: shared-memory bank
conflicts (loads and stores; symlog axis so 0 shows), with DRAM throughput as % of peak written
over each step.
"""

import sys


from .plot_style import new_figure, plot_arguments, save, set_titles
from .results_csv import (at_size, choose_dtype, choose_size, DTYPES, NothingToPlot, of_dtype,
                          only_device, read_profile, run_plot, SECTOR_BYTES, size_label,
                          steps_in_order)

LOAD_COLOR = "#2f6db5"
STORE_COLOR = "#d0543c"
BAR_WIDTH = 0.38


def label_bars(axis, bars, texts):
    for bar, text in zip(bars, texts):
        axis.annotate(text, (bar.get_x() + bar.get_width() / 2, bar.get_height()),
                      xytext=(0, 2), textcoords="offset points", ha="center", va="bottom",
                      fontsize=8)


def draw(csv_path, out, wanted_dtype=None):
    from matplotlib.transforms import blended_transform_factory
    rows = read_profile(csv_path)
    if not rows:
        raise NothingToPlot(f"{csv_path} holds no profiled kernels")
    dtype = choose_dtype(rows, csv_path, wanted_dtype)
    rows = of_dtype(rows, dtype)
    size = choose_size(rows, csv_path)
    # One row per step: the last, if a step was profiled twice (at this size and dtype).
    by_step = {row["step"]: row for row in at_size(rows, size)}
    steps = steps_in_order(by_step.values())
    profiled = [by_step[step] for step in steps]
    copy_sectors = size[0] * size[1] * DTYPES[dtype] / SECTOR_BYTES
    positions = range(len(steps))
    left = [p - BAR_WIDTH / 2 for p in positions]
    right = [p + BAR_WIDTH / 2 for p in positions]

    figure, (sector_axis, conflict_axis) = new_figure(panels=2, width=max(12.0, 2.0 * len(steps)),
                                                      height=5.8)
    loads = [row["gld_sectors"] / copy_sectors for row in profiled]
    stores = [row["gst_sectors"] / copy_sectors for row in profiled]
    label_bars(sector_axis, sector_axis.bar(left, loads, BAR_WIDTH, color=LOAD_COLOR,
                                            label="loads (global or shared)"),
               [f"{value:.3g}x" for value in loads])
    label_bars(sector_axis, sector_axis.bar(right, stores, BAR_WIDTH, color=STORE_COLOR,
                                            label="stores (global or shared)"),
               [f"{value:.3g}x" for value in stores])
    sector_axis.axhline(1.0, color="black", linewidth=1, linestyle="--",
                        label=f"a copy's minimum ({copy_sectors:,.0f} sectors)")
    sector_axis.set_ylim(0, max(loads + stores) * 1.15)
    sector_axis.set_ylabel("sectors / minimum for a copy  (1x = fully coalesced)")
    sector_axis.set_title("Global memory sectors (32 B each)")

    load_conflicts = [row["shared_ld_bank_conflicts"] for row in profiled]
    store_conflicts = [row["shared_st_bank_conflicts"] for row in profiled]
    label_bars(conflict_axis, conflict_axis.bar(left, load_conflicts, BAR_WIDTH,
                                                color=LOAD_COLOR),
               [f"{value:,.0f}" for value in load_conflicts])
    label_bars(conflict_axis, conflict_axis.bar(right, store_conflicts, BAR_WIDTH,
                                                color=STORE_COLOR),
               [f"{value:,.0f}" for value in store_conflicts])
    conflict_axis.set_yscale("symlog", linthresh=1)
    conflict_axis.set_ylim(0, max(load_conflicts + store_conflicts + [1]) * 1000)
    conflict_axis.set_ylabel("bank conflicts (count, symlog scale: 0 shown)")
    conflict_axis.set_title("Shared-memory bank conflicts, and DRAM throughput")
    # DRAM throughput along the top, one figure per step, above whatever bar is there.
    top_of_axis = blended_transform_factory(conflict_axis.transData, conflict_axis.transAxes)
    for position, row in zip(positions, profiled):
        conflict_axis.text(position, 0.97, f"DRAM\n{row['dram_pct_of_peak']:.0f}%\nof peak",
                           transform=top_of_axis, ha="center", va="top", fontsize=8.5,
                           bbox=dict(boxstyle="round,pad=0.25", facecolor="#f3f3f3",
                                     edgecolor="#bbbbbb"))

    for axis in (sector_axis, conflict_axis):
        axis.set_xticks(list(positions), steps, rotation=20, ha="right",
                        rotation_mode="anchor")
        axis.grid(axis="x", visible=False)

    # One legend for both panels: the colours mean the same in each.
    figure.legend(*sector_axis.get_legend_handles_labels(), loc="outside lower center", ncols=3)
    set_titles(figure, "Nsight Compute counters per step",
               f"{size_label(*size, dtype)}   |   GPU: {only_device(profiled, 'GPU', csv_path)}")
    save(figure, out)


def main(argv=None):
    args = plot_arguments(__doc__, "profile.csv", "profile.png", "make profile").parse_args(argv)
    return run_plot(draw, args.csv, args.out, args.dtype)


if __name__ == "__main__":
    sys.exit(main())
