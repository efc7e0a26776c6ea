"""CUDA.v9_multigpu when something fails: a rank that dies, or a signal that stops the job, ends
every rank with one line each, and never hangs. The driver's fault injection,
LAB_DIE_AFTER_REPS=RANK:N (the process that owns rank RANK kills itself with SIGKILL after N timed
runs, as a crash would end it), makes a rank die at the same point of every run: under
`mpirun -np 2` on two GPUs mpirun then stops the other rank with SIGTERM, which says so in one
line; with --virtual-ranks the one process, every rank with it, ends by the signal. SIGTERM or
SIGINT sent to a running process ends it with one line. A malformed value is refused as a bad
option is, without a GPU too. The GPU tests are skipped, with the reason, where no GPU (or fewer
than two, or no Open MPI mpirun) is here."""
import os
import shutil
import signal
import subprocess
import time

import pytest

from conftest import EXIT_SKIPPED, EXIT_USAGE, binary, gpu_is_here, run
from test_multigpu_step import STEP, gpu_here, step_built, two_gpus  # noqa: F401 (fixtures)
from transpose_lab.lab import EXIT_FAILED, MAX_WARMUP_MS, WARMUP_VARIABLE

DIE_VARIABLE = "LAB_DIE_AFTER_REPS"  # the driver's fault injection (distributed_driver.cu)
SHAPE = ["2049", "1025"]
REPS = 50  # the fault comes after a few of them: the run is mid-way when a rank dies
# Far longer than such a run takes (NCCL's set-up included): a run still going by then hangs.
TIMEOUT_S = 120
RUNNING_S = 5  # how long a run goes before a test signals it: well past its set-up


def start(command, env_extra=None):
    return subprocess.Popen([str(part) for part in command], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True,
                            env={**os.environ, **(env_extra or {})})


def finish(process):
    """(stdout, stderr) once the process ends; one still running after TIMEOUT_S hangs: it is
    stopped (SIGTERM first, which mpirun passes on to its ranks) and the test fails."""
    try:
        return process.communicate(timeout=TIMEOUT_S)
    except subprocess.TimeoutExpired:
        process.terminate()
        try:
            _, stderr = process.communicate(timeout=30)
        except subprocess.TimeoutExpired:
            process.kill()
            _, stderr = process.communicate()
        pytest.fail(f"still running after {TIMEOUT_S} s: it hangs. stderr:\n{stderr}")


def stop_lines(stderr):
    """The driver's own lines about being stopped."""
    return [line for line in stderr.splitlines() if line.startswith(STEP) and "stopped by" in line]


# ---- Without a GPU: the fault variable is checked with the command line ----

BAD_FAULTS = ["", "1", "1:", ":2", "x:2", "1:x", "1:2:3", "-1:2", "1:-2", "1:+2", " 1:2",
              f"1:{REPS}", "1234567:1"]


@pytest.mark.parametrize("value", BAD_FAULTS)
def test_a_bad_fault_is_one_line_and_2_without_a_gpu_too(value, step_built):
    done = run(STEP, *SHAPE, "--virtual-ranks", 2, "--reps", REPS,
               env_extra={DIE_VARIABLE: value})
    assert done.returncode == EXIT_USAGE, done.stderr
    assert done.stderr.count("\n") == 1, done.stderr
    assert f"error: {DIE_VARIABLE}={value}: use RANK:N" in done.stderr
    assert f"from 0 to {REPS - 1} (--reps {REPS})" in done.stderr
    assert done.stdout == ""


def test_a_good_fault_passes_the_check(step_built):
    if gpu_is_here():
        pytest.skip("a GPU is here: the run would go on and die (the GPU tests below)")
    done = run(STEP, *SHAPE, "--virtual-ranks", 2, "--reps", REPS,
               env_extra={DIE_VARIABLE: f"1:{REPS - 1}"})
    assert done.returncode == EXIT_SKIPPED, done.stderr


# ---- One GPU, one process ----

def test_a_fault_for_a_rank_not_in_the_run_is_refused(gpu_here):
    done = run(STEP, *SHAPE, "--virtual-ranks", 2, "--reps", REPS,
               env_extra={DIE_VARIABLE: "2:1"})
    assert done.returncode == EXIT_USAGE, done.stderr
    assert done.stderr.count("\n") == 1, done.stderr
    assert f"{DIE_VARIABLE}=2:1: rank 2 is not in this run (ranks 0 to 1)" in done.stderr


