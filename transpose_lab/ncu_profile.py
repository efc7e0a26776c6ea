"""Nsight Compute counters for each CUDA step: how many sectors its loads and stores cost, its
shared-memory bank conflicts, and what DRAM saw.

    python -m transpose_lab.ncu_profile --steps CUDA.v1 ... CUDA.cublas --size 4096
                                        [--dtype float32] --csv results/profile.csv

Each step's driver brackets one launch (after its verified run) with cudaProfilerStart/Stop, so
`ncu --profile-from-start off` measures exactly that launch, plus whatever a library launches
inside it. One row per step goes to the CSV (PROFILE_COLUMNS of results_csv), one table to
stdout, and ncu's full output to a log beside the CSV (profile.csv: profile.ncu.log).

Where nothing can be profiled here (no ncu, no GPU, no permission to read the counters) it prints
one line saying which and exits 0 without writing a CSV. A step that does not support the element
type is named as n/a. A step that fails is named, and the command then exits 1.
"""
import argparse
import csv
import glob
import os
import shutil
import subprocess
import sys
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

from .report_tables import format_text, profile_table
from .results_csv import DEFAULT_DTYPE, DTYPES, PROFILE_COLUMNS, SECTOR_BYTES

from transpose_lab.lab import EXIT_SKIPPED, ROOT  # noqa: E402  the lab: one folder per step
NOT_SUPPORTED_MARK = "does not support"  # a step's one line for an element type it refuses
UNKNOWN_DEVICE = "unknown GPU"

# The Nsight Compute metrics (names from the design's profiling facts).
GLOBAL_LOAD_SECTORS = "l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum"
GLOBAL_STORE_SECTORS = "l1tex__t_sectors_pipe_lsu_mem_global_op_st.sum"
GLOBAL_LOAD_REQUESTS = "l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum"
GLOBAL_STORE_REQUESTS = "l1tex__t_requests_pipe_lsu_mem_global_op_st.sum"
SHARED_LOAD_BANK_CONFLICTS = "l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum"
SHARED_STORE_BANK_CONFLICTS = "l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_st.sum"
DRAM_PCT_OF_PEAK = "dram__throughput.avg.pct_of_peak_sustained_elapsed"
DRAM_BYTES_READ = "dram__bytes_read.sum"
DRAM_BYTES_WRITE = "dram__bytes_write.sum"
KERNEL_DURATION = "gpu__time_duration.sum"  # only to weight DRAM % over a step's kernels

# Counts: a step that launches several kernels moved the sum of what each moved.
SUMMED_METRICS = [
    GLOBAL_LOAD_SECTORS, GLOBAL_STORE_SECTORS, GLOBAL_LOAD_REQUESTS, GLOBAL_STORE_REQUESTS,
    SHARED_LOAD_BANK_CONFLICTS, SHARED_STORE_BANK_CONFLICTS, DRAM_BYTES_READ, DRAM_BYTES_WRITE,
]
REQUIRED_METRICS = SUMMED_METRICS + [DRAM_PCT_OF_PEAK]
REQUESTED_METRICS = REQUIRED_METRICS + [KERNEL_DURATION]

# ncu scales units by default ("Mbyte", "usecond") unless told --print-units base; values are
# converted to the base unit so that kernels reported in different scales add up.
DECIMAL_PREFIXES = {"K": 1e3, "M": 1e6, "G": 1e9, "T": 1e12}
BINARY_PREFIXES = {"Ki": 2**10, "Mi": 2**20, "Gi": 2**30, "Ti": 2**40}
PREFIXABLE_UNITS = {"byte", "sector", "request", "cycle", "inst", "warp", "thread"}
TIME_UNITS_IN_NS = {"nsecond": 1.0, "usecond": 1e3, "msecond": 1e6, "second": 1e9}

# Text in ncu's output that means it cannot read the counters on this machine.
COUNTER_PERMISSION_MARK = "ERR_NVGPUCTRPERM"
PROFILING_NOT_SUPPORTED_MARK = "profiling is not supported"


class ProfileError(Exception):
    """ncu's output for a step cannot give the step's row; the message says why."""


class NoKernelProfiled(ProfileError):
    """ncu ran the step, said nothing was wrong, and measured nothing."""


class DtypeNotSupported(ProfileError):
    """The step does not take the element type (its exit 2 and 'does not support' line): n/a,
    not a failure."""


