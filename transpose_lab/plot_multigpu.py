"""How CUDA.v9_multigpu scales with GPUs (make multigpu writes results/multigpu.csv).

Left: time of one distributed transpose against the number of GPUs, a line per matrix (size and
type) and mode (one process: solid; one process per GPU under mpirun: dashed), with the last
kernel step alone on one GPU as a cross at 1; runs with --nccl-buffers registered are triangles,
with --nccl-buffers windows diamonds, runs of the peer exchange (--exchange peer) squares. Right: the same runs as % of the NCCL all-to-all of the same bytes timed in the same
process (with one GPU there is no exchange: no point).

With --table FILE it also writes the table a closing note quotes (GPUs x size x mode: ms, % of
the all-to-all, busbw, against one GPU), in Markdown; --table - prints it.
"""

import itertools
import re
import sys
from pathlib import Path

from .plot_style import (IDEAL_COLOR, new_figure, plain_log_axis, plot_arguments, save,
                         set_titles)
from .results_csv import (DTYPES, NothingToPlot, dtypes_in_order, measurement_key, only_device,
                          read_results, run_plot, shape, usable_rows)

# The distributed rows by their kind; the one-GPU rows are the kernel step run beside them.
DISTRIBUTED_KIND, ONE_GPU_KIND = "distributed", "kernel"
VARIANT = re.compile(r"^gpus=(\d+) ((single-process|mpi)( peer)?)$")
MODE_STYLE = {"single-process": "-", "mpi": "--"}  # line by process model, marker by exchange
MODE_LABEL = {"single-process": "one process", "mpi": "mpirun -np G"}
EXCHANGE_MARKER = {"nccl": "o", "nccl registered": "^", "nccl windows": "D", "peer": "s"}
EXCHANGE_LABEL = {"nccl": "NCCL all-to-all", "nccl registered": "NCCL, registered buffers",
                  "nccl windows": "NCCL, windows (copy engines)", "peer": "peer writes"}
REGISTERED = "registered NCCL buffers"  # in the launch text of a run with --nccl-buffers registered
WINDOWS = "symmetric NCCL windows"  # and with --nccl-buffers windows


def run_key(row):
    """One run of the distributed step: its options (--nccl-buffers, --chunks, ...) show only in
    the launch text, so that is part of what a repeat must match."""
    return measurement_key(row) + (row["launch"],)


def multigpu_rows(rows):
    """One dict per distributed run on real GPUs (virtual ranks are a test mode, left out), with
    the figures derived from the CSV: the all-to-all's time from its bandwidth, and the exchange
    as nccl-tests reports an all-to-all (algbw = bytes per GPU / time, busbw = algbw (G-1)/G)."""
    one_gpu = {(row["dtype"], shape(row)): row["median_ms"] for row in rows
               if row["kind"] == ONE_GPU_KIND}
    runs = []
    for row in rows:
        match = VARIANT.match(row["variant"]) if row["kind"] == DISTRIBUTED_KIND else None
        if not match:
            continue
        gpus, mode = int(match.group(1)), match.group(2)
        exchange = ("peer" if match.group(4) else
                    "nccl registered" if REGISTERED in row["launch"] else
                    "nccl windows" if WINDOWS in row["launch"] else "nccl")
        matrix_bytes = row["rows"] * row["cols"] * row["elem_bytes"]
        ceiling_ms = 2 * matrix_bytes / (row["ceiling_gbps"] * 1e9) * 1e3
        algbw = matrix_bytes / gpus / (row["median_ms"] * 1e-3) / 1e9
        single_ms = one_gpu.get((row["dtype"], shape(row)))
        runs.append({
            "gpus": gpus, "process": match.group(3), "exchange": exchange,
            "dtype": row["dtype"], "shape": shape(row),
            "ms": row["median_ms"], "ceiling_ms": ceiling_ms, "pct": row["pct_of_ceiling"],
            "algbw": algbw, "busbw": algbw * (gpus - 1) / gpus, "one_gpu_ms": single_ms,
            "device": row["device"],
            "mode": mode + {"nccl registered": " registered",
                            "nccl windows": " windows"}.get(exchange, ""),
        })
    order = {dtype: i for i, dtype in enumerate(DTYPES)}
    runs.sort(key=lambda r: (order[r["dtype"]], r["shape"][0] * r["shape"][1], r["gpus"],
                             r["process"] != "single-process", list(EXCHANGE_MARKER).index(
                                 r["exchange"])))
    return runs


