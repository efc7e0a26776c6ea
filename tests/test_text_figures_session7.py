"""The figures CUDA.v8_streams/README.md quotes from the seventh session's runs ("Three more ideas,
measured" and "Where session 7 leaves the targets"), each rebuilt from the file it cites under
docs/results/session7/ and looked for in the text (line breaks and runs of spaces count as one
space): host memory on huge pages (v8 and the bus probe, H100 and H200, out of core), the ramp,
band_copy's narrow rows in the timelines, and where the targets stand."""
import statistics

import pytest

from conftest import ROOT
from figures import flat, rows

S7 = "session7/"
GIB = 1 << 30
MATRIX_16K_F32 = 2 * 16384 * 16384 * 4  # bytes over the bus, both ways


def runs(name):
    """(pipeline row, serial row) of every run, in the file's order: each pipeline row is
    followed by the serial round trip of the same process (CPU.omp's rows stand alone)."""
    found = rows(S7 + name)
    pairs = []
    for i, row in enumerate(found):
        if row["step"] == "CUDA.v8_streams" and row["variant"] != "serial":
            assert found[i + 1]["variant"] == "serial", name
            pairs.append((row, found[i + 1]))
    return pairs


def ms_of(row):
    return float(row["median_ms"])


def ms(run):
    """The pipeline's ms of a (pipeline, serial) run."""
    return ms_of(run[0])


def speedup(run):
    return ms_of(run[1]) / ms(run)


def listed(values, fmt):
    return ", ".join(format(v, fmt) for v in values)


def of(pairs, rows_, dtype):
    return [p for p in pairs if p[0]["rows"] == str(rows_) and p[0]["dtype"] == dtype]


def call8():
    """call 8 (H200): three rounds of default, --ramp 3, --host-memory huge per matrix."""
    table = {}
    for size, dtype in ((16384, "float32"), (8192, "float64")):
        found = of(runs("call8_ramp.csv"), size, dtype)
        assert len(found) == 9
        for k, variant in enumerate(("default", "ramp", "huge")):
            table[size, variant] = found[k::3]
        band = "64 pieces of 256 rows" if size == 16384 else "64 pieces of 128 rows"
        ramp = "70 pieces of 32-256 rows" if size == 16384 else "70 pieces of 16-128 rows"
        assert all(band in p[0]["launch"] for p in table[size, "default"] + table[size, "huge"])
        assert all(ramp in p[0]["launch"] for p in table[size, "ramp"])
    return table


def probe(name):
    return {(r["host"], int(r["matrix_bytes"]), int(r["width"]), r["up"], r["down"]):
            float(r["gbs"]) for r in rows(S7 + name)}


def down_ms(name, piece):
    entry = rows(S7 + name)[piece]
    return float(entry["down_end_ms"]) - float(entry["down_start_ms"])


def ceiling_ms(run):
    return MATRIX_16K_F32 / float(run[0]["ceiling_gbps"]) / 1e6


