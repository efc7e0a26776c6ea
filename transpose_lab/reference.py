"""Makes a machine's reference folder, docs/results/<machine>/, from nothing (make reference).

    python -m transpose_lab.reference [--part kernels|types|streams|profile] [--machine NAME]
                                      [--out DIR] [--dry-run]

Each part runs its make targets with RESULTS set to the folder, after removing the files those
targets write (a part's CSVs are fresh, never appended to an older run's), keeps what each target
printed as make-<target>.log, renames the CSVs to the folder's standard names, writes machine.txt,
draws the pictures (make plots) and, after the kernels part on a GPU, the grader's expected
ranges (docs/expected/<gpu>.csv). Without a part, every part in turn. Without a GPU (machine
cpu-dev) only the CPU step runs. The machine's name comes from nvidia-smi: h100, h200, and a
count for several GPUs (h200x2); --machine overrides it. machine.txt names the lab's commit from
git, or from LAB_COMMIT where it is set (a copy of the tree whose .git is missing or older).
"""
import argparse
import os
import re
import shlex
import subprocess
import sys
import time
from pathlib import Path

from transpose_lab.lab import DTYPES as _DTYPES, ROOT, measuring_environment  # noqa: E402
DTYPES = " ".join(_DTYPES)

# part -> [(make target, extra make variables, {file the target writes: its name here})]
# A reference run measures fewer sweep sizes and repetitions than the targets' defaults, so that
# each part but permute (11 minutes on one H100, PyTorch's rows included) fits ten minutes on one
# GPU; the medians of 20 launches (L2 flushed before each) agree with those of 50 to well under a
# percent on a machine nobody else uses.
REFERENCE_REPS = "20"
REFERENCE_SWEEP_SIZES = "256 512 1024 2048 4096 8192 16384"
REFERENCE_BENCH_SHAPES = "8192x8192 8191x8193"  # an aligned and a ragged shape, every type
# A permutation moves bytes: one type of each element size (1, 2, 4, 8, 16 bytes) shows every
# kernel path of chapter 3, and keeps the part within ten minutes with the CPU and PyTorch rows.
REFERENCE_PERMUTE_DTYPES = "uint8 float16 float32 float64 complex128"
# Several GPUs: 4 and 16 GiB of float32, 16 and 64 GiB of complex128 (one that does not fit a
# GPU's memory is refused in words and left out of the table).
REFERENCE_MULTIGPU_SIZES = "32768 65536"
REFERENCE_MULTIGPU_DTYPES = "float32 complex128"
GPU_PARTS = {
    "kernels": [
        ("run-all", {}, {"run_all.csv": "kernels.csv",
                         "run_all_other_kinds.csv": "other_kinds.csv"}),
        ("sweep", {"SWEEP_SIZES": REFERENCE_SWEEP_SIZES, "REPS": REFERENCE_REPS},
         {"sweep.csv": "sweep.csv"}),
        ("scaling", {}, {"scaling.csv": "scaling.csv"}),
        ("bench", {"BENCH_DTYPES": DTYPES, "BENCH_SHAPES": REFERENCE_BENCH_SHAPES,
                   "REPS": REFERENCE_REPS}, {"bench.csv": "bench.csv"}),
    ],
    "types": [
        ("dtypes", {"REPS": REFERENCE_REPS}, {"dtypes.csv": "types.csv",
                                               "dtypes.png": "dtypes.png"}),
    ],
    "permute": [
        ("permute", {"REPS": REFERENCE_REPS, "PERMUTE_DTYPES": REFERENCE_PERMUTE_DTYPES},
         {"permute.csv": "permute.csv", "permute.png": "permute.png"}),
    ],
    "streams": [
        ("streams", {}, {"streams.csv": "streams.csv", "streams_timeline.csv":
                         "streams_timeline.csv", "streams_timeline.png": "streams_timeline.png",
                         "streams_pageable.log": "streams_pageable.log"}),
        ("out-of-core", {}, {"out_of_core.csv": "out_of_core.csv",
                             "out_of_core.log": "out_of_core.log"}),
        ("bus-probe", {}, {"bus_probe.csv": "bus_probe.csv"}),
    ],
    "multigpu": [
        ("multigpu", {"MULTIGPU_SIZES": REFERENCE_MULTIGPU_SIZES,
                      "MULTIGPU_DTYPES": REFERENCE_MULTIGPU_DTYPES, "REPS": REFERENCE_REPS},
         {"multigpu.csv": "multigpu.csv", "multigpu.png": "multigpu.png",
          "multigpu.md": "multigpu.md", "multigpu_logs": "multigpu_logs"}),
    ],
    "profile": [
        ("profile", {}, {"profile.csv": "profile.csv"}),
    ],
}
# Without a GPU: the CPU step only, and nothing CUDA is built (NVCC= leaves it out).
CPU_ONLY = {"NVCC": "", "STEPS": "CPU.omp", "PIPELINE_STEPS": "", "DISTRIBUTED_STEPS": ""}
CPU_PARTS = {
    "kernels": [
        ("run-all", CPU_ONLY, {"run_all.csv": "kernels.csv"}),
        ("sweep", CPU_ONLY, {"sweep.csv": "sweep.csv"}),
        ("scaling", CPU_ONLY, {"scaling.csv": "scaling.csv"}),
    ],
    "types": [
        ("dtypes", {**CPU_ONLY, "DTYPES_STEPS": "CPU.omp"},
         {"dtypes.csv": "types.csv", "dtypes.png": "dtypes.png"}),
    ],
    "permute": [
        ("permute", {**CPU_ONLY, "PERMUTE_STEPS": "PERMUTE.omp", "PERMUTE_DTYPES": DTYPES},
         {"permute.csv": "permute.csv", "permute.png": "permute.png"}),
    ],
}
PARTS = list(GPU_PARTS)
# Exit codes a target may end with and still have done its work: 77 is "no GPU, skipped".
SKIPPED = 77
# Anything on several GPUs runs with NVLink multicast off (NCCL's NVLS needs what the lent
# machines do not allow).
ENVIRONMENT = {"NCCL_NVLS_ENABLE": "0"}