def markdown_table(runs):
    lines = ["| GPUs | mode | matrix | ms | all-to-all ms | % of all-to-all | algbw GB/s | "
             "busbw GB/s | 1 GPU (v7) ms | vs 1 GPU |",
             "| ---: | --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |"]
    for r in runs:
        exchange = r["gpus"] > 1
        one = r["one_gpu_ms"]
        one_text = f"{one:.4f} | {one / r['ms']:.2f}x" if one else "- | -"
        lines.append(
            f"| {r['gpus']} | {r['mode']} | {r['shape'][0]}\u00b2 {r['dtype']} | {r['ms']:.4f} | "
            + (f"{r['ceiling_ms']:.4f} | {r['pct']:.1f}% | {r['algbw']:.1f} | {r['busbw']:.1f}"
               if exchange else "- | - | - | -")
            + f" | {one_text} |")
    return "\n".join(lines) + "\n"


def draw(csv_path, out, table=None):
    from matplotlib import colormaps
    runs = multigpu_rows(usable_rows(read_results(csv_path), csv_path, key=run_key))
    if not runs:
        raise NothingToPlot(f"{csv_path} has no verified rows of a distributed step on real GPUs")
    device = only_device(runs, "GPU", csv_path)
    if table == "-":
        sys.stdout.write(markdown_table(runs))
    elif table:
        Path(table).write_text(markdown_table(runs))
    figure, (time_axis, share_axis) = new_figure(panels=2, width=15.0, height=7.0)
    matrices = sorted({(r["dtype"], r["shape"]) for r in runs},
                      key=lambda m: (m[1][0] * m[1][1] * DTYPES[m[0]], m[0]))
    ramp = colormaps["viridis"]
    counts = sorted({r["gpus"] for r in runs})
    both_exchanges = any(r["exchange"] != "nccl" for r in runs)
    for index, matrix in enumerate(matrices):
        color = ramp(0.05 + 0.8 * index / max(1, len(matrices) - 1))
        label = f"{matrix[1][0]}\u00b2 {matrix[0]}"
        for (process, style), (exchange, marker) in itertools.product(MODE_STYLE.items(),
                                                                      EXCHANGE_MARKER.items()):
            points = sorted((r for r in runs if (r["dtype"], r["shape"]) == matrix
                             and r["process"] == process and r["exchange"] == exchange),
                            key=lambda r: r["gpus"])
            if not points:
                continue
            name = f"{label}, {MODE_LABEL[process]}" + (
                f", {EXCHANGE_LABEL[exchange]}" if both_exchanges else "")
            time_axis.plot([r["gpus"] for r in points], [r["ms"] for r in points], style,
                           color=color, marker=marker, label=name)
            exchanged = [r for r in points if r["gpus"] > 1]
            share_axis.plot([r["gpus"] for r in exchanged], [r["pct"] for r in exchanged], style,
                            color=color, marker=marker, label=name)
        one = next((r["one_gpu_ms"] for r in runs if (r["dtype"], r["shape"]) == matrix
                    and r["one_gpu_ms"]), None)
        if one:
            time_axis.plot([1], [one], "x", color=color, markersize=10, markeredgewidth=2)
    for axis in (time_axis, share_axis):
        axis.set_xscale("log", base=2)
        axis.set_xticks(counts)
        axis.set_xticklabels([str(g) for g in counts])
        axis.set_xlabel("GPUs")
    plain_log_axis(time_axis, "y")
    time_axis.set_ylabel("time of one transpose (ms, log scale); x: the kernel step on one GPU")
    share_axis.set_ylabel("% of the same-run NCCL all-to-all of the same bytes")
    share_axis.axhline(100, color=IDEAL_COLOR, linewidth=0.8)
    share_axis.set_ylim(0, max(110, max((r["pct"] for r in runs if r["gpus"] > 1), default=0)
                                + 5))
    # Below both panels: with several matrices and exchanges the legend would cover the lines.
    handles, labels = time_axis.get_legend_handles_labels()
    if handles:
        figure.legend(handles, labels, loc="outside lower center", ncol=4, fontsize=7)
    if not any(r["gpus"] > 1 for r in runs):
        share_axis.text(0.5, 0.5, "no run on more than one GPU:\nno exchange to compare with",
                        transform=share_axis.transAxes, ha="center", va="center")
    set_titles(figure, "Several GPUs: local transposes and an NCCL exchange" + (
        "; registered buffers (triangles), windows (diamonds), peer writes (squares)"
        if both_exchanges else ""),
               f"GPU: {device}   |   types: {', '.join(dtypes_in_order(runs))}   |   "
               "every run verified bitwise on every rank")
    save(figure, out)


def main(argv=None):
    parser = plot_arguments(__doc__, "multigpu.csv", "multigpu.png", "make multigpu",
                            dtype_option=False)
    parser.add_argument("--table", help="also write the Markdown table to this file (- prints)")
    args = parser.parse_args(argv)
    return run_plot(draw, args.csv, args.out, args.table)


if __name__ == "__main__":
    sys.exit(main())
