"""transpose_lab.ncu_profile: the parser on real Nsight Compute output captured on an H200
(tests/fixtures/ncu/), and the whole command end to end with a fake ncu that prints those
captures, so every path is tested without a GPU. One test runs the real ncu where there is one.
"""
import csv
import io
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import ROOT, gpu_unavailable_reason
from transpose_lab import ncu_profile
from transpose_lab.results_csv import PROFILE_COLUMNS, read_profile

NCU_FIXTURES = Path(__file__).resolve().parent / "fixtures" / "ncu"
CAPTURED_STEPS = ["CUDA.v2", "CUDA.v3", "CUDA.cublas"]
SIZE = 4096  # the captures' size
COPY_STORE_SECTORS = SIZE * SIZE * 4 // 32  # 2,097,152


def captured(step):
    return (NCU_FIXTURES / f"ncu_{step}.csv").read_text()


def kernels_of(step):
    return ncu_profile.parse_kernels(captured(step))


def profile_of(step):
    return ncu_profile.step_profile(step, kernels_of(step), SIZE, SIZE, "NVIDIA H200")


# --- The parser on the captures.

@pytest.mark.parametrize("step", CAPTURED_STEPS)
def test_each_capture_holds_one_kernel_with_every_metric(step):
    # The program's own lines and ncu's ==PROF== lines come before the CSV and must be ignored.
    kernels = kernels_of(step)
    assert len(kernels) == 1
    assert set(ncu_profile.REQUIRED_METRICS) <= set(kernels[0].values)
    assert kernels[0].device_field == "0"  # an index, not a name: device_name must not use it


def test_thousands_separators_are_read_as_one_number():
    values = kernels_of("CUDA.v3")[0].values
    assert values[ncu_profile.DRAM_BYTES_READ] == 67_133_952
    assert values[ncu_profile.SHARED_LOAD_BANK_CONFLICTS] == 16_326_781
    assert values[ncu_profile.DRAM_PCT_OF_PEAK] == pytest.approx(18.32)


def test_v2_stores_eight_times_the_sectors_it_loads():
    # Reads coalesced (a warp's 32 floats in 4 sectors), writes strided (32 sectors a warp).
    profile = profile_of("CUDA.v2")
    assert profile["gld_sectors"] == COPY_STORE_SECTORS
    assert profile["gst_sectors"] == 8 * COPY_STORE_SECTORS == 16_777_216
    assert profile["gld_sectors_per_request"] == 4
    assert profile["gst_sectors_per_request"] == 32
    assert profile["store_sectors_vs_copy"] == 8
    assert profile["shared_ld_bank_conflicts"] == profile["shared_st_bank_conflicts"] == 0
    assert profile["dram_pct_of_peak"] == pytest.approx(9.92)
    assert profile["kernel"] == "transpose_kernel"


def test_v3_stores_like_a_copy_but_its_tile_loads_conflict():
    profile = profile_of("CUDA.v3")
    assert profile["gst_sectors"] == profile["gld_sectors"] == COPY_STORE_SECTORS
    assert profile["store_sectors_vs_copy"] == 1
    assert profile["gst_sectors_per_request"] == 4
    # Reading a column of the 32x32 tile hits one bank 32 times: 31 extra wavefronts for each
    # warp-wide shared load, one such load per global store request (524,288 of them).
    warp_loads = kernels_of("CUDA.v3")[0].values[ncu_profile.GLOBAL_STORE_REQUESTS]
    assert 30 < profile["shared_ld_bank_conflicts"] / warp_loads < 32
    assert profile["shared_ld_bank_conflicts"] > 100 * profile["shared_st_bank_conflicts"]
    assert profile["dram_pct_of_peak"] > profile_of("CUDA.v2")["dram_pct_of_peak"]


def test_cublas_kernel_name_is_parsed_and_shortened():
    kernel = kernels_of("CUDA.cublas")[0]
    assert kernel.name.startswith("void transpose_readWrite_alignment_kernel<float, float, 1,")
    profile = profile_of("CUDA.cublas")
    assert profile["kernel"] == "transpose_readWrite_alignment_kernel<float, float, 1, 0, 6, 5, 3>"
    assert profile["store_sectors_vs_copy"] == 1
    assert profile["gld_sectors_per_request"] == profile["gst_sectors_per_request"] == 4
    assert profile["shared_ld_bank_conflicts"] == 12_817
    assert profile["shared_st_bank_conflicts"] == 3_864


