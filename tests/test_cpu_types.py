"""CPU.omp's blocked variant for every element size: shapes that take every path of its vector
blocks (whole bands, bands cut short at the bottom with whole blocks and ragged rows, ragged
columns, several pieces of work across a row), with streaming and with plain stores.

With AVX-512 a block is one 64-byte vector per input row: 16 x 16 4-byte elements, 8 x 8 8-byte,
4 x 4 16-byte ones, and a band is 128 bytes of each output row (32, 16, 8 rows). 1- and 2-byte
blocks are 16 bytes of each output row: 16 rows x 64 bytes, 8 rows x 32 2-byte elements, and their
band is 128 bytes of each output row with either store (128, 64 rows), as for every size. A piece of
work is 8 KiB of each input row. AVX and SSE blocks divide these, so the same shapes cover them too."""
import pytest

from conftest import run

VECTOR_BYTES, BAND_BYTES, CHUNK_BYTES = 64, 128, 8192
SIZES = {"uint8": 1, "float16": 2, "float32": 4, "float64": 8, "complex128": 16}


def shapes(elem_bytes):
    small = elem_bytes < 4
    block = VECTOR_BYTES // elem_bytes                 # elements per vector: the block's columns
    block_rows = 16 // elem_bytes if small else block  # the block's rows
    band = max(block_rows, BAND_BYTES // elem_bytes)
    chunk = CHUNK_BYTES // elem_bytes                  # columns of a piece of work
    return [
        (band, block),                       # one whole band, one block column
        (2 * band, 3 * block),               # whole bands only
        (block, 2 * block),                  # a short band of exactly one (or several) whole blocks
        (band + block + 3, 5 * block + 7),   # a short band: whole blocks, ragged rows; ragged columns
        (band + block_rows + 1, block + 1),  # a short band: one whole block of rows, one row left
        (block_rows - 1, 2 * block + 3),     # shorter than a block's rows: all one by one
        (3 * band - 1, 2 * block + 1),       # no row count a multiple of the vector: plain stores
        (2 * band, chunk + block + 1),       # two pieces of work across each row, the last ragged
        (block - 1, 4 * block),              # shorter than a block: all one by one
        (1, 3 * block + 1),
        (3 * band + 1, 1),
    ]


CASES = [(dtype, rows, cols) for dtype, size in SIZES.items() for rows, cols in shapes(size)]


@pytest.mark.parametrize("stores", ["on", "off"])
@pytest.mark.parametrize("dtype,rows,cols", CASES, ids=lambda v: str(v))
def test_blocked_is_exact_on_every_path(dtype, rows, cols, stores):
    done = run("CPU.omp", rows, cols, "--dtype", dtype, "--variant", "blocked", "--reps", 1,
               threads=3, env_extra={"LAB_STREAMING_STORES": stores})
    assert done.returncode == 0, done.stderr
    assert done.stdout.count("verified") == 1
