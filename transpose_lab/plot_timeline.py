"""Draws the timeline of one host-pipeline run (CUDA.v8_streams): three lanes per stream (up, kernel, down), one bar
per piece, from the CSV that `./transpose ... --timeline FILE` writes (CUDA event times in ms).

    python -m transpose_lab.plot_timeline timeline.csv -o timeline.png [--title TEXT]

A recorded start is the moment the stream reached the stage. A copy can then still wait for its
copy engine, busy with another stream's copy in the same direction: the part of a copy bar before
the previous copy in that direction ended is drawn pale ("queued"), on the assumption that each
direction has one engine that serves copies one at a time. Needs matplotlib only.
"""
import argparse
import csv
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
from matplotlib.patches import Patch  # noqa: E402

STAGES = ("up", "kernel", "down")
COLOURS = {"up": "#1f77b4", "kernel": "#2ca02c", "down": "#d62728"}
COLUMNS = ["piece", "stream", "first_row", "rows"] + [
    f"{stage}_{end}_ms" for stage in STAGES for end in ("start", "end")]


def read_timeline(path):
    with open(path, newline="") as f:
        reader = csv.DictReader(f)
        missing = [c for c in COLUMNS if c not in (reader.fieldnames or [])]
        if missing:
            raise ValueError(f"{path}: not a timeline CSV (missing {', '.join(missing)})")
        pieces = []
        for row in reader:
            piece = {c: int(row[c]) for c in ("piece", "stream", "first_row", "rows")}
            for stage in STAGES:
                piece[stage] = (float(row[f"{stage}_start_ms"]), float(row[f"{stage}_end_ms"]))
            pieces.append(piece)
    if not pieces:
        raise ValueError(f"{path}: no pieces")
    return pieces


def queued_until(pieces, stage):
    """For each piece, when its copy can have begun: not before the previous copy in the same
    direction (of any stream) ended."""
    begun = {}
    previous_end = float("-inf")
    for piece in sorted(pieces, key=lambda p: p[stage][1]):
        start, end = piece[stage]
        begun[piece["piece"]] = min(max(start, previous_end), end)
        previous_end = end
    return begun


def plot(pieces, out_path, title):
    streams = sorted({p["stream"] for p in pieces})
    lanes = [(s, stage) for s in streams for stage in STAGES]
    y_of = {lane: len(lanes) - 1 - i for i, lane in enumerate(lanes)}
    begun = {stage: queued_until(pieces, stage) for stage in ("up", "down")}
    end_ms = max(p["down"][1] for p in pieces)
    fig, ax = plt.subplots(figsize=(11, 1.0 + 0.32 * len(lanes)))
    for p in pieces:
        for stage in STAGES:
            start, end = p[stage]
            y = y_of[(p["stream"], stage)]
            solid_from = begun[stage][p["piece"]] if stage in begun else start
            if solid_from > start:
                ax.broken_barh([(start, solid_from - start)], (y - 0.35, 0.7),
                               facecolors=COLOURS[stage], alpha=0.2, linewidth=0)
            ax.broken_barh([(solid_from, end - solid_from)], (y - 0.35, 0.7),
                           facecolors=COLOURS[stage], edgecolors="white", linewidth=0.5)
            if len(pieces) <= 40 and end - solid_from > 0.03 * end_ms:
                ax.text((solid_from + end) / 2, y, str(p["piece"]), ha="center", va="center",
                        fontsize=7, color="white")
    ax.set_yticks([y_of[lane] for lane in lanes])
    ax.set_yticklabels([f"stream {s} {stage}" for s, stage in lanes], fontsize=8)
    ax.set_xlim(0, end_ms * 1.01)
    ax.set_xlabel("ms since the start of the run (CUDA events)")
    ax.set_title(title or f"{len(pieces)} pieces over {len(streams)} streams", fontsize=10)
    ax.grid(axis="x", alpha=0.3)
    handles = [Patch(color=COLOURS[s], label=s) for s in STAGES]
    handles.append(Patch(color=COLOURS["up"], alpha=0.2, label="copy queued for its engine"))
    ax.legend(handles=handles, loc="upper center", bbox_to_anchor=(0.5, -0.18 - 0.5 / len(lanes)),
              ncol=4, fontsize=8, frameon=False)
    fig.tight_layout()
    fig.savefig(out_path, dpi=150)
    plt.close(fig)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("timeline", help="CSV written by ./transpose --timeline FILE")
    parser.add_argument("-o", "--output", default="timeline.png", help="PNG to write")
    parser.add_argument("--title", default="", help="title of the picture")
    args = parser.parse_args(argv)
    try:
        pieces = read_timeline(args.timeline)
    except (OSError, ValueError) as error:
        print(f"plot_timeline: error: {error}", file=sys.stderr)
        return 1
    plot(pieces, args.output, args.title)
    print(f"wrote {args.output}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
