"""The figures CUDA.v8_streams/README.md (and README.md's summary) quotes from the sixth session's runs (an H200, and an
H100 for make out-of-core), each rebuilt from the file it cites under docs/results/session6/ and
looked for in the text (line breaks and runs of spaces count as one space): the bus probe's table
and sentences, the tile shapes out of core, make out-of-core on both GPUs, 65536^2, the in-core
runs (make streams, the nearest settings, tiles in-core, one down at a time), the first pass of a
2D copy, and the default's timeline."""
import csv
import re

import pytest

from conftest import ROOT
from figures import RESULTS, flat, rows

S6 = "session6/"
GIB = 1 << 30
WIDTHS = (1024, 2048, 4096, 8192, 16384, 32768)


def probe(name):
    return {(int(r["matrix_bytes"]), int(r["width"]), r["up"], r["down"]): float(r["gbs"])
            for r in rows(S6 + name)}


def pipeline_and_serial(name):
    found = {r["variant"]: r for r in rows(S6 + name)}
    pipe = found.get("pipeline") or found["copy-engine-down"]
    return pipe, found["serial"]


def pct(row):
    return f"{float(row['pct_of_ceiling']):.1f}%"


def bus_quotes():
    gbs = probe("call1_bus_probe.csv")
    quotes = [f"ceiling {gbs[GIB, 1024, 'contig', 'contig']:.1f} GB/s"]
    for label, up, down in (("contiguous / the SMs, 16 blocks", "contig", "sm16"),
                            ("contiguous / the SMs, 64 blocks", "contig", "sm64"),
                            ("contiguous / 2D copies", "contig", "2d"),
                            ("2D copies / contiguous", "2d", "contig"),
                            ("2D copies / 2D copies", "2d", "2d")):
        quotes.append(f"| {label} | " + " | ".join(f"{gbs[GIB, w, up, down]:.1f}" for w in WIDTHS)
                      + " |")
    big = 16 * GIB

    def at16(up, down):
        return ", ".join(f"{gbs[big, w, up, down]:.1f}" for w in (4096, 16384, 65536))

    quotes += [f"ceiling {gbs[big, 4096, 'contig', 'contig']:.1f} GB/s",
               f"the SMs writing beside the copy going up {at16('contig', 'sm16')}",
               f"2D copies down beside a contiguous copy up {at16('contig', '2d')}",
               f"2D copies both ways {at16('2d', '2d')}"]
    again = probe("call2_bus_probe.csv")
    quotes.append(f"measured {again[GIB, 1024, 'contig', 'sm16']:.1f} and "
                  f"{again[GIB, 2048, 'contig', 'sm16']:.1f} for the same two")
    reads = [(v, k) for k, v in again.items() if k[2].startswith("sm") and k[3] == "contig"]
    best, (_, width, up, _) = max(reads)
    quotes.append(f"at most {best:.1f} GB/s beside a copy going down ({up[2:]} blocks, "
                  f"{width // 1024} KiB segments")
    return quotes


