"""CUDA.v9_multigpu (kind distributed): bad input refused without a GPU; with one GPU, --gpus 1 and
the virtual-rank mode (2, 3, 4, 8 ranks on one GPU, the exchange done by device copies) verified
bitwise on odd shapes for every element type, both exchanges (--exchange peer: the ranks write
into each other's bands), and under mpirun -np 1 when MPI is there; with two GPUs or more,
--gpus 2 (and every visible GPU) both ways of placing and both exchanges, and mpirun -np 2;
--nccl-buffers registered and --place-blocks alone and together in every mode.
Reported as skipped, with the reason, when the step is not built (no NCCL), no GPU is here, or
fewer than two GPUs for the multi-GPU tests."""
import csv
import shutil
import subprocess

import pytest

from conftest import (DTYPES, ELEM_BYTES, EXIT_NO_MEMORY, EXIT_SKIPPED, EXIT_USAGE, ROOT, binary,
                      gpu_is_here, gpu_unavailable_reason, run, steps_from_makefile)

STEP = "CUDA.v9_multigpu"
ODD_SHAPES = [(37, 4111), (2049, 1025), (1, 4099), (4099, 1), (1000, 999)]
# Virtual ranks run in chunks so that the pipeline (double buffers, events) is exercised too.
MODES = [("--gpus", 1), ("--virtual-ranks", 2), ("--virtual-ranks", 3), ("--virtual-ranks", 4),
         ("--virtual-ranks", 8)]


def mode_id(mode):
    return f"{mode[0].lstrip('-')}={mode[1]}"


def expected_variant(mode):
    return "gpus=1 single-process" if mode[0] == "--gpus" else f"virtual={mode[1]}"


@pytest.fixture
def step_built(request):
    if not binary(STEP).exists():
        pytest.skip(f"{request.node.name}: {STEP}/transpose is not built (no NCCL? "
                    f"`make -C {STEP}` says why)")


@pytest.fixture
def gpu_here(request, step_built):
    if not gpu_is_here():  # this step alone built on a GPU machine runs all the same
        pytest.skip(f"{request.node.name}: {gpu_unavailable_reason()}")


def read_rows(csv_path):
    with open(csv_path) as f:
        return list(csv.DictReader(f))


# What the driver prints when --exchange peer finds a pair of GPUs without peer access.
PEER_FALLBACK = "the NCCL exchange runs instead"


def run_verified(tmp_path, shape, dtype, *args):
    """One run with --csv that passed: every band verified, one distributed row of this shape."""
    rows, cols = shape
    csv_path = tmp_path / "out.csv"
    done = run(STEP, rows, cols, *args, "--dtype", dtype, "--reps", 2, "--csv", csv_path)
    assert done.returncode == 0, done.stderr
    assert "every rank's output band verified bitwise" in done.stdout
    (row,) = read_rows(csv_path)
    assert row["verified"] == "yes" and row["kind"] == "distributed"
    assert (int(row["rows"]), int(row["cols"])) == (rows, cols)
    assert (row["dtype"], int(row["elem_bytes"])) == (dtype, ELEM_BYTES[dtype])
    assert float(row["median_ms"]) > 0 and float(row["ceiling_gbps"]) > 0
    return done, row


BAD_ARGS = [["--gpus", "0"], ["--gpus", "x"], ["--gpus", "-1"], ["--gpus"], ["--gpus", "2x"],
            ["--virtual-ranks", "0"], ["--chunks", "0"], ["--gpus", "1", "--virtual-ranks", "2"],
            ["--dtype", "int7"], ["0", "5"], ["--bogus"], ["--place", "bogus"], ["--place"],
            ["--exchange", "foo"], ["--exchange"], ["--exchange", "peer", "--chunks", "2"],
            ["--exchange", "peer", "--place", "kernel"], ["--place-blocks", "0"],
            ["--place-blocks", "x"], ["--place-blocks", "-3"], ["--place-blocks"],
            ["--nccl-buffers", "foo"], ["--nccl-buffers"], ["--nccl-buffers", "Registered"],
            ["--exchange", "peer", "--nccl-buffers", "registered"],
            ["--exchange", "peer", "--place-blocks", "4"],
            ["--place", "copy-engine", "--place-blocks", "4"], ["--chunk-sizes", "odd"],
            ["--chunk-sizes"], ["--exchange", "peer", "--chunk-sizes", "even"]]


