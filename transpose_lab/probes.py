"""Probes: a step with one constant changed, built beside the step and measured against it. This is
how a step's constants were chosen (and how a student asks "what if?"):

    python -m transpose_lab.probes [--shape 8191x8193] [--dtypes float16 float64 ...]
                                   [--probes NAME ...] [--results DIR] [--list]    (make probes)

Each probe names a step, one line of its transpose.cu as it is now, and the line that replaces
it; the line must occur exactly once, so a probe that no longer fits the step fails loudly
instead of measuring the step unchanged. The copy goes to build/probes/<name>/ (its Makefile and
source pointed at the real common/), is built with the same rules, and runs after the step itself
and cuBLAS at the shape, for each type: DIR/probes.csv, one row per program and type, the step
column naming the probe. Rows of one type come from consecutive processes, each with its own
same-run copy ceiling: compare % of copy, or the ms.

Exit 0 when every program verified (or was skipped without a GPU, said once per program), 1 when
one failed, 2 for a probe that does not fit its step.
"""
import argparse
import os
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

from transpose_lab.other_kinds import Runs

from transpose_lab.lab import DTYPES, EXIT_USAGE, ROOT  # noqa: E402
BUILD = ROOT / "build" / "probes"
LIBRARY = "CUDA.cublas"
DEFAULT_DTYPES = [d for d in DTYPES if d != "bfloat16"]  # it takes float16's path


@dataclass(frozen=True)
class Probe:
    name: str
    step: str
    line: str  # as it is in the step now
    instead: str
    what: str
    file: str = "transpose.cu"  # or another source of the step (CUDA.v7_packed/ragged.cu)


# The probes behind CUDA.v7_packed's constants for shapes that are not 16-byte aligned (its
# README, "Below the targets").
PROBES = [
    Probe("v7_sector_kernel_4_to_8_bytes", "CUDA.v7_packed",
          "  if constexpr (sizeof(T) == VECTOR_BYTES)", "  if constexpr (sizeof(T) >= 4)",
          "v6's kernel with the sector cut for 4- and 8-byte elements, not the realigned one",
          "ragged.cu"),
    Probe("v7_realign_16_rows_a_thread_uint8", "CUDA.v7_packed",
          "constexpr int REALIGN_HALVES = sizeof(T) == 1 ? 2 : 1;",
          "constexpr int REALIGN_HALVES = 1;",
          "uint8's realigned kernel with one thread a 16 x 16 block (288 threads), not two",
          "ragged.cu"),
    Probe("v7_realign_3_blocks_uint8", "CUDA.v7_packed",
          "    SM_THREADS / (2 * CHUNKS * (GROUPS + 2)) < 2 ? 1 : 2;",
          "    3;",
          "the realigned kernel at 3 blocks an SM for uint8 too", "ragged.cu"),
    Probe("v7_realign_2_blocks", "CUDA.v7_packed",
          "constexpr int REALIGN_MIN_BLOCKS = 3;",
          "constexpr int REALIGN_MIN_BLOCKS = 2;",
          "the realigned kernel at 2 blocks an SM for 2- and 4-byte elements too", "ragged.cu"),
    Probe("v7_realign_4_blocks_2byte", "CUDA.v7_packed",
          "constexpr int REALIGN_MIN_BLOCKS = 3;",
          "constexpr int REALIGN_MIN_BLOCKS = 4;",
          "the realigned kernel at 4 blocks an SM for 2- and 4-byte elements", "ragged.cu"),
    Probe("v7_realign_shifts_at_run_time", "CUDA.v7_packed",
          "constexpr bool OCTET_LOADS = sizeof(T) <= 4;",
          "constexpr bool OCTET_LOADS = false;",
          "the realigned kernel choosing each input row's words at run time (load_by_shuffle, "
          "load_pairs), not three 8-byte loads shifted by constants (load_octets)", "ragged.cu"),
    Probe("v7_realign_3_blocks_8byte", "CUDA.v7_packed",
          "constexpr int REALIGN_MIN_BLOCKS<lab::Bytes8> = SM_THREADS / (CHUNKS * (GROUPS + 2));"
          "  // 8 bytes",
          "constexpr int REALIGN_MIN_BLOCKS<lab::Bytes8> = 3;",
          "the realigned kernel at 3 blocks an SM for 8-byte elements, as for 2 and 4",
          "ragged.cu"),
]


class ProbeError(Exception):
    pass


