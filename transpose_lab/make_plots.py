"""Draws every picture whose CSV exists in the results folder (make plots).

    python -m transpose_lab.make_plots --results results

Each picture is one module of this package (python -m transpose_lab.plot_NAME draws it alone);
this only decides which can be drawn and says, in one line each, which cannot (no CSV yet: the
make target that writes it is named).
"""
import argparse
import sys
from pathlib import Path

from . import (plot_bandwidth, plot_dtypes, plot_e2e, plot_multigpu, plot_permute, plot_profile,
               plot_progression, plot_scaling)

# the plot, the CSV it reads, the PNG it writes, the make target that writes the CSV
PICTURES = [
    (plot_progression, "run_all.csv", "progression.png", "make run-all"),
    (plot_progression, "kernels.csv", "progression.png", "make reference PART=kernels"),
    (plot_bandwidth, "sweep.csv", "bandwidth.png", "make sweep"),
    (plot_e2e, "sweep.csv", "end_to_end.png", "make sweep"),
    (plot_scaling, "scaling.csv", "scaling.png", "make scaling"),
    (plot_profile, "profile.csv", "profile.png", "make profile"),
    (plot_dtypes, "dtypes.csv", "dtypes.png", "make dtypes"),
    (plot_dtypes, "types.csv", "dtypes.png", "make reference PART=types"),
    (plot_multigpu, "multigpu.csv", "multigpu.png", "make multigpu"),
    (plot_permute, "permute.csv", "permute.png", "make permute"),
]


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--results", type=Path, default=Path("results"),
                        help="folder with the CSV files; the PNG files go there too "
                             "(default: results)")
    args = parser.parse_args(argv)
    failed = False
    for plot, csv_name, png_name, target in PICTURES:
        csv_path = args.results / csv_name
        if not csv_path.exists():
            # A picture with two sources (a make target's CSV, or the reference run's name for
            # it) is skipped silently when the other one draws it.
            if not any((args.results / other).exists() for _, other, png, _ in PICTURES
                       if png == png_name and other != csv_name):
                print(f"{png_name}: skipped: {csv_path} does not exist (run {target})")
            continue
        status = plot.main(["--csv", str(csv_path), "--out", str(args.results / png_name)])
        failed = failed or status != 0
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
