"""build/bus_probe (make bus-probe): bad input is refused with its reason (exit 2) before any GPU is
looked for; without a GPU it says so in one line (exit 77); with one, every pattern of a small
matrix is measured and written to the CSV."""
import csv
import subprocess

import pytest

from conftest import EXIT_SKIPPED, EXIT_USAGE, ROOT, gpu_unavailable_reason

PROBE = ROOT / "build" / "bus_probe"


@pytest.fixture(autouse=True)
def built():
    if not PROBE.exists():
        pytest.skip("build/bus_probe is not built (make build/bus_probe; no nvcc?)")


def probe(*args):
    return subprocess.run([str(PROBE), *map(str, args)], capture_output=True, text=True,
                          timeout=300)


@pytest.mark.parametrize("args,message", [
    (["--widths", "100"], "a width must be a multiple of 16 bytes that divides the pitch, not 100"),
    (["--widths", "1024,,2048"], "--widths wants a positive integer, not ''"),
    (["--pitch", "1000"], "--pitch must be a multiple of 16 bytes that divides the matrix"),
    (["--mib", "1", "--pitch", "3145728"], "--pitch must be a multiple of 16 bytes"),
    (["--gib", "x"], "--gib wants a positive integer, not 'x'"),
    (["--mib", "0"], "--mib wants a positive integer, not '0'"),
    (["--blocks", "-4"], "--blocks wants a positive integer, not '-4'"),
    (["--copy-rows"], "--copy-rows wants a value"),
    (["--loud"], "unknown option --loud"),
    (["--host", "numa"], "--host must be driver or huge, not 'numa'"),
])
def test_bad_input_exits_2_with_its_reason(args, message):
    done = probe(*args)
    assert done.returncode == EXIT_USAGE, done.stdout + done.stderr
    assert done.stderr.startswith(f"bus_probe: {message}"), done.stderr
    assert "usage: bus_probe" in done.stderr and done.stdout == ""


def test_without_a_gpu_it_says_so_in_one_line():
    if gpu_unavailable_reason() is None:
        pytest.skip("a GPU is present: the no-GPU path cannot be exercised here")
    done = probe("--mib", 16)
    assert done.returncode == EXIT_SKIPPED
    assert done.stdout == "bus_probe: no CUDA device; skipped\n" and done.stderr == ""


@pytest.mark.parametrize("host", ["driver", "huge"])
def test_every_pattern_is_measured_into_the_csv(host, needs_gpu, tmp_path):
    table = tmp_path / "bus.csv"
    done = probe("--mib", 16, "--widths", "1024,4096", "--blocks", "16", "--reps", 1,
                 "--host", host, "--csv", table)
    assert done.returncode == 0, done.stderr
    with open(table, newline="") as f:
        measured = list(csv.DictReader(f))
    patterns = {(int(r["width"]), r["up"], r["down"]) for r in measured}
    ceilings = {("contig", "-"), ("-", "contig"), ("contig", "contig")}
    per_width = {("2d", "-"), ("-", "2d"), ("contig", "2d"), ("2d", "contig"), ("2d", "2d"),
                 ("-", "sm16"), ("contig", "sm16"), ("2d", "sm16"), ("sm16", "-"),
                 ("sm16", "contig")}
    assert patterns == {(1024, *p) for p in ceilings} | {(w, *p) for w in (1024, 4096)
                                                          for p in per_width}
    assert len(measured) == len(patterns)
    for r in measured:
        assert int(r["matrix_bytes"]) == 16 << 20 and int(r["pitch"]) == 65536
        assert float(r["ms"]) > 0 and float(r["gbs"]) > 0 and float(r["first_ms"]) > 0
        assert r["host"] == host
        directions = (r["up"] != "-") + (r["down"] != "-")
        assert abs(float(r["gbs"]) - directions * (16 << 20) / (float(r["ms"]) * 1e6)) < 0.01 + \
            0.001 * float(r["gbs"])
