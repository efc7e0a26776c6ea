"""The figures the texts quote are the figures in docs/results: each check below rebuilds a quoted
phrase from the CSV it cites and looks for it in the text, so a text that drifts from its data
(or data re-run without the text) fails here. Texts quote results; this file is where a quote is
tied to its row. Where a text rounds or bounds a figure ("within 0.5%", "fifty times"), an assert
holds the bound. docs/results/dev-machine/ is the 2-core development machine's CPU runs
(tools/dev_machine_cpu.sh)."""
import pytest

from conftest import ROOT
from figures import RESULTS, ms, ncu_metrics, one, pct, rows


CHAPTER2 = "run_all_chapter2.csv"
DTYPES = "dtypes.csv"
V7_BENCH = "h100/v7_bench.csv"
V7_ODD = "h100/v7_odd_shapes.csv"


def glance():
    steps = [("v1", "CUDA.v1"), ("v2", "CUDA.v2"), ("v3", "CUDA.v3"), ("v4", "CUDA.v4"),
             ("v5", "CUDA.v5_unroll"), ("v6", "CUDA.v6_locality"), ("v7", "CUDA.v7_packed")]
    variant = {"CUDA.v2": "read-coalesced"}  # v2's default; its other variant is quoted below
    def default(step):
        return {"variant": variant[step]} if step in variant else {}
    quotes = [f"**{short}** {pct(CHAPTER2, step=step, **default(step)):.0f}%"
              for short, step in steps]
    quotes.append(f"(`--variant write-coalesced`: "
                  f"{pct(CHAPTER2, step='CUDA.v2', variant='write-coalesced'):.0f}%:")
    quotes.append(f"**copy kernel** {pct(CHAPTER2, step='CUDA.copy'):.0f}%")
    other = "run_all_other_kinds_chapter2.csv"
    v8_ms = {v: ms(other, step="CUDA.v8_streams", variant=v) for v in ("pipeline", "serial")}
    quotes.append(f"reach {pct(other, step='CUDA.v8_streams', variant='pipeline'):.0f}% of the "
                  f"bus in\n  both directions at once, {v8_ms['serial'] / v8_ms['pipeline']:.2f}x "
                  "the serial")
    v9 = one(other, step="CUDA.v9_multigpu")
    assert v9["variant"] == "gpus=1 single-process"
    assert abs(float(v9["median_ms"]) / ms(CHAPTER2, step="CUDA.v7_packed") - 1) < 0.05  # "as fast"
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
    """The first version's unaligned path (h100/v7_odd_shapes.csv); the current results are held
    by test_text_figures_v7.py."""
    odd = {(s, d): pct(V7_ODD, step=s, dtype=d) for s in ("CUDA.v6_locality", "CUDA.v7_packed")
           for d in ("uint8", "float16", "float32")}
    quotes = [f"uint8 {odd['CUDA.v7_packed', 'uint8']:.1f}% against v6's "
              f"{odd['CUDA.v6_locality', 'uint8']:.1f}%",
              f"float16 {odd['CUDA.v7_packed', 'float16']:.1f}% against\n"
              f"{odd['CUDA.v6_locality', 'float16']:.1f}%",
              f"float32 {odd['CUDA.v7_packed', 'float32']:.1f}% against "
              f"{odd['CUDA.v6_locality', 'float32']:.1f}%"]
    return [("CUDA.v7_packed/README.md", q) for q in quotes]


def v9_text():
    quotes = []
    for n in (8192, 16384):
        v9, v7 = (one("v9_one_gpu.csv", step=s, rows=n) for s in ("CUDA.v9_multigpu",
                                                                    "CUDA.v7_packed"))
        assert abs(float(v9["median_ms"]) / float(v7["median_ms"]) - 1) < 0.05  # the target
        quotes.append(f"| `--gpus 1`, H200 | {n} x {n} fp32 | {float(v9['median_ms']):.4f} | - "
                      f"| - | - | - | {float(v7['median_ms']):.4f} |")
        v9, v7 = (one("session3/multigpu.csv", step=s, rows=n) for s in ("CUDA.v9_multigpu",
                                                                           "CUDA.v7_packed"))
        assert abs(float(v9["median_ms"]) / float(v7["median_ms"]) - 1) < 0.003  # "within 0.3%"
        quotes.append(f"| `make multigpu`, H200 | {n} x {n} fp32 | {float(v9['median_ms']):.4f} "
                      f"| - | - | - | - | {float(v7['median_ms']):.4f} |")
    return [("CUDA.v9_multigpu/README.md", q) for q in quotes]


