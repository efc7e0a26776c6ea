"""Chapter 3's PyTorch row (transpose_lab.torch_reference --shape --perm: what a user gets from
x.permute(perm).contiguous()): bad input refused in one line with the words of the chapter's
programs (no torch needed), a skip in one line without torch or a GPU, its check shown on CPU
tensors to follow the definition and to catch planted wrong outputs (where torch is), and on a
GPU its rows verified and written in chapter 3's CSV schema, beside the steps in make permute."""
import csv
import subprocess
import sys

import pytest

from conftest import (DTYPES, ELEM_BYTES, EXIT_SKIPPED, EXIT_USAGE, ROOT, gpu_unavailable_reason,
                      run_torch_or_skip, torch_importable, torch_reference)
from test_permute import BAD_INPUT, CASES, CPU_STEP, case_id, elements, random_cases
from transpose_lab.results_csv import COLUMNS, PERMUTE_COLUMNS
from transpose_lab import permute_cases

# The chapter's bad input that is about --shape and --perm (the rest are the steps' own options).
SHAPE_AND_PERM_BAD_INPUT = [(arguments, reason) for arguments, reason in BAD_INPUT
                            if set(arguments[::2]) <= {"--shape", "--perm"}]


def csv_rows(path):
    with open(path, newline="") as handle:
        return list(csv.DictReader(handle))


# --- What needs neither torch nor a GPU.

@pytest.mark.parametrize("arguments,reason", SHAPE_AND_PERM_BAD_INPUT + [
    (["--rows", "3", "--cols", "4", "--shape", "3,4", "--perm", "1,0"], "not both"),
    (["--shape", "3,4", "--perm", "1,0", "--dtypes", "int4"], "invalid choice"),
], ids=lambda a: " ".join(a) if isinstance(a, list) else "")
def test_bad_input_is_one_line_and_exit_2_in_the_steps_words(arguments, reason, tmp_path):
    done = torch_reference(*arguments, "--csv", tmp_path / "x.csv")
    assert done.returncode == EXIT_USAGE, done.stdout + done.stderr
    assert done.stdout == ""
    lines = done.stderr.splitlines()
    assert len(lines) == 1 and "error:" in lines[0] and reason in lines[0], done.stderr
    assert not (tmp_path / "x.csv").exists()


def test_without_torch_the_row_is_skipped_in_one_line(tmp_path):
    if torch_importable():
        pytest.skip("torch is importable here")
    done = torch_reference("--shape", "3,4,5", "--perm", "2,0,1", "--csv", tmp_path / "x.csv")
    assert done.returncode == EXIT_SKIPPED and done.stdout == ""
    lines = done.stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith("PyTorch reference: skipped: torch is not")
    assert not (tmp_path / "x.csv").exists()


def test_without_a_gpu_the_row_is_skipped_in_one_line(tmp_path):
    if not torch_importable():
        pytest.skip("torch is not importable here")
    if gpu_unavailable_reason() is None:
        pytest.skip("a GPU is present: the no-GPU path cannot be exercised here")
    done = torch_reference("--shape", "3,4,5", "--perm", "2,0,1", "--csv", tmp_path / "x.csv")
    assert done.returncode == EXIT_SKIPPED
    lines = done.stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith("PyTorch reference: skipped: no CUDA device")