@pytest.mark.parametrize("args", BAD_ARGS, ids=" ".join)
def test_bad_input_exits_2_without_a_gpu_too(args, step_built):
    done = run(STEP, *args)
    assert done.returncode == EXIT_USAGE, done.stderr
    assert "error:" in done.stderr.splitlines()[0]
    assert "usage:" in done.stderr and done.stdout == ""


@pytest.mark.parametrize("args,words", [
    (["--exchange", "foo"], "--exchange takes nccl or peer, got 'foo'"),
    (["--exchange", "PEER"], "--exchange takes nccl or peer, got 'PEER'"),
    (["--exchange"], "--exchange takes nccl or peer, got ''"),
    (["--exchange", "peer", "--chunks", "2"], "--exchange peer has none of them"),
    (["--place", "copy-engine", "--exchange", "peer"], "--exchange peer has none of them"),
    (["--nccl-buffers", "registered", "--exchange", "peer"], "--exchange peer has none of them"),
    (["--exchange", "peer", "--place-blocks", "4"], "--exchange peer has none of them"),
    (["--nccl-buffers", "foo"], "--nccl-buffers takes plain, registered or windows, got 'foo'"),
    (["--place-blocks", "0"], "--place-blocks must be at least 1, got '0'"),
    (["--chunk-sizes", "odd"], "--chunk-sizes takes tapered or even, got 'odd'"),
    (["--chunk-sizes", "even", "--exchange", "peer"], "--exchange peer has none of them"),
    (["--place", "copy-engine", "--place-blocks", "4"], "--place copy-engine has none"),
], ids=lambda v: " ".join(v) if isinstance(v, list) else None)
def test_a_bad_exchange_is_refused_in_words(args, words, step_built):
    done = run(STEP, 64, 64, *args)
    assert done.returncode == EXIT_USAGE, done.stderr
    assert words in done.stderr.splitlines()[0]


def test_help_names_the_distributed_options(step_built):
    done = run(STEP, "--help")
    assert done.returncode == 0
    for flag in ("--gpus", "--virtual-ranks", "--chunks", "--chunk-sizes", "--exchange",
                 "--dtype", "--place-blocks", "--nccl-buffers"):
        assert flag in done.stdout
    exchange = next(line for line in done.stdout.splitlines() if "--exchange" in line)
    assert "nccl" in exchange and "peer" in exchange
    buffers = next(line for line in done.stdout.splitlines() if "--nccl-buffers" in line)
    assert "plain" in buffers and "registered" in buffers
    windows = next(line for line in done.stdout.splitlines() if "or windows" in line)
    assert "copy engines" in windows


@pytest.mark.parametrize("exchange", ["nccl", "peer"])
def test_no_gpu_is_one_line_and_77(exchange, step_built):
    if gpu_is_here():
        pytest.skip("a GPU is here")
    done = run(STEP, 37, 41, "--virtual-ranks", 3, "--exchange", exchange)
    assert done.returncode == EXIT_SKIPPED
    assert done.stderr.count("\n") == 1 and "skipped: no CUDA device" in done.stderr


def test_step_declares_its_kind_and_kernel():
    out = subprocess.run(["make", "--no-print-directory", "-s", "-C", str(ROOT / STEP), "-f",
                          "Makefile", "-f", str(ROOT / "common" / "print.mk"), "print-STEP_KIND",
                          "print-STEP_KERNEL"], capture_output=True, text=True, check=True)
    last_kernel_step = steps_from_makefile("CUDA_STEPS")[-1]
    assert out.stdout.split() == ["distributed", last_kernel_step]


# Every mode on every odd shape in float32, and every type in every mode on one shape: the
# decomposition does not depend on the type (NCCL moves bytes), the kernels do.
CASES = ([(mode, shape, "float32") for mode in MODES for shape in ODD_SHAPES] +
         [(mode, (37, 4111), dtype) for mode in MODES for dtype in DTYPES if dtype != "float32"])


@pytest.mark.parametrize("mode,shape,dtype", CASES, ids=lambda v: str(v))
def test_every_rank_verifies_its_band(mode, shape, dtype, gpu_here, tmp_path):
    chunks = [] if mode[0] == "--gpus" else ["--chunks", 3]
    _, row = run_verified(tmp_path, shape, dtype, *mode, *chunks)
    assert row["variant"] == expected_variant(mode)


