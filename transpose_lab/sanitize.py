"""compute-sanitizer memcheck and racecheck of steps, on every element type each supports and on
small ragged shapes: `make sanitize [SANITIZE_STEPS=...] [SANITIZE_DTYPES=...]`.

    python -m transpose_lab.sanitize STEP... [--dtypes uint8 ...] [--jobs 8] [--log FILE]

The grader runs the same checks on float32 only (its sanitizer lines); this runs them on every
type, where each type takes another path through a kernel (v7: the packed kernel, the realigning
one for 1- and 2-byte elements, the element one for the rest; on Hopper, its tma variant too). A
host pipeline (CUDA.v8_streams) runs each shape both ways down, in pieces that do not divide the
rows, over three streams, and one more shape in a ramp down to pieces of 4 rows, from host memory
pinned on huge pages. A distributed step (CUDA.v9_multigpu) runs on three virtual ranks of one
GPU, through NCCL's pipeline (device copies between the ranks) and through peer writes; where two
GPUs or more are visible, also on two of them, through NCCL (its own buffers, registered ones,
symmetric windows) and through peer writes.
One line per run, PASS or FAIL; the runs are independent programs, so --jobs of them share the
GPU at once. Exit 0 when all passed, 1 when one failed, 2 for a bad command line, 77 (one line)
without a GPU or without compute-sanitizer.
"""
import argparse
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from transpose_lab import grader
from transpose_lab.other_kinds import visible_gpus
from transpose_lab.run_steps import BEYOND_THE_LESSON

ROOT = grader.ROOT
# The grader's two shapes (rows not a multiple of 32, then of 32 but not 64), then a short wide
# one (one tile row, many ragged column tiles) and one whose sides are odd, past one tile.
SHAPES = grader.SANITIZER_SHAPES + [(37, 4111), (1025, 513)]
PIPELINE_WAYS = (["--streams", "3", "--pieces", "5", "--down", "kernel"],
                 ["--streams", "3", "--pieces", "5", "--down", "copy-engine"])
# The ramp's pieces of 4 rows take band_copy's path for rows narrower than a warp's words.
RAMP_RUN = ((1024, 999), ["--streams", "3", "--pieces", "4", "--ramp", "6", "--host-memory", "huge",
                          "--down", "kernel"])
# A distributed step on one GPU: three virtual ranks (uneven bands), through the pipeline of
# chunks and through peer writes, and one shape whose bands start on whole 16-byte vectors, so
# that the peer kernel's vector stores run as well as its element ones.
DISTRIBUTED_WAYS = (["--virtual-ranks", "3", "--chunks", "3"],
                    ["--virtual-ranks", "3", "--exchange", "peer"])
VECTOR_BANDS_RUN = ((1536, 1030), ["--virtual-ranks", "3", "--exchange", "peer"])
# Where two GPUs or more are visible, a distributed step also runs on two of them, each way it
# exchanges (virtual ranks use no NCCL): NCCL with its own buffers, registered ones, symmetric
# windows, and the peer writes; a shape that splits in two, as the windows need. NCCL tries CUDA
# calls that fail by design and goes on (a memory handle type the machine lacks, kernel images
# for other GPUs): memcheck would count those, so there it reports bad accesses only.
TWO_GPU_SHAPE = (1030, 2050)
TWO_GPU_WAYS = (["--gpus", "2", "--exchange", "nccl"],
                ["--gpus", "2", "--exchange", "nccl", "--nccl-buffers", "registered"],
                ["--gpus", "2", "--exchange", "nccl", "--nccl-buffers", "windows"],
                ["--gpus", "2", "--exchange", "peer"])
NCCL_TOOL_OPTIONS = ("--report-api-errors", "no")
# A step with a variant beyond its lesson for rows of whole 16-byte units only (v7's tma, which
# --variant all leaves out of the shapes above for most types): one shape of such rows for every
# type, a tile and a bit of a second each way.
WHOLE_VECTORS_SHAPE = (272, 1040)
EXIT_OK, EXIT_FAILED, EXIT_USAGE, EXIT_SKIPPED = (grader.EXIT_OK, grader.EXIT_FAILED,
                                                  grader.EXIT_USAGE, grader.EXIT_SKIPPED)


