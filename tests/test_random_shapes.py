"""Seeded random shapes: every step, variant and kind, every element type, each case verified
exactly by the program itself (its first runs, its last timed run; docs/verification.md).

Shapes are drawn from 1, primes, powers of two and their neighbours, and tall and wide extremes.
The seed is printed and every failure names it: LAB_RANDOM_SEED=<seed> replays the same cases
(LAB_RANDOM_CASES sets the cases per step). Without a GPU only the CPU steps run (CI); with one,
every GPU step too: more than 500 cases, several programs at a time."""
import concurrent.futures
import os
import random

import pytest

from conftest import (CPU_STEPS, CUDA_STEPS, PIPELINE_STEPS, binary, run, run_batch,
                      steps_from_makefile, supported_dtypes)

DISTRIBUTED_STEPS = steps_from_makefile("DISTRIBUTED_STEPS")
SEED = int(os.environ.get("LAB_RANDOM_SEED") or random.SystemRandom().randrange(1 << 32))
CASES_PER_STEP = int(os.environ.get("LAB_RANDOM_CASES", "0")) or None
CPU_CASES, GPU_CASES = 40, 45  # 12 GPU steps x 45: 540 cases on a GPU
PRIMES = [2, 3, 5, 7, 13, 31, 37, 61, 127, 257, 509, 1021, 4099]
POWERS = [1 << k for k in range(1, 13)]
SIDES = sorted({1, *PRIMES, *POWERS, *(p - 1 for p in POWERS), *(p + 1 for p in POWERS)})
EXTREME = [(1 << 17) - 1, 1 << 17, (1 << 17) + 1]  # tall or wide, against 1 to 3
MAX_ELEMENTS = 1 << 21

print(f"\ntest_random_shapes: LAB_RANDOM_SEED={SEED}")


def draw_shape(rng):
    if rng.random() < 0.15:
        long_side, short_side = rng.choice(EXTREME), rng.randint(1, 3)
        return (long_side, short_side) if rng.random() < 0.5 else (short_side, long_side)
    while True:
        rows, cols = rng.choice(SIDES), rng.choice(SIDES)
        if rows * cols <= MAX_ELEMENTS:
            return rows, cols


def kind_options(step, rng, rows, cols):
    """Options of the step's own kind, drawn too."""
    if step in PIPELINE_STEPS:
        return ["--streams", rng.randint(1, 3), "--pieces", rng.randint(1, min(rows, 6))]
    if step in DISTRIBUTED_STEPS:
        return ["--virtual-ranks", rng.randint(1, max(1, min(rows, cols, 3)))]
    return []


def cases(step, count):
    """(rows, cols, dtype, extra arguments): every supported type in turn, shapes at random."""
    rng = random.Random(f"{SEED}:{step}")
    dtypes = supported_dtypes(step)
    every_variant = ["--variant", "all"] if run(step, "--list-variants").stdout.split() else []
    drawn = []
    for i in range(count):
        rows, cols = draw_shape(rng)
        drawn.append((rows, cols, dtypes[i % len(dtypes)],
                      every_variant + kind_options(step, rng, rows, cols)))
    return drawn


def run_case(step, case, threads):
    rows, cols, dtype, extra = case
    done = run(step, rows, cols, "--dtype", dtype, "--reps", 1, *extra, threads=threads,
               timeout=900)
    command = " ".join(map(str, [f"{step}/transpose", rows, cols, "--dtype", dtype, "--reps", 1,
                                 *extra]))
    # Each program's check lines name every element (the distributed one, every rank's band).
    verified = f"all {rows * cols} elements" in done.stdout or (
        step in DISTRIBUTED_STEPS and "verified bitwise" in done.stdout)
    if done.returncode == 0 and verified:
        return None
    return f"{command}: exit {done.returncode}: {(done.stderr or done.stdout).strip()[-400:]}"


def batch_failures(step, drawn, threads):
    """The cases of a step that takes --cases, in one process (conftest.run_batch)."""
    arguments = [tuple(map(str, [rows, cols, "--dtype", dtype, *extra]))
                 for rows, cols, dtype, extra in drawn]
    results = run_batch(step, tuple(dict.fromkeys(arguments)), ("--reps", "1"), threads)
    failures = []
    for (rows, cols, _, _), words in zip(drawn, arguments):
        done = results.get(words)
        command = f"{step}/transpose --reps 1 {' '.join(words)}"
        if done is None:
            failures.append(f"{command}: not run, the batch ended before it")
        elif done.returncode != 0 or f"all {rows * cols} elements" not in done.stdout:
            failures.append(f"{command}: exit {done.returncode}: "
                            f"{(done.stderr or done.stdout).strip()[-400:]}")
    return failures


def check_step(step, count, workers, threads=None):
    if not binary(step).exists():
        pytest.skip(f"{step} is not built")
    drawn = cases(step, CASES_PER_STEP or count)
    if step in PIPELINE_STEPS + DISTRIBUTED_STEPS:  # their drivers run one case a process
        with concurrent.futures.ThreadPoolExecutor(workers) as pool:
            failures = [f for f in pool.map(lambda c: run_case(step, c, threads), drawn) if f]
    else:
        failures = batch_failures(step, drawn, threads)
    print(f"{step}: {len(drawn) - len(failures)} of {len(drawn)} random cases exact "
          f"(LAB_RANDOM_SEED={SEED})")
    assert not failures, (f"LAB_RANDOM_SEED={SEED}: {len(failures)} of {len(drawn)} cases "
                          "failed:\n" + "\n".join(failures))


@pytest.mark.parametrize("step", CPU_STEPS)
def test_random_shapes_cpu(step):
    check_step(step, CPU_CASES, workers=2, threads=1)


@pytest.mark.parametrize("step", CUDA_STEPS + PIPELINE_STEPS + DISTRIBUTED_STEPS)
def test_random_shapes_gpu(step, needs_gpu):
    check_step(step, GPU_CASES, workers=min(8, os.cpu_count() or 1))