# The peer exchange: one kernel per rank writes its tiles straight into every rank's band (with
# virtual ranks, the other ranks' bands on the same GPU). Every type on every odd shape with 3
# ranks (uneven and empty bands, a band boundary inside a tile), every mode in float32. The odd
# shapes store element by element; these take the 16-byte stores: bands that start on a whole
# vector of every type (1536 rows: three bands of 512, a full tile of uint8), a first band that
# ends mid-vector after a whole one (80 rows); and more column tiles than grid y holds (8 owners
# of 262125 columns: 65536 tiles, within v7's limit for the one-GPU row of complex128).
PEER_VECTOR_SHAPES = [(1536, 1030), (80, 4099)]
PEER_CASES = ([(("--virtual-ranks", 3), shape, dtype)
               for shape in ODD_SHAPES + PEER_VECTOR_SHAPES for dtype in DTYPES] +
              [(("--virtual-ranks", 8), (16, 2097000), dtype) for dtype in DTYPES] +
              [(mode, shape, "float32") for mode in MODES if mode != ("--virtual-ranks", 3)
               for shape in ODD_SHAPES])


@pytest.mark.parametrize("mode,shape,dtype", PEER_CASES, ids=lambda v: str(v))
def test_the_peer_exchange_is_exact(mode, shape, dtype, gpu_here, tmp_path):
    done, row = run_verified(tmp_path, shape, dtype, *mode, "--exchange", "peer")
    assert row["variant"] == expected_variant(mode) + " peer"
    assert "peer copy" in done.stdout  # the second ceiling, measured in the same run
    assert PEER_FALLBACK not in done.stderr  # one GPU always reaches its own memory


@pytest.mark.parametrize("dtype", ["uint8", "float16", "float32", "complex128"])
def test_both_ways_of_placing_give_the_same_bits(dtype, gpu_here):
    # The SMs place in the widest word the rows allow (1 to 16 bytes); 2D copies are the old way.
    for place in ("kernel", "copy-engine"):
        done = run(STEP, 2049, 1025, "--virtual-ranks", 3, "--chunks", 5, "--place", place,
                   "--dtype", dtype, "--reps", 1)
        assert done.returncode == 0, done.stderr
        assert "verified bitwise" in done.stdout
        assert ("placed by the SMs" if place == "kernel" else "placed by 2D copies") in done.stdout


# The exchange's own options, alone and together: registered NCCL buffers (ncclMemAlloc +
# ncclCommRegister), symmetric windows (ncclCommWindowRegister, ncclAlltoAll; virtual ranks have no
# NCCL in their exchange and say so in one line), and placement kernels on at most a few blocks
# (each strides over many rows).
EXCHANGE_OPTIONS = [["--nccl-buffers", "registered"], ["--place-blocks", "3"],
                    ["--nccl-buffers", "registered", "--place-blocks", "1", "--chunks", "2"],
                    ["--nccl-buffers", "windows"], ["--nccl-buffers", "windows", "--chunks", "4"]]
# What the driver prints where registration cannot be had (an old NCCL, a failed call).
REGISTRATION_FALLBACK = "plain buffers"


def check_exchange_options(done, row, options, virtual, placed=True):
    """The launch text and header name what ran: registered buffers or windows where they were,
    and the placement's block budget where blocks are placed (not by one rank alone)."""
    way = options[options.index("--nccl-buffers") + 1] if "--nccl-buffers" in options else None
    if way and virtual:
        assert done.stderr.count(f"--nccl-buffers {way}") == 1
        assert "no effect" in done.stderr
    fell_back = way is not None and f"--nccl-buffers {way}:" in done.stderr
    if way == "windows" and not virtual and not fell_back:
        assert "symmetric NCCL windows" in row["launch"]
        assert "buffers symmetric windows (ncclMemAlloc, ncclCommWindowRegister)" in done.stdout
    elif way == "registered" and not virtual and REGISTRATION_FALLBACK not in done.stderr:
        assert "registered NCCL buffers" in row["launch"]
        assert "buffers registered (ncclMemAlloc, ncclCommRegister)" in done.stdout
    elif way != "windows" or virtual:
        assert "registered NCCL buffers" not in row["launch"]
        assert "symmetric NCCL windows" not in row["launch"]
    if not placed:
        assert "placed by" not in row["launch"]
    elif "--place-blocks" in options:
        blocks = options[options.index("--place-blocks") + 1]
        assert f"placed by the SMs in at most {blocks} blocks" in row["launch"]
        assert f"in at most {blocks} blocks" in done.stdout


