#!/usr/bin/env python3
"""Draws every picture whose CSV exists in the results folder (make plots).

Each picture is one script in plots/; this only decides which can be drawn and says, in one line
each, which cannot (no CSV yet: the make target that writes it is named).
"""
import argparse
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

# script, the CSV it reads, the PNG it writes, the make target that writes the CSV
PICTURES = [
    ("plot_progression.py", "run_all.csv", "progression.png", "make run-all"),
    ("plot_bandwidth.py", "sweep.csv", "bandwidth.png", "make sweep"),
    ("plot_e2e.py", "sweep.csv", "end_to_end.png", "make sweep"),
    ("plot_scaling.py", "scaling.csv", "scaling.png", "make scaling"),
    ("plot_profile.py", "profile.csv", "profile.png", "make profile"),
]


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--results", type=Path, default=ROOT / "results",
                        help="folder with the CSV files; the PNG files go there too")
    args = parser.parse_args()
    failed = False
    for script, csv_name, png_name, target in PICTURES:
        csv_path = args.results / csv_name
        if not csv_path.exists():
            print(f"{png_name}: skipped: {csv_path} does not exist (run {target})")
            continue
        done = subprocess.run([sys.executable, str(ROOT / "plots" / script), "--csv", str(csv_path),
                               "--out", str(args.results / png_name)])
        failed = failed or done.returncode != 0
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