def cublaslt_text():
    """CUDA.cublaslt/README.md's summary of the bench of every type (the code of 7ebb31c on both
    GPUs; session 2's bench_types.csv is no longer quoted)."""
    h200, h100 = rows("session3/bench_types.csv"), rows("h100/session3/bench_types.csv")

    def got(bench, step, dtypes, shapes=None):
        return [float(r["pct_of_ceiling"]) for r in bench if r["step"] == step
                and r["dtype"] in dtypes and (shapes is None or (r["rows"], r["cols"]) in shapes)]

    def span(bench, step, dtypes, shapes=None):
        values = got(bench, step, dtypes, shapes)
        return f"{min(values):.1f}-{max(values):.1f}%"

    odd = {("8191", "8193")}
    aligned = {("8192", "8192"), ("16384", "16384"), ("1024", "65536"), ("65536", "1024")}
    wide = ("float32", "float64", "complex64", "complex128")
    lt, geam = "CUDA.cublaslt", "CUDA.cublas"
    quotes = [f"uint8 at {span(h200, lt, ['uint8'])} of the copy on the H200 "
              f"({span(h100, lt, ['uint8'])} on the\n  H100)",
              f"the 16-bit types at {span(h200, lt, ['float16', 'bfloat16'])} "
              f"({span(h100, lt, ['float16', 'bfloat16'])})",
              f"({span(h200, lt, ['float32'], aligned)} against "
              f"{span(h200, geam, ['float32'], aligned)} on the four aligned shapes)",
              f"({span(h100, lt, ['float32'], aligned)}\n  against "
              f"{span(h100, geam, ['float32'], aligned)}) and ahead at 65536 x 1024",
              f"({span(h200, lt, wide, odd)} on the H200, {span(h100, lt, wide, odd)} on the H100)"]
    # "trails geam for float32" on the H200 (every aligned shape), "ahead at 65536 x 1024" on the
    # H100 and behind on the other three; "at 8191 x 8193 it trails for every 4- to 16-byte type"
    for shape in aligned:
        behind = got(h200, lt, ["float32"], {shape}) < got(h200, geam, ["float32"], {shape})
        assert behind
        ahead = got(h100, lt, ["float32"], {shape}) > got(h100, geam, ["float32"], {shape})
        assert ahead == (shape == ("65536", "1024"))
    for bench in (h200, h100):
        for d in wide:
            assert got(bench, lt, [d], odd) < got(bench, geam, [d], odd)
        assert not [r for r in bench if r["step"] == geam and r["dtype"] in ("uint8", "float16",
                                                                             "bfloat16")]
    return [("CUDA.cublaslt/README.md", q) for q in quotes]


def instructor_v7():
    key = {(s, d): pct(DTYPES, step=s, dtype=d) for s in ("CUDA.v6_locality", "CUDA.v7_packed")
           for d in ("uint8", "float16", "complex128")}
    conflicts = {s: [int(ncu_metrics(f"ncu/ncu_{s}_uint8.csv")[
                         f"l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_{op}.sum"])
                     for op in ("ld", "st")] for s in ("CUDA.v6_locality", "CUDA.v7_packed")}
    v6, v7 = conflicts["CUDA.v6_locality"], conflicts["CUDA.v7_packed"]
    quotes = [f"{key['CUDA.v7_packed', 'complex128']:.2f}% of the copy against v6's "
              f"{key['CUDA.v6_locality', 'complex128']:.2f}%",
              f"went from {key['CUDA.v6_locality', 'uint8']:.2f}% to\n   "
              f"{key['CUDA.v7_packed', 'uint8']:.2f}%",
              f"counts {v7[0]:,} load and {v7[1]:,} store bank conflicts for v7's uint8 kernel "
              f"against\n   {v6[0]:,} and {v6[1]:,} for v6's",
              f"reaches {key['CUDA.v7_packed', 'float16']:.2f}% of the copy for float16",
              f"padded tile reached {key['CUDA.v6_locality', 'float16']:.2f}%"]
    return [("docs/instructor.md", q) for q in quotes]


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