def probe_source(probe, root=ROOT):
    """The step's probe.file with the probe's one line replaced (ProbeError if it is not there
    exactly once)."""
    text = (root / probe.step / probe.file).read_text()
    lines = text.split("\n")
    hits = [i for i, line in enumerate(lines) if line == probe.line]
    if len(hits) != 1:
        raise ProbeError(f"probe {probe.name}: {probe.step}/{probe.file} has the line "
                         f"{probe.line.strip()!r} {len(hits)} times, not once: update the probe")
    lines[hits[0]] = probe.instead
    return "\n".join(lines)


def write_probe(probe, build=BUILD, root=ROOT):
    """build/probes/<name>/: the edited source and the step's Makefile, both reaching common/."""
    folder = build / probe.name
    folder.mkdir(parents=True, exist_ok=True)
    makefile = (root / probe.step / "Makefile").read_text()
    if "include ../common/step.mk" not in makefile:
        raise ProbeError(f"probe {probe.name}: {probe.step}/Makefile does not include "
                         "../common/step.mk")
    relative = os.path.relpath(root / "common", folder)
    (folder / "Makefile").write_text(makefile.replace("include ../common/step.mk",
                                                      f"include {relative}/step.mk"))
    # Every source of the step comes along; its own files (reached through common/ so that
    # exercises get them) are included from the probe's folder, where the edited one is.
    for path in sorted((root / probe.step).glob("*.cu")):
        text = probe_source(probe, root) if path.name == probe.file else path.read_text()
        source = text.replace(f'#include "../common/../{probe.step}/', '#include "').replace(
            '#include "../common/', f'#include "{relative}/')
        target = folder / path.name
        if not target.exists() or target.read_text() != source:
            target.write_text(source)
    return folder


def parse_shape(text):
    try:
        rows, cols = (int(x) for x in text.lower().split("x"))
    except ValueError:
        raise argparse.ArgumentTypeError(f"'{text}': expected ROWSxCOLS, e.g. 8191x8193") from None
    return rows, cols


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--shape", type=parse_shape, default=(8191, 8193))
    parser.add_argument("--dtypes", nargs="+", default=DEFAULT_DTYPES)
    parser.add_argument("--probes", nargs="+", help="only these (default: every probe)")
    parser.add_argument("--results", default=str(ROOT / "results"))
    parser.add_argument("--reps", type=int, default=20)
    parser.add_argument("--list", action="store_true", help="print the probes and exit")
    args = parser.parse_args(argv)
    known = {p.name: p for p in PROBES}
    unknown = [n for n in args.probes or [] if n not in known]
    if unknown:
        print(f"error: unknown probe(s): {' '.join(unknown)} (probes: {' '.join(known)})",
              file=sys.stderr)
        return EXIT_USAGE
    chosen = [known[n] for n in args.probes] if args.probes else PROBES
    if args.list:
        for p in chosen:
            print(f"{p.name:28} {p.step}: {p.what}\n{'':28} {p.line.strip()}  ->  "
                  f"{p.instead.strip()}")
        return 0
    try:
        folders = [write_probe(p) for p in chosen]
    except ProbeError as error:
        print(f"error: {error}", file=sys.stderr)
        return EXIT_USAGE
    failed = []
    for probe, folder in zip(chosen, folders):
        built = subprocess.run(["make", "--no-print-directory", "-C", str(folder), "-j4"],
                               capture_output=True, text=True)
        if built.returncode != 0:
            tail = (built.stdout + built.stderr).strip().splitlines()[-3:]
            print(f"{probe.name}: build FAILED\n  " + "\n  ".join(tail))
            failed.append(probe.name)
    if failed:
        return 1
    results = Path(args.results)
    results.mkdir(parents=True, exist_ok=True)
    csv = results / "probes.csv"
    rows, cols = args.shape
    steps = sorted({p.step for p in chosen})
    programs = [(s, ROOT / s / "transpose") for s in steps]
    programs += [(p.name, f / "transpose") for p, f in zip(chosen, folders)]
    programs.append((LIBRARY, ROOT / LIBRARY / "transpose"))
    runs = Runs()
    for dtype in args.dtypes:
        for label, program in programs:
            if not Path(program).is_file():
                print(f"{label}: not built (make {label})")
                runs.failed.append(label)
                continue
            runs(f"{label} {rows}x{cols} {dtype}",
                 [program, rows, cols, "--dtype", dtype, "--reps", args.reps, "--csv", csv])
    if runs.summary() != 0:
        return 1
    print(f"CSV: {csv}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