@pytest.mark.parametrize("options", EXCHANGE_OPTIONS, ids=" ".join)
@pytest.mark.parametrize("dtype", ["uint8", "float32", "complex128"])
def test_exchange_options_are_exact_on_virtual_ranks(dtype, options, gpu_here, tmp_path):
    done, row = run_verified(tmp_path, (2049, 1025), dtype, "--virtual-ranks", 3, *options)
    assert row["variant"] == "virtual=3"
    check_exchange_options(done, row, options, virtual=True)


@pytest.mark.parametrize("options", EXCHANGE_OPTIONS, ids=" ".join)
def test_exchange_options_on_one_gpu(options, gpu_here, tmp_path):
    # One rank exchanges and places nothing, but its ceiling still sends its band to itself
    # through NCCL, from registered buffers when asked.
    done, row = run_verified(tmp_path, (1000, 999), "float32", "--gpus", 1, *options)
    assert row["variant"] == "gpus=1 single-process"
    check_exchange_options(done, row, options, virtual=False, placed=False)


def test_windows_need_blocks_of_one_size(two_gpus, tmp_path):
    # 1001 rows over 2 GPUs are bands of 500 and 501: ncclAlltoAll cannot move them, so one line
    # says so and registered buffers carry the exchange.
    done, row = run_verified(tmp_path, (1001, 1000), "float32", "--gpus", 2,
                             "--nccl-buffers", "windows")
    said = [line for line in done.stderr.splitlines() if "--nccl-buffers windows" in line]
    assert len(said) == 1 and "does not split evenly over 2 GPUs" in said[0]
    assert "symmetric NCCL windows" not in row["launch"]


@pytest.mark.parametrize("ranks,chunks", [(8, 7), (3, 1), (4, 16), (2, None)])
def test_chunk_counts_and_empty_chunks(ranks, chunks, gpu_here):
    # 37 rows over 8 ranks: bands of 4 and 5 rows in 7 chunks, so some chunks are empty; 16
    # chunks of 9-row bands likewise; None: the default count.
    extra = [] if chunks is None else ["--chunks", chunks]
    done = run(STEP, 37, 4111, "--virtual-ranks", ranks, *extra, "--dtype", "uint8", "--reps", 1)
    assert done.returncode == 0, done.stderr
    assert "verified bitwise" in done.stdout


@pytest.mark.parametrize("sizes", ["tapered", "even"])
@pytest.mark.parametrize("ranks,chunks", [(3, 9), (2, 4), (5, 3), (8, 40)])
def test_tapered_and_even_chunks_cover_every_row(ranks, chunks, sizes, gpu_here):
    # Tapered chunks of 9 (weights 1 2 4 8 8 8 4 2 1) split 1301-row bands unevenly; 40 chunks of
    # 37 rows over 8 ranks leave most chunks empty. The launch names what ran.
    done = run(STEP, 1301 if ranks < 8 else 37, 777, "--virtual-ranks", ranks, "--chunks", chunks,
               "--chunk-sizes", sizes, "--dtype", "float16", "--reps", 1)
    assert done.returncode == 0, done.stderr
    assert "verified bitwise" in done.stdout
    assert f"{chunks} {'tapered ' if sizes == 'tapered' else ''}chunks" in done.stdout


def test_nvls_is_off_unless_the_user_sets_it(gpu_here):
    # NVLink multicast must stay off on shared machines: never run with it on, only check that
    # the program turns it off itself when the variable is unset, and keeps the user's setting.
    import os
    unset = {key: value for key, value in os.environ.items() if key != "NCCL_NVLS_ENABLE"}
    done = subprocess.run([str(binary(STEP)), "64", "64", "--gpus", "1", "--reps", "1"],
                          capture_output=True, text=True, env=unset, timeout=300)
    assert done.returncode == 0, done.stderr
    assert "NCCL_NVLS_ENABLE=0 (set by the program)" in done.stdout
    done = run(STEP, 64, 64, "--gpus", 1, "--reps", 1, env_extra={"NCCL_NVLS_ENABLE": "0"})
    assert done.returncode == 0, done.stderr
    assert "NCCL_NVLS_ENABLE=0 (from the environment)" in done.stdout