@pytest.mark.parametrize("demangled, short", [
    ("transpose_kernel(const float *, float *, int, int)", "transpose_kernel"),
    ("void k<float, 6>(Params<T2>, const T1 *)", "k<float, 6>"),
    ("void ns::f<(int)4>(float (*)[33], int)", "ns::f<(int)4>"),
    ("transpose_kernel", "transpose_kernel"),
    ("broken(name", "broken(name"),
])
def test_short_kernel_name(demangled, short):
    assert ncu_profile.short_kernel_name(demangled) == short


@pytest.mark.parametrize("text, unit, value", [
    ("67,133,952", "byte", 67_133_952),
    ("67.13", "Mbyte", 67.13e6),
    ("2", "Kibyte", 2048),
    ("2.10", "Msector", 2.1e6),
    ("9.92", "%", 9.92),
    ("12.5", "usecond", 12_500),
    ("n/a", "", None),
])
def test_metric_value_reads_ncu_numbers_in_base_units(text, unit, value):
    assert ncu_profile.metric_value(text, unit) == (pytest.approx(value) if value else None)


def ncu_csv(kernels):
    """ncu-style --csv text for synthetic kernels: [(id, name, {metric: (unit, value)})]."""
    out = io.StringIO()
    writer = csv.writer(out, quoting=csv.QUOTE_ALL, lineterminator="\n")
    writer.writerow(["ID", "Kernel Name", "Device", "Metric Name", "Metric Unit", "Metric Value"])
    for launch_id, name, metrics in kernels:
        for metric, (unit, value) in metrics.items():
            writer.writerow([launch_id, name, "0", metric, unit, value])
    return "==PROF== Disconnected from process 1\n" + out.getvalue()


def captured_metrics(step):
    """The capture's metrics as {name: (unit, text)}, to build synthetic multi-kernel output."""
    return {record["Metric Name"]: (record["Metric Unit"], record["Metric Value"])
            for record in ncu_profile.csv_records(captured(step))}


def test_a_step_with_several_kernels_sums_counts_and_weights_dram_by_duration():
    first = dict(captured_metrics("CUDA.v2"), **{ncu_profile.KERNEL_DURATION: ("usecond", "300")})
    second = dict(captured_metrics("CUDA.v3"), **{ncu_profile.KERNEL_DURATION: ("usecond", "100")})
    kernels = ncu_profile.parse_kernels(ncu_csv([("0", "void prepare(int)", first),
                                                 ("1", "transpose_kernel(float *)", second)]))
    profile = ncu_profile.step_profile("CUDA.lib", kernels, SIZE, SIZE, "gpu")
    assert profile["kernel"] == "prepare + transpose_kernel"
    assert profile["gst_sectors"] == 16_777_216 + 2_097_152
    assert profile["shared_ld_bank_conflicts"] == 16_326_781
    assert profile["dram_bytes_read"] == 69_133_824 + 67_133_952
    assert profile["store_sectors_vs_copy"] == 9
    # Both kernels made 524,288 store requests: (16,777,216 + 2,097,152) / 1,048,576 = 18.
    assert profile["gst_sectors_per_request"] == 18
    assert profile["dram_pct_of_peak"] == pytest.approx((9.92 * 300 + 18.32 * 100) / 400)


def test_several_kernels_without_durations_report_the_largest_dram_pct():
    kernels = ncu_profile.parse_kernels(ncu_csv([
        ("0", "transpose_kernel(float *)", captured_metrics("CUDA.v2")),
        ("1", "transpose_kernel(float *)", captured_metrics("CUDA.v3"))]))
    profile = ncu_profile.step_profile("CUDA.lib", kernels, SIZE, SIZE, "gpu")
    assert profile["kernel"] == "transpose_kernel (x2)"
    assert profile["dram_pct_of_peak"] == pytest.approx(18.32)


def test_a_missing_metric_is_an_error_naming_it():
    metrics = captured_metrics("CUDA.v2")
    del metrics[ncu_profile.DRAM_BYTES_WRITE]
    kernels = ncu_profile.parse_kernels(ncu_csv([("0", "k()", metrics)]))
    with pytest.raises(ncu_profile.ProfileError, match="dram__bytes_write.sum"):
        ncu_profile.step_profile("CUDA.v2", kernels, SIZE, SIZE, "gpu")


