"""The look and the command line every plot shares, so the pictures read as one set."""

import argparse
from pathlib import Path

from .results_csv import DTYPES, ResultsError, cpu_steps, matrix_mib, steps_in_order

RESULTS_DIR = Path("results")  # relative: the make targets and the commands run from the root

CPU_COLOR = "#d9822b"
CEILING_COLOR = "#444444"
MARKERS = "osD^vPX*<>"
IDEAL_COLOR = "#888888"

LOOK = {
    "figure.dpi": 100,
    "savefig.dpi": 150,
    "font.size": 10,
    "axes.titlesize": 11,
    "axes.grid": True,
    "grid.alpha": 0.3,
    "axes.spines.top": False,
    "axes.spines.right": False,
    "legend.fontsize": 9,
    "legend.framealpha": 0.9,
}


def pyplot():
    """matplotlib.pyplot with the lab's look, imported when a picture is drawn: --help and bad
    input answer at once, without loading matplotlib."""
    import matplotlib
    matplotlib.use("Agg")  # files only: works on a machine without a display (CI, a GPU node)
    import matplotlib.pyplot as plt
    plt.rcParams.update(LOOK)
    return plt


def plot_arguments(description, csv_name, png_name, written_by, dtype_option=True):
    """The options every plot takes: --csv (input), --out (the PNG) and, for a plot of one
    element type, --dtype."""
    parser = argparse.ArgumentParser(description=description.strip().splitlines()[0])
    parser.add_argument("--csv", type=Path, default=RESULTS_DIR / csv_name,
                        help=f"results CSV to read (default: results/{csv_name}, "
                             f"written by {written_by})")
    parser.add_argument("--out", type=Path, default=RESULTS_DIR / png_name,
                        help=f"PNG to write (default: results/{png_name})")
    if dtype_option:
        parser.add_argument("--dtype", choices=list(DTYPES),
                            help="the element type to plot (default: the file's only one, "
                                 "else float32 where present)")
    return parser


def step_colors(rows):
    """One colour per step of rows: CPU steps (by kind) orange, GPU steps along a dark-to-bright
    ramp in progression order (so a plot of all the steps reads as a progression; a plot of
    some of them spreads the ramp over those)."""
    steps = steps_in_order(rows)
    on_cpu = set(cpu_steps(rows))
    gpu_steps = [step for step in steps if step not in on_cpu]
    ramp = pyplot().get_cmap("viridis")
    colors = {}
    for step in steps:
        if step in on_cpu:
            colors[step] = CPU_COLOR
        else:
            position = gpu_steps.index(step) / max(1, len(gpu_steps) - 1)
            colors[step] = ramp(0.05 + 0.8 * position)  # leave out the palest yellow
    return colors


def new_figure(panels=1, width=None, height=5.2):
    figure, axes = pyplot().subplots(1, panels, figsize=(width or 5.8 * panels + 1.0, height),
                                layout="constrained")
    return figure, axes


def set_titles(figure, title, details):
    """A bold title and, on the line under it, what was measured where (device, size)."""
    # Mathtext bold: one suptitle, two weights. Escape what mathtext reads as markup.
    for plain, escaped in ((" ", r"\ "), ("_", r"\_"), (":", "{:}"), ("%", r"\%")):
        title = title.replace(plain, escaped)
    bold_title = r"$\bf{" + title + "}$"
    figure.suptitle(f"{bold_title}\n{details}", fontsize=11.5)


def devices_line(gpu_device=None, cpu_device=None, cpu_threads=""):
    parts = []
    if gpu_device:
        parts.append(f"GPU: {gpu_device}")
    if cpu_device:
        parts.append(f"CPU: {cpu_device}" + (f", {cpu_threads}" if cpu_threads else ""))
    return "   |   ".join(parts)


def matrix_size_axis(axis, shapes, dtype):
    """Log x axis in MiB per matrix, a tick per measured shape. Labels (MiB and the shape, since
    non-square sizes must be told apart from square ones of the same bytes) go on a subset at
    least 3x apart, powers of two first, so that neighbouring sizes never print over each other."""
    from matplotlib.ticker import FixedLocator, NullFormatter
    labels = {}
    for rows, cols in shapes:
        labels.setdefault(matrix_mib(rows, cols, DTYPES[dtype]), []).append(
            f"{rows}\u00b2" if rows == cols else f"{rows}x{cols}")
    is_power_of_two = lambda mib: float(mib).hex().startswith("0x1.0000000000000p")  # noqa: E731
    labelled = []
    for mib in sorted(labels, key=lambda mib: (not is_power_of_two(mib), mib)):
        if all(max(mib, other) / min(mib, other) >= 3.0 for other in labelled):
            labelled.append(mib)
    axis.set_xscale("log", base=2)
    axis.xaxis.set_minor_locator(FixedLocator(sorted(set(labels) - set(labelled))))
    axis.xaxis.set_minor_formatter(NullFormatter())
    axis.set_xticks(sorted(labelled))
    axis.set_xticklabels([(f"{mib:.3g}" if mib < 1000 else f"{mib:.0f}") + " MiB\n"
                          + "\n".join(labels[mib]) for mib in sorted(labelled)])
    axis.set_xlabel(f"matrix size (MiB per {dtype} matrix; rows x cols)")
    lowest, highest = min(labels), max(labels)
    axis.set_xlim(lowest / 1.5, highest * 1.5)


def plain_log_axis(axis, which="y", base=10):
    """A log axis whose ticks read 20, 50, 100, 200 rather than 10^2: easier for a first read."""
    from matplotlib.ticker import FuncFormatter, LogLocator, NullFormatter
    getattr(axis, f"set_{which}scale")("log", base=base)
    ticks = getattr(axis, f"{which}axis")
    if base == 10:
        ticks.set_major_locator(LogLocator(base=10, subs=(1.0, 2.0, 5.0)))
    ticks.set_major_formatter(FuncFormatter(lambda value, _: f"{value:,.10g}"))
    ticks.set_minor_formatter(NullFormatter())


def step_markers(steps):
    """One marker per step, so lines of similar colour still tell apart."""
    return {step: MARKERS[index % len(MARKERS)] for index, step in enumerate(steps)}


def save(figure, out):
    out = Path(out)
    try:
        out.parent.mkdir(parents=True, exist_ok=True)
        figure.savefig(out)
    except OSError as problem:
        raise ResultsError(f"{out}: cannot write the PNG: {problem.strerror or problem}"
                           ) from None
    finally:
        pyplot().close(figure)
    print(f"wrote {out}")