def test_more_gpus_than_visible_is_refused(gpu_here):
    done = run(STEP, 64, 64, "--gpus", 4096)
    assert done.returncode == EXIT_USAGE
    assert "--gpus 4096: only" in done.stderr


@pytest.mark.parametrize("mode", [("--gpus", 1), ("--virtual-ranks", 4)], ids=mode_id)
def test_a_band_that_does_not_fit_is_refused(mode, gpu_here):
    done = run(STEP, 1 << 20, 1 << 20, *mode, "--dtype", "complex128")  # 16 TiB
    assert done.returncode == EXIT_NO_MEMORY, done.stderr
    assert "does not fit on GPU" in done.stderr


@pytest.mark.parametrize("exchange", ["nccl", "peer"])
@pytest.mark.parametrize("dtype", ["uint8", "float32", "complex128"])
def test_mpirun_one_process_gives_the_same_result(dtype, exchange, gpu_here, tmp_path):
    mpirun = shutil.which("mpirun")
    if mpirun is None:
        pytest.skip("mpirun not found")
    csv_path = tmp_path / "out.csv"
    args = [str(binary(STEP)), "1000", "999", "--exchange", exchange, "--dtype", dtype, "--reps",
            "2", "--csv", str(csv_path)]
    done = subprocess.run([mpirun, "--allow-run-as-root", "-np", "1", *args], capture_output=True,
                          text=True, timeout=600)
    assert done.returncode == 0, done.stderr
    (row,) = read_rows(csv_path)
    if "single-process" in row["variant"]:
        pytest.skip(f"{STEP} was built without MPI (variant {row['variant']})")
    assert row["variant"] == "gpus=1 mpi" + (" peer" if exchange == "peer" else "")
    assert row["verified"] == "yes"
    single = run(STEP, 1000, 999, "--gpus", 1, "--exchange", exchange, "--dtype", dtype, "--reps",
                 2)
    assert single.returncode == 0, single.stderr
    # Both verified bitwise against the same fill definition: the same bits.
    for text in (done.stdout, single.stdout):
        assert "every rank's output band verified bitwise" in text


# ---- Several real GPUs: run where the machine has them, skipped with the count otherwise ----

def visible_gpu_count():
    from transpose_lab.other_kinds import visible_gpus
    return visible_gpus()


@pytest.fixture
def two_gpus(request, gpu_here):
    count = visible_gpu_count()
    if count < 2:
        pytest.skip(f"{request.node.name}: {count} GPU(s) visible; these tests need 2 or more")
    return count


# Odd shapes: uneven bands (37 rows over 2 GPUs is 18 and 19), a band of one row, bands with no
# output rows; chunks that do not divide the bands and chunks left empty.
MULTI_CASES = ([((37, 4111), dtype, 3) for dtype in DTYPES] +
               [((2049, 1025), "float32", 1), ((1, 4099), "float32", 2),
                ((4099, 1), "complex128", 5), ((1000, 999), "uint8", 7)])


@pytest.mark.parametrize("shape,dtype,chunks", MULTI_CASES, ids=lambda v: str(v))
def test_every_gpu_verifies_its_band(shape, dtype, chunks, two_gpus, tmp_path):
    rows, cols = shape
    for gpus, place in dict.fromkeys([(2, "kernel"), (2, "copy-engine"), (two_gpus, "kernel")]):
        csv_path = tmp_path / f"gpus{gpus}_{place}.csv"
        done = run(STEP, rows, cols, "--gpus", gpus, "--chunks", chunks, "--dtype", dtype,
                   "--place", place, "--reps", 2, "--csv", csv_path)
        assert done.returncode == 0, done.stderr
        assert "every rank's output band verified bitwise" in done.stdout
        (row,) = read_rows(csv_path)
        assert row["variant"] == f"gpus={gpus} single-process" and row["verified"] == "yes"
        assert f"{gpus} ranks" in done.stdout and "all-to-all" in done.stdout