def test_the_permission_error_is_recognised():
    line = ncu_profile.counters_unreadable((NCU_FIXTURES / "ncu_ERR_NVGPUCTRPERM.txt").read_text())
    assert line.startswith("ERR_NVGPUCTRPERM")
    assert ncu_profile.counters_unreadable(captured("CUDA.v2")) is None


def test_device_name_prefers_a_name_in_the_device_field(monkeypatch):
    assert ncu_profile.device_name("NVIDIA H200") == "NVIDIA H200"
    monkeypatch.setattr(ncu_profile.shutil, "which", lambda name: None)  # no nvidia-smi
    assert ncu_profile.device_name("0") == ncu_profile.UNKNOWN_DEVICE


def test_the_ncu_command_profiles_one_launch_of_the_step():
    command = ncu_profile.ncu_command("ncu", Path("/lab/CUDA.v2/transpose"), 4096)
    assert command[:6] == ["ncu", "--profile-from-start", "off", "--clock-control", "none",
                           "--metrics"]
    assert set(command[6].split(",")) == set(ncu_profile.REQUESTED_METRICS)
    assert command[7:] == ["--csv", "/lab/CUDA.v2/transpose", "4096", "4096",
                           "--dtype", "float32", "--reps", "1"]
    command = ncu_profile.ncu_command("ncu", Path("/lab/CUDA.v2/transpose"), 64, "float16")
    assert command[-4:] == ["--dtype", "float16", "--reps", "1"]


def test_the_copy_minimum_counts_the_element_bytes():
    # A copy of 4096 x 4096 stores every byte once: 2 bytes an element -> half the sectors.
    assert ncu_profile.copy_store_sectors(SIZE, SIZE, 4) == COPY_STORE_SECTORS
    assert ncu_profile.copy_store_sectors(SIZE, SIZE, 2) == COPY_STORE_SECTORS / 2
    assert ncu_profile.copy_store_sectors(SIZE, SIZE, 16) == 4 * COPY_STORE_SECTORS
    # The same counters read as a float16 run: twice the sectors of that smaller copy.
    profile = ncu_profile.step_profile("CUDA.v3", kernels_of("CUDA.v3"), SIZE, SIZE, "gpu",
                                       "float16")
    assert (profile["dtype"], profile["elem_bytes"]) == ("float16", 2)
    assert profile["store_sectors_vs_copy"] == 2
    assert profile_of("CUDA.v3")["dtype"] == "float32"


# --- The whole command, with a fake ncu and fake step programs in tmp_path.

def make_executable(path, text):
    path.write_text(text)
    path.chmod(0o755)
    return path


def fake_lab(tmp_path, steps, step_exit=0):
    """A lab root whose steps' programs only answer the GPU probe (exit step_exit)."""
    root = tmp_path / "lab"
    for step in steps:
        (root / step).mkdir(parents=True)
        make_executable(root / step / "transpose",
                        f"#!/bin/sh\necho '{step}: skipped: no CUDA device (fake)' >&2\n"
                        f"exit {step_exit}\n")
    return root


def fake_ncu(tmp_path, fixture_for_step=None, exit_code=0):
    """An ncu that logs its arguments and prints the capture for the step it is asked to run
    (the folder of the program named before the sizes): fixture_for_step maps step -> file."""
    mapping = {step: str(NCU_FIXTURES / f"ncu_{step}.csv") for step in CAPTURED_STEPS}
    mapping.update(fixture_for_step or {})
    return make_executable(tmp_path / "ncu", f"""#!{sys.executable}
import sys
from pathlib import Path
with open({str(tmp_path / 'ncu_calls.txt')!r}, "a") as calls:
    calls.write(" ".join(sys.argv[1:]) + "\\n")
step = Path(sys.argv[sys.argv.index("--csv") + 1]).parent.name
fixture = {mapping!r}.get(step)
if fixture is None:
    print("==ERROR== fake ncu: no capture for " + step)
    sys.exit(1)
sys.stdout.write(Path(fixture).read_text())
sys.exit({exit_code})
""")


def run_tool(*args):
    return subprocess.run([sys.executable, "-m", "transpose_lab.ncu_profile", *map(str, args)],
                          capture_output=True, text=True, timeout=300, cwd=ROOT)