@pytest.mark.parametrize("exchange", ["nccl", "peer"])
def test_a_rank_that_dies_ends_its_process(exchange, gpu_here):
    # Virtual ranks all live in one process: the rank that dies takes the others with it.
    process = start([binary(STEP), *SHAPE, "--virtual-ranks", 2, "--exchange", exchange,
                     "--reps", REPS], {DIE_VARIABLE: "1:2"})
    _, stderr = finish(process)
    assert process.returncode == -signal.SIGKILL, stderr
    assert stop_lines(stderr) == []  # a process killed says nothing: its launcher does


@pytest.mark.parametrize("stop", [signal.SIGTERM, signal.SIGINT], ids=lambda s: s.name)
def test_a_signal_ends_a_running_process_in_one_line(stop, gpu_here):
    # The warm-up held at its longest (the timed runs of the step, untimed): whenever the signal
    # comes after the set-up, the ranks are busy on the GPU.
    process = start([binary(STEP), *SHAPE, "--virtual-ranks", 2],
                    {WARMUP_VARIABLE: str(int(MAX_WARMUP_MS))})
    time.sleep(RUNNING_S)
    if process.poll() is not None:
        _, stderr = process.communicate()
        pytest.fail(f"ended before the signal, with {process.returncode}:\n{stderr}")
    process.send_signal(stop)
    _, stderr = finish(process)
    assert process.returncode == EXIT_FAILED, stderr
    assert stderr.count("\n") == 1 and stderr.startswith(f"{STEP}: stopped by {stop.name}: "), \
        stderr


# ---- Two GPUs, one process each under mpirun ----

def built_with_mpi():
    """Whether the step links MPI (make found mpicxx): only then is each process one rank."""
    linked = subprocess.run(["ldd", str(binary(STEP))], capture_output=True, text=True,
                            timeout=60)
    return "libmpi" in linked.stdout


@pytest.fixture
def mpirun(request, two_gpus):
    path = shutil.which("mpirun")
    if path is None:
        pytest.skip(f"{request.node.name}: mpirun not found")
    version = subprocess.run([path, "--version"], capture_output=True, text=True, timeout=60)
    if "Open MPI" not in version.stdout + version.stderr:
        pytest.skip(f"{request.node.name}: mpirun is not Open MPI's, which stops the ranks left "
                    "with SIGTERM (a launcher that sends SIGKILL leaves them no word)")
    if not built_with_mpi():
        pytest.skip(f"{request.node.name}: {STEP} was built without MPI")
    return path


# How the ranks exchange: the arguments, and a shape whose bands they take. Symmetric windows need
# bands of one size (else they fall back to registered buffers): rows and columns that split in two.
# There the survivor waits in a copy-engine all-to-all, on a flag in memory, not in a kernel.
MPI_EXCHANGES = {
    "nccl": (["--exchange", "nccl"], SHAPE),
    "peer": (["--exchange", "peer"], SHAPE),
    "windows": (["--exchange", "nccl", "--nccl-buffers", "windows"], ["2048", "1024"]),
}


@pytest.mark.parametrize("dead", [0, 1], ids=lambda rank: f"rank{rank}_dies")
@pytest.mark.parametrize("exchange", list(MPI_EXCHANGES))
def test_a_rank_that_dies_ends_the_other_in_one_line(exchange, dead, mpirun):
    from transpose_lab.other_kinds import mpi_command
    arguments, shape = MPI_EXCHANGES[exchange]
    process = start([*mpi_command(mpirun, 2), binary(STEP), *shape, *arguments, "--reps", REPS],
                    {DIE_VARIABLE: f"{dead}:2"})
    _, stderr = finish(process)
    assert process.returncode != 0, stderr
    # The survivor, left waiting for the dead rank, is stopped by mpirun and says so once; the
    # rank that died says nothing (mpirun's own lines say which rank died and how).
    lines = stop_lines(stderr)
    assert len(lines) == 1, stderr
    assert lines[0].startswith(f"{STEP}: rank {1 - dead} of 2: stopped by SIGTERM: "), stderr
    assert not any(line.startswith(STEP) and "error" in line for line in stderr.splitlines())
    assert "--nccl-buffers" not in stderr, stderr  # the windows held: no fallback line
