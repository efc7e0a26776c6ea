"""The figures the texts quote from the fourth session's runs, each rebuilt from the file it cites
and looked for in the text (line breaks and runs of spaces count as one space):
- CUDA.v7_packed/README.md: Nsight Compute's section output (docs/results/session4/ncu/), the
  complex128 probe (session4/c128_probe.csv) and the H100's complex128 bench
  (h100/session4/bench_complex128.csv);
- CUDA.v8_streams/README.md: the default way down (session4/v8auto.csv) and the out-of-core probes
  (session4/oocprobe.csv);
- CPU.omp/README.md: the Xeon probes (h100/session4/cpuprobe_*.csv)."""
import re

import pytest

from conftest import ROOT
from figures import RESULTS, flat, rows

NCU = "session4/ncu/ncu_{}.txt"


def ncu_sections(name):
    """{metric name: value} of ncu's section output (the lines 'Name   [unit]   value')."""
    found = {}
    for line in (RESULTS / NCU.format(name)).read_text().splitlines():
        match = re.match(r"^    (\S.*?\S)\s{2,}(?:\S+\s{2,})?([\d,]+(?:\.\d+)?)\s*$", line)
        if match:
            found.setdefault(match.group(1), float(match.group(2).replace(",", "")))
    return found


def v7_quotes():
    odd = ncu_sections("CUDA.v7_packed_8191x8193_uint8")
    aligned = ncu_sections("CUDA.v7_packed_8192x8192_uint8")
    half = ncu_sections("CUDA.v7_packed_8191x8193_float16")
    v6 = ncu_sections("CUDA.v6_locality_8191x8193_uint8")
    mi = "Executed Instructions"
    quotes = [
        f"ran {odd['Duration']:.1f} us and executed {odd[mi] / 1e6:.1f} million warp instructions",
        f"in {aligned['Duration']:.1f} us with {aligned[mi] / 1e6:.1f} million",
        f"{odd[mi] / aligned[mi]:.1f} times the instructions for the same",
        f"{odd['Registers Per Thread']:.0f} registers a thread and "
        f"{odd['Dynamic Shared Memory Per Block']:.0f} KB of shared memory a block",
        f"{odd['Achieved Occupancy']:.1f}% achieved occupancy",
        f"{odd['Active Warps Per Scheduler']:.1f} warps a scheduler of which "
        f"{odd['Eligible Warps Per Scheduler']:.2f} were eligible",
        f"{odd['Issued Warp Per Scheduler']:.2f} instructions issued a cycle per scheduler",
        f"waiting {odd['Warp Cycles Per Issued Instruction']:.1f} cycles",
        f"DRAM was busy {odd['DRAM Throughput']:.1f}% of its peak",
        f"({v6['Issued Warp Per Scheduler']:.2f} a cycle at {v6['Achieved Occupancy']:.1f}% "
        f"occupancy) but needs {v6[mi] / 1e6:.1f} million instructions and {v6['Duration']:.1f} us",
        f"{half[mi] / 1e6:.1f} million warp instructions for twice uint8's bytes",
        f"{half['Registers Per Thread']:.0f} registers, 3 blocks an SM, "
        f"{half['Achieved Occupancy']:.1f}% achieved occupancy, "
        f"{half['Issued Warp Per Scheduler']:.2f} instructions issued a cycle, DRAM "
        f"{half['DRAM Throughput']:.1f}% busy",
    ]
    assert odd["Local Memory Spilling Requests"] == 0  # "No spills"
    assert half[mi] / odd[mi] == pytest.approx(2, rel=0.05)  # "the same per byte"
    probe = {(r["step"], r["rows"], r["cols"]): float(r["pct_of_ceiling"])
             for r in rows("session4/c128_probe.csv")}
    wide, square = ("1024", "65536"), ("8192", "8192")
    quotes += [
        f"{probe['v7_elements_for_16_byte', *wide]:.1f}% of the copy at 1024 x 65536 (packed "
        f"{probe['CUDA.v7_packed', *wide]:.1f}%, geam {probe['CUDA.cublas', *wide]:.1f}%)",
        f"{probe['v7_elements_for_16_byte', *square]:.1f}% against "
        f"{probe['CUDA.v7_packed', *square]:.1f}% at 8192 x 8192, where geam had "
        f"{probe['CUDA.cublas', *square]:.1f}%",
    ]
    bench = {}
    for r in rows("h100/session4/bench_complex128.csv"):
        bench.setdefault((r["rows"], r["cols"]), {})[r["step"]] = r
    ratios = {shape: min(float(r["median_ms"]) for step, r in by.items() if step != "CUDA.v7_packed")
              / float(by["CUDA.v7_packed"]["median_ms"]) for shape, by in bench.items()}
    below = sum(v < 1 for v in ratios.values())
    geam, v7 = bench[square]["CUDA.cublas"], bench[square]["CUDA.v7_packed"]
    quotes += [
        f"{min(ratios.values()):.4f}x to {max(ratios.values()):.4f}x the best library",
        f"{'three' if below == 3 else below} of them below 1 before rounding",
        f"({float(v7['pct_of_ceiling']):.1f}% against geam's {float(geam['pct_of_ceiling']):.1f}% "
        f"at 8192 x 8192, {ratios[square]:.3f}x)",
    ]
    return quotes