class Skip(Exception):
    """Nothing can be profiled on this machine; the message is the one line that says why."""


@dataclass
class Kernel:
    """One profiled launch: ncu's result ID, its demangled name, and metric -> base-unit value."""
    launch_id: str
    name: str
    device_field: str
    values: dict = field(default_factory=dict)


# --- Parsing ncu's --csv output.

def unit_scale(unit):
    """The factor from a value printed in `unit` to the metric's base unit (ns for times)."""
    unit = unit.strip()
    if unit in TIME_UNITS_IN_NS:
        return TIME_UNITS_IN_NS[unit]
    for prefixes in (BINARY_PREFIXES, DECIMAL_PREFIXES):  # binary first: "Ki" starts with "K"
        for prefix, factor in prefixes.items():
            if unit.startswith(prefix) and unit[len(prefix):] in PREFIXABLE_UNITS:
                return factor
    return 1.0


def metric_value(text, unit):
    """'67,133,952' (ncu groups thousands) in `unit` -> 67133952.0; None for 'n/a' and the like."""
    try:
        value = float(text.replace(",", "").strip())
    except ValueError:
        return None
    return value * unit_scale(unit)


def csv_records(output):
    """The records of the CSV part of ncu's output, as dicts keyed by its header.

    The program's own stdout and ncu's ==PROF== lines come first in the same stream; only a line
    starting with the '"ID",' header, and the quoted lines of as many fields after it, count.
    """
    header = None
    for line in output.splitlines():
        if line.startswith('"ID",'):
            header = next(csv.reader([line]))
            continue
        if header is None or not line.startswith('"'):
            continue
        fields = next(csv.reader([line]))
        if len(fields) == len(header):
            yield dict(zip(header, fields))


def parse_kernels(output):
    """Every kernel launch ncu profiled, in launch order, with the values of its metrics."""
    kernels = {}
    for record in csv_records(output):
        try:
            launch_id, name, metric = record["ID"], record["Kernel Name"], record["Metric Name"]
            unit, text = record["Metric Unit"], record["Metric Value"]
        except KeyError:
            continue  # not the metrics table this script asked for
        kernel = kernels.setdefault(launch_id,
                                    Kernel(launch_id, name, record.get("Device", "").strip()))
        value = metric_value(text, unit)
        if value is not None:
            kernel.values[metric] = value
    return list(kernels.values())


def short_kernel_name(demangled):
    """'void k<float, 6>(Params<T2>, const float *)' -> 'k<float, 6>': the return type (always
    void) and the parameter list make a library's names too long for a table."""
    name = demangled.strip()
    if name.endswith(")"):
        depth = 0
        for index in range(len(name) - 1, -1, -1):
            depth += {")": 1, "(": -1}.get(name[index], 0)
            if depth == 0:  # the '(' that opens the parameter list
                name = name[:index].rstrip()
                break
    if name.startswith("void "):
        name = name[len("void "):]
    return name or demangled.strip()


def kernel_label(kernels):
    """The step's kernel names joined with ' + ', a repeated one as 'name (x2)'."""
    counts = Counter(short_kernel_name(kernel.name) for kernel in kernels)
    return " + ".join(name if count == 1 else f"{name} (x{count})"
                      for name, count in counts.items())


def combined_dram_pct(kernels):
    """DRAM throughput in % of peak for the step as a whole.

    One kernel: its own figure. Several: weighted by each kernel's duration, which is the
    average over the step's whole time on the GPU; if ncu gave no durations, the largest (an
    upper bound rather than an average invented without weights).
    """
    percents = [kernel.values[DRAM_PCT_OF_PEAK] for kernel in kernels]
    durations = [kernel.values.get(KERNEL_DURATION) for kernel in kernels]
    if len(kernels) == 1:
        return percents[0]
    if all(durations) and sum(durations) > 0:
        return sum(p * d for p, d in zip(percents, durations)) / sum(durations)
    return max(percents)


def per_request(sectors, requests):
    # No request means no sector either (a kernel that never touched global memory that way).
    return sectors / requests if requests else 0.0


def copy_store_sectors(rows, cols, elem_bytes):
    """The fewest sectors a copy of the matrix can store: every byte once, in 32-byte sectors."""
    return rows * cols * elem_bytes / SECTOR_BYTES


