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


def v8_text():
    way = {"pipeline": "the SMs", "copy-engine-down": "2D copies",
           "pageable": "2D copies (pageable)"}

    def streams_pieces(row):
        return (row["launch"].split(" streams x ")[0] + " x "
                + row["launch"].split(" x ")[1].split(" pieces")[0])

    quotes = []
    for a, b in v8_pairs("v8_session2.csv"):
        quotes.append(
            f"| {a['rows']} x {a['cols']} | {a['dtype']} | {way[a['variant']]} | "
            f"{streams_pieces(a)} | {float(a['median_ms']):.2f} | "
            f"{float(a['pct_of_ceiling']):.1f}% | {float(b['median_ms']):.2f} | "
            f"{float(b['median_ms']) / float(a['median_ms']):.2f}x |")
    for gpu, name in (("H200", "run_all_other_kinds_chapter2.csv"),
                      ("H100", "h100/run_all_other_kinds_chapter2.csv")):
        a = one(name, step="CUDA.v8_streams", variant="pipeline")
        b = one(name, step="CUDA.v8_streams", variant="serial")
        quotes.append(
            f"| {gpu} | {streams_pieces(a)} | {float(a['median_ms']):.2f} | "
            f"{float(a['pct_of_ceiling']):.1f}% | {float(a['ceiling_gbps']):.1f} | "
            f"{float(b['median_ms']):.2f} | {float(b['median_ms']) / float(a['median_ms']):.2f}x |")
    # The down-blocks sweep: rows in the order its README paragraph gives.
    blocks = [(s, b) for s in (3, 4) for b in (8, 16, 24, 32, 48, 64, 132)]
    sweep = dict(zip(blocks, v8_pairs("h100/v8_down_blocks.csv")))
    quotes.append(f"3 streams and 16 blocks {float(sweep[3, 16][0]['median_ms']):.2f} ms, 132 "
                  f"blocks (one per SM) {float(sweep[3, 132][0]['median_ms']):.2f} ms")
    assert min(sweep.items(), key=lambda kv: float(kv[1][0]["median_ms"]))[0] == (3, 16)
    ooc, ooc_serial = v8_pairs("v8_out_of_core.csv")[0]
    quotes += [f"then {float(ooc['median_ms']):.2f} ms (3 runs), "
               f"{float(ooc['pct_of_ceiling']):.1f}% of the bus\nceiling",
               "The plan was 97 pieces of 675-676 rows" if "97 pieces of 675-676 rows"
               in ooc["launch"] else ooc["launch"],
               f"took {float(ooc_serial['median_ms']):.2f} ms"]
    cpu = {r["dtype"]: float(r["median_ms"]) for r in rows("v8_cpu.csv")}
    gpu = {a["dtype"]: float(a["median_ms"]) for a, _ in v8_pairs("v8_session2.csv")
           if a["variant"] == "pipeline" and a["rows"] in ("16384", "8192")
           and a["dtype"] in ("float32", "float64")}
    quotes += [f"float32 {cpu['float32']:.2f} ms on the CPU against\n{gpu['float32']:.2f} ms for "
               f"the pipeline (the GPU {cpu['float32'] / gpu['float32']:.2f}x faster)",
               f"float64 {cpu['float64']:.2f} ms against {gpu['float64']:.2f} ms\n"
               f"({cpu['float64'] / gpu['float64']:.2f}x)",
               f"the CPU's {ms(CHAPTER2, step='CPU.omp', variant='blocked'):.2f} ms",
               f"pipeline's {ms('run_all_other_kinds_chapter2.csv', step='CUDA.v8_streams', variant='pipeline'):.2f} ms"]
    by = {(a["rows"], a["dtype"], a["variant"]): (a, b) for a, b in v8_pairs("v8_session2.csv")}
    p = {k: float(a["pct_of_ceiling"]) for k, (a, _) in by.items()}
    x = {k: float(b["median_ms"]) / float(a["median_ms"]) for k, (a, b) in by.items()}
    main = [("16384", "float32", "pipeline"), ("8192", "float64", "pipeline")]
    h100 = one("h100/run_all_other_kinds_chapter2.csv", step="CUDA.v8_streams",
               variant="pipeline")
    h100_x = ms("h100/run_all_other_kinds_chapter2.csv", step="CUDA.v8_streams",
                variant="serial") / float(h100["median_ms"])
    quotes += [
        f"reaches {min(p[k] for k in main):.0f}-{max(p[k] for k in main):.0f}% and {min(x[k] for k in main):.2f}-{max(x[k] for k in main):.2f}x"
        f" on the H200, {float(h100['pct_of_ceiling']):.1f}% and {h100_x:.2f}x on the H100",
        f"and\n{float(ooc['pct_of_ceiling']):.0f}% out of core",
        f"{p['16384', 'float32', 'copy-engine-down']:.1f}% of the ceiling at 16384 x 16384",
        f"with the SMs writing: {p[main[0]]:.1f}%, {x[main[0]]:.2f}x",
        f"{p['16384', 'float32', 'pageable']:.1f}% of the (pinned) ceiling",
        f"2 bytes: {p['8191', 'float16', 'pipeline']:.1f}%",
        f"large share ({p['8192', 'uint8', 'pipeline']:.1f}%)"]
    v6 = one("run_all.csv", step="CUDA.v6_locality")
    e2e, kernel = float(v6["e2e_ms"]), float(v6["median_ms"])
    quotes += [f"v6's kernel takes {kernel:.2f} ms and the round trip {e2e:.2f} ms, "
               f"{e2e - kernel:.1f} ms of it copies",
               f"time ({kernel:.2f} ms of the {e2e:.2f} ms round trip above)"]
    return [("CUDA.v8_streams/README.md", q) for q in quotes]



CHECKS = v8_text()


@pytest.mark.parametrize("text,quote", CHECKS, ids=lambda v: v[:60])
def test_a_quoted_figure_is_the_figure_in_its_csv(text, quote):
    assert quote in (ROOT / text).read_text(), f"{text} should quote: {quote!r}"
