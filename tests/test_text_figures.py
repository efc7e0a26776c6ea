"""The figures the texts quote are the figures in docs/results: each check below rebuilds a quoted
phrase from the CSV it cites and looks for it in the text, so a text that drifts from its data
(or data re-run without the text) fails here. Texts quote results; this file is where a quote is
tied to its row."""
import csv

import pytest

from conftest import ROOT

RESULTS = ROOT / "docs" / "results"


def rows(name):
    with open(RESULTS / name, newline="") as f:
        return list(csv.DictReader(f))


def one(name, **where):
    found = [r for r in rows(name) if all(r[k] == str(v) for k, v in where.items())]
    assert len(found) == 1, f"{name}: {len(found)} rows match {where}"
    return found[0]


def pct(name, **where):
    return float(one(name, **where)["pct_of_ceiling"])


def ms(name, **where):
    return float(one(name, **where)["median_ms"])


CHAPTER2 = "run_all_chapter2.csv"
DTYPES = "dtypes.csv"
V7_BENCH = "h100/v7_bench.csv"
V7_ODD = "h100/v7_odd_shapes.csv"


def glance():
    steps = [("v1", "CUDA.v1"), ("v2", "CUDA.v2"), ("v3", "CUDA.v3"), ("v4", "CUDA.v4"),
             ("v5", "CUDA.v5_unroll"), ("v6", "CUDA.v6_locality"), ("v7", "CUDA.v7_packed")]
    quotes = [f"**{short}** {pct(CHAPTER2, step=step):.0f}%" for short, step in steps]
    quotes.append(f"**cuBLAS geam** {pct(CHAPTER2, step='CUDA.cublas'):.0f}%")
    quotes.append(f"**cuBLASLt** {pct(CHAPTER2, step='CUDA.cublaslt'):.0f}%")
    quotes.append(f"the naive loop {pct(CHAPTER2, step='CPU.omp', variant='naive'):.0f}% of an "
                  "OpenMP copy")
    quotes.append(f"SIMD registers {pct(CHAPTER2, step='CPU.omp', variant='blocked'):.0f}%")
    return [("README.md", q) for q in quotes]


def every_type():
    v6 = {d: pct(DTYPES, step="CUDA.v6_locality", dtype=d) for d in ("uint8", "float16")}
    v7 = [pct(DTYPES, step="CUDA.v7_packed", dtype=d) for d in
          ("uint8", "float16", "bfloat16", "float32", "float64", "complex64", "complex128")]
    torch = {d: ms(DTYPES, step="PyTorch", dtype=d) / ms(DTYPES, step="CUDA.v7_packed", dtype=d)
             for d in ("uint8", "float16", "float32")}
    cpu = {d: pct(DTYPES, step="CPU.omp", variant="blocked", dtype=d)
           for d in ("uint8", "float16", "bfloat16", "float32", "complex128")}
    quotes = [
        f"({v6['uint8']:.0f}% of the copy for uint8, {v6['float16']:.0f}% for the 16-bit types)",
        f"bring every type to {min(v7):.0f}-{max(v7):.0f}%",
        f"{torch['uint8']:.1f}x PyTorch's `x.t().contiguous()` for uint8",
        f"{torch['float16']:.1f}x for float16, {torch['float32']:.1f}x for float32",
        f"moves uint8 at {pct(DTYPES, step='CUDA.cublaslt', dtype='uint8'):.0f}%",
        f"{cpu['float16']:.0f}-{cpu['bfloat16']:.0f}% for the 16-bit\ntypes and "
        f"{cpu['uint8']:.0f}% for uint8",
    ]
    return [("README.md", q) for q in quotes]


def v7_text():
    quotes = []
    for shape in ((8192, 8192), (16384, 16384)):
        for step, label in (("CUDA.v6_locality", "v6"), ("CUDA.v7_packed", "v7")):
            cells = [pct(V7_BENCH, step=step, rows=shape[0], cols=shape[1], dtype=d)
                     for d in ("uint8", "float16", "float32", "float64", "complex128")]
            text = " | ".join(f"{c:.1f}%" for c in cells)
            quotes.append(f"| {shape[0]} x {shape[1]}, {label} | {text}")
    odd = {(s, d): pct(V7_ODD, step=s, dtype=d) for s in ("CUDA.v6_locality", "CUDA.v7_packed")
           for d in ("uint8", "float16", "float32")}
    quotes.append(f"uint8 {odd['CUDA.v7_packed', 'uint8']:.1f}% against v6's "
                  f"{odd['CUDA.v6_locality', 'uint8']:.1f}%")
    quotes.append(f"float16 {odd['CUDA.v7_packed', 'float16']:.1f}% against\n"
                  f"{odd['CUDA.v6_locality', 'float16']:.1f}%")
    quotes.append(f"float32 {odd['CUDA.v7_packed', 'float32']:.1f}% against "
                  f"{odd['CUDA.v6_locality', 'float32']:.1f}%")
    return [("CUDA.v7_packed/README.md", q.replace(" | 104.4%", " | 104.4%*")) for q in quotes]


