"""Planted bugs for every kernel step (tests/planted_bugs/plant.py): an element unwritten, an
element moved by one, an off-by-one at a tile edge (v7_packed: a 16-byte vector each time). Without
a GPU: every bug plants into its step's current source, and v7's plants build where nvcc is. With a
GPU: `make check` (the grader) fails each on correctness, the verifier's own words in the failing
line."""
import concurrent.futures
import json
import subprocess
import sys

import pytest

from conftest import ROOT

sys.path.insert(0, str(ROOT / "tests" / "planted_bugs"))
import plant  # noqa: E402

KERNEL_STEPS_WITHOUT_PLANTS = {
    # Library calls: no kernel of the lab's to plant a bug in.
    "CUDA.cublas", "CUDA.cublaslt",
}


def kernel_steps():
    done = subprocess.run(["make", "--no-print-directory", "-s", "-C", str(ROOT),
                           "print-CUDA_STEPS", "print-REFERENCE_STEPS"],
                          capture_output=True, text=True, check=True)
    return done.stdout.split()


def test_every_kernel_step_has_its_plants_or_a_reason():
    missing = [s for s in kernel_steps()
               if s not in plant.STORES and s not in KERNEL_STEPS_WITHOUT_PLANTS]
    assert missing == [], missing


@pytest.mark.parametrize("bug", sorted(plant.BUGS))
@pytest.mark.parametrize("step", sorted(plant.STORES))
def test_each_bug_plants_into_the_current_source(step, bug, tmp_path):
    source = (plant.write(step, bug, tmp_path) / "transpose.cu").read_text()
    original = (ROOT / step / "transpose.cu").read_text()
    changed = [line for line in source.splitlines() if line not in original.splitlines()]
    assert len(changed) == 1 and f"// BUG: {bug}" in changed[0], changed


# Steps that store 16-byte vectors: their tile-edge test names the kernel's own variables beyond the
# store statement (v7: g, GROUPS), so a plant that applies may still not compile.
VECTOR_STEPS = sorted(s for s, store in plant.STORES.items() if plant.VECTOR[0].match(store))


def has_nvcc():
    done = subprocess.run(["make", "--no-print-directory", "-s", "-C", str(ROOT), "print-NVCC"],
                          capture_output=True, text=True)
    return done.stdout.strip() != ""


@pytest.mark.parametrize("bug", sorted(plant.BUGS))
@pytest.mark.parametrize("step", VECTOR_STEPS)
def test_each_vector_plant_builds_as_the_grader_builds_it(step, bug, tmp_path):
    if not has_nvcc():
        pytest.skip("nvcc not found")
    # As the grader's scratch copy: the step's Makefile and the planted source, a link to common/.
    (tmp_path / "common").symlink_to(ROOT / "common", target_is_directory=True)
    build = plant.write(step, bug, tmp_path / step)
    (build / "Makefile").write_text((ROOT / step / "Makefile").read_text())
    # The planted file compiles into the kernel object alone: the driver and the harness are not
    # planted, and leaving them out keeps this test short where only two cores build.
    done = subprocess.run(["make", "--no-print-directory", "-C", str(build), "CUDA_ARCH=90",
                           ".build/kernel.o"], capture_output=True, text=True, timeout=900)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    assert (build / ".build" / "kernel.o").is_file()


def grade(step, bug, folder):
    report = folder / "report.json"
    done = subprocess.run([sys.executable, "-m", "transpose_lab.grader", step, "--from",
                           str(plant.write(step, bug, folder / "source")), "--quick",
                           "--report", str(report)],
                          cwd=ROOT, capture_output=True, text=True, timeout=3600)
    checks = json.loads(report.read_text())["checks"] if report.is_file() else []
    return bug, done, checks


@pytest.mark.parametrize("step", sorted(plant.STORES))
def test_make_check_fails_every_planted_bug_on_correctness(step, needs_gpu, tmp_path):
    jobs = []
    with concurrent.futures.ThreadPoolExecutor(len(plant.BUGS)) as pool:
        for bug in plant.BUGS:
            (tmp_path / bug).mkdir()
            jobs.append(pool.submit(grade, step, bug, tmp_path / bug))
        results = [job.result() for job in jobs]
    caught = 0
    for bug, done, checks in results:
        failed = [c for c in checks if c["verdict"] == "FAIL" and c["category"] == "correctness"]
        assert done.returncode == 1, f"{step} {bug}: {done.stdout}{done.stderr}"
        assert failed, f"{step} {bug}: no correctness check failed: {done.stdout}"
        assert any("verification FAILED" in c["detail"] for c in failed), done.stdout
        caught += 1
    print(f"{step}: {caught} of {len(plant.BUGS)} planted bugs caught by make check")
