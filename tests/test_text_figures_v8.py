"""CUDA.v8_streams/README.md's figures (issue 16), each rebuilt from the CSV it cites and looked
for in the text, as in test_text_figures.py. The CSVs: docs/results/session3/ (H200) and
docs/results/h100/session3/ (H100), written by `make streams`, `make streams-sweep` and
`make out-of-core`; the run-all rows of chapter 2 and chapter 1's run_all.csv."""
import pytest

from conftest import ROOT
from figures import ms, one, rows

CHAPTER2 = "run_all_chapter2.csv"


def v8_pairs(name):
    """A v8 CSV's rows, each with the serial row written right after it (None where none)."""
    data, out, i = rows(name), [], 0
    while i < len(data):
        paired = i + 1 < len(data) and data[i + 1]["variant"] == "serial"
        out.append((data[i], data[i + 1] if paired else None))
        i += 2 if paired else 1
    return out


STREAMS = {"H200": "session3/streams.csv", "H100": "h100/session3/streams.csv"}
SWEEP = "session3/streams_sweep.csv"
OUT_OF_CORE = "session3/out_of_core.csv"
RUN_ALL_OTHER = {"H200": "run_all_other_kinds_chapter2.csv",
                 "H100": "h100/run_all_other_kinds_chapter2.csv"}
WAY = {"pipeline": "the SMs", "copy-engine-down": "2D copies", "pageable": "2D copies (pageable)"}
MAIN = (("16384", "float32"), ("8192", "float64"))  # the two target cases


def narrow(n, dtype):
    """The narrow-word runs of make streams: the SMs against 2D copies, % of the ceiling."""
    pairs = {(a["rows"], a["dtype"], a["variant"]): a
             for a, _ in v8_pairs("session3/narrow/streams.csv") if a["step"] == "CUDA.v8_streams"}
    sms, copies = (float(pairs[n, dtype, v]["pct_of_ceiling"]) for v in ("pipeline",
                                                                         "copy-engine-down"))
    assert copies > sms  # "the copy engine wins"
    return f"{sms:.1f}% of the ceiling written by the SMs and {copies:.1f}% by 2D copies"


def streams_pieces(row):
    return (row["launch"].split(" streams x ")[0] + " x "
            + row["launch"].split(" x ")[1].split(" pieces")[0])


def pipeline_rows(gpu):
    """{(rows, dtype, variant): (pipeline row, its serial row)} of a make streams CSV."""
    return {(a["rows"], a["dtype"], a["variant"]): (a, b)
            for a, b in v8_pairs(STREAMS[gpu]) if a["step"] == "CUDA.v8_streams"}


def speedup(pair):
    return float(pair[1]["median_ms"]) / float(pair[0]["median_ms"])


def streams_table():
    lines = []
    for gpu in STREAMS:
        for (n, dtype, variant), (a, b) in pipeline_rows(gpu).items():
            lines.append(
                f"| {gpu} | {a['rows']} x {a['cols']} | {dtype} | {WAY[variant]} | "
                f"{streams_pieces(a)} | {float(a['median_ms']):.2f} | "
                f"{float(a['pct_of_ceiling']):.1f}% | {float(b['median_ms']):.2f} | "
                f"{speedup((a, b)):.2f}x |")
    return lines


def run_all_table():
    lines = []
    for gpu, name in RUN_ALL_OTHER.items():
        a = one(name, step="CUDA.v8_streams", variant="pipeline")
        b = one(name, step="CUDA.v8_streams", variant="serial")
        lines.append(
            f"| {gpu} | {streams_pieces(a)} | {float(a['median_ms']):.2f} | "
            f"{float(a['pct_of_ceiling']):.1f}% | {float(a['ceiling_gbps']):.1f} | "
            f"{float(b['median_ms']):.2f} | {speedup((a, b)):.2f}x |")
    return lines


def sweep_sentence():
    sweep = {(int(a["launch"].split(" streams")[0]),
              int(a["launch"].split("kernel of ")[1].split(" blocks")[0])): float(a["median_ms"])
             for a, _ in v8_pairs(SWEEP)}
    best = min(sweep, key=sweep.get)
    worst = max(sweep, key=sweep.get)
    return (f"every setting from {min(sweep.values()):.2f} to {max(sweep.values()):.2f} ms, the "
            f"best {best[0]} streams and {best[1]} blocks ({sweep[best]:.2f} ms), "
            "the default 3 and "
            f"16 {sweep[3, 16]:.2f} ms, the worst {worst[0]} and {worst[1]}.")


def ooc_sentence():
    (a, b), = v8_pairs(OUT_OF_CORE)
    return (f"{float(a['median_ms']):.2f} ms (3 runs), {float(a['pct_of_ceiling']):.1f}% of the "
            f"bus ceiling, {speedup((a, b)):.2f}x the serial round trip "
            f"({float(b['median_ms']):.2f}"
            " ms, which fit in the H200's 141 GB).")


