"""The poison can never pass: an output element a step leaves unwritten is caught at every
position, for every type and shape, including those where a constant poison byte (0xFF) equals
every fill value of the element (rows x cols a power of 256 for uint8). Through the verifier
itself (tests/harness_probe unwritten-each) and, with no GPU needed, grep-level checks that no
constant-byte poison is left on any path."""
import re
import subprocess

import pytest

from conftest import DTYPES, ELEM_BYTES, ROOT, skip_unless_memory

PROBE = ROOT / "tests" / ".build" / "harness_probe"
SHAPES = [(1, 1), (16, 16), (256, 256), (1, 256), (4096, 4096)]
LARGE_UINT8 = (65536, 65536)  # 2^32 elements: the last one is 0xFF in every fill
TILE = 32  # the GPU steps' tile edge; the verifier walks 64 x 64 blocks


def positions(rows, cols):
    """The first, the last and one at a tile edge, in the output (cols x rows)."""
    out_rows, out_cols = cols, rows
    return [(0, 0), (out_rows - 1, out_cols - 1),
            (min(TILE - 1, out_rows - 1), min(TILE, out_cols - 1))]


def unwritten_each(dtype, rows, cols):
    points = positions(rows, cols)
    args = [str(v) for point in points for v in point]
    done = subprocess.run([str(PROBE), "unwritten-each", dtype, str(rows), str(cols), *args],
                          capture_output=True, text=True, timeout=1800)
    return points, done


def assert_each_caught(dtype, rows, cols):
    points, done = unwritten_each(dtype, rows, cols)
    lines = done.stdout.splitlines()
    assert len(lines) == len(points), done.stdout + done.stderr
    for (row, col), line in zip(points, lines):
        assert f"unwritten at output row {row}, col {col}: verification FAILED" in line, line
        assert f"1 of {rows * cols} elements wrong; first at output row {row}, col {col}" in line
        got, want = re.search(r"got 0x([0-9a-f]+), want 0x([0-9a-f]+)", line).groups()
        assert len(got) == 2 * ELEM_BYTES[dtype]
        assert int(got, 16) == ~int(want, 16) & ((1 << 8 * ELEM_BYTES[dtype]) - 1), line
    assert done.returncode == 0, done.stdout + done.stderr


@pytest.mark.parametrize("rows,cols", SHAPES)
@pytest.mark.parametrize("dtype", DTYPES)
def test_an_unwritten_element_is_caught(dtype, rows, cols):
    assert_each_caught(dtype, rows, cols)


@pytest.mark.large_memory
def test_an_unwritten_element_is_caught_past_2_to_the_32_uint8():
    rows, cols = LARGE_UINT8
    skip_unless_memory(2 * rows * cols)
    assert_each_caught("uint8", rows, cols)


def test_no_constant_byte_poison_is_left():
    """Every path poisons from the fill (poison_output / poison_value / the complement in the
    PyTorch reference); a memset of one byte or a poison byte constant would bring the blind spot
    back."""
    # Every verifying path: the harness, the steps and their drivers, the Python reference rows.
    folders = [ROOT / "common", ROOT / "transpose_lab", *ROOT.glob("CPU.*"), *ROOT.glob("CUDA.*")]
    sources = [p for folder in folders for p in folder.glob("*")
               if p.suffix in (".cu", ".cuh", ".cpp", ".hpp", ".py")]
    offenders = []
    for path in sources:
        text = path.read_text(errors="replace")
        for pattern in (r"kPoisonByte", r"POISON_BYTE", r"poison_bytes\(",
                        r"cudaMemset(Async)?\([^;,]*out"):
            if re.search(pattern, text):
                offenders.append(f"{path.relative_to(ROOT)}: {pattern}")
    assert not offenders, offenders