def test_end_to_end_with_a_fake_ncu_writes_the_csv_and_the_table(tmp_path):
    root = fake_lab(tmp_path, CAPTURED_STEPS)
    csv_path = tmp_path / "results" / "profile.csv"
    done = run_tool("--steps", *CAPTURED_STEPS, "--size", SIZE, "--csv", csv_path,
                    "--ncu", fake_ncu(tmp_path), "--root", root)
    assert done.returncode == 0, done.stdout + done.stderr

    assert csv_path.read_text().splitlines()[0] == ",".join(PROFILE_COLUMNS)
    rows = {row["step"]: row for row in read_profile(csv_path)}  # the plots' own reader
    assert list(rows) == CAPTURED_STEPS
    assert rows["CUDA.v2"]["store_sectors_vs_copy"] == 8
    assert rows["CUDA.v2"]["gst_sectors_per_request"] == 32
    assert rows["CUDA.v3"]["shared_ld_bank_conflicts"] == 16_326_781
    assert rows["CUDA.v3"]["store_sectors_vs_copy"] == 1
    assert rows["CUDA.cublas"]["kernel"].startswith("transpose_readWrite_alignment_kernel<")
    assert all(row["rows"] == row["cols"] == SIZE for row in rows.values())

    table = done.stdout
    assert "8.00x" in table and "1.00x" in table and "16,326,781" in table
    assert "every byte written once" in table  # the footnote that defines the ratio
    assert ncu_profile.ncu_log_path(csv_path).read_text().count("$ ") == len(CAPTURED_STEPS)

    calls = (tmp_path / "ncu_calls.txt").read_text().splitlines()
    assert len(calls) == len(CAPTURED_STEPS)
    assert calls[0].startswith("--profile-from-start off --clock-control none --metrics ")
    assert calls[0].endswith(f"{root}/CUDA.v2/transpose 4096 4096 --dtype float32 --reps 1")


def assert_one_line_skip(done, csv_path, *words):
    assert done.returncode == 0, done.stdout + done.stderr
    lines = done.stdout.strip().splitlines()
    assert len(lines) == 1, done.stdout
    assert lines[0].startswith("profile skipped: ")
    for word in words:
        assert word in lines[0]
    assert not csv_path.exists()


def test_missing_ncu_is_one_line_and_exit_zero(tmp_path):
    csv_path = tmp_path / "profile.csv"
    done = run_tool("--steps", "CUDA.v2", "--csv", csv_path, "--ncu", tmp_path / "no-such-ncu")
    assert_one_line_skip(done, csv_path, "ncu", "not found")


def test_unreadable_counters_are_one_line_and_exit_zero(tmp_path):
    root = fake_lab(tmp_path, ["CUDA.v1", "CUDA.v2"])
    permission = str(NCU_FIXTURES / "ncu_ERR_NVGPUCTRPERM.txt")
    ncu = fake_ncu(tmp_path, {"CUDA.v1": permission, "CUDA.v2": permission})
    csv_path = tmp_path / "profile.csv"
    done = run_tool("--steps", "CUDA.v1", "CUDA.v2", "--csv", csv_path, "--ncu", ncu,
                    "--root", root)
    assert_one_line_skip(done, csv_path, "ERR_NVGPUCTRPERM")
    assert len((tmp_path / "ncu_calls.txt").read_text().splitlines()) == 1  # stopped at once


def test_no_kernel_profiled_by_the_first_step_is_one_line_and_exit_zero(tmp_path):
    root = fake_lab(tmp_path, ["CUDA.v2"])
    silent = make_executable(tmp_path / "silent.txt", "==PROF== Disconnected from process 1\n")
    csv_path = tmp_path / "profile.csv"
    done = run_tool("--steps", "CUDA.v2", "--csv", csv_path,
                    "--ncu", fake_ncu(tmp_path, {"CUDA.v2": str(silent)}), "--root", root)
    assert_one_line_skip(done, csv_path, "no kernel")


def test_no_gpu_is_one_line_and_exit_zero(tmp_path):
    root = fake_lab(tmp_path, CAPTURED_STEPS, step_exit=77)
    csv_path = tmp_path / "profile.csv"
    done = run_tool("--steps", *CAPTURED_STEPS, "--csv", csv_path, "--ncu", fake_ncu(tmp_path),
                    "--root", root)
    assert_one_line_skip(done, csv_path, "no GPU", "no CUDA device (fake)")
    assert not (tmp_path / "ncu_calls.txt").exists()


