"""CPU.omp's 1- and 2-byte elements: every variant exact on ragged shapes for every element type,
and the paths of the small blocks' bands (whole bands, bands cut short, the last steps of a row
that fetch nothing ahead, pieces of work across a row) with streaming and with plain stores.

A small block is 16 bytes of each output row: 16 input rows of bytes, 8 of 2-byte elements, one
vector wide (64 bytes with AVX-512, 32 with AVX, 16 with SSE). A band is 128 bytes of each output
row (128 rows of bytes, 64 of 2-byte elements), as for every other element size, but bytes
streamed past the cache move in bands of 64 rows (kBandRowsFor in CPU.omp). A band's steps gather their blocks in two stages in turn: one step's output rows leave
while the next step's blocks fill the other. Each step fetches every input row's line 256 bytes
ahead and, with plain stores, asks for the output lines its blocks fill; the last steps of a row,
whose lines ahead lie past the row, fetch nothing. A piece of work is 8 KiB of each input row.
The shapes below are counted for AVX-512; AVX and SSE blocks divide them."""
import pytest

from conftest import DTYPES, ELEM_BYTES, cpu_streams, run

VECTOR_BYTES, BAND_BYTES, PREFETCH_BYTES, CHUNK_BYTES = 64, 128, 256, 8192
STREAMED_BYTE_BAND = 64  # bytes of each output row a band of uint8 under streaming stores
SMALL = {"uint8": 1, "float16": 2, "bfloat16": 2}

# The shapes every variant and every element type must transpose exactly: one element, one row,
# one column, small primes, and a large odd shape whose rows start anywhere in a line (past the
# L2 of a core, as 8191 x 8193 is: test_cpu_types and test_random_shapes take larger ones).
RAGGED = [(1, 1), (1, 1000), (1000, 1), (17, 19), (4097, 4099)]


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("rows,cols", RAGGED, ids=lambda v: str(v))
def test_every_variant_is_exact_on_ragged_shapes(dtype, rows, cols):
    done = run("CPU.omp", rows, cols, "--dtype", dtype, "--variant", "all", "--reps", 1,
               threads=2)
    assert done.returncode == 0, done.stderr
    assert done.stdout.count("verified") == 2, done.stdout
    assert f"all {rows * cols} elements" in done.stdout


def band_shapes(elem_bytes, stores):
    block_cols = VECTOR_BYTES // elem_bytes   # a block: one vector of each input row ...
    block_rows = 16 // elem_bytes             # ... of these rows
    band_bytes = STREAMED_BYTE_BAND if elem_bytes == 1 and stores == "on" else BAND_BYTES
    band = band_bytes // elem_bytes           # rows of a whole band
    ahead = PREFETCH_BYTES // elem_bytes      # columns fetched ahead
    chunk = CHUNK_BYTES // elem_bytes         # columns of a piece of work
    return [
        (band, block_cols),                        # one step: nothing fetched ahead
        (band, 2 * block_cols),                    # two steps: one leaves as the other fills
        (band, ahead + 2 * block_cols),            # fetched ahead, then the last steps without
        (3 * band, 7 * block_cols + 5),            # whole bands, ragged columns
        (band + block_cols, ahead + block_cols),   # a band cut short, whole vectors: streams
        (band + block_rows + 2, ahead + block_cols),  # cut short: one whole block, 2 rows left
        (2 * band + 3 * block_rows + 5, 5 * block_cols + 1),  # cut short: blocks, ragged rows
        (band - 1, 3 * block_cols),                # shorter than a band, rows ragged
        (block_rows - 1, 2 * block_cols + 3),      # shorter than a block: one by one
        (2 * band, chunk + ahead + block_cols + 3),  # two pieces across each row, ragged
        (2 * band + 1, chunk + 1),                 # odd rows: output bands when streaming
    ]


CASES = [(dtype, stores, rows, cols) for dtype, size in SMALL.items() for stores in ("on", "off")
         for rows, cols in band_shapes(size, stores)]


@pytest.mark.parametrize("threads", [1, 3])
@pytest.mark.parametrize("dtype,stores,rows,cols", CASES, ids=lambda v: str(v))
def test_small_blocks_are_exact_on_every_band_path(dtype, stores, rows, cols, threads):
    done = run("CPU.omp", rows, cols, "--dtype", dtype, "--variant", "blocked", "--reps", 1,
               threads=threads, env_extra={"LAB_STREAMING_STORES": stores})
    assert done.returncode == 0, done.stderr
    assert done.stdout.count("verified") == 1, done.stdout
    # The row names the stores it timed: streaming where asked and the shape takes them.
    streams = stores == "on" and cpu_streams(rows, cols, SMALL[dtype])
    blocked_row = next(line for line in done.stdout.splitlines() if line.split()[:1] == ["blocked"])
    assert ("streaming stores" if streams else "plain stores") in blocked_row, blocked_row


# Rows not a multiple of a line, streaming: output bands (128 bytes of each input row, all of its
# output rows), for every element size: output rows of just over a line; one step that is also
# the last, and several with a short last one; columns past the last whole band, whose first
# row's head the band before gathers; and a last band that ends at the matrix's end.
def output_band_shapes(elem_bytes):
    line, band = 64 // elem_bytes, 128 // elem_bytes
    step = (128 if elem_bytes < 4 else 512) // elem_bytes  # output elements of each row a step
    return [
        (line + 1, band),                    # the shortest rows; one band, to the matrix's end
        (step - 1, 2 * band + 1),            # one step; one column past the bands
        (2 * step + line + 3, 3 * band + 5),  # three steps, the last short
        (3 * step + 1, 5 * band - 1),        # a short last step; columns past: a band less one
    ]


OUTPUT_BANDS = [(dtype, elem_bytes, rows, cols) for dtype, elem_bytes in ELEM_BYTES.items()
                for rows, cols in output_band_shapes(elem_bytes)]


@pytest.mark.parametrize("threads", [1, 3])
@pytest.mark.parametrize("dtype,elem_bytes,rows,cols", OUTPUT_BANDS, ids=lambda v: str(v))
def test_output_bands_are_exact(dtype, elem_bytes, rows, cols, threads):
    assert rows * elem_bytes % 64 != 0 and cpu_streams(rows, cols, elem_bytes)
    done = run("CPU.omp", rows, cols, "--dtype", dtype, "--variant", "blocked", "--reps", 1,
               threads=threads, env_extra={"LAB_STREAMING_STORES": "on"})
    assert done.returncode == 0, done.stderr
    assert done.stdout.count("verified") == 1, done.stdout
    assert "streaming stores" in done.stdout, done.stdout


@pytest.mark.parametrize("rows,cols", [(15, 200), (65, 127), (3, 1000), (1000, 3)],
                         ids=lambda v: str(v))
def test_shapes_output_bands_cannot_take_store_plainly(rows, cols):
    # Output rows under a line, or fewer input columns than a band: plain stores, said so.
    assert not cpu_streams(rows, cols, 1)
    done = run("CPU.omp", rows, cols, "--dtype", "uint8", "--variant", "blocked", "--reps", 1,
               threads=2, env_extra={"LAB_STREAMING_STORES": "on"})
    assert done.returncode == 0, done.stderr
    assert done.stdout.count("verified") == 1, done.stdout
    assert "prefetch, plain stores" in done.stdout, done.stdout