def cpu_sentence():
    parts = []
    for gpu in STREAMS:
        cpu = {(r["rows"], r["dtype"]): float(r["median_ms"]) for r in rows(STREAMS[gpu])
               if r["step"] == "CPU.omp"}
        pipe = pipeline_rows(gpu)
        cells = []
        for n, dtype in (*MAIN, ("8192", "float32")):
            c, g = cpu[n, dtype], float(pipe[n, dtype, "pipeline"][0]["median_ms"])
            who = f"the GPU {c / g:.2f}x faster" if g < c else f"the CPU {g / c:.2f}x faster"
            cells.append(f"{n} x {n} {dtype} {c:.2f} ms on the CPU against {g:.2f} ms ({who})")
        parts.append(f"{gpu}: " + "; ".join(cells) + ".")
    return " ".join(parts)


def plan():
    (a, _), = v8_pairs(OUT_OF_CORE)
    return a["launch"].split(" streams x ")[1].split(", down")[0]


def v8_text():
    quotes = streams_table() + run_all_table()
    quotes += [sweep_sentence(), ooc_sentence(), cpu_sentence(), f"The plan is {plan()}"]
    pct = {gpu: {k: float(a["pct_of_ceiling"]) for k, (a, _) in pipeline_rows(gpu).items()}
           for gpu in STREAMS}
    fast = {gpu: {k: speedup(pair) for k, pair in pipeline_rows(gpu).items()} for gpu in STREAMS}
    main = [(n, d, "pipeline") for n, d in MAIN]

    def span(values, fmt):
        return f"{fmt.format(min(values))}-{fmt.format(max(values))}"

    h200_p, h100_p = [pct["H200"][k] for k in main], [pct["H100"][k] for k in main]
    h200_x, h100_x = [fast["H200"][k] for k in main], [fast["H100"][k] for k in main]
    # The H100's bus ceiling over its serial round trip, 16384 x 16384 float32.
    a, b = pipeline_rows("H100")[main[0]]
    ceiling_ms = float(a["median_ms"]) * float(a["pct_of_ceiling"]) / 100
    bound = float(b["median_ms"]) / ceiling_ms
    assert bound < 1.65  # "so 1.65x cannot be reached there"
    ceilings = [float(r["ceiling_gbps"]) for r in rows(STREAMS["H100"])
                if r["step"] == "CUDA.v8_streams"]
    (ooc, _), = v8_pairs(OUT_OF_CORE)
    h200 = pipeline_rows("H200")
    quotes += [
        f"the step reaches {span(h200_p, '{:.1f}')}% and {span(h200_x, '{:.2f}')}x; on the H100 "
        f"{span(h100_p, '{:.1f}')}% and {span(h100_x, '{:.2f}')}x",
        f"the\nbus ceiling itself was only {bound:.2f}x the serial round trip",
        f"Out of core, on the H200: {float(ooc['pct_of_ceiling']):.1f}%",
        f"({min(ceilings):.1f} to {max(ceilings):.1f}\nGB/s in the same call)",
        f"{pct['H200']['16384', 'float32', 'copy-engine-down']:.1f}% of the ceiling at 16384 x "
        f"16384\n  float32 on the H200",
        f"The same pieces with the SMs writing:\n  {pct['H200'][main[0]]:.1f}%, "
        f"{fast['H200'][main[0]]:.2f}x",
        f"{pct['H200']['16384', 'float32', 'pageable']:.1f}% of the (pinned) ceiling on the H200",
        f"from {span(h200_p, '{:.1f}')}% to 90% of the ceiling and from\n"
        f"{span(h200_x, '{:.2f}')}x to 1.65x",
        f"Out of core, {float(ooc['pct_of_ceiling']):.1f}% against 85%"]
    assert all(h200[k][0]["launch"] == pipeline_rows("H100")[k][0]["launch"] for k in h200)
    sweep = {a["launch"]: float(a["median_ms"]) for a, _ in v8_pairs(SWEEP)}
    default = next(v for k, v in sweep.items()
                   if k.startswith("3 streams") and "of 16 blocks" in k)
    best = min(sweep.values())
    quotes.append(f"is {100 * (default / best - 1):.1f}% faster than the default")
    quotes += [f"measured {narrow('8191', 'float16')}",
               f"16-byte words: {narrow('8192', 'uint8')};"]
    blocks = [(s, b) for s in (3, 4) for b in (8, 16, 24, 32, 48, 64, 132)]
    sweep = dict(zip(blocks, v8_pairs("h100/v8_down_blocks.csv")))
    quotes.append(f"3 streams and 16 blocks {float(sweep[3, 16][0]['median_ms']):.2f} ms, 132 "
                  f"blocks (one per SM) {float(sweep[3, 132][0]['median_ms']):.2f} ms")
    old_ooc, _ = v8_pairs("v8_out_of_core.csv")[0]
    assert "97 pieces of 675-676 rows" in old_ooc["launch"]
    quotes.append(f"4-byte words, {float(old_ooc['median_ms']):.2f} ms,\n"
                  f"{float(old_ooc['pct_of_ceiling']):.1f}%")
    v6 = one("run_all.csv", step="CUDA.v6_locality")
    e2e, kernel = float(v6["e2e_ms"]), float(v6["median_ms"])
    quotes += [f"v6's kernel takes {kernel:.2f} ms and the round trip {e2e:.2f} ms, "
               f"{e2e - kernel:.1f} ms of it copies",
               f"time ({kernel:.2f} ms of the {e2e:.2f} ms round trip above)"]
    return [("CUDA.v8_streams/README.md", q) for q in quotes]


