"""The figures CUDA.v2/README.md, CUDA.copy/README.md and v2's answer in docs/instructor.md quote
from the chapter 2 `make run-all` of both GPUs (docs/results/run_all_chapter2.csv, H200, and
docs/results/h100/run_all_chapter2.csv) and from Nsight Compute of v2's two variants
(docs/results/ncu/ncu_v2_*.csv, H200, and docs/results/h100/ncu_v2_*.csv). As in
test_text_figures.py, each check rebuilds a quoted phrase from the file it comes from and looks
for it in the text, and an assert holds each bound a text states in words ("a third", "4.5x")."""
import subprocess

import pytest

from conftest import ROOT
from figures import RESULTS, ncu_table, one, pct



RUN_ALL = {"H200": "run_all_chapter2.csv", "H100": "h100/run_all_chapter2.csv"}
DEVICE = {"H200": "NVIDIA H200", "H100": "NVIDIA H100 80GB HBM3"}
NCU = {"H200": "ncu/ncu_v2_{}.csv", "H100": "h100/ncu_v2_{}.csv"}
VARIANTS = ("read-coalesced", "write-coalesced")
GPUS = ("H200", "H100")


def ncu(gpu, variant):
    """{metric name: value} of one `ncu --csv` file: its lines that start with a quote are the
    CSV; the others are the program's own output. Values carry thousands separators."""
    path = RESULTS / NCU[gpu].format(variant)
    table = ncu_table(NCU[gpu].format(variant))
    assert table and all(r["Device"] == "0" for r in table)
    assert {r["Kernel Name"] for r in table} == {
        f"void transpose_kernel<unsigned int, {VARIANTS.index(variant)}>"
        "(const T1 *, T1 *, int, int)"}  # the template flag: 0 read-, 1 write-coalesced
    text = path.read_text()
    assert "matrix   4096 x 4096 float32" in text and f"device   {DEVICE[gpu]}\n" in text
    return {r["Metric Name"]: float(r["Metric Value"].replace(",", "")) for r in table}


def run(gpu, step, variant="kernel"):
    row = one(RUN_ALL[gpu], step=step, variant=variant)
    assert row["device"] == DEVICE[gpu] and row["dtype"] == "float32"
    assert (row["rows"], row["cols"]) == ("8192", "8192")
    return row


LD = "l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum"
ST = "l1tex__t_sectors_pipe_lsu_mem_global_op_st.sum"
LD_REQ, ST_REQ = (s.replace("_sectors_", "_requests_") for s in (LD, ST))
L2_RD, L2_WR = "lts__t_sectors_srcunit_tex_op_read.sum", "lts__t_sectors_srcunit_tex_op_write.sum"
NS = "gpu__time_duration.sum"