def step_profile(step, kernels, rows, cols, device, dtype=DEFAULT_DTYPE):
    """The step's row (PROFILE_COLUMNS -> value) from the kernels ncu profiled for it, for a
    matrix of rows x cols elements of dtype."""
    if not kernels:
        raise NoKernelProfiled("no kernel profiled")
    missing = sorted({metric for kernel in kernels for metric in REQUIRED_METRICS
                      if metric not in kernel.values})
    if missing:
        raise ProfileError(f"ncu gave no value for {', '.join(missing)}")
    total = {metric: sum(kernel.values[metric] for kernel in kernels)
             for metric in SUMMED_METRICS}
    return {
        "step": step,
        "kernel": kernel_label(kernels),
        "dtype": dtype,
        "elem_bytes": DTYPES[dtype],
        "rows": rows,
        "cols": cols,
        "device": device,
        "gld_sectors": total[GLOBAL_LOAD_SECTORS],
        "gst_sectors": total[GLOBAL_STORE_SECTORS],
        "gld_sectors_per_request": per_request(total[GLOBAL_LOAD_SECTORS],
                                               total[GLOBAL_LOAD_REQUESTS]),
        "gst_sectors_per_request": per_request(total[GLOBAL_STORE_SECTORS],
                                               total[GLOBAL_STORE_REQUESTS]),
        "shared_ld_bank_conflicts": total[SHARED_LOAD_BANK_CONFLICTS],
        "shared_st_bank_conflicts": total[SHARED_STORE_BANK_CONFLICTS],
        "dram_pct_of_peak": combined_dram_pct(kernels),
        "dram_bytes_read": total[DRAM_BYTES_READ],
        "dram_bytes_write": total[DRAM_BYTES_WRITE],
        "store_sectors_vs_copy": (total[GLOBAL_STORE_SECTORS]
                                  / copy_store_sectors(rows, cols, DTYPES[dtype])),
    }


def counters_unreadable(output):
    """ncu's own line saying it cannot read the counters here, or None."""
    for line in output.splitlines():
        if COUNTER_PERMISSION_MARK in line or PROFILING_NOT_SUPPORTED_MARK in line.lower():
            return line.replace("==ERROR==", "").strip()
    return None


# --- The machine: ncu, the GPU's name, the programs.

def find_ncu(requested):
    """The ncu to run: --ncu if given, else ncu on PATH, else beside nvcc or where NVIDIA's
    installers put it (CUDA installs often leave /usr/local/cuda/bin off PATH; the Makefile
    exports the NVCC it found)."""
    if requested:
        return shutil.which(requested)
    candidates = ["ncu"]
    if os.environ.get("NVCC"):
        candidates.append(str(Path(os.environ["NVCC"]).parent / "ncu"))
    candidates.append("/usr/local/cuda/bin/ncu")
    # Where NVIDIA's installers put it, newest version last.
    candidates += sorted(glob.glob("/usr/local/cuda/nsight-compute-*/ncu"))[::-1]
    candidates += sorted(glob.glob("/opt/nvidia/nsight-compute/*/ncu"))[::-1]
    return next((found for found in map(shutil.which, candidates) if found), None)


def device_name(device_field):
    """The GPU's name: ncu's Device field where it holds a name; else nvidia-smi's answer when
    the machine has one kind of GPU (ncu's field is usually an index, and CUDA may number the
    GPUs differently from nvidia-smi); else UNKNOWN_DEVICE."""
    if device_field and not device_field.isdigit():
        return device_field
    nvidia_smi = shutil.which("nvidia-smi")
    if nvidia_smi is None:
        return UNKNOWN_DEVICE
    try:
        done = subprocess.run([nvidia_smi, "--query-gpu=name", "--format=csv,noheader"],
                              capture_output=True, text=True, timeout=60)
    except (OSError, subprocess.TimeoutExpired):
        return UNKNOWN_DEVICE
    names = {line.strip() for line in done.stdout.splitlines() if line.strip()}
    return names.pop() if done.returncode == 0 and len(names) == 1 else UNKNOWN_DEVICE


def step_binary(root, step):
    return Path(root) / step / "transpose"