def timeline_quotes():
    quotes = []
    with open(RESULTS / S6 / "call3_timeline_tile_up.csv", newline="") as f:
        ups = [float(r["up_end_ms"]) - float(r["up_start_ms"]) for r in csv.DictReader(f)]
    quotes.append(f"{min(ups):.2f}-{max(ups):.2f} ms each")
    with open(RESULTS / S6 / "call1_timeline_16k_f32_default.csv", newline="") as f:
        pieces = list(csv.DictReader(f))
    piece_gb = int(pieces[0]["rows"]) * 16384 * 4 / 1e6  # GB per piece, 16384 float32 columns

    def rate(start, end):  # GB/s of an engine serving the pieces in the order they end
        spans, last = [], 0.0
        for s, e in sorted(((float(p[start]), float(p[end])) for p in pieces), key=lambda x: x[1]):
            spans.append(e - max(s, last))
            last = e
        return piece_gb / sorted(spans)[len(spans) // 2]

    up, down = rate("up_start_ms", "up_end_ms"), rate("down_start_ms", "down_end_ms")
    assert round(up) == round(down) == 44
    quotes.append("at 44 GB/s each")
    # The first pass of a 2D copy against the next two, in v8's own process (call 7).
    text = (RESULTS / S6 / "call6_7_debug.txt").read_text()
    single = [float(x) for x in re.findall(r"single device_a, up_stream: ([\d.]+) ms", text)]
    quotes.append(f"took {single[0]:.3f} ms the first time and {min(single[1:]):.2f}-"
                  f"{max(single[1:]):.2f} ms on the next two")
    return quotes


def in_core_quotes():
    streams = {(r["rows"], r["dtype"], r["variant"]): r for r in rows(S6 + "streams.csv")
               if r["step"] == "CUDA.v8_streams"}
    by_run = rows(S6 + "streams.csv")
    quotes = []
    for n, dtype, text in (("16384", "float32", "{p} and {x}x at 16384 x 16384 float32 (the "
                            "ceiling {c:.1f} GB/s in that process)"),
                           ("8192", "float64", "{p} and {x}x at 8192 x 8192 float64")):
        pipe = streams[n, dtype, "pipeline"]
        serial = by_run[by_run.index(pipe) + 1]
        assert serial["variant"] == "serial"
        quotes.append(text.format(p=pct(pipe), c=float(pipe["ceiling_gbps"]),
                                  x=f"{float(serial['median_ms']) / float(pipe['median_ms']):.2f}"))
    near = [r for r in rows(S6 + "call12_near.csv") if r["variant"] == "pipeline"
            and r["launch"].startswith("3 streams x 64 pieces of") and "columns" not in r["launch"]]
    f32 = [pct(r) for r in near if r["dtype"] == "float32"]
    f64 = [pct(r) for r in near if r["dtype"] == "float64"]
    quotes.append(f"{f32[0]} and {f32[1]} at 16384 x 16384 float32, {f64[0]} and {f64[1]} at "
                  f"8192 x 8192 float64")
    tiles = [r for r in rows(S6 + "call8_tilesdown.csv") if r["variant"] == "pipeline"
             and r["rows"] == "16384"]
    quotes.append(f"({pct(tiles[1])} against {pct(tiles[0])}, `call8_tilesdown.csv`)")
    order = [r for r in rows(S6 + "call11_downorder.csv") if r["variant"] == "pipeline"][:4] + \
        [r for r in rows(S6 + "call11_downorder.csv") if r["variant"] == "pipeline"][8:12]
    serial = [pct(r) for r in order if "several at once" not in r["launch"]]
    free = [pct(r) for r in order if "several at once" in r["launch"]]
    quotes.append(f"{sorted(serial[:2])[0]} and {sorted(serial[:2])[1]} against "
                  f"{free[0]} and {free[1]} at 16384 x 16384 float32, {serial[2]} and "
                  f"{serial[3]} against {free[2]} and {free[3]} at 8192 x 8192 float64")
    return quotes


def out_of_core_quotes():
    quotes = []
    tiles = [r for name in ("call5_ooctiles.csv", "call8_ooctiles.csv") for r in rows(S6 + name)
             if r["variant"] == "copy-engine-down"]
    for r in tiles:
        m = re.match(r"(\d+) streams x (\d+) pieces of (\d+) rows x (\d+) columns", r["launch"])
        streams, count, tall, wide = m.groups()
        if (tall, wide, streams) == ("8192", "8192", "3") and r in rows(S6 + "call5_ooctiles.csv"):
            continue
        quotes.append(f"| {tall} x {wide} | {int(wide) * 4 // 1024} / {int(tall) * 4 // 1024} KiB "
                      f"| {streams} | {count} | {float(r['median_ms']):.2f} | {pct(r)} |")
    h200, h200_serial = pipeline_and_serial("out_of_core.csv")
    h100, h100_serial = pipeline_and_serial("h100/out_of_core.csv")

    def x(pair):
        return f"{float(pair[1]['median_ms']) / float(pair[0]['median_ms']):.2f}x"

    quotes += [
        f"H200 {float(h200['median_ms']):.2f} ms, {pct(h200)} of the ceiling, "
        f"{x((h200, h200_serial))} the serial round trip ({float(h200_serial['median_ms']):.2f} "
        f"ms)",
        f"{float(h100['median_ms']):.2f} ms, {pct(h100)} of its ceiling "
        f"({float(h100['ceiling_gbps']):.1f} GB/s), {x((h100, h100_serial))} "
        f"({float(h100_serial['median_ms']):.2f} ms)",
        f"{pct(h200)} on the H200 and {pct(h100)} on the H100, past the 85% target"]
    for log in ("out_of_core.log", "h100/out_of_core.log"):
        text = (RESULTS / S6 / log).read_text()
        assert "first run verified: all 8589934592 elements bitwise" in text
        assert "after timing verified: all 8589934592 elements bitwise" in text
    big, big_serial = pipeline_and_serial("ooc65536.csv")
    quotes.append(f"{float(big['median_ms']):.2f} ms, {pct(big)}, {x((big, big_serial))}")
    return quotes


def readme_quotes():
    h200, _ = pipeline_and_serial("out_of_core.csv")
    h100, _ = pipeline_and_serial("h100/out_of_core.csv")
    return [f"reach {pct(h200)} of the bus on the H200 and {pct(h100)} on the H100"]


CHECKS = ([("CUDA.v8_streams/README.md", q) for q in
           bus_quotes() + timeline_quotes() + in_core_quotes() + out_of_core_quotes()]
          + [("README.md", q) for q in readme_quotes()])


@pytest.mark.parametrize("text,quote", CHECKS, ids=lambda v: v[:60])
def test_a_quoted_session6_figure_is_the_figure_in_its_file(text, quote):
    assert flat(quote) in flat((ROOT / text).read_text()), f"{text} should quote: {quote!r}"