def v2_text():
    m = {(g, v): ncu(g, v) for g in GPUS for v in VARIANTS}
    r = {(g, v): run(g, "CUDA.v2", v) for g in GPUS for v in VARIANTS}
    copy = {g: run(g, "CUDA.copy") for g in GPUS}
    f = lambda row, key: float(row[key])  # noqa: E731
    quotes = []
    for v, label in zip(VARIANTS, ("strided stores", "strided loads")):
        cells = [f"{f(r[g, v], 'median_ms'):.3f} | {f(r[g, v], 'pct_of_ceiling'):.1f}%"
                 for g in GPUS]
        quotes.append(f"| v2 {v} ({label}) | {cells[0]} | {cells[1]} |")
    cells = [f"{f(copy[g], 'median_ms'):.3f} | {f(copy[g], 'pct_of_ceiling'):.1f}%" for g in GPUS]
    quotes.append(f"| CUDA.copy, the plain copy kernel | {cells[0]} | {cells[1]} |")
    speedup = {g: f(r[g, "read-coalesced"], "median_ms") / f(r[g, "write-coalesced"], "median_ms")
               for g in GPUS}
    quotes.append(f"Write-coalesced is {speedup['H200']:.2f}x faster than read-coalesced on the "
                  f"H200 and {speedup['H100']:.2f}x on the H100")
    for g in GPUS:
        for v in VARIANTS:
            x = m[g, v]
            ld, st = x[LD] / x[LD_REQ], x[ST] / x[ST_REQ]
            quotes.append(
                f"| {g}, {v} | {x[NS]:,.0f} | {x[LD]:,.0f} ({ld:.0f}) | {x[ST]:,.0f} ({st:.0f}) | "
                f"{x[L2_RD]:,.0f} | {x[L2_WR]:,.0f} | {x['dram__bytes_read.sum'] / 1e6:.1f} | "
                f"{x['dram__bytes_write.sum'] / 1e6:.1f} |")
            assert x[LD_REQ] == x[ST_REQ] == 524288  # "524,288 load requests and 524,288 ..."
    quotes.append("Both variants make 524,288 load requests and 524,288 store requests")
    # The prose: the same figures, on both GPUs alike.
    w, rd = m["H100", "write-coalesced"], m["H100", "read-coalesced"]
    for g in GPUS:
        assert m[g, "write-coalesced"][LD] == rd[ST] and m[g, "write-coalesced"][L2_RD] == \
            w[L2_RD] == w[ST] == rd[LD]  # the H200's counts are the H100's
        assert m[g, "read-coalesced"][L2_WR] == m[g, "read-coalesced"][ST]  # write-through
        assert m[g, "write-coalesced"][L2_RD] * 8 == m[g, "write-coalesced"][LD]  # 7 of 8 in L1
    assert w[L2_RD] * 32 == 64 * 2**20  # "exactly the 64 MiB input once"
    l2 = {v: m["H100", v][L2_RD] + m["H100", v][L2_WR] for v in VARIANTS}
    longer = {g: m[g, "read-coalesced"][NS] / m[g, "write-coalesced"][NS] for g in GPUS}
    quotes += [
        f"a warp's load asks for 32 sectors (32 input\n  rows, one 4-byte element each), "
        f"{w[LD]:,.0f} sectors in all. Yet L2 sends L1 only {w[L2_RD]:,.0f}\n  sectors",
        f"In read-coalesced, the {rd[ST]:,.0f} store sectors reach L2 as\n  "
        f"{rd[L2_WR]:,.0f} sector writes",
        f"L2 handles {l2['read-coalesced']:,.0f} sectors from L1 for read-coalesced against "
        f"{l2['write-coalesced']:,.0f} for\n  write-coalesced, "
        f"{l2['read-coalesced'] / l2['write-coalesced']:.1f}x as many; the kernel takes "
        f"{longer['H200']:.2f}x as long on the H200 and {longer['H100']:.2f}x on the H100",
    ]
    assert l2 == {v: m["H200", v][L2_RD] + m["H200", v][L2_WR] for v in VARIANTS}
    wr = {(g, v): m[g, v]["dram__bytes_write.sum"] / 1e6 for g in GPUS for v in VARIANTS}
    reads = [m[g, v]["dram__bytes_read.sum"] / 1e6 for g in GPUS for v in VARIANTS]
    quotes.append(
        f"DRAM writes {wr['H200', 'read-coalesced']:.1f} against "
        f"{wr['H200', 'write-coalesced']:.1f}"
        f" MB on the H200 and {wr['H100', 'read-coalesced']:.1f} against\n  "
        f"{wr['H100', 'write-coalesced']:.1f} MB on the H100, and reads "
        f"{min(reads):.0f}-{max(reads):.0f} MB in all four runs")
    # "about the same bytes": within 5% either way; and below the 67.1 MB output.
    for g in GPUS:
        assert abs(wr[g, "read-coalesced"] / wr[g, "write-coalesced"] - 1) < 0.05
        assert max(wr[g, v] for v in VARIANTS) < 4096 * 4096 * 4 / 1e6
    quotes.append(f"below the {4096 * 4096 * 4 / 1e6:.1f} MB output")
    # "a third (H200) to under half (H100) of the copy"
    assert 30 < f(r["H200", "write-coalesced"], "pct_of_ceiling") < 36.7
    assert 40 < f(r["H100", "write-coalesced"], "pct_of_ceiling") < 50
    # "by a wide margin", "settle it": the order holds on both GPUs, in run-all and in ncu.
    assert min(speedup.values()) > 2 and min(longer.values()) > 2
    return [("CUDA.v2/README.md", q) for q in quotes]