def instructor_v8():
    """docs/instructor.md's answers to v8's questions: the figures each one rests on."""
    h200, h100 = pipeline_rows("H200"), pipeline_rows("H100")
    f32 = ("16384", "float32", "pipeline")

    def p(pair):
        return float(pair[0]["pct_of_ceiling"])

    def ms_of(row):
        return float(row["median_ms"])

    narrow_rows = {(a["rows"], a["dtype"], a["variant"]): a
                   for a, _ in v8_pairs("session3/narrow/streams.csv")}
    quotes = [f"crawls ({p(h200['16384', 'float32', 'copy-engine-down']):.1f}% of the bus ceiling",
              f"wherever the segments lie: {p(h200[f32]):.1f}%",
              f"each a separate write over the bus: "
              f"{float(narrow_rows['8191', 'float16', 'pipeline']['pct_of_ceiling']):.1f}%",
              "reached "
              f"{float(narrow_rows['8191', 'float16', 'copy-engine-down']['pct_of_ceiling']):.1f}%"]
    bounds = {}
    for gpu, pipe in (("H100", h100), ("H200", h200)):
        a, b = pipe[f32]
        ceiling = ms_of(a) * float(a["pct_of_ceiling"]) / 100
        bounds[gpu] = (ms_of(a), ceiling, ms_of(b), ms_of(b) / ceiling, ms_of(b) / ms_of(a))
    pipe_ms, ceiling, serial, bound, _ = bounds["H100"]
    quotes += [f"took\n   {pipe_ms:.2f} ms at {p(h100[f32]):.1f}% of the ceiling",
               f"the ceiling was about {ceiling:.1f} ms", f"round trip {serial:.2f} ms",
               f"at most {bound:.2f}x"]
    pipe_ms, ceiling, serial, bound, speed = bounds["H200"]
    quotes += [f"({serial:.2f} ms against about {ceiling:.1f} ms)", f"the bound is {bound:.2f}x",
               f"the pipeline's {pipe_ms:.2f} ms\n   is {speed:.2f}x"]
    cpu = {r["rows"]: r for r in rows(STREAMS["H200"]) if r["step"] == "CPU.omp"}
    gpu8 = ms_of(h200["8192", "float32", "pipeline"][0])
    quotes += [f"took {ms_of(cpu['16384']):.2f} ms at 16384 x 16384 float32 against the pipeline's",
               f"{ms_of(cpu['8192']):.2f} ms at 8192 x 8192 against {gpu8:.2f} ms",
               f"({float(cpu['8192']['ceiling_gbps']):.0f} GB/s in that run) than for one of 1 GiB "
               f"({float(cpu['16384']['ceiling_gbps']):.0f} GB/s)"]
    buses = [float(a["ceiling_gbps"]) for a, _ in h200.values()]
    assert all(abs(x - 101) < 1 for x in buses)  # "the bus stays at about 101 GB/s"
    return [("docs/instructor.md", q) for q in quotes]


CHECKS = v8_text() + instructor_v8()


@pytest.mark.parametrize("text,quote", CHECKS, ids=lambda v: v[:60])
def test_a_quoted_figure_is_the_figure_in_its_csv(text, quote):
    flat = " ".join((ROOT / text).read_text().split())  # line breaks in the text are free
    assert " ".join(quote.split()) in flat, f"{text} should quote: {quote!r}"


if __name__ == "__main__":  # the generated parts of the text, to paste after a re-run
    print(narrow("8191", "float16"), narrow("8192", "uint8"), sep="\n")
    print("\n".join(streams_table()), "", "\n".join(run_all_table()), "", sweep_sentence(), "",
          ooc_sentence(), "", cpu_sentence(), "", plan(), sep="\n")
