"""The benchmarks of the steps of other kinds, each one `make` target, so that every figure their
lab texts quote can be made again with one command:

    python -m transpose_lab.other_kinds streams     --results DIR [--cases 16384x16384:float32 ...]
    python -m transpose_lab.other_kinds out-of-core --results DIR [--shape 65536x131072]
                                                    [--device-mem BYTES]
    python -m transpose_lab.other_kinds multigpu    --results DIR [--sizes 8192 16384]
                                      [--dtypes float32 complex128] [--gpu-counts 1 2] [--reps N]
    python -m transpose_lab.other_kinds streams-sweep --results DIR [--cases ...]
                                      [--streams-list 2 3 4] [--down-blocks-list 8 16 32 ...]

streams (make streams): for each case, CUDA.v8_streams with the SMs writing the output down
(the default) and with one strided 2D copy per piece (--down copy-engine), each next to its own
ceilings (the overlapped bus, the serial round trip of the last kernel step), and CPU.omp blocked
at the same size and type: DIR/streams.csv. The first case also runs from pageable host memory
(DIR/streams_pageable.log) and writes the timeline of every piece (DIR/streams_timeline.csv and
.png, transpose_lab/plot_timeline.py).

streams-sweep (make streams-sweep): how the pipeline's two knobs were chosen: CUDA.v8_streams
at the first case for every --streams K and --down-blocks B of the lists: DIR/streams_sweep.csv
(each pipeline row next to the serial row of the same run).

out-of-core (make out-of-core): one matrix larger than the device memory it may use
(default 65536 x 131072 float32, 32 GiB each way, through 2 GiB): DIR/out_of_core.csv and .log.
The program itself refuses, with the bytes it needs, where host memory is short.

multigpu (make multigpu): for each element type and square size, CUDA.v9_multigpu on every GPU
count (1, 2, 4, 8 up to the visible GPUs, or --gpu-counts), in one process (--gpus G) and, where
mpirun is installed, one process per GPU (mpirun -np G), each next to its same-run all-to-all
ceiling; then the last kernel step alone on one GPU at the same size and type: all rows in
DIR/multigpu.csv, each run's report in DIR/multigpu_logs/. `python -m transpose_lab.plot_multigpu`
draws the scaling picture and prints the table from that file.

A program without a GPU prints one line and exits 77: the benchmark goes on and says "skipped"
at the end. Exit 0 when every run verified (or was skipped), 1 when one failed.
"""
import argparse
import itertools
import os
import shutil
import subprocess
import sys
from pathlib import Path

from transpose_lab.results_csv import DTYPES, positive_int
from transpose_lab.run_steps import classify

from transpose_lab import lab
from transpose_lab.lab import ROOT  # noqa: E402
# The steps, as the Makefiles declare them: the one-GPU row is the kernel the distributed step runs.
PIPELINE_STEP = lab.steps("PIPELINE_STEPS")[0]
DISTRIBUTED_STEP = lab.steps("DISTRIBUTED_STEPS")[0]
ONE_GPU_STEP = lab.step_kernel(DISTRIBUTED_STEP) or lab.last_step()
CPU_STEP = lab.steps("CPU_STEPS")[0]
PIPELINE = ROOT / PIPELINE_STEP / "transpose"
DISTRIBUTED = ROOT / DISTRIBUTED_STEP / "transpose"
LAST_KERNEL_STEP = ROOT / ONE_GPU_STEP / "transpose"
CPU = ROOT / CPU_STEP / "transpose"
DEFAULT_CASES = ["16384x16384:float32", "8192x8192:float64", "8192x8192:float32"]
PAGEABLE_REPS = 3  # pageable runs are 10x slower: three are enough for a median
OUT_OF_CORE_REPS = 3
MULTIGPU_ENV = {"NCCL_NVLS_ENABLE": "0"}  # NVLink multicast can take a shared machine down


class Runs:
    """Runs programs, prints one line each (what run_steps.classify makes of its exit), and
    remembers what failed or was skipped (also used by transpose_lab.probes)."""

    def __init__(self):
        self.failed, self.skipped = [], []

    def __call__(self, label, command, log=None, env=None):
        done = subprocess.run([str(c) for c in command], capture_output=True, text=True,
                              env={**os.environ, **(env or {})})
        if log:
            Path(log).write_text(done.stdout + done.stderr)
        run = classify(label, done.returncode, done.stderr)
        if run.status == "skipped":
            self.skipped.append(label)
        elif run.status == "failed":
            self.failed.append(label)
        said = {"ok": "verified", "skipped": f"skipped: {run.reason}",
                "n/a": f"not supported by this step ({run.reason})",
                "failed": f"FAILED ({run.reason})"}[run.status]
        print(f"{label}: {said}")
        return done.returncode

    def summary(self):
        if self.skipped:
            print(f"skipped (no CUDA device): {len(self.skipped)} run(s)")
        if self.failed:
            print(f"FAILED: {', '.join(self.failed)}", file=sys.stderr)
        return 1 if self.failed else 0