def changed_lines(old, new):
    """The non-blank lines `diff -u` marks + or - between two files (what `make diff` shows)."""
    done = subprocess.run(["diff", "-u", str(ROOT / old), str(ROOT / new)],
                          capture_output=True, text=True)
    assert done.returncode == 1, done.stderr
    lines = done.stdout.splitlines()[2:]  # past the --- and +++ header lines
    return [line for line in lines if line[:1] in "+-" and line[1:].strip()]


def v2_diff():
    changed = changed_lines("CUDA.v1/transpose.cu", "CUDA.v2/transpose.cu")
    added = [line[1:].strip() for line in changed if line.startswith("+")]
    lesson = ["const int c = blockIdx.x * TILE_DIM + threadIdx.x;",
              "const int r = blockIdx.y * TILE_DIM + threadIdx.y;",
              "if (r < rows && c < cols)", "const dim3 block(TILE_DIM, TILE_DIM);"]
    assert all(line in added for line in lesson)  # the lines named are lines of the diff
    assert len(changed) <= 30  # the bound for a step's diff
    # "that swap is the whole second variant": variants.cu's kernel is v2's with x and y swapped.
    source = (ROOT / "CUDA.v2/transpose.cu").read_text()
    variant = (ROOT / "CUDA.v2/variants.cu").read_text()
    kernel = source[source.index("__global__"):source.index("// LESSON: end")]
    body = [line.strip() for line in kernel.splitlines() if "LESSON" not in line][1:]
    swapped = [line.replace("threadIdx.x", "@").replace("threadIdx.y", "threadIdx.x")
               .replace("@", "threadIdx.y") for line in body]
    assert "\n".join(swapped) in "\n".join(line.strip() for line in variant.splitlines())
    quotes = [f"`make diff STEP=CUDA.v2` is {len(changed)} changed lines (not counting blank ones)"]
    quotes += [f"- `{line}`" for line in lesson]
    return [("CUDA.v2/README.md", q) for q in quotes]


def copy_text():
    steps = (("CUDA.copy, this kernel", "CUDA.copy", "kernel", 4),
             ("CUDA.v2 write-coalesced", "CUDA.v2", "write-coalesced", 1),
             ("CUDA.v2 read-coalesced", "CUDA.v2", "read-coalesced", 1),
             ("CUDA.v5_unroll", "CUDA.v5_unroll", "kernel", 4),
             ("CUDA.v6_locality", "CUDA.v6_locality", "kernel", 16),
             ("CUDA.v7_packed", "CUDA.v7_packed", "kernel", 16))
    quotes = []
    for label, step, variant, per_thread in steps:
        h200, h100 = run("H200", step, variant), run("H100", step, variant)
        assert h200["threads"] == h100["threads"]
        assert int(h200["threads"]) * per_thread == 8192 * 8192  # "elements per thread"
        cells = " | ".join(f"{float(x['median_ms']):.3f} | {float(x['pct_of_ceiling']):.1f}%"
                           for x in (h200, h100))
        quotes.append(f"| {label} | {int(h200['threads']):,} | {per_thread} | {cells} |")
    p = {(g, s, v): pct(RUN_ALL[g], step=s, variant=v) for g in GPUS
         for _, s, v, _ in steps}
    c = {g: p[g, "CUDA.copy", "kernel"] for g in GPUS}
    v2 = {(g, v): p[g, "CUDA.v2", v] for g in GPUS for v in VARIANTS}
    v5, v6, v7 = ({g: p[g, s, "kernel"] for g in GPUS}
                  for s in ("CUDA.v5_unroll", "CUDA.v6_locality", "CUDA.v7_packed"))
    quotes += [
        f"well short of `cudaMemcpy`: {c['H200']:.1f}% of it on the H200,\n  "
        f"{c['H100']:.1f}% on the H100",
        f"v2 reaches {v2['H200', 'read-coalesced']:.1f}% (H200) and\n  "
        f"{v2['H100', 'read-coalesced']:.1f}% (H100) with strided stores, "
        f"{v2['H200', 'write-coalesced']:.1f}% and {v2['H100', 'write-coalesced']:.1f}% with "
        "strided loads",
        f"still reaches\n  {v5['H200']:.1f}% against {c['H200']:.1f}% on the H200, "
        f"{v5['H100']:.1f}% against {c['H100']:.1f}% on the H100",
        f"16 elements per thread ({v6['H200']:.1f}% and {v6['H100']:.1f}%); v7 uses 16-byte\n  "
        f"accesses ({v7['H200']:.1f}% and {v7['H100']:.1f}%)",
    ]
    # "The last three transposes beat this copy", on both GPUs; v5 with the same launch.
    for g in GPUS:
        assert min(v5[g], v6[g], v7[g]) > c[g]
        assert run(g, "CUDA.v5_unroll")["launch"] == run(g, "CUDA.copy")["launch"] == \
            "grid 256x256x1 block 32x8x1"
    return [("CUDA.copy/README.md", q) for q in quotes]