def check_gpu(binary):
    """Raise Skip when the first step cannot run on a GPU here: not built, or no device."""
    if not binary.exists():
        raise Skip(f"{binary.parent.name}/transpose does not exist (make all; the CUDA steps "
                   "need nvcc)")
    try:
        done = subprocess.run([str(binary), "1", "1", "--reps", "1"], capture_output=True,
                              text=True, timeout=120)
    except (OSError, subprocess.TimeoutExpired) as problem:
        raise Skip(f"cannot run {binary}: {problem}") from None
    if done.returncode == EXIT_SKIPPED:
        said = (done.stderr.strip().splitlines() or ["no CUDA device"])[-1]
        raise Skip(f"no GPU: {said.split('skipped: ', 1)[-1]}")  # the step's own reason


def ncu_command(ncu, binary, size, dtype=DEFAULT_DTYPE, cols=None):
    return [ncu, "--profile-from-start", "off", "--clock-control", "none",
            "--metrics", ",".join(REQUESTED_METRICS), "--csv",
            str(binary), str(size), str(cols or size), "--dtype", dtype, "--reps", "1"]


def refusal(output):
    """The step's own line saying it does not support the element type, or None."""
    return next((line.strip() for line in output.splitlines()
                 if NOT_SUPPORTED_MARK in line and not line.startswith('"')), None)


def last_words(output):
    """The last line of ncu's output outside its CSV table: usually what went wrong."""
    lines = [line.strip() for line in output.splitlines()
             if line.strip() and not line.startswith('"')]
    return lines[-1] if lines else "no output"


def profile_step(ncu, root, step, size, log, timeout, dtype=DEFAULT_DTYPE, cols=None):
    """The step's row and how many kernels it launched; raises DtypeNotSupported (n/a),
    ProfileError (this step failed) or Skip (nothing can work here)."""
    binary = step_binary(root, step)
    if not binary.exists():
        raise ProfileError(f"{step}/transpose does not exist (make all)")
    cols = cols or size
    command = ncu_command(ncu, binary, size, dtype, cols)
    print(f"  profiling {step} {size} x {cols} {dtype} with ncu", file=sys.stderr, flush=True)
    try:
        done = subprocess.run(command, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                              text=True, errors="replace", timeout=timeout)
    except subprocess.TimeoutExpired:
        raise ProfileError(f"ncu did not finish in {timeout} s") from None
    except OSError as problem:
        raise Skip(f"cannot run ncu ({ncu}): {problem}") from None
    log.write(f"$ {' '.join(command)}\n{done.stdout}\n")
    log.flush()
    unreadable = counters_unreadable(done.stdout)
    if unreadable:
        raise Skip(f"ncu cannot read the GPU's performance counters here: {unreadable}")
    kernels = parse_kernels(done.stdout)
    if done.returncode != 0:
        refused = refusal(done.stdout)
        if refused:
            raise DtypeNotSupported(refused)
        raise ProfileError(f"exit {done.returncode}: {last_words(done.stdout)}")
    if not kernels:
        raise NoKernelProfiled(f"no kernel profiled: {last_words(done.stdout)}")
    device = device_name(kernels[0].device_field)
    return step_profile(step, kernels, size, cols, device, dtype), len(kernels)


# --- Output.

def csv_text(column, value):
    """A field as the CSV holds it: counts whole, ratios to 3 decimals, the % to 2."""
    if column == "dram_pct_of_peak":
        return f"{value:.2f}"
    if column in ("gld_sectors_per_request", "gst_sectors_per_request", "store_sectors_vs_copy"):
        return f"{value:.3f}"
    if isinstance(value, float):
        return f"{value:.0f}"
    return str(value)


def write_csv(path, profiles):
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("w", newline="", encoding="utf-8") as handle:
        writer = csv.writer(handle)
        writer.writerow(PROFILE_COLUMNS)
        for profile in profiles:
            writer.writerow([csv_text(column, profile[column]) for column in PROFILE_COLUMNS])