def readme_more():
    """README.md: the rest of its quoted figures (chapter 1 margins, the L2 flush, every type)."""
    bench = {(r, c): ratio("bench.csv", "CUDA.cublas", "CUDA.v6_locality", rows=r, cols=c)
             for r, c in ((8192, 8192), (16384, 16384), (8191, 8193), (1024, 65536),
                          (65536, 1024))}
    assert max(bench, key=bench.get) == (8191, 8193)  # "the largest margin, by a hair"
    assert f"{bench[1024, 65536]:.2f}" == f"{bench[65536, 1024]:.2f}" == \
        f"{bench[8191, 8193]:.2f}"  # "as on the two thin shapes"
    v6_over = [ms(DTYPES, step="CUDA.v6_locality", dtype=d) / ms(DTYPES, step="CUDA.v7_packed",
                                                                  dtype=d) for d in DTYPE_NAMES]
    cpu = [pct(DTYPES, step="CPU.omp", variant="blocked", dtype=d)
           for d in ("float32", "float64", "complex64", "complex128")]
    dev = dev_blocked()
    quotes = [
        f"({bench[8191, 8193]:.2f}x, as on the two thin shapes)",
        f"v6 measured {pct('run_all.csv', step='CUDA.v6_locality'):.1f}% of the copy before it, "
        f"in `run_all.csv`, and {pct(CHAPTER2, step='CUDA.v6_locality'):.1f}% after",
        f"{min(v6_over):.2f}-{max(v6_over):.2f}x v6",
        f"{min(cpu):.0f}-{max(cpu):.0f}% for the 4- to 16-byte types",
        f"{shapes_log_range(0, 3, 'copy_gbps', 0)} GB/s, `cpu_shapes.log`), and "
        f"{dev[2]} at 2 threads and {dev[1]}\n  at 1 on the 2-core AMD EPYC",
    ]
    # The glance's "93-99% for every element type" is every_type()'s range, quoted again.
    v7 = [pct(DTYPES, step="CUDA.v7_packed", dtype=d) for d in DTYPE_NAMES]
    quotes.append(f"accesses, and {min(v7):.0f}-{max(v7):.0f}% for every element type")
    return [("README.md", q) for q in quotes]


DTYPE_NAMES = ("uint8", "float16", "bfloat16", "float32", "float64", "complex64", "complex128")
DEV = "dev-machine/"


def span(values, digits=1, unit="%"):
    """'lo-hi%' of a list of figures, as the texts write a range."""
    lo, hi = f"{min(values):.{digits}f}", f"{max(values):.{digits}f}"
    return f"{lo}{unit}" if lo == hi else f"{lo}-{hi}{unit}"


def dev_blocked():
    """The dev machine's float32 blocked runs at 8192: {threads: 'lo-hi%'}."""
    found = {}
    for row in rows(DEV + "blocked.csv"):
        found.setdefault(int(row["threads"]), []).append(float(row["pct_of_ceiling"]))
    return {t: span(v) for t, v in found.items()}


def shapes_log():
    """docs/results/cpu_shapes.log, one entry per program run: (shape label, blocked % of copy,
    blocked GB/s, copy GB/s). The first four runs are 8192 x 8192 (three at 16 threads, then one
    at 1 thread) and carry no label; the others follow a 'ROWS COLS' line."""
    runs, label = [], "8192 8192"
    for line in (RESULTS / "cpu_shapes.log").read_text().splitlines():
        words = line.split()
        if len(words) == 2 and all(w.isdigit() for w in words):
            label = line.strip()
        elif words[:1] == ["blocked"]:
            blocked = (float(words[-4]), float(words[-3].rstrip("%")))  # GB/s, % of copy
        elif words[:1] == ["copy"]:
            runs.append({"shape": label, "gbps": blocked[0], "pct": blocked[1],
                         "copy_gbps": float(words[-4])})
    assert len(runs) == 9, runs
    return runs


def shapes_log_range(first, last, key, digits):
    return span([run[key] for run in shapes_log()[first:last]], digits, unit="")