def parse_case(text):
    try:
        shape, dtype = text.split(":") if ":" in text else (text, "float32")
        rows, cols = (int(x) for x in shape.lower().split("x"))
    except ValueError:
        raise argparse.ArgumentTypeError(f"'{text}': expected ROWSxCOLS[:DTYPE], "
                                         "e.g. 16384x16384:float32") from None
    return rows, cols, dtype


def streams(results, cases, runs):
    csv = results / "streams.csv"
    for index, (rows, cols, dtype) in enumerate(cases):
        size = [rows, cols, "--dtype", dtype]
        for down in ("kernel", "copy-engine"):
            runs(f"{PIPELINE_STEP} {rows}x{cols} {dtype} --down {down}",
                 [PIPELINE, *size, "--down", down, "--csv", csv])
        runs(f"{CPU_STEP} blocked {rows}x{cols} {dtype}",
             [CPU, *size, "--variant", "blocked", "--reps", 5, "--csv", csv],
             env={"OMP_PROC_BIND": "close", "OMP_PLACES": "cores"})
        if index == 0:
            runs(f"{PIPELINE_STEP} {rows}x{cols} {dtype} pageable",
                 [PIPELINE, *size, "--host-memory", "pageable", "--reps", PAGEABLE_REPS,
                  "--csv", csv], log=results / "streams_pageable.log")
            timeline = results / "streams_timeline.csv"
            if runs(f"{PIPELINE_STEP} {rows}x{cols} {dtype} timeline",
                    [PIPELINE, *size, "--reps", 3, "--timeline", timeline]) == 0:
                runs("timeline picture", [sys.executable, "-m", "transpose_lab.plot_timeline",
                                          timeline, "-o", results / "streams_timeline.png"])


def streams_sweep(results, case, streams_list, blocks_list, runs):
    rows, cols, dtype = case
    for streams_count in streams_list:
        for blocks in blocks_list:
            runs(f"{PIPELINE_STEP} {rows}x{cols} {dtype} --streams {streams_count} "
                 f"--down-blocks {blocks}",
                 [PIPELINE, rows, cols, "--dtype", dtype, "--streams", streams_count,
                  "--down-blocks", blocks, "--csv", results / "streams_sweep.csv"])


def out_of_core(results, shape, device_mem, runs):
    rows, cols, dtype = shape
    runs(f"{PIPELINE_STEP} {rows}x{cols} {dtype} --device-mem {device_mem}",
         [PIPELINE, rows, cols, "--dtype", dtype, "--device-mem", device_mem,
          "--reps", OUT_OF_CORE_REPS, "--csv", results / "out_of_core.csv"],
         log=results / "out_of_core.log")


def visible_gpus():
    """How many GPUs the programs will see (CUDA_VISIBLE_DEVICES respected); 0 without a driver."""
    chosen = os.environ.get("CUDA_VISIBLE_DEVICES")
    if chosen is not None:
        return len([d for d in chosen.split(",") if d.strip()])
    smi = shutil.which("nvidia-smi")
    if smi is None:
        return 0
    listed = subprocess.run([smi, "-L"], capture_output=True, text=True)
    return sum(line.startswith("GPU ") for line in listed.stdout.splitlines())


def gpu_counts_to_run(visible):
    """1, 2, 4, 8 ... up to the visible GPUs, and the visible count itself (1 without a GPU: the
    program then says it is skipped)."""
    counts, g = [], 1
    while g <= max(visible, 1):
        counts.append(g)
        g *= 2
    return counts + ([visible] if visible > counts[-1] else [])


def mpi_command(mpirun, processes):
    """mpirun for one process per GPU: not bound to one core each (OpenMPI binds by default), so
    every rank's OpenMP fill and verification of its band gets its share of the cores."""
    command = [mpirun, "--bind-to", "none", "-np", processes]
    if hasattr(os, "geteuid") and os.geteuid() == 0:
        command.insert(1, "--allow-run-as-root")
    return command


# make multigpu's exchanges (MULTIGPU_EXCHANGES): the step's options for each.
EXCHANGE_OPTIONS = {
    "nccl": ["--exchange", "nccl"],
    "registered": ["--exchange", "nccl", "--nccl-buffers", "registered"],  # NCCL without its FIFOs
    "windows": ["--exchange", "nccl", "--nccl-buffers", "windows"],  # NCCL on the copy engines
    "peer": ["--exchange", "peer"],
}


# make multigpu's ways to run (MULTIGPU_MODES): the step in one process (--gpus G), under
# mpirun -np G, and the last kernel step alone on one GPU for the same matrix.
MULTIGPU_MODES = ("single", "mpi", "one-gpu")