def v8_text():
    quotes = []
    for name, gpu in (("h100/v8_first.csv", "H100"), ("v8_sweep.csv", "H200")):
        data = rows(name)
        for pipeline, serial in zip(data[0::2], data[1::2]):
            assert pipeline["variant"] == "pipeline" and serial["variant"] == "serial"
            streams, pieces = pipeline["launch"].split(" streams x ")[0], \
                pipeline["launch"].split(" x ")[1].split(" pieces")[0]
            speedup = float(serial["median_ms"]) / float(pipeline["median_ms"])
            quotes.append(
                f"| {gpu} | {pipeline['rows']} x {pipeline['cols']} | {pipeline['dtype']} | "
                f"{streams} x {pieces} | {float(pipeline['median_ms']):.2f} | "
                f"{float(pipeline['pct_of_ceiling']):.1f}% | {float(serial['median_ms']):.2f} | "
                f"{speedup:.2f}x |")
    return [("CUDA.v8_streams/README.md", q) for q in quotes]


def ratio(name, slow, fast, **where):
    return ms(name, step=slow, **where) / ms(name, step=fast, **where)


def chapter1():
    """The README's chapter 1 bullets (float32, docs/results/{run_all,bench,sweep,scaling}.csv)."""
    v6, v5, lib = "CUDA.v6_locality", "CUDA.v5_unroll", "CUDA.cublas"
    shapes = [(8192, 8192), (16384, 16384), (8191, 8193), (1024, 65536), (65536, 1024)]
    bench = [ratio("bench.csv", lib, v6, rows=r, cols=c) for r, c in shapes]
    sweep = {n: ratio("sweep.csv", v5, v6, rows=n, cols=n)
             for n in (256, 512, 1000, 1024, 2048, 8192, 16384)}
    e2e = float(one("run_all.csv", step=v6)["e2e_ms"])
    blocked = pct("run_all.csv", step="CPU.omp", variant="blocked")
    scaled = {t: pct("scaling.csv", variant="blocked", threads=t) for t in (1, 16)}
    quotes = [
        f"from {pct('run_all.csv', step='CUDA.v1'):.1f}% of the copy ceiling\n"
        f"  (v1) to {pct('run_all.csv', step=v6):.1f}% (v6)",
        f"beats `cublasSgeam` ({ratio('run_all.csv', lib, v6):.2f}x)",
        f"v6 beats cuBLAS on every shape tried, {min(bench):.2f}x to {max(bench):.2f}x",
        f"reaches {pct('bench.csv', step=v6, rows=16384, cols=16384):.1f}% of the\n  copy at "
        "16384 x 16384",
        f"cost cuBLAS {100 - pct('bench.csv', step=lib, rows=8191, cols=8193):.0f} points of the "
        f"copy and v6 {100 - pct('bench.csv', step=v6, rows=8191, cols=8193):.0f}",
        f"From 2048 x 2048 on v6 leads ({sweep[2048]:.2f}x,\n  then {sweep[8192]:.2f}x at 8192 "
        f"and {sweep[16384]:.2f}x at 16384)",
        f"bus take {e2e - ms('run_all.csv', step=v6):.1f} ms of v6's {e2e:.2f} ms end to end, "
        f"against {ms('run_all.csv', step='CPU.omp', variant='blocked'):.2f} ms",
        f"reaches {scaled[16]:.0f}-{blocked:.0f}% of the OpenMP copy at 16 threads",
        f"and {scaled[1]:.0f}% at 1 thread; the naive loop "
        f"{pct('run_all.csv', step='CPU.omp', variant='naive'):.0f}%",
    ]
    assert max(abs(sweep[n] - 1) for n in (256, 512, 1000, 1024)) < 0.10  # "within 10%"
    return [("README.md", q) for q in quotes]


def cpu_text():
    naive_16 = pct("run_all.csv", step="CPU.omp", variant="naive")
    naive_1 = pct("scaling.csv", variant="naive", threads=1)
    return [("CPU.omp/README.md", f"Measured: {naive_16:.1f}% of the (streaming) copy at 16\n"
             f"threads in `make run-all`, {naive_1:.1f}% at one thread in `make scaling`")]


CHECKS = glance() + every_type() + v7_text() + v8_text() + chapter1() + cpu_text()


@pytest.mark.parametrize("text,quote", CHECKS, ids=lambda v: v[:60])
def test_a_quoted_figure_is_the_figure_in_its_csv(text, quote):
    assert quote in (ROOT / text).read_text(), f"{text} should quote: {quote!r}"