def v8_quotes():
    runs = rows("session4/v8auto.csv")
    main = [r for r in runs if r["variant"] != "serial"]
    # Per shape: the default, --down kernel, --down copy-engine, in that order.
    by = {}
    for r in main:
        by.setdefault((r["rows"], r["dtype"]), []).append(r)
    p = {k: [float(r["pct_of_ceiling"]) for r in v] for k, v in by.items()}
    assert [r["variant"] for r in by["8191", "float16"]] == [
        "pipeline", "pipeline", "copy-engine-down"]
    ceiling = [float(r["ceiling_gbps"]) for r in by["8192", "uint8"]]
    ooc = {(r["rows"], r["launch"].split(" pieces")[0].split()[-1]): r
           for r in rows("session4/oocprobe.csv") if r["variant"] == "pipeline"}
    pct = {k: float(r["pct_of_ceiling"]) for k, r in ooc.items()}
    return [
        f"took 2D copies by default, {p['8191', 'float16'][0]:.1f}% of the ceiling, against "
        f"{p['8191', 'float16'][1]:.1f}% with `--down kernel` and {p['8191', 'float16'][2]:.1f}% "
        f"with `--down copy-engine`",
        f"reached {p['8191', 'float32'][0]:.1f}% (the default, then still the SMs) and "
        f"{p['8191', 'float32'][1]:.1f}% written by the SMs, {p['8191', 'float32'][2]:.1f}% by 2D",
        f"{p['8192', 'uint8'][0]:.1f}% (default) and {p['8192', 'uint8'][1]:.1f}% (`--down "
        f"kernel`), the same path in two processes, against {p['8192', 'uint8'][2]:.1f}% by 2D",
        f"moved from {min(ceiling[:2]):.1f} to {max(ceiling[:2]):.1f} GB/s",
        f"over 32, 64 and 128 pieces: {pct['16384', '32']:.1f}%, {pct['16384', '64']:.1f}%, "
        f"{pct['16384', '128']:.1f}%",
        f"2 KiB segments): {pct['32768', '64']:.1f}%",
        f"4 KiB segments): {pct['65536', '64']:.1f}%",
        f"({float(ooc['32768', '64']['ceiling_gbps']):.1f} and "
        f"{float(ooc['65536', '64']['ceiling_gbps']):.1f} GB/s at the two larger squares)",
        f"gave {pct['16384', '64']:.1f}% here",
    ]


def cpu_quotes():
    def runs(name, dtype):
        found = [float(r["pct_of_ceiling"]) for r in rows(f"h100/session4/cpuprobe_{name}.csv")
                 if r["dtype"] == dtype]
        return ", ".join(f"{v:.1f}%" for v in found)

    def span(name, dtype):
        found = [float(r["pct_of_ceiling"]) for r in rows(f"h100/session4/cpuprobe_{name}.csv")
                 if r["dtype"] == dtype]
        return f"{min(found):.1f}-{max(found):.1f}%"

    return [
        f"as it is: uint8 {runs('base', 'uint8')}; float16 {runs('base', 'float16')}; float32 "
        f"{span('base', 'float32')}; float64\n  {span('base', 'float64')}",
        f"uint8 {runs('plain', 'uint8')}, float16 {runs('plain', 'float16')}",
        f"uint8 {runs('band64', 'uint8')}, float16 {runs('band64', 'float16')}",
        f"uint8 {runs('plain128', 'uint8')}, float16 {runs('plain128', 'float16')}",
        f"uint8 with 8 threads instead of 16: {runs('8threads', 'uint8')}",
    ]


CHECKS = ([("CUDA.v7_packed/README.md", q) for q in v7_quotes()]
          + [("CUDA.v8_streams/README.md", q) for q in v8_quotes()]
          + [("CPU.omp/README.md", q) for q in cpu_quotes()])


@pytest.mark.parametrize("text,quote", CHECKS, ids=lambda v: v[:60])
def test_a_quoted_session4_figure_is_the_figure_in_its_file(text, quote):
    assert flat(quote) in flat((ROOT / text).read_text()), f"{text} should quote: {quote!r}"