def cpu_more():
    """CPU.omp/README.md: the Xeon runs (run_all, scaling, cpu_shapes.log, dtypes.csv of both
    machines) and the 2-core development machine (docs/results/dev-machine/)."""
    log = shapes_log()
    at = {run["shape"]: run["pct"] for run in log[4:]}
    xeon_8192 = span([run["pct"] for run in log[:3]])
    naive, blocked = (one("run_all.csv", step="CPU.omp", variant=v) for v in ("naive", "blocked"))
    scale = {(r["variant"], int(r["threads"])): r for r in rows("scaling.csv")}
    threads = (1, 2, 4, 8, 16)
    h100 = {d: pct("h100/dtypes.csv", step="CPU.omp", variant="blocked", dtype=d)
            for d in DTYPE_NAMES}
    h200 = {d: pct(DTYPES, step="CPU.omp", variant="blocked", dtype=d) for d in DTYPE_NAMES}
    dev = {d: pct(DEV + "dtypes.csv", dtype=d) for d in DTYPE_NAMES}
    dev_ms = {t: [float(r["median_ms"]) for r in rows(DEV + f"blocked{t}.csv")
                  if r["threads"] == "2"] for t in ("", "_plain")}
    dev_copy = [float(r["ceiling_gbps"]) for r in rows(DEV + "blocked.csv") if r["threads"] == "2"]
    odd = {(r["rows"], r["cols"]): float(r["median_ms"]) for r in rows(DEV + "naive_odd.csv")}
    one_thread = scale["blocked", 1]
    quotes = [
        f"copy at 8192 x 8192, whose output rows lie 32 KiB apart, but {at['12000 12000']:.1f}% at "
        f"12000 x 12000",
        f"{xeon_8192} of the\ncopy at 8192 x 8192",
        f"{at['16384 16384']:.1f}% at 16384 x 16384 (64 KiB apart)",
        f"at {h100['uint8']:.1f}% (uint8), {h100['float16']:.1f}% (2 bytes), "
        f"{h100['float64']:.1f}% (8 bytes) and {h100['complex128']:.1f}%\n(16 bytes)",
        f"reached {h200['uint8']:.1f}%\n(uint8), {h200['float16']:.1f}% (float16) and "
        f"{h200['bfloat16']:.1f}% (bfloat16) of the copy, and the 4- to 16-byte types "
        f"{min(h200[d] for d in DTYPE_NAMES[3:]):.0f}-{max(h200[d] for d in DTYPE_NAMES[3:]):.0f}%",
        "uint8 {:.1f}%, float16 {:.1f}%,\nbfloat16 {:.1f}%, float32 {:.1f}%, float64 {:.1f}%, "
        "complex64 {:.1f}%, complex128 {:.1f}% of the copy".format(*(dev[d] for d in DTYPE_NAMES)),
        f"took {span(dev_ms[''], unit=' ms')} with streaming stores and "
        f"{span(dev_ms['_plain'], unit=' ms')} with\n`LAB_STREAMING_STORES=off`",
        f"but at {at['8191 8193']:.1f}% of the copy instead of {xeon_8192} on the Xeon",
        f"naive {float(naive['median_ms']):.1f} ms ({float(naive['gbps']):.1f} GB/s, "
        f"{float(naive['pct_of_ceiling']):.1f}% of the copy), blocked "
        f"{float(blocked['median_ms']):.2f} ms ({float(blocked['gbps']):.1f} GB/s, "
        f"{float(blocked['pct_of_ceiling']):.1f}%),\n"
        f"{float(naive['median_ms']) / float(blocked['median_ms']):.1f}x faster. The streaming "
        f"copy itself ran at {float(blocked['ceiling_gbps']):.1f} GB/s.",
        "| blocked, ms | " + " | ".join(
            f"{float(scale['blocked', t]['median_ms']):.3g}" for t in threads) + " |",
        "| blocked, % of copy | " + " | ".join(
            f"{float(scale['blocked', t]['pct_of_ceiling']):.1f}%" for t in threads) + " |",
        "| naive, ms | " + " | ".join(
            f"{float(scale['naive', t]['median_ms']):.1f}" for t in threads) + " |",
        "| copy, GB/s | " + " | ".join(
            f"{float(scale['blocked', t]['ceiling_gbps']):.1f}" for t in threads) + " |",
        f"a single thread copies at only\n{float(one_thread['ceiling_gbps']):.1f} GB/s",
        f"keeps speeding up with threads "
        f"({float(one_thread['median_ms']) / float(scale['blocked', 16]['median_ms']):.1f}x at 16)",
        f"At one thread the\ntranspose is within {100 - float(one_thread['pct_of_ceiling']):.0f}% "
        "of the copy",
        f"The naive loop scales "
        f"({float(scale['naive', 1]['median_ms']) / float(scale['naive', 16]['median_ms']):.1f}x "
        "at 16)",
        "gave {:.1f}%, {:.1f}% and {:.1f}% against a copy that ran at\n".format(
            *(run["pct"] for run in log[:3]))
        + f"{shapes_log_range(0, 3, 'copy_gbps', 0)} GB/s there "
        f"({shapes_log_range(0, 3, 'gbps', 0)} GB/s of transpose), and {log[3]['pct']:.1f}% at "
        "one thread",
        f"other shapes gave {at['16384 16384']:.1f}%\n(16384 x 16384, output rows 64 KiB apart), "
        f"{at['12000 12000']:.1f}% (12000 x 12000), {at['65536 1024']:.1f}% (65536 x 1024), "
        f"{at['1024 65536']:.1f}%\n(1024 x 65536, output rows 4 KiB apart) and "
        f"{at['8191 8193']:.1f}% (8191 x 8193, plain stores)",
        f"five runs at 2 threads gave\n{dev_blocked()[2]} of the copy and five at one thread "
        f"{dev_blocked()[1]}",
        f"The copy itself ran at {span(dev_copy, unit=' GB/s')} at 2 threads",
        f"({odd['4096', '4096']:.1f} ms against {odd['4095', '4097']:.1f} ms on the 2-core "
        "development\n   machine",
        f"With one thread the blocked variant is within "
        f"{100 - float(one_thread['pct_of_ceiling']):.0f}% of the copy; with 16 it is at about "
        f"{float(scale['blocked', 16]['pct_of_ceiling']):.0f}%",
    ]
    assert float(scale["naive", 1]["median_ms"]) / float(one_thread["median_ms"]) > 45  # "fifty"
    return [("CPU.omp/README.md", q) for q in quotes]