@pytest.mark.parametrize("options", EXCHANGE_OPTIONS, ids=" ".join)
@pytest.mark.parametrize("shape,dtype", [((2049, 1025), "float32"), ((37, 4111), "uint8"),
                                         ((4099, 1), "complex128")], ids=lambda v: str(v))
def test_every_gpu_verifies_its_band_with_exchange_options(shape, dtype, options, two_gpus,
                                                           tmp_path):
    done, row = run_verified(tmp_path, shape, dtype, "--gpus", 2, "--chunks", 3, *options)
    assert row["variant"] == "gpus=2 single-process"
    check_exchange_options(done, row, options, virtual=False)


def peer_variant(variant, exchange, stderr):
    """The variant a run with --exchange `exchange` reports: NCCL's where peer access is missing."""
    return variant + (" peer" if exchange == "peer" and PEER_FALLBACK not in stderr else "")


# Odd shapes for the peer exchange on real GPUs: uneven bands, a band of one row, a band boundary
# inside a tile, every element size; and bands that start on a whole vector (16-byte stores).
PEER_MULTI_CASES = [((37, 4111), "uint8"), ((2049, 1025), "float32"), ((1, 4099), "float16"),
                    ((4099, 1), "complex128"), ((1000, 999), "float64"), ((1536, 1030), "uint8"),
                    ((4096, 4096), "float32"), ((1024, 3000), "bfloat16")]


@pytest.mark.parametrize("shape,dtype", PEER_MULTI_CASES, ids=lambda v: str(v))
def test_every_gpu_verifies_its_band_with_peer_writes(shape, dtype, two_gpus, tmp_path):
    done, row = run_verified(tmp_path, shape, dtype, "--gpus", 2, "--exchange", "peer")
    assert row["variant"] == peer_variant("gpus=2 single-process", "peer", done.stderr)
    assert ("peer copy" in done.stdout) == row["variant"].endswith(" peer")


@pytest.mark.parametrize("exchange", ["nccl", "peer"])
@pytest.mark.parametrize("dtype", ["uint8", "float32", "complex128"])
def test_mpirun_one_process_per_gpu(dtype, exchange, two_gpus, tmp_path):
    from transpose_lab.other_kinds import mpi_command
    mpirun = shutil.which("mpirun")
    if mpirun is None:
        pytest.skip("mpirun not found")
    csv_path = tmp_path / "out.csv"
    pipeline = ["--chunks", "3"] if exchange == "nccl" else []
    done = subprocess.run([*map(str, mpi_command(mpirun, 2)), str(binary(STEP)), "2049", "1025",
                           *pipeline, "--exchange", exchange, "--dtype", dtype, "--reps", "2",
                           "--csv", str(csv_path)], capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr
    (row,) = read_rows(csv_path)  # rank 0 alone writes the row
    if row["variant"].startswith("gpus=1 single-process"):
        pytest.skip(f"{STEP} was built without MPI")
    assert row["variant"] == peer_variant("gpus=2 mpi", exchange, done.stderr)
    assert row["verified"] == "yes"


@pytest.mark.parametrize("options", EXCHANGE_OPTIONS, ids=" ".join)
def test_mpirun_one_process_per_gpu_with_exchange_options(options, two_gpus, tmp_path):
    from transpose_lab.other_kinds import mpi_command
    mpirun = shutil.which("mpirun")
    if mpirun is None:
        pytest.skip("mpirun not found")
    csv_path = tmp_path / "out.csv"
    done = subprocess.run([*map(str, mpi_command(mpirun, 2)), str(binary(STEP)), "2049", "1025",
                           "--chunks", "3", *options, "--dtype", "float32", "--reps", "2",
                           "--csv", str(csv_path)], capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr
    (row,) = read_rows(csv_path)  # rank 0 alone writes the row
    if row["variant"].startswith("gpus=1 single-process"):
        pytest.skip(f"{STEP} was built without MPI")
    assert row["variant"] == "gpus=2 mpi" and row["verified"] == "yes"
    check_exchange_options(done, row, options, virtual=False)


def test_a_band_too_large_for_one_of_two_gpus_is_refused(two_gpus):
    done = run(STEP, 1 << 20, 1 << 20, "--gpus", 2, "--dtype", "complex128")
    assert done.returncode == EXIT_NO_MEMORY, done.stderr
    assert "does not fit on GPU" in done.stderr