def runs_of(step, dtypes, gpus=None):
    """(program, dtype, shape, extra arguments, sanitizer options) for every run of one step;
    gpus: how many GPUs the programs see (found when not given)."""
    program = ROOT / step / "transpose"
    declared = grader.make_variable(ROOT / step, "STEP_KIND")
    if not declared:
        raise grader.UsageError(f"{step} is not a step (no STEP_KIND in {step}/Makefile)")
    if not program.is_file():
        raise grader.UsageError(f"{program} is not built: make {step}")
    kind = declared[0]
    if kind in grader.CPU_KINDS:
        raise grader.UsageError(f"{step} runs on the CPU: compute-sanitizer has nothing to check")
    supported = grader.make_variable(ROOT / step, "STEP_DTYPES")
    ways = {"host_pipeline": PIPELINE_WAYS, "distributed": DISTRIBUTED_WAYS}.get(kind, ([],))
    shapes_ways = [(shape, way) for shape in SHAPES for way in ways]
    if kind == "host_pipeline":
        shapes_ways.append(RAMP_RUN)
    if kind == "distributed":
        shapes_ways.append(VECTOR_BANDS_RUN)
    variants = grader.run_program([str(program), "--list-variants"], grader.TIMEOUT_S).output
    if set(variants.split()) & set(BEYOND_THE_LESSON):
        shapes_ways.append((WHOLE_VECTORS_SHAPE, []))
    runs = [(program, dtype, shape, way + grader.variant_arguments(program), ())
            for dtype in dtypes if dtype in supported for shape, way in shapes_ways]
    if kind == "distributed" and (visible_gpus() if gpus is None else gpus) >= 2:
        runs += [(program, dtype, TWO_GPU_SHAPE, way, NCCL_TOOL_OPTIONS)
                 for dtype in dtypes if dtype in supported for way in TWO_GPU_WAYS]
    return runs


def check(tool_path, tool, run):
    program, dtype, shape, extra, tool_options = run
    found = grader.sanitizer(tool_path, tool, program, shape, ["--dtype", dtype, *extra], dtype,
                             tool_options)
    way = f" {' '.join(extra)}" if extra else ""
    return f"{found.verdict} {program.parent.name} {found.name}{way}: {found.detail}", found


def main(argv=None):
    parser = argparse.ArgumentParser(description="compute-sanitizer of steps on every type")
    parser.add_argument("steps", nargs="+", metavar="STEP")
    parser.add_argument("--dtypes", nargs="+", default=grader.ALL_DTYPES)
    parser.add_argument("--tools", nargs="+", default=list(grader.SANITIZER_TOOLS),
                        choices=grader.SANITIZER_TOOLS)
    parser.add_argument("--jobs", type=int, default=8, help="runs at once (default 8)")
    parser.add_argument("--log", type=Path, help="also write the lines to this file")
    args = parser.parse_args(argv)
    unknown = [d for d in args.dtypes if d not in grader.ALL_DTYPES]
    try:
        if unknown or args.jobs < 1:
            raise grader.UsageError(f"unknown type {unknown[0]}" if unknown else "--jobs >= 1")
        runs = [run for step in args.steps for run in runs_of(step, args.dtypes)]
    except grader.UsageError as error:
        print(f"error: {error}", file=sys.stderr)
        return EXIT_USAGE
    tool_path = grader.find_sanitizer()
    if tool_path is None:
        print("sanitize: skipped: compute-sanitizer is not installed")
        return EXIT_SKIPPED
    probe = grader.run_program([str(runs[0][0]), "1", "1", "--reps", "1"], grader.TIMEOUT_S)
    if probe.returncode == EXIT_SKIPPED:
        print(f"sanitize: skipped: {grader.last_line(probe.stderr)}")
        return EXIT_SKIPPED
    work = [(tool, run) for run in runs for tool in args.tools]
    lines, failed = [], 0
    with ThreadPoolExecutor(args.jobs) as pool:
        for line, found in pool.map(lambda job: check(tool_path, *job), work):
            print(line, flush=True)
            lines.append(line)
            failed += found.verdict != "PASS"
    summary = f"sanitize: {len(work) - failed} of {len(work)} runs clean"
    print(summary)
    if args.log:
        args.log.parent.mkdir(parents=True, exist_ok=True)
        args.log.write_text("\n".join(lines + [summary]) + "\n")
    return EXIT_FAILED if failed else EXIT_OK


if __name__ == "__main__":
    sys.exit(main())