def answer_text():
    """docs/instructor.md, CUDA.v2's answer 4: run-all rows it cites, ncu figures it quotes."""
    r = {(g, v): run(g, "CUDA.v2", v) for g in GPUS for v in VARIANTS}
    m = {(g, v): ncu(g, v) for g in GPUS for v in VARIANTS}
    h200 = [float(r["H200", v]["pct_of_ceiling"]) for v in reversed(VARIANTS)]
    h100 = [float(r["H100", v]["pct_of_ceiling"]) for v in reversed(VARIANTS)]
    ms_h200 = [float(r["H200", v]["median_ms"]) for v in reversed(VARIANTS)]
    w, rd = m["H100", "write-coalesced"], m["H100", "read-coalesced"]
    ns = {k: f"{x[NS]:,.0f}" for k, x in m.items()}
    quotes = [
        f"{h200[0]:.2f}% of the copy against {h200[1]:.2f}% on an H200,\n   "
        f"{ms_h200[0]:.3f} ms against {ms_h200[1]:.3f} ms",
        f"and {h100[0]:.2f}% against {h100[1]:.2f}% on an H100",
        f"of the {w[LD]:,.0f} load sectors the warps ask for, L2 sends only\n   {w[L2_RD]:,.0f}",
        f"all\n   {rd[L2_WR]:,.0f} store sectors reach L2 as separate partial writes",
        f"on the H100: {ns['H100', 'read-coalesced']} ns against {ns['H100', 'write-coalesced']} "
        f"ns; on the H200: {ns['H200', 'read-coalesced']} ns\n   against "
        f"{ns['H200', 'write-coalesced']} ns",
        f"(H100: {rd['dram__bytes_write.sum'] / 1e6:.1f} against "
        f"{w['dram__bytes_write.sum'] / 1e6:.1f} MB written)",
    ]
    assert rd[L2_WR] == 8 * w[L2_WR]  # "8x a coalesced store's"
    return [("docs/instructor.md", q) for q in quotes]


CHECKS = v2_text() + v2_diff() + copy_text() + answer_text()


@pytest.mark.parametrize("text,quote", CHECKS, ids=lambda v: v[:60])
def test_a_quoted_figure_is_the_figure_in_its_csv(text, quote):
    assert quote in (ROOT / text).read_text(), f"{text} should quote: {quote!r}"


def test_no_placeholder_for_measured_figures_is_left():
    for text in ("CUDA.v2/README.md", "CUDA.copy/README.md"):
        body = (ROOT / text).read_text()
        assert "fills this in" not in body and "none are quoted here" not in body
        assert "once `make run-all` has been run" not in body