def quotes():
    found = []
    table = call8()
    labels = {"default": "default (equal bands, the driver's pinned pages)",
              "ramp": "`--ramp 3`", "huge": "`--host-memory huge`"}
    for variant, label in labels.items():
        cells = []
        for size in (16384, 8192):
            got = table[size, variant]
            cells += [listed(map(ms, got), ".2f"),
                      listed((float(p[0]["pct_of_ceiling"]) for p in got), ".1f")]
        found.append(f"| {label} | " + " | ".join(cells) + " |")

    h200 = probe("call8_hugeprobe.csv")
    found.append(f"at {h200['driver', GIB, 1024, 'contig', 'sm16']:.2f} and "
                 f"{h200['driver', GIB, 2048, 'contig', 'sm16']:.2f} GB/s with the driver's pages "
                 f"(1 and 2 KiB segments), {h200['huge', GIB, 1024, 'contig', 'sm16']:.2f} and "
                 f"{h200['huge', GIB, 2048, 'contig', 'sm16']:.2f} with huge pages")
    pinned = of(runs("call1_v8huge_pinned.csv"), 16384, "float32")
    huge = of(runs("call1_v8huge_huge.csv"), 16384, "float32")
    found.append(f"16384 x 16384 float32 {listed(map(ms, pinned), '.2f')} ms with the driver's "
                 f"pages, {listed(map(ms, huge), '.2f')} with huge pages")
    h100 = probe("call1_hugeprobe.csv")
    big = 16 * GIB
    found.append(f"both directions contiguous {h100['driver', big, 4096, 'contig', 'contig']:.1f}"
                 f" -> {h100['huge', big, 4096, 'contig', 'contig']:.1f} GB/s")
    found.append(f"64 KiB rows beside a contiguous copy {h100['driver', big, 65536, 'contig', '2d']:.1f}"
                 f" -> {h100['huge', big, 65536, 'contig', '2d']:.1f}")
    ooc = runs("call7_oochuge.csv")
    assert len(ooc) == 2
    found.append(f"{ms(ooc[0]):.2f} ms with the driver's pages, {ms(ooc[1]):.2f} ms with huge "
                 f"pages, {float(ooc[0][0]['pct_of_ceiling']):.1f}% and "
                 f"{float(ooc[1][0]['pct_of_ceiling']):.1f}% of their ceilings, "
                 f"{speedup(ooc[0]):.2f}x the serial round trip both")
    assert f"{speedup(ooc[0]):.2f}" == f"{speedup(ooc[1]):.2f}"

    def ramp_against(name, size, dtype):
        got = of(runs(name), size, dtype)
        ramped = [p for p in got if "70 pieces" in p[0]["launch"]]
        equal = [p for p in got if "70 pieces" not in p[0]["launch"]]
        return ramped, equal

    for name, unit in (("call2_ramp.csv", " ms"), ("call3_ramp.csv", "")):
        ramped, equal = ramp_against(name, 16384, "float32")
        found.append(f"{listed(map(ms, ramped), '.2f')}{unit} against "
                     f"{listed(map(ms, equal), '.2f')}")
    ramped, equal = ramp_against("call3_ramp.csv", 8192, "float64")
    found.append(f"call 3: {listed(map(ms, ramped), '.2f')} ms against "
                 f"{listed(map(ms, equal), '.2f')}")
    gains = [1 - ms(r) / ms(e) for r, e in zip(ramped, equal)]
    found.append(f"by {100 * min(gains):.1f}-{100 * max(gains):.1f}%")

    timeline = "call3_timeline_16k_f32_ramp3.csv"
    found.append(f"the first piece, 32 rows, took {down_ms(timeline, 0):.3f} ms to come down")
    full = [float(e["down_end_ms"]) - float(e["down_start_ms"]) for e in rows(S7 + timeline)
            if e["rows"] == "256"]
    found.append(f"the {len(full)} pieces of 256 rows took {min(full):.3f}-{max(full):.3f} ms "
                 f"(median {statistics.median(full):.3f})")
    found.append(f"came down in {down_ms('call2_timeline_8k_f64_ramp3.csv', 0):.3f} and "
                 f"{down_ms('call2_timeline_8k_f64_ramp3.csv', 1):.3f} ms before the change")
    found.append(f"and {down_ms('call3_timeline_8k_f64_ramp3.csv', 0):.3f} and "
                 f"{down_ms('call3_timeline_8k_f64_ramp3.csv', 1):.3f} ms after it")
    found.append(f"({down_ms('call2_timeline_16k_f32_ramp3.csv', 0):.3f} ms before, "
                 f"{down_ms(timeline, 0):.3f} after)")

    # Where session 7 leaves the targets.
    for size in (16384, 8192):
        got = table[size, "default"]
        pcts = [float(p[0]["pct_of_ceiling"]) for p in got]
        ups = [speedup(p) for p in got]
        found.append(f"{min(pcts):.1f}-{max(pcts):.1f}% {'of the ceiling ' if size == 16384 else ''}"
                     f"and {min(ups):.2f}-{max(ups):.2f}x")
    h100_default = (of(runs("call1_v8huge_pinned.csv"), 16384, "float32")
                    + [p for name in ("call2_ramp.csv", "call3_ramp.csv")
                       for p in ramp_against(name, 16384, "float32")[1]])
    pcts = [float(p[0]["pct_of_ceiling"]) for p in h100_default]
    found.append(f"{min(pcts):.1f}-{max(pcts):.1f}% at 16384 x 16384 float32 over calls 1-3")
    streams = {(p[0]["rows"], p[0]["dtype"]): p for p in runs("call5_streams.csv")
               if p[0]["variant"] == "pipeline"}
    found.append(f"{streams['16384', 'float32'][0]['pct_of_ceiling']}% at 16384 x 16384 float32 "
                 f"and {streams['8192', 'float64'][0]['pct_of_ceiling']}% at 8192 x 8192 float64")
    h100_runs = [p for name in ("call1_v8huge_pinned.csv", "call2_ramp.csv", "call3_ramp.csv",
                                "call5_streams.csv") for p in runs(name)
                 if p[0]["rows"] == "16384" and p[0]["dtype"] == "float32"
                 and p[0]["variant"] == "pipeline"]
    serials = [ms_of(p[1]) for p in h100_runs]
    found.append(f"took {min(serials):.1f} to {max(serials):.1f} ms on the H100s")
    call2 = ramp_against("call2_ramp.csv", 16384, "float32")[1]
    call5 = [streams["16384", "float32"]]
    ratio5 = min(ms_of(p[1]) / ceiling_ms(p) for p in call5)
    ratio2 = max(ms_of(p[1]) / ceiling_ms(p) for p in call2)
    found.append(f"the ceiling itself was {ratio5:.2f}x (call 5) to {ratio2:.2f}x (call 2)")
    others = (of(runs("call1_v8huge_pinned.csv"), 16384, "float32")
              + ramp_against("call3_ramp.csv", 16384, "float32")[1] + call5)
    found.append(f"reached {min(map(speedup, call2)):.3f}-{max(map(speedup, call2)):.3f}x in "
                 f"call 2 and {min(map(speedup, others)):.2f}-{max(map(speedup, others)):.2f}x in "
                 f"the others")
    found.append(f"reached up to {max(map(speedup, call2)):.3f}x")
    found.append(f"{float(ooc[0][0]['pct_of_ceiling']):.1f}% on the H200 again (call 7)")
    return found


@pytest.mark.parametrize("quote", quotes())
def test_the_text_quotes_the_measured_figure(quote):
    text = flat((ROOT / "CUDA.v8_streams" / "README.md").read_text())
    assert flat(quote) in text, quote