def print_report(profiles, size, kernel_counts, dtype=DEFAULT_DTYPE, cols=None):
    cols = cols or size
    devices = " / ".join(dict.fromkeys(profile["device"] for profile in profiles))
    elem_bytes = DTYPES[dtype]
    print(f"\nNsight Compute counters, one launch per step, {size} x {cols} {dtype}, on "
          f"{devices}")
    print(format_text(*profile_table(profiles), name_columns=1))
    print(f"\nst vs copy    the step's global store sectors / the fewest a copy of the same "
          f"bytes must store\n              ({size} x {cols} x {elem_bytes} B / "
          f"{SECTOR_BYTES} B = {copy_store_sectors(size, cols, elem_bytes):,.0f} sectors: "
          f"every byte written once, in {SECTOR_BYTES}-byte sectors)")
    print(f"sect/req      32-byte sectors per warp-wide global request: "
          f"{32 * elem_bytes // SECTOR_BYTES or 1} = a warp's 32 {dtype} elements in whole "
          "sectors, 32 = one per thread")
    print("smem confl    shared-memory bank conflicts.  DRAM % peak: over the kernel's time.  "
          "MB = 10^6 bytes.")
    several = [step for step, count in kernel_counts.items() if count > 1]
    if several:
        print(f"{', '.join(several)}: several kernels; counts summed, DRAM % weighted by their "
              "durations (the largest where ncu gave none).")
    print("\nkernels profiled:")
    step_width = max(len(profile["step"]) for profile in profiles)
    for profile in profiles:
        print(f"  {profile['step'].ljust(step_width)}  {profile['kernel']}")


# --- The command.

def ncu_log_path(csv_path):
    # Not profile.log: a reference run keeps `make profile`'s own output beside it (make-profile.log).
    return csv_path.with_suffix(".ncu.log")


def parse_arguments(argv):
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--steps", nargs="+", required=True, help="step folders, in order")
    parser.add_argument("--size", type=int, default=4096,
                        help="profile SIZE x SIZE matrices (default 4096)")
    parser.add_argument("--cols", type=int, help="profile SIZE x COLS instead (an odd shape)")
    parser.add_argument("--csv", required=True, type=Path, help="the profile CSV to write")
    parser.add_argument("--dtype", choices=list(DTYPES), default=DEFAULT_DTYPE,
                        help=f"the element type, passed on to each step (default "
                             f"{DEFAULT_DTYPE})")
    parser.add_argument("--ncu", help="the ncu to run (default: ncu on PATH, else beside $NVCC, "
                                      "in /usr/local/cuda or in /opt/nvidia/nsight-compute)")
    parser.add_argument("--root", type=Path, default=ROOT,
                        help="the folder holding the step folders (default: this lab)")
    parser.add_argument("--timeout", type=int, default=600,
                        help="seconds one step may take under ncu (default 600)")
    args = parser.parse_args(argv)
    if args.size <= 0 or (args.cols is not None and args.cols <= 0):
        parser.error("--size and --cols must be positive")
    return args


def main(argv=None):
    args = parse_arguments(argv)
    profiles, failures, refusals, kernel_counts = [], [], [], {}
    try:
        ncu = find_ncu(args.ncu)
        if ncu is None:
            raise Skip(f"ncu (Nsight Compute) not found{' at ' + args.ncu if args.ncu else ''}"
                       "; install it, or pass --ncu PATH")
        check_gpu(step_binary(args.root, args.steps[0]))
        log_path = ncu_log_path(args.csv)
        log_path.parent.mkdir(parents=True, exist_ok=True)
        with log_path.open("w", encoding="utf-8") as log:
            for step in args.steps:
                try:
                    profile, kernel_count = profile_step(ncu, args.root, step, args.size, log,
                                                         args.timeout, args.dtype, args.cols)
                except DtypeNotSupported as problem:
                    refusals.append(f"{step}: n/a: {problem}")
                    continue
                except NoKernelProfiled as problem:
                    if profiles or failures:
                        failures.append(f"{step}: failed: {problem}")
                        continue
                    # The first step ran and ncu reported no error, yet gave no counters: it
                    # cannot read them here, and no later step would fare better.
                    raise Skip(f"ncu gave no counters for {step} ({problem}); see {log_path}"
                               ) from None
                except ProfileError as problem:
                    failures.append(f"{step}: failed: {problem}")
                    continue
                profiles.append(profile)
                kernel_counts[step] = kernel_count
    except Skip as reason:
        print(f"profile skipped: {reason}")
        return 0
    if profiles:
        write_csv(args.csv, profiles)
        print_report(profiles, args.size, kernel_counts, args.dtype, args.cols)
        print(f"\nCSV: {args.csv}   ncu output: {log_path}")
    for line in refusals:
        print(line)
    for failure in failures:
        print(failure)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