def profiled(step, column):
    return int(float(next(r for r in rows("profile.csv") if r["step"] == step)[column]))


def cuda_texts():
    """CUDA.v1, v3-v6 READMEs: the prose around their generated tables (run_all.csv,
    profile.csv, sweep.csv, bench.csv, and both GPUs' chapter 2 files)."""
    v = {s: one("run_all.csv", step=s) for s in ("CUDA.v1", "CUDA.v2", "CUDA.v3", "CUDA.v4",
                                                 "CUDA.v5_unroll", "CUDA.v6_locality",
                                                 "CUDA.cublas")}
    cpu = ms("run_all.csv", step="CPU.omp", variant="blocked")
    f = lambda s, k: float(v[s][k])  # noqa: E731
    cpu_gbps = float(one("run_all.csv", step="CPU.omp", variant="blocked")["gbps"])
    reads = f("CUDA.v1", "gbps") / 2
    latency_ns = 8192 * 4 / (reads * 1e9) * 1e9
    checks = []
    # CUDA.v1: both GPUs side by side, then the chapter 1 prose.
    h200, h100 = one(CHAPTER2, step="CUDA.v1"), one("h100/run_all_chapter2.csv", step="CUDA.v1")
    for label, key, fmt in (("`kernel` launch", "launch", "{}"),
                            ("`kernel` median ms", "median_ms", "{:.4f}"),
                            ("`kernel` GB/s", "gbps", "{:.1f}"),
                            ("`kernel` % of copy", "pct_of_ceiling", "{:.1f}%"),
                            ("`kernel` e2e ms", "e2e_ms", "{:.3f}"),
                            ("`copy` GB/s (the ceiling)", "ceiling_gbps", "{:.1f}")):
        cells = [fmt.format(r[key] if key == "launch" else float(r[key])) for r in (h200, h100)]
        checks.append(("CUDA.v1", f"| {label} | {cells[0]} | {cells[1]} |"))
    assert h200["device"] == "NVIDIA H200" and h100["device"] == "NVIDIA H100 80GB HBM3"
    checks += [("CUDA.v1", q) for q in (
        f"{f('CUDA.v1', 'median_ms'):.3f} ms, {f('CUDA.v1', 'gbps'):.1f} GB/s, "
        f"{f('CUDA.v1', 'pct_of_ceiling'):.1f}% of the copy (the copy reached\n"
        f"{f('CUDA.v1', 'ceiling_gbps'):.0f} GB/s in the same run)",
        f"took {cpu:.3f} ms ({cpu_gbps:.1f} GB/s), so this naive kernel is already "
        f"{cpu / f('CUDA.v1', 'median_ms'):.2f}x faster",
        f"End\nto end it takes {f('CUDA.v1', 'e2e_ms'):.2f} ms: about "
        f"{f('CUDA.v1', 'e2e_ms') - f('CUDA.v1', 'median_ms'):.1f} ms",
        f"slower than the CPU's {cpu:.2f} ms",
        f"{f('CUDA.v1', 'gbps'):.1f} GB/s effective is {reads:.1f} GB/s of reads",
        f"at {reads:.1f} GB/s means each load takes 32768 / {reads:.1f}e9 s, about "
        f"{latency_ns:.0f} ns",
        f"- Loads: {profiled('CUDA.v1', 'gld_sectors'):,} sectors",
        f"- Stores: {profiled('CUDA.v1', 'gst_sectors'):,} sectors (`..._op_st.sum`), 32 per "
        "request, 8.00x a copy",
        f"`dram__throughput.avg.pct_of_peak_sustained_elapsed`: "
        f"{float(one_profile('CUDA.v1')['dram_pct_of_peak']):.1f}%."
    )]
    for step in ("CUDA.v3", "CUDA.v4", "CUDA.v5_unroll"):
        checks += [(step, f"On an NVIDIA H200 at 8192 x 8192 fp32: {f(step, 'median_ms'):.3f} ms, "
                          f"{f(step, 'gbps'):.1f} GB/s, {f(step, 'pct_of_ceiling'):.1f}% of the "
                          f"copy ({f(step, 'ceiling_gbps'):.0f} GB/s in\nthe same run)"),
                   (step, f"End to end: {f(step, 'e2e_ms'):.2f} ms")]
    prof = {s: next(r for r in rows("profile.csv") if r["step"] == s) for s in
            ("CUDA.v2", "CUDA.v3", "CUDA.v4", "CUDA.v5_unroll", "CUDA.v6_locality")}
    p = lambda s, k: float(prof[s][k])  # noqa: E731
    conflicts_v3 = p("CUDA.v3", "shared_ld_bank_conflicts")
    checks += [("CUDA.v3", q) for q in (
        f"That is {f('CUDA.v2', 'median_ms') / f('CUDA.v3', 'median_ms'):.2f}x faster than v2 "
        f"({f('CUDA.v2', 'median_ms'):.3f} ms) and {cpu / f('CUDA.v3', 'median_ms'):.1f}x faster "
        f"than the best CPU\nvariant ({cpu:.3f} ms)",
        f"still slower\nthan the CPU's {cpu:.2f} ms",
        f"down from v2's {profiled('CUDA.v2', 'gst_sectors'):,}",
        f"`l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum`):\n  {conflicts_v3:,.0f}",
        f"524,288 x 31 = {524288 * 31 / 1e6:.2f} million, within 0.5% of the count",
        f"Shared-memory store conflicts: {p('CUDA.v3', 'shared_st_bank_conflicts'):,.0f}",
        f"{p('CUDA.v3', 'dram_pct_of_peak'):.1f}%, up from {p('CUDA.v2', 'dram_pct_of_peak'):.1f}%",
    )]
    assert abs(524288 * 31 / conflicts_v3 - 1) < 0.005  # "within 0.5% of the count"
    checks += [("CUDA.v4", q) for q in (
        f"One extra column per tile made the kernel "
        f"{f('CUDA.v3', 'median_ms') / f('CUDA.v4', 'median_ms'):.2f}x faster than v3 "
        f"({f('CUDA.v3', 'median_ms'):.3f} ms), and\n"
        f"{cpu / f('CUDA.v4', 'median_ms'):.1f}x faster than the best CPU variant ({cpu:.3f} ms)",
        f"Why only {f('CUDA.v4', 'pct_of_ceiling'):.0f}% now",
        f"Global sectors exactly as in v3: {profiled('CUDA.v4', 'gld_sectors'):,} loads and "
        f"{profiled('CUDA.v4', 'gst_sectors'):,} stores",
        f"Shared-memory load bank conflicts: {p('CUDA.v4', 'shared_ld_bank_conflicts'):,.0f}, "
        f"down from v3's {conflicts_v3:,.0f} "
        f"({conflicts_v3 / p('CUDA.v4', 'shared_ld_bank_conflicts'):.0f}x fewer)",
        f"{p('CUDA.v4', 'shared_ld_bank_conflicts') / conflicts_v3 * 100:.1f}% of v3's count",
        f"{p('CUDA.v4', 'dram_pct_of_peak'):.1f}%, up from {p('CUDA.v3', 'dram_pct_of_peak'):.1f}%",
    )]
    checks += [("CUDA.v5_unroll", q) for q in (
        f"reaches only {f('CUDA.v4', 'pct_of_ceiling'):.0f}% of a copy",
        f"the\neffective figure, {f('CUDA.v5_unroll', 'ceiling_gbps'):.0f} GB/s in v5's run",
        f"v1's numbers imply about {latency_ns:.0f} ns",
        f"That is {f('CUDA.v4', 'median_ms') / f('CUDA.v5_unroll', 'median_ms'):.2f}x faster than"
        f" v4 ({f('CUDA.v4', 'median_ms'):.3f} ms)",
        f"Against the best CPU variant ({cpu:.3f} ms) it is\n"
        f"{cpu / f('CUDA.v5_unroll', 'median_ms'):.1f}x faster",
        f"`cublasSgeam` in the same run took {f('CUDA.cublas', 'median_ms'):.3f} ms "
        f"({f('CUDA.cublas', 'pct_of_ceiling'):.1f}%)",
        f"End to end: {f('CUDA.v5_unroll', 'e2e_ms'):.2f} ms against v1's "
        f"{f('CUDA.v1', 'e2e_ms'):.2f} ms. The kernel went from {f('CUDA.v1', 'median_ms'):.3f} ms"
        f" to {f('CUDA.v5_unroll', 'median_ms'):.3f} ms",
        f"about {f('CUDA.v5_unroll', 'e2e_ms') - f('CUDA.v5_unroll', 'median_ms'):.1f} ms, did "
        "not move",
        f"the CPU ({cpu:.2f} ms) is {f('CUDA.v5_unroll', 'e2e_ms') / cpu:.2f}x faster",
        f"The same global sectors as v4 ({profiled('CUDA.v5_unroll', 'gld_sectors'):,} loads, "
        f"{profiled('CUDA.v5_unroll', 'gst_sectors'):,} stores, 4 per request)",
        f"no real bank conflicts ({p('CUDA.v5_unroll', 'shared_ld_bank_conflicts'):,.0f} on loads",
        f"{p('CUDA.v5_unroll', 'dram_pct_of_peak'):.1f}% against v4's "
        f"{p('CUDA.v4', 'dram_pct_of_peak'):.1f}%",
        f"(`dram__bytes_read.sum` {p('CUDA.v5_unroll', 'dram_bytes_read') / 1e6:.1f} MB)",
    )]
    return [(f"{step}/README.md", q) for step, q in checks]