def test_make_permute_runs_the_pytorch_row_with_the_python_that_has_torch():
    done = subprocess.run(["make", "--no-print-directory", "-n", "-C", str(ROOT), "permute"],
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert "transpose_lab.permute_cases" in done.stdout and "--torch-python " in done.stdout


def test_the_runner_puts_the_pytorch_row_beside_the_steps_or_says_why_not(tmp_path):
    csv_path = tmp_path / "permute.csv"
    done = subprocess.run([sys.executable, "-m", "transpose_lab.permute_cases", "--steps",
                           CPU_STEP, "--cases", "batched-17x19", "--dtypes", "uint8", "float32",
                           "--reps", "1", "--torch-python", sys.executable, "--csv",
                           str(csv_path)], capture_output=True, text=True, cwd=ROOT, timeout=600)
    assert done.returncode == 0, done.stdout + done.stderr
    header = done.stdout.split("Permutations on", 1)[1].splitlines()[1].split()
    assert header == ["case", "dtype", CPU_STEP, "PyTorch"]
    torch_rows = [row for row in csv_rows(csv_path) if row["step"] == "PyTorch"]
    skipped = [line for line in done.stdout.splitlines() if line.startswith("PyTorch: skipped")]
    if torch_rows:
        assert [row["dtype"] for row in torch_rows] == ["uint8", "float32"] and not skipped
        shape, perm = permute_cases.CASES["batched-17x19"]
        assert all(row["verified"] == "yes" and row["shape"] == permute_cases.shape_column(shape)
                   and row["perm"] == perm for row in torch_rows)
    else:
        assert len(skipped) == 1, done.stdout  # once, however many cases


# --- The check itself, on CPU tensors, where torch is (no GPU needed).

@pytest.fixture(scope="module")
def checker():
    if not torch_importable():
        pytest.skip("torch is not importable here")
    import torch
    from transpose_lab import torch_reference as reference
    return reference, reference.Checker(torch, torch.device("cpu"))


def parsed(reference, shape, perm):
    return reference.Problem(*reference.parse_problem(shape, perm))


@pytest.mark.parametrize("chunk", [1 << 25, 7])  # 7: output chunks that cut every axis
@pytest.mark.parametrize("shape,perm,dtype", random_cases(30, seed=5, max_elements=1 << 14))
def test_the_gather_is_the_definition(checker, shape, perm, dtype, chunk, monkeypatch):
    np = pytest.importorskip("numpy")
    reference, check = checker
    monkeypatch.setattr(reference, "GATHER_CHUNK", chunk)
    problem = parsed(reference, shape, perm)
    index = [part for _, _, part in check.sources(problem)]
    got = check.torch.cat(index).numpy()
    want = np.transpose(np.arange(problem.count).reshape(problem.shape), problem.perm).ravel()
    assert (got == want).all()


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("case", CASES, ids=case_id)
def test_a_right_output_passes_every_fill(checker, case, dtype):
    reference, check = checker
    problem = parsed(reference, *case)
    fills, digit_bits = check.fills_needed(ELEM_BYTES[dtype], problem.count)
    for fill in range(fills):
        x, words = check.make_input(dtype, problem, fill, digit_bits)
        out = x.permute(problem.perm).contiguous()
        assert check.verify(out, words, problem) == (0, elements(case[0]), None)


def checks_of_every_fill(checker, dtype, plant):
    """verify()'s answer for each fill of 17x19x3 perm 2,0,1 (969 elements: uint8 takes two
    fills), the right output changed by plant(out as words, words) first."""
    reference, check = checker
    problem = parsed(reference, "17,19,3", "2,0,1")
    fills, digit_bits = check.fills_needed(ELEM_BYTES[dtype], problem.count)
    answers = []
    for fill in range(fills):
        x, words = check.make_input(dtype, problem, fill, digit_bits)
        out = x.permute(problem.perm).contiguous()
        plant(out.reshape(-1).view(words.dtype).reshape(problem.count, -1), words, problem)
        answers.append(check.verify(out, words, problem))
    return answers


@pytest.mark.parametrize("dtype", DTYPES)
def test_one_misplaced_element_is_caught_and_named(checker, dtype):
    def misplace(out, words, problem):  # output element 0 takes element 256's value: the same
        out[0] = out[256]               # uint8 in the first fill, caught by the second

    answers = checks_of_every_fill(checker, dtype, misplace)
    caught = [first for wrong, _, first in answers if wrong]
    assert all(wrong <= 1 for wrong, _, _ in answers) and caught, answers
    assert caught[0][0] == "output index (0, 0, 0)"


@pytest.mark.parametrize("dtype", DTYPES)
def test_one_unwritten_element_is_caught_in_every_fill(checker, dtype):
    _, check = checker

    def leave_poisoned(out, words, problem):
        poison = check.torch.empty_like(out)
        check.expected_complement(words, problem, poison)
        assert (poison != out).any(dim=1).all()  # the poison differs at every position
        out[-1] = poison[-1]

    answers = checks_of_every_fill(checker, dtype, leave_poisoned)
    assert [wrong for wrong, _, _ in answers] == [1] * len(answers)
    assert all(first[0] == "output index (2, 16, 18)" for _, _, first in answers)


@pytest.mark.parametrize("dtype", DTYPES)
def test_a_wrong_permutation_is_caught(checker, dtype):
    reference, check = checker
    problem = parsed(reference, "17,19,3", "2,0,1")
    x, words = check.make_input(dtype, problem, 0, check.fills_needed(ELEM_BYTES[dtype], 969)[1])
    out = x.permute(1, 0, 2).contiguous().reshape(problem.out_shape)
    wrong, checked, first = check.verify(out, words, problem)
    assert wrong > 0 and checked == 969 and first[0].startswith("output index (")


def test_the_matrix_row_is_the_2d_case(checker):
    reference, _ = checker
    matrix = reference.Problem((4, 5), (1, 0), matrix=True)
    assert (matrix.out_shape, matrix.where(7)) == ((5, 4), "output row 1, col 3")
    assert matrix.csv_cells() == {"rows": 4, "cols": 5} and matrix.columns == COLUMNS
    tensor = parsed(reference, "64,64,56,56", "0,2,3,1")
    assert tensor.csv_cells() == {"rows": 64 * 64 * 56, "cols": 56, "shape": "64x64x56x56",
                                  "perm": "0,2,3,1"}
    assert tensor.columns == PERMUTE_COLUMNS


# --- On a GPU, with torch.

@pytest.mark.parametrize("case", CASES, ids=case_id)
def test_the_rows_are_verified_and_in_chapter_3s_schema(case, needs_torch_on_gpu, tmp_path):
    shape, perm = case
    csv_path = tmp_path / "permute.csv"
    done = run_torch_or_skip("--shape", shape, "--perm", perm, "--reps", 2, "--csv", csv_path)
    assert done.returncode == 0, done.stdout + done.stderr
    count = elements(shape)
    assert done.stdout.count(f"verified: all {count} elements bitwise equal") == len(DTYPES)
    assert csv_path.read_text().splitlines()[0] == ",".join(PERMUTE_COLUMNS)
    rows = csv_rows(csv_path)
    assert [row["dtype"] for row in rows] == DTYPES
    for row in rows:
        assert (row["step"], row["variant"], row["kind"]) == ("PyTorch", "permute().contiguous()",
                                                              "reference")
        assert (row["shape"], row["perm"], row["verified"]) == (shape.replace(",", "x"), perm,
                                                                "yes")
        assert int(row["rows"]) * int(row["cols"]) == count
        assert row["ceiling_kind"] == "memcpy" and float(row["ceiling_gbps"]) > 0


def test_uint8_past_256_elements_is_checked_over_two_fills(needs_torch_on_gpu, tmp_path):
    done = run_torch_or_skip("--shape", "17,19,3", "--perm", "2,0,1", "--dtypes", "uint8",
                             "--reps", 2, "--csv", tmp_path / "permute.csv")
    assert done.returncode == 0, done.stderr
    assert "over 2 fills" in done.stdout


def test_the_row_refuses_a_matrix_csv(needs_torch_on_gpu, tmp_path):
    matrix_csv = tmp_path / "matrix.csv"
    done = run_torch_or_skip("--rows", 8, "--cols", 8, "--dtypes", "float32", "--reps", 1,
                             "--csv", matrix_csv)
    assert done.returncode == 0, done.stderr
    before = matrix_csv.read_text()
    done = torch_reference("--shape", "8,8", "--perm", "1,0", "--dtypes", "float32", "--csv",
                           matrix_csv)
    assert done.returncode == 1 and "another header" in done.stderr
    assert matrix_csv.read_text() == before
