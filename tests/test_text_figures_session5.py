"""The figures the texts quote from the fifth session's runs (two H200s), each rebuilt from the file
it cites and looked for in the text (line breaks and runs of spaces count as one space):
- CUDA.v9_multigpu/README.md: the table `make multigpu` made (docs/results/session5/multigpu.csv,
  rebuilt by transpose_lab.plot_multigpu as the README says), the placement change between the
  first and second calls, the --chunks x --place runs (call2_58bb842/mgdiag.csv), and the copy
  engines' exchange (call3_4ce7170/mgsweep_*.log);
- CUDA.v8_streams/README.md: the tiles (call3_4ce7170/tileprobe.csv)."""
import re

import pytest

from conftest import ROOT
from figures import RESULTS, flat, rows
from transpose_lab.plot_multigpu import markdown_table, multigpu_rows
from transpose_lab.results_csv import read_results, usable_rows

S5 = "session5/"
MULTIGPU = RESULTS / S5 / "multigpu.csv"


def runs():
    return multigpu_rows(usable_rows(read_results(MULTIGPU), MULTIGPU))


def run(gpus, mode, n, dtype):
    (found,) = [r for r in runs() if (r["gpus"], r["mode"], r["shape"], r["dtype"]) ==
                (gpus, mode, (n, n), dtype)]
    return found


def two_gpu_pct(name, n, dtype):
    (found,) = [r for r in rows(name) if r["variant"] == "gpus=2 single-process"
                and int(r["rows"]) == n and r["dtype"] == dtype]
    return f"{float(found['pct_of_ceiling']):.1f}%"


def span(values, unit):
    return f"{min(values):.0f}-{max(values):.0f}{unit}"


def v9_quotes():
    quotes = markdown_table(runs()).splitlines()
    two = [r for r in runs() if r["gpus"] == 2]
    one = run(1, "single-process", 8192, "float32")
    c128 = run(1, "single-process", 32768, "complex128")
    mpi8k, single8k = run(2, "mpi", 8192, "float32"), run(2, "single-process", 8192, "float32")
    f32 = run(2, "single-process", 32768, "float32")
    quotes += [
        f"({one['ms']:.4f} against {one['one_gpu_ms']:.4f} ms at 8192² float32, "
        f"{c128['ms']:.4f} against {c128['one_gpu_ms']:.4f} ms at 32768² complex128)",
        f"({min(r['one_gpu_ms'] / r['ms'] for r in two):.2f}x to "
        f"{max(r['one_gpu_ms'] / r['ms'] for r in two):.2f}x of v7's speed)",
        f"1 GiB in {f32['ceiling_ms']:.2f} ms at 32768² float32",
        "The step reaches "
        + span([r["pct"] for r in two if r["mode"] == "single-process"], "%")
        + " of the all-to-all in one process, "
        + span([r["pct"] for r in two if r["mode"] == "mpi"], "%") + " under MPI",
        f"({mpi8k['ms']:.4f} against {single8k['ms']:.4f} ms)",
    ]
    for label, name in (("60ab07a", "call1_60ab07a/multigpu.csv"),
                        ("58bb842", "call2_58bb842/multigpu.csv")):
        cells = [two_gpu_pct(S5 + name, n, d) for d, n in
                 (("float32", 8192), ("float32", 32768), ("complex128", 8192),
                  ("complex128", 32768))]
        quotes.append(f"({label}) | " + " | ".join(cells) + " |")
    diag = {(r["launch"].split(",")[1].strip(), r["launch"].split(" chunks")[0].split()[-1]): r
            for r in rows(S5 + "call2_58bb842/mgdiag.csv")}
    for place, label in (("placed by the SMs", "placed by the SMs"),
                         ("placed by 2D copies", "placed by 2D copies")):
        cells = [f"{float(diag[place, c]['median_ms']):.4f} ms, "
                 f"{float(diag[place, c]['pct_of_ceiling']):.1f}%" for c in ("1", "4", "16", "64")]
        quotes.append(f"| {label} | " + " | ".join(cells) + " |")
    sm, ce = diag["placed by the SMs", "1"], diag["placed by 2D copies", "1"]
    quotes.append(f"({float(sm['median_ms']):.2f} against {float(ce['median_ms']):.2f} ms)")
    sm, ce = diag["placed by the SMs", "16"], diag["placed by 2D copies", "16"]
    quotes.append(f"({float(ce['median_ms']):.2f}\nagainst {float(sm['median_ms']):.2f} ms)")
    ceilings = [float(2 * 32768 ** 2 * 4 / float(r["ceiling_gbps"]) / 1e6) for r in diag.values()]
    quotes.append(f"the all-to-all took {min(ceilings):.2f}-{max(ceilings):.2f} ms in every run")
    # The copy engines' exchange: the step's and the ceiling's lines of each run's report.
    text = (RESULTS / S5 / "call3_4ce7170/mgsweep_32768_float32_ce.log").read_text()
    a2a = [float(x) for x in re.findall(r"^  all-to-all .*?\s([\d.]+)\s+[\d.]+\s+100\.0%", text,
                                        re.M)]
    pct = [float(x) for x in re.findall(r"^  gpus=2 .*?\s[\d.]+\s+[\d.]+\s+([\d.]+)%", text, re.M)]
    assert len(a2a) == len(pct) == 3
    quotes += [f"took {min(a2a):.1f}-{max(a2a):.1f} ms instead of 3.2 ms",
               f"reached {min(pct):.0f}-{max(pct):.0f}% of a ceiling"]
    return quotes


def v8_quotes():
    quotes = []
    for r in rows(S5 + "call3_4ce7170/tileprobe.csv"):
        if r["variant"] != "pipeline":
            continue
        pieces = re.search(r"x (\d+) pieces of ([^,]+),", r["launch"])
        kind = "tiles" if "columns" in pieces.group(2) else "bands"
        ranges = 1 if kind == "bands" else int(r["cols"]) // int(
            re.search(r"x (\d+) columns", pieces.group(2)).group(1))
        quotes.append(f"| {r['rows']} x {r['cols']} float32 | {ranges} | {pieces.group(1)} {kind} "
                      f"of {pieces.group(2)} | {float(r['pct_of_ceiling']):.1f}% | "
                      f"{float(r['ceiling_gbps']):.1f} |")
    return quotes


def readme_quotes():
    single = [r for r in runs() if r["gpus"] == 2 and r["mode"] == "single-process"]
    speed = [r["one_gpu_ms"] / r["ms"] for r in single]
    return [f"it reaches {span([r['pct'] for r in single], '%')} of the NCCL all-to-all",
            f"two GPUs are {min(speed):.2f}-{max(speed):.2f}x as fast as one"]


CHECKS = ([("CUDA.v9_multigpu/README.md", q) for q in v9_quotes()]
          + [("README.md", q) for q in readme_quotes()]
          + [("CUDA.v8_streams/README.md", q) for q in v8_quotes()])


@pytest.mark.parametrize("text,quote", CHECKS, ids=lambda v: v[:60])
def test_a_quoted_session5_figure_is_the_figure_in_its_file(text, quote):
    assert flat(quote) in flat((ROOT / text).read_text()), f"{text} should quote: {quote!r}"