def test_an_unbuilt_first_step_is_one_line_and_exit_zero(tmp_path):
    csv_path = tmp_path / "profile.csv"
    done = run_tool("--steps", "CUDA.v2", "--csv", csv_path, "--ncu", fake_ncu(tmp_path),
                    "--root", tmp_path / "empty-lab")
    assert_one_line_skip(done, csv_path, "CUDA.v2/transpose does not exist")


def test_a_failing_step_is_named_and_exits_one_keeping_the_others(tmp_path):
    steps = ["CUDA.v2", "CUDA.v4", "CUDA.v3"]  # the fake ncu has no capture for CUDA.v4
    root = fake_lab(tmp_path, steps)
    csv_path = tmp_path / "profile.csv"
    done = run_tool("--steps", *steps, "--csv", csv_path, "--ncu", fake_ncu(tmp_path),
                    "--root", root)
    assert done.returncode == 1
    assert "CUDA.v4: failed: exit 1: ==ERROR== fake ncu: no capture for CUDA.v4" in done.stdout
    assert [row["step"] for row in read_profile(csv_path)] == ["CUDA.v2", "CUDA.v3"]


def test_help_exits_zero():
    done = run_tool("--help")
    assert done.returncode == 0
    assert "--ncu" in done.stdout and "--steps" in done.stdout


# --- The real thing, where this machine has a GPU and an ncu that may read its counters.

def test_real_ncu_counts_v2_stores_at_eight_times_a_copy(tmp_path):
    ncu = ncu_profile.find_ncu(None)
    if gpu_unavailable_reason() or ncu is None:
        pytest.skip(f"needs a GPU and ncu: {gpu_unavailable_reason() or 'no ncu'}")
    csv_path = tmp_path / "profile.csv"
    done = run_tool("--steps", "CUDA.v2", "--size", 1024, "--csv", csv_path, "--ncu", ncu)
    if "profile skipped" in done.stdout:
        pytest.skip(done.stdout.strip())
    assert done.returncode == 0, done.stdout + done.stderr
    (row,) = read_profile(csv_path)
    assert row["store_sectors_vs_copy"] == pytest.approx(8, rel=0.01)
    assert row["gld_sectors_per_request"] == pytest.approx(4, rel=0.01)
    assert row["device"] != ncu_profile.UNKNOWN_DEVICE


def test_a_step_that_does_not_support_the_dtype_is_n_a_not_a_failure(tmp_path):
    refused = make_executable(tmp_path / "refused.txt",
                              "CUDA.cublas: error: CUDA.cublas does not support --dtype uint8\n")
    steps = ["CUDA.v2", "CUDA.cublas"]
    root = fake_lab(tmp_path, steps)
    # The fake ncu prints the step's own refusal and exits as the step did (2).
    ncu = fake_ncu(tmp_path, {"CUDA.cublas": str(refused)})
    text = ncu.read_text().replace("sys.exit(0)",
                                   "sys.exit(2 if 'refused' in fixture else 0)")
    ncu.write_text(text)
    csv_path = tmp_path / "profile.csv"
    done = run_tool("--steps", *steps, "--csv", csv_path, "--ncu", ncu, "--root", root,
                    "--dtype", "uint8")
    assert done.returncode == 0, done.stdout + done.stderr
    assert "CUDA.cublas: n/a: CUDA.cublas: error: CUDA.cublas does not support" in done.stdout
    (row,) = read_profile(csv_path)
    assert (row["step"], row["dtype"], row["elem_bytes"]) == ("CUDA.v2", "uint8", 1)
    assert "one launch per step, 4096 x 4096 uint8" in done.stdout  # the table names the type
    calls = (tmp_path / "ncu_calls.txt").read_text()
    assert "--dtype uint8" in calls


def test_the_ncu_command_takes_an_odd_shape():
    command = ncu_profile.ncu_command("ncu", Path("/lab/CUDA.v7_packed/transpose"), 8191,
                                      "uint8", cols=8193)
    assert command[-6:] == ["8191", "8193", "--dtype", "uint8", "--reps", "1"]