def gpus():
    """[(name, memory, driver)] of the visible GPUs ([] without nvidia-smi or a GPU)."""
    try:
        done = subprocess.run(["nvidia-smi", "--query-gpu=name,memory.total,driver_version",
                               "--format=csv,noheader"], capture_output=True, text=True,
                              timeout=60)
    except (OSError, subprocess.TimeoutExpired):
        return []
    if done.returncode != 0:
        return []
    return [tuple(part.strip() for part in line.split(","))
            for line in done.stdout.splitlines() if line.count(",") == 2]


def machine_name(names):
    """'NVIDIA H100 80GB HBM3' -> h100, two 'NVIDIA H200' -> h200x2, no GPU -> cpu-dev."""
    if not names:
        return "cpu-dev"
    words = [w for w in re.split(r"[\s-]+", names[0].lower()) if w not in ("nvidia", "tesla")]
    model = re.sub(r"[^a-z0-9]", "", words[0]) if words else "gpu"
    return model if len(names) == 1 else f"{model}x{len(names)}"


def _first_line(command, pattern=None):
    try:
        out = subprocess.run(command, capture_output=True, text=True, timeout=60).stdout
    except (OSError, subprocess.TimeoutExpired):
        return "unknown"
    for line in out.splitlines():
        if pattern is None:
            return line.strip() or "unknown"
        m = re.search(pattern, line)
        if m:
            return m.group(1).strip()
    return "unknown"


# machine.txt's own keys; every other line of an existing machine.txt (how a CSV made by hand
# beside the parts was made) is kept as it is when a part runs again.
MACHINE_KEYS = ("gpu", "gpu_memory", "driver", "cuda", "cpu", "cores", "commit", "made_by")


def _keyed(text):
    """machine.txt's text as (its own keys' values, the other lines in order)."""
    keys, others = {}, []
    for line in text.splitlines():
        key, sep, value = line.partition(": ")
        if sep and key in MACHINE_KEYS:
            keys[key] = value
        elif line.strip():
            others.append(line)
    return keys, others