def v6_text():
    """CUDA.v6_locality/README.md: run_all, bench (H200) and h100/v7_bench (H100), sweep,
    profile, dtypes, and the H100's run_all_chapter2."""
    v6, v5, lib = "CUDA.v6_locality", "CUDA.v5_unroll", "CUDA.cublas"
    sweep = {(s, n): ms("sweep.csv", step=s, rows=n, cols=n) for s in (v5, v6)
             for n in (256, 512, 1024, 2048, 4096, 8192, 16384)}
    speedup = {n: sweep[v5, n] / sweep[v6, n] for n in (2048, 4096, 8192, 16384)}
    assert sweep[v5, 512] < sweep[v6, 512]  # Questions: "v6 trails v5 on 512 x 512"
    bench = {(s, r, c): pct("bench.csv", step=s, rows=r, cols=c) for s in (v6, lib)
             for r, c in BENCH_SHAPES}
    h100 = {(s, r, c): pct(V7_BENCH, step=s, rows=r, cols=c, dtype="float32") for s in (v6, lib)
            for r, c in BENCH_SHAPES}
    margin = {(r, c): ratio("bench.csv", lib, v6, rows=r, cols=c) for r, c in BENCH_SHAPES}
    assert margin[8191, 8193] > max(margin[8192, 8192], margin[16384, 16384])  # Questions, 1
    h100_run = {s: pct("h100/run_all_chapter2.csv", step=s) for s in (v5, v6, lib)}
    dt = {(s, d): pct(DTYPES, step=s, dtype=d) for s in (v6, "CUDA.v7_packed")
          for d in ("uint8", "float32")}
    quotes = [
        f"v5 reached {pct('run_all.csv', step=v5):.1f}% of\nthe copy and `cublasSgeam` "
        f"{pct('run_all.csv', step=lib):.1f}%.",
        f"{pct('run_all.csv', step=v5):.1f}% to {pct('run_all.csv', step=v6):.1f}% of the copy at "
        "8192 x 8192 in `make run-all`",
        f"{speedup[8192]:.2f}x v5 at 8192 x 8192 and {speedup[16384]:.2f}x at 16384 x 16384 in "
        "`make sweep`",
        f"v6 keeps {bench[v6, 8191, 8193]:.1f}% of the\n  copy at 8191 x 8193 against "
        f"{bench[v6, 8192, 8192]:.1f}% at 8192 x 8192, while cuBLAS falls from "
        f"{bench[lib, 8192, 8192]:.1f}% to {bench[lib, 8191, 8193]:.1f}%: v6 is "
        f"{margin[8191, 8193]:.2f}x cuBLAS there, {margin[8192, 8192]:.2f}x at 8192 x 8192 and "
        f"{margin[16384, 16384]:.2f}x at\n  16384 x 16384 ({bench[v6, 16384, 16384]:.1f}%)",
        f"and {h100[v6, 8191, 8193] - h100[lib, 8191, 8193]:.1f} points behind at",
        f"v5 already reached {h100_run[v5]:.1f}% and v6 {h100_run[v6]:.1f}%, level with cuBLAS's\n"
        f"  {h100_run[lib]:.1f}%",
        f"v5 at 256 x 256 ({sweep[v5, 256] * 1000:.1f} against {sweep[v6, 256] * 1000:.1f}\n"
        f"microseconds), v6 at 1024 x 1024 ({sweep[v6, 1024] * 1000:.1f} against "
        f"{sweep[v5, 1024] * 1000:.1f})",
        f"{speedup[2048]:.2f}x at 2048 x 2048, {speedup[4096]:.2f}x at 4096 x 4096, "
        f"{speedup[8192]:.2f}x at\n8192 x 8192 and {speedup[16384]:.2f}x at 16384 x 16384",
        f"adding little for float32 ({dt[v6, 'float32']:.1f}% to "
        f"{dt['CUDA.v7_packed', 'float32']:.1f}% of the copy) and much for 1-byte elements\n"
        f"({dt[v6, 'uint8']:.1f}% to {dt['CUDA.v7_packed', 'uint8']:.1f}%)",
        f"the same as v5's {float(one_profile(v5)['dram_bytes_read']) / 1e6:.1f} MB",
        f"`dram__bytes_read.sum`: {float(one_profile(v6)['dram_bytes_read']) / 1e6:.1f} MB",
        f"{float(one_profile(v6)['dram_pct_of_peak']):.1f}%, level with v5's "
        f"{float(one_profile(v5)['dram_pct_of_peak']):.1f}%",
        f"about {round(sweep[v6, 4096] * 1000, -1):.0f} microseconds",
        f"(`dram__bytes_write.sum` {float(one_profile(v6)['dram_bytes_write']) / 1e6:.1f} MB of "
        f"{float(one_profile(v6)['dram_bytes_read']) / 1e6:.1f} MB)",
        f"v6 is {speedup[4096]:.2f}x faster than v5 at\n  4096 x 4096, {speedup[8192]:.2f}x at "
        f"8192 x 8192 and {speedup[16384]:.2f}x at 16384 x 16384",
        f"from the {bench[v6, 8191, 8193]:.1f}% of the copy in `make bench` (cuBLAS measured "
        f"{bench[lib, 8191, 8193]:.1f}% there)",
    ]
    for r, c in BENCH_SHAPES:
        quotes.append(f"| {r} x {c} | {bench[v6, r, c]:.1f}% | {bench[lib, r, c]:.1f}% | "
                      f"{h100[v6, r, c]:.1f}% | {h100[lib, r, c]:.1f}% |")
    return [("CUDA.v6_locality/README.md", q) for q in quotes]


BENCH_SHAPES = ((8192, 8192), (16384, 16384), (8191, 8193), (1024, 65536), (65536, 1024))


def one_profile(step):
    return next(r for r in rows("profile.csv") if r["step"] == step)


CHECKS = (glance() + every_type() + v7_text() + v9_text() + cublaslt_text() + instructor_v7()
          + chapter1() + cpu_text()
          + readme_more() + cpu_more() + cuda_texts() + v6_text())


@pytest.mark.parametrize("text,quote", CHECKS, ids=lambda v: v[:60])
def test_a_quoted_figure_is_the_figure_in_its_csv(text, quote):
    assert quote in (ROOT / text).read_text(), f"{text} should quote: {quote!r}"