def multigpu(results, sizes, dtypes, gpu_counts, exchanges, reps, runs, modes=MULTIGPU_MODES):
    csv = results / "multigpu.csv"
    logs = results / "multigpu_logs"
    logs.mkdir(parents=True, exist_ok=True)
    counts = gpu_counts or gpu_counts_to_run(visible_gpus())
    mpirun = shutil.which("mpirun") if "mpi" in modes else None
    if "mpi" in modes and mpirun is None:
        print("mpirun -np G: skipped: mpirun is not installed (single-process runs only)")
    cores = os.cpu_count() or 1
    for dtype in dtypes:
        for n in sizes:
            common = [n, n, "--dtype", dtype, "--csv", csv] + (["--reps", reps] if reps else [])
            for g, exchange in itertools.product(counts, exchanges):
                if g == 1 and exchange != "nccl":
                    continue  # one GPU exchanges nothing: one run of it is enough
                name = f"{n}x{n}_{dtype}_gpus{g}_{exchange}"
                options = EXCHANGE_OPTIONS[exchange]
                args, said = [*common, *options], " ".join(options)
                if "single" in modes:
                    runs(f"{DISTRIBUTED_STEP} {n}x{n} {dtype} --gpus {g} {said}",
                         [DISTRIBUTED, *args, "--gpus", g], log=logs / f"{name}_single.log",
                         env=MULTIGPU_ENV)
                if mpirun is not None and not runs.skipped:
                    runs(f"mpirun -np {g} {DISTRIBUTED_STEP} {n}x{n} {dtype} {said}",
                         [*mpi_command(mpirun, g), DISTRIBUTED, *args],
                         log=logs / f"{name}_mpi.log",
                         env={**MULTIGPU_ENV, "OMP_NUM_THREADS": str(max(1, cores // g))})
            if "one-gpu" in modes:
                runs(f"{ONE_GPU_STEP} {n}x{n} {dtype} (one GPU)", [LAST_KERNEL_STEP, *common],
                     log=logs / f"{n}x{n}_{dtype}_one_gpu.log")


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("what", choices=["streams", "streams-sweep", "out-of-core", "multigpu"])
    parser.add_argument("--results", default=str(ROOT / "results"), help="folder to write")
    parser.add_argument("--cases", nargs="+", type=parse_case,
                        default=[parse_case(c) for c in DEFAULT_CASES],
                        help="streams: ROWSxCOLS[:DTYPE] ...")
    parser.add_argument("--streams-list", nargs="+", type=int, default=[2, 3, 4],
                        help="streams-sweep: --streams values")
    parser.add_argument("--down-blocks-list", nargs="+", type=int,
                        default=[8, 12, 16, 24, 32, 64, 132], help="streams-sweep: --down-blocks")
    parser.add_argument("--shape", type=parse_case, default=parse_case("65536x131072:float32"),
                        help="out-of-core: ROWSxCOLS[:DTYPE]")
    parser.add_argument("--device-mem", type=int, default=2 << 30,
                        help="out-of-core: device memory the pipeline may use (bytes)")
    parser.add_argument("--sizes", nargs="+", type=int, default=[8192, 16384],
                        help="multigpu: square sizes")
    parser.add_argument("--dtypes", nargs="+", choices=list(DTYPES), default=["float32"],
                        help="multigpu: element types")
    parser.add_argument("--gpu-counts", nargs="+", type=positive_int,
                        help="multigpu: GPU counts (default: 1, 2, 4, 8 up to the visible GPUs)")
    parser.add_argument("--exchanges", nargs="+", choices=list(EXCHANGE_OPTIONS),
                        default=["nccl", "registered", "windows", "peer"],
                        help="multigpu: NCCL with plain or registered buffers or symmetric "
                        "windows, peer writes (all but nccl on 2 GPUs or more)")
    parser.add_argument("--modes", nargs="+", choices=list(MULTIGPU_MODES),
                        default=list(MULTIGPU_MODES),
                        help="multigpu: one process (--gpus G), mpirun -np G, the last kernel "
                        "step on one GPU (default: all three)")
    parser.add_argument("--reps", type=positive_int, help="multigpu: timed runs of each program")
    args = parser.parse_args(argv)
    results = Path(args.results)
    results.mkdir(parents=True, exist_ok=True)
    runs = Runs()
    if args.what == "streams":
        streams(results, args.cases, runs)
    elif args.what == "streams-sweep":
        streams_sweep(results, args.cases[0], args.streams_list, args.down_blocks_list, runs)
    elif args.what == "out-of-core":
        out_of_core(results, args.shape, args.device_mem, runs)
    else:
        multigpu(results, args.sizes, args.dtypes, args.gpu_counts, args.exchanges, args.reps,
                 runs, args.modes)
    return runs.summary()


if __name__ == "__main__":
    sys.exit(main())