def _part_commits(keys):
    """The commit each part of an earlier machine.txt was made with: its made_by says so ("PART=x
    at c"), or, written before made_by did, the first word of its commit line."""
    fallback = (keys.get("commit", "").split() or ["unknown"])[0]
    return {part: at or fallback
            for part, at in re.findall(r"PART=(\w+)(?: at ([^\s;]+))?", keys.get("made_by", ""))}


def machine_txt(found, parts_done, previous="", this_run=None):
    """The machine.txt lines: key: value, "unknown" where the machine does not say. parts_done:
    every part the folder holds, in order; this_run: those made now (default all of them), the
    others with the commit `previous` (the folder's machine.txt before) gives them. commit: this
    run's; made_by: each part with its own. A commit line of an earlier run that says more than a
    commit (rows it took from other runs) stays, as earlier_commit, until every part is made
    again."""
    if found:
        count = f"{len(found)} x " if len(found) > 1 else ""
        gpu, memory, driver = count + found[0][0], found[0][1], found[0][2]
    else:
        gpu = memory = driver = "none"
    nvcc = os.environ.get("NVCC") or "nvcc"
    commit = _first_line(["git", "-C", str(ROOT), "rev-parse", "--short", "HEAD"])
    # Changes to the lab itself, not to docs/results and docs/expected (which this run rewrites).
    dirty = _first_line(["git", "-C", str(ROOT), "status", "--porcelain", "--untracked-files=no",
                         "--", ".", ":(exclude)docs/results", ":(exclude)docs/expected"])
    if commit != "unknown" and dirty != "unknown":
        commit += " (with uncommitted changes)"
    # Whoever copied the tree to the machine that runs it knows its commit better than a copy's
    # .git, which may be missing or older than the files beside it.
    commit = os.environ.get("LAB_COMMIT") or commit
    before, notes = _keyed(previous)
    made_at = _part_commits(before)
    earlier_parts = set(made_at)
    now = set(parts_done if this_run is None else this_run)
    for part in now:  # one word, as made_by reads back
        made_at[part] = commit.split()[0] + ("+uncommitted" if "uncommitted" in commit else "")
    earlier = before.get("commit", "")
    if earlier_parts <= now:  # every part made again: the earlier notes on commits go
        notes = [line for line in notes if not line.startswith("earlier_commit: ")]
    elif len(earlier.split()) > 1:
        notes.insert(0, f"earlier_commit: {earlier}")
    keys = {
        "gpu": gpu,
        "gpu_memory": memory,
        "driver": driver,
        "cuda": _first_line([nvcc, "--version"], r"release ([0-9.]+)"),
        "cpu": _first_line(["lscpu"], r"^Model name:\s*(.+)$"),
        "cores": str(os.cpu_count() or "unknown"),
        "commit": commit,
        "made_by": "; ".join(f"make reference PART={part} at {made_at.get(part, 'unknown')}"
                             for part in parts_done),
    }
    lines = [f"{key}: {value}" for key, value in keys.items()] + ([""] + notes if notes else [])
    return "".join(f"{line}\n" for line in lines)


def parts_in(path):
    """The parts an existing machine.txt says made the folder (kept when another part runs)."""
    return list(_part_commits(_keyed(path.read_text())[0])) if path.is_file() else []


def make_command(target, variables, out):
    return ["make", "--no-print-directory", "-C", str(ROOT), target, f"RESULTS={out}",
            *(f"{key}={value}" for key, value in variables.items())]


def run_part(part, steps, out, dry_run):
    """Runs one part's targets into out; returns the number of targets that failed."""
    failed = 0
    for target, variables, files in steps:
        command = make_command(target, variables, out)
        log = out / f"make-{target}.log"
        if dry_run:
            env = " ".join(f"{k}={v}" for k, v in ENVIRONMENT.items())
            print(f"{env} {shlex.join(command)} > {log}")
            continue
        for name in list(files) + list(files.values()):
            path = out / name
            if path.is_dir():
                for inner in sorted(path.rglob("*"), reverse=True):
                    inner.unlink() if inner.is_file() else inner.rmdir()
                path.rmdir()
            elif path.exists():
                path.unlink()
        print(f"[{part}] make {target} -> {log}", flush=True)
        started = time.monotonic()
        with open(log, "w") as f:
            status = subprocess.run(command, stdout=f, stderr=subprocess.STDOUT,
                                    env=measuring_environment(ENVIRONMENT)).returncode
        seconds = time.monotonic() - started
        print(f"[{part}] make {target}: {seconds:.0f} s, exit {status}", flush=True)
        with open(log, "a") as f:
            f.write(f"# make {target}: {seconds:.0f} s, exit {status}\n")
        if status not in (0, SKIPPED):
            print(f"[{part}] make {target} failed: exit {status} (see {log})", file=sys.stderr)
            failed += 1
        for written, name in files.items():
            if written != name and (out / written).exists():
                (out / written).rename(out / name)
    return failed


def expected(out, dry_run):
    """docs/expected/<gpu>.csv from the kernels part: the grader's ranges on this GPU model."""
    kernels = out / "kernels.csv"
    command = [sys.executable, "-m", "transpose_lab.grader", "--make-expected", str(kernels)]
    if dry_run:
        print(f"{shlex.join(command)} > docs/expected/<gpu>.csv")
        return 0
    slug = subprocess.run([sys.executable, "-m", "transpose_lab.grader", "--slug-of",
                           str(kernels)], capture_output=True, text=True, cwd=ROOT)
    if slug.returncode != 0 or not slug.stdout.strip():
        print(f"no expected ranges from {kernels}: {slug.stderr.strip()}", file=sys.stderr)
        return 1
    target = ROOT / "docs" / "expected" / f"{slug.stdout.strip()}.csv"
    with open(target, "w") as f:
        status = subprocess.run(command, stdout=f, cwd=ROOT).returncode
    print(f"wrote {target.relative_to(ROOT)}")
    return 0 if status == 0 else 1


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--part", choices=PARTS, help="one part (default: every part in turn)")
    parser.add_argument("--machine", help="the folder's name (default: from nvidia-smi)")
    parser.add_argument("--out", type=Path,
                        help="the folder (default docs/results/MACHINE)")
    parser.add_argument("--dry-run", action="store_true",
                        help="print the commands, run and write nothing")
    args = parser.parse_args(argv)
    found = gpus()
    machine = args.machine or machine_name([name for name, _, _ in found])
    if args.machine is not None and not re.fullmatch(r"[a-z0-9][a-z0-9._-]*", args.machine):
        print(f"bad machine name '{args.machine}': lower-case letters, digits, . _ -",
              file=sys.stderr)
        return 2
    table = GPU_PARTS if found else CPU_PARTS
    parts = [args.part] if args.part else [p for p in PARTS if p in table]
    if args.part and args.part not in table:
        print(f"PART={args.part} needs a GPU: on a machine without one the parts are "
              f"{', '.join(CPU_PARTS)}", file=sys.stderr)
        return 2
    out = (args.out or ROOT / "docs" / "results" / machine).resolve()
    print(f"reference run of {machine} ({', '.join(parts)}) into {out}", flush=True)
    if not args.dry_run:
        out.mkdir(parents=True, exist_ok=True)
    failed = 0
    for part in parts:
        failed += run_part(part, table[part], out, args.dry_run)
    plots = make_command("plots", {}, out)
    if args.dry_run:
        print(f"{shlex.join(plots)} > {out / 'make-plots.log'}")
        print(f"write {out / 'machine.txt'}")
    else:
        previous = out / "machine.txt"
        done = sorted(set(parts_in(previous)) | set(parts), key=PARTS.index)
        (out / "machine.txt").write_text(
            machine_txt(found, done, previous.read_text() if previous.is_file() else "", parts))
        with open(out / "make-plots.log", "w") as f:
            failed += subprocess.run(plots, stdout=f, stderr=subprocess.STDOUT).returncode != 0
    if found and "kernels" in parts:
        failed += expected(out, args.dry_run)
    if failed:
        print(f"{failed} step(s) of the reference run failed", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
