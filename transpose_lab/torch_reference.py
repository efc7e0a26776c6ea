"""The PyTorch reference rows: what a user gets from `x.t().contiguous()` for a matrix and from
`x.permute(perm).contiguous()` for an N-d tensor, for each element type, measured like the steps
and against the same kind of ceiling.

    python -m transpose_lab.torch_reference --rows R --cols C [--dtypes T...] --csv FILE
                                            [--reps N]
    python -m transpose_lab.torch_reference --shape D0,D1,... --perm P0,P1,... [--dtypes T...]
                                            --csv FILE [--reps N]

The matrix row is the 2-D case of the permutation: shape (R, C), perm (1, 0) (x.t() is
x.permute(1, 0), the same view). --shape and --perm are read as chapter 3's programs read them:
output axis k is input axis Pk, 1 to 8 axes, outermost first.

For each dtype (torch names: uint8 float16 bfloat16 float32 float64 complex64 complex128):

- Correct first. The input is built through an integer view of its bytes, so that every element
  holds bits that depend on its row-major position; a type narrower than the position (uint8:
  256 values) is checked once per fill, fill f holding the f-th "digit" of the position (as
  common/matrix.hpp and common/permute.cpp do), so that any element read from the wrong place
  differs in at least one fill. The output's memory is poisoned just before the call with the
  bitwise complement of every element's expected value (never a constant byte: 0xFF is a real
  uint8 value), in a block the caching allocator then hands back for the output (checked by its
  address), and every element of `out` is compared, bitwise, with an independent gather of x's
  flat storage: output element (j_0, j_1, ...) must hold input element i with i_perm[k] = j_k,
  its flat index computed with integer arithmetic, never with permute.
- Then timed: CUDA events around each call, median of --reps calls after warm-up, alternating
  with the same-run ceiling, a device-to-device copy of the same bytes (`out.copy_(x)` of two
  contiguous tensors: cudaMemcpyAsync). The last timed call's output is poisoned the same way
  and verified. Before each timed call the L2 cache is overwritten
  (a zero_() of an L2-sized buffer, outside the events, as NVIDIA's nvbench does; with
  LAB_L2_FLUSH=read a sum of twice that, as the steps do), and a short
  spin kernel ahead of it keeps the GPU busy while Python enqueues the call, so that the events
  time the GPU's work rather than the interpreter.
- One row per dtype is appended to FILE, kind `reference`: for a matrix in the lab's schema
  (results_csv.COLUMNS); for --shape and --perm in chapter 3's (those columns, then `shape` and
  `perm`, with rows x cols the input seen as a matrix of its innermost axis, as the chapter's
  programs write them). A file with another header is refused.

Exit codes, as the steps': 0 done; 1 verification failed or another error; 2 bad arguments (one
line); 3 out of device memory; 77 skipped (torch not importable, or no CUDA device), in one line.
"""
import argparse
import csv
import math
import os
import statistics
import sys
import time
from pathlib import Path

from .lab import (DEFAULT_GPU_REPS, EXIT_FAILED, EXIT_NO_MEMORY, EXIT_OK, EXIT_SKIPPED,
                  EXIT_USAGE, L2_FLUSH_VARIABLE, L2_READ_FLUSH_MULTIPLE, MAX_REPS, MAX_WARMUP_MS,
                  MIN_WARMUP_MS, WARMUP_RUNS, WARMUP_VARIABLE)
from .results_csv import COLUMNS, DTYPES, PERMUTE_COLUMNS, positive_int

STEP = "PyTorch"
NAME = "PyTorch reference"  # how its one-line messages start
KIND = "reference"
# (variant, summary) of the row, for a matrix and for a permutation.
MATRIX_ROW = ("t().contiguous()",
              "reference: PyTorch x.t().contiguous() (the transpose a PyTorch user gets)")
PERMUTE_ROW = ("permute().contiguous()",
               "reference: PyTorch x.permute(perm).contiguous() (the permutation a PyTorch user "
               "gets)")
MAX_RANK = 8  # axes, as common/permute.hpp's kMaxPermuteRank
MAX_BYTES = 1 << 62  # input and output together, as common/permute.cpp: far from int64 overflow
DEFAULT_REPS = DEFAULT_GPU_REPS  # as the GPU steps
FALLBACK_L2_BYTES = 128 << 20  # where torch does not report the L2 size: more than any L2 today
SPIN_CYCLES = 200_000  # about 0.1 ms of GPU clock: longer than Python takes to enqueue a call
GATHER_CHUNK = 1 << 25  # output elements compared at a time: bounds the index tensors' memory


class OneLineParser(argparse.ArgumentParser):
    """Bad input gets one line on stderr and exit 2, as the steps' programs answer it."""

    def error(self, message):
        print(f"{NAME}: error: {message} (--help for usage)", file=sys.stderr)
        sys.exit(EXIT_USAGE)


def min_warmup_ms():
    """MIN_WARMUP_MS, or what LAB_WARMUP_MS says, as the steps read it (a bad value: exit 2)."""
    setting = os.environ.get(WARMUP_VARIABLE)
    if setting is None:
        return MIN_WARMUP_MS
    try:
        ms = float(setting)
    except ValueError:
        ms = -1.0
    if not 0.0 <= ms <= MAX_WARMUP_MS:
        print(f"error: {WARMUP_VARIABLE}={setting}: use milliseconds from 0 to "
              f"{MAX_WARMUP_MS:.0f}", file=sys.stderr)
        sys.exit(EXIT_USAGE)
    return ms


def l2_flush_kind():
    """'write' (the default) or 'read', as LAB_L2_FLUSH says and the steps read it (a bad value:
    exit 2; common/cuda_harness.cuh says what each does)."""
    setting = os.environ.get(L2_FLUSH_VARIABLE, "write")
    if setting not in ("write", "read"):
        print(f"error: {L2_FLUSH_VARIABLE}={setting}: use write or read", file=sys.stderr)
        sys.exit(EXIT_USAGE)
    return setting


def fields_of(text, flag):
    """'64,3,224,224' -> its fields, refused as common/permute.cpp refuses them."""
    fields = text.split(",")
    if not all(fields):
        raise ValueError(f"{flag} '{text}' has an empty field (give numbers separated by ',')")
    if len(fields) > MAX_RANK:
        raise ValueError(f"{flag} '{text}' has {len(fields)} axes; at most {MAX_RANK}")
    return fields


def parse_problem(shape_text, perm_text):
    """(shape, perm) from --shape and --perm, with the words of chapter 3's programs
    (common/permute.cpp, common/cli.cpp) for what they refuse: ValueError says why."""
    shape = []
    for axis, field in enumerate(fields_of(shape_text, "--shape")):
        what = f"extent {axis} of --shape"
        if not field.isascii() or not field.isdigit():  # no sign, space or other digits
            raise ValueError(f"{what} must be a positive whole number, got '{field}'")
        if int(field) == 0:
            raise ValueError(f"{what} must be at least 1, got '{field}'")
        shape.append(int(field))
    axes = fields_of(perm_text, "--perm")
    if len(axes) != len(shape):
        raise ValueError(f"--perm {perm_text} has {len(axes)} axes and --shape {shape_text} has "
                         f"{len(shape)}: give one axis of --perm per extent")
    perm = [int(field) if field.isascii() and field.isdigit() else -1 for field in axes]
    if sorted(perm) != list(range(len(shape))):
        raise ValueError(f"--perm {perm_text} is not a permutation of 0..{len(shape) - 1} (each "
                         "axis once)")
    return shape, perm


def parse_args(argv):
    def reps(text):
        value = positive_int(text)
        if value > MAX_REPS:
            raise ValueError(f"{text!r} is more than {MAX_REPS}")
        return value

    parser = OneLineParser(prog="python -m transpose_lab.torch_reference", description=__doc__,
                           formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rows", type=positive_int)
    parser.add_argument("--cols", type=positive_int)
    parser.add_argument("--shape", help="D0,D1,...: extents, outermost first (with --perm)")
    parser.add_argument("--perm", help="P0,P1,...: output axis k is input axis Pk")
    parser.add_argument("--dtypes", nargs="+", choices=list(DTYPES), default=list(DTYPES),
                        metavar="DTYPE", help=f"default: all ({' '.join(DTYPES)})")
    parser.add_argument("--reps", type=reps, default=DEFAULT_REPS)
    parser.add_argument("--csv", type=Path, required=True)
    args = parser.parse_args(argv)
    matrix = (args.rows, args.cols) != (None, None)
    if matrix and (args.shape, args.perm) != (None, None):
        parser.error("give --rows and --cols, or --shape and --perm, not both")
    if matrix:
        if None in (args.rows, args.cols):
            parser.error("--rows needs --cols" if args.cols is None else "--cols needs --rows")
        args.problem = Problem((args.rows, args.cols), (1, 0), matrix=True)
    elif None in (args.shape, args.perm):
        parser.error("give --rows and --cols, or --shape and --perm" if args.shape == args.perm
                     else "--shape needs --perm" if args.perm is None else "--perm needs --shape")
    else:
        try:
            args.problem = Problem(*parse_problem(args.shape, args.perm))
        except ValueError as why:
            parser.error(str(why))
    widest = max(args.dtypes, key=DTYPES.get)
    needed = 2 * args.problem.count * DTYPES[widest]
    if needed > MAX_BYTES:
        parser.error(f"shape {args.problem.shape_text()} of {widest} needs {needed} bytes for the "
                     "input and the output: more than 2^62")
    return args


class Problem:
    """A permutation of a row-major tensor, output axis k being input axis perm[k] (as
    numpy.transpose and torch.permute take it); the matrix row is shape (rows, cols), perm (1, 0).
    Sizes and index arithmetic in plain integers: no torch here."""

    def __init__(self, shape, perm, matrix=False):
        self.shape, self.perm, self.matrix = tuple(shape), tuple(perm), matrix
        self.out_shape = tuple(self.shape[axis] for axis in self.perm)
        self.count = math.prod(self.shape)
        strides = [1] * len(self.shape)
        for axis in range(len(self.shape) - 2, -1, -1):
            strides[axis] = strides[axis + 1] * self.shape[axis + 1]
        # A step along output axis k is a step along input axis perm[k]: its stride in x's storage.
        self.source_strides = tuple(strides[axis] for axis in self.perm)
        self.variant, self.summary = MATRIX_ROW if matrix else PERMUTE_ROW
        self.columns = COLUMNS if matrix else PERMUTE_COLUMNS
        self.view_text = "x.t()" if matrix else f"x.permute({self.perm_text()})"

    def shape_text(self, shape=None):
        return "x".join(map(str, self.shape if shape is None else shape))

    def perm_text(self):
        return ",".join(map(str, self.perm))

    def describe(self):
        if self.matrix:
            return f"matrix   {self.shape[0]} x {self.shape[1]}"
        return (f"tensor   {self.shape_text()} perm {self.perm_text()} -> "
                f"{self.shape_text(self.out_shape)}")

    def where(self, position):
        """Output element number `position` (row-major) in the words the steps use for it."""
        index = []
        for extent in reversed(self.out_shape):
            position, j = divmod(position, extent)
            index.append(j)
        index.reverse()
        if self.matrix:
            return f"output row {index[0]}, col {index[1]}"
        return f"output index ({', '.join(map(str, index))})"

    def csv_cells(self):
        """rows x cols: the input seen as a matrix of its innermost axis (what chapter 3's
        programs write, so that rows * cols is the element count); shape and perm for a
        permutation."""
        cells = {"rows": self.count // self.shape[-1], "cols": self.shape[-1]}
        if not self.matrix:
            cells.update(shape=self.shape_text(), perm=self.perm_text())
        return cells


def skip(reason):
    print(f"{NAME}: skipped: {reason}", file=sys.stderr)
    return EXIT_SKIPPED


def error(message, code=EXIT_FAILED):
    print(f"{NAME}: error: {message}", file=sys.stderr)
    return code


def check_csv_header(path, columns):
    """None if rows can be appended to path (absent, empty or the same header), else why not."""
    try:
        with open(path, newline="", encoding="utf-8-sig") as handle:
            first = handle.readline().rstrip("\r\n")
    except FileNotFoundError:
        return None
    except OSError as problem:
        return f"cannot read {path}: {problem.strerror}"
    if first and first != ",".join(columns):
        return f"{path} has another header; refusing to mix schemas in one file"
    return None


def append_row(path, row, columns):
    path.parent.mkdir(parents=True, exist_ok=True)
    new = not path.exists() or path.stat().st_size == 0
    with open(path, "a", newline="", encoding="utf-8") as handle:
        writer = csv.writer(handle, lineterminator="\n")
        if new:
            writer.writerow(columns)
        writer.writerow([row[name] for name in columns])


class Checker:
    """The input, the expected output and the bitwise check, on any torch device (the CPU too:
    the check itself can be tested where there is no GPU)."""

    def __init__(self, torch, device):
        self.torch, self.device = torch, device
        self.torch_dtypes = {
            "uint8": torch.uint8, "float16": torch.float16, "bfloat16": torch.bfloat16,
            "float32": torch.float32, "float64": torch.float64, "complex64": torch.complex64,
            "complex128": torch.complex128,
        }

    # --- The input: integer words, one (or, for 16-byte elements, two) per element.

    def word_type(self, elem_bytes):
        """The integer type whose view holds an element's bits (signed but for uint8), and how
        many words make one element."""
        torch = self.torch
        return {1: (torch.uint8, 1), 2: (torch.int16, 1), 4: (torch.int32, 1),
                8: (torch.int64, 1), 16: (torch.int64, 2)}[elem_bytes]

    def fills_needed(self, elem_bytes, count):
        word, _ = self.word_type(elem_bytes)
        bits = min(8 * word.itemsize, 62)  # 62: the shifts below stay in range of an int64
        position_bits = max(count - 1, 0).bit_length()
        return max(1, -(-position_bits // bits)), bits

    def make_input(self, dtype, problem, fill, digit_bits):
        """A tensor of problem.shape and dtype, the element at row-major position p holding
        digit `fill` of p in base 2^digit_bits (16-byte elements: that digit and its complement,
        so that the two halves differ). Built and returned as (x, words): words is the integer
        view, its last axis the words of the last axis' elements."""
        torch = self.torch
        elem_bytes = DTYPES[dtype]
        word, per_element = self.word_type(elem_bytes)
        position = torch.arange(problem.count, dtype=torch.int64, device=self.device)
        digit = (position >> (fill * digit_bits)) & ((1 << digit_bits) - 1)
        del position
        width = 8 * word.itemsize
        if word != torch.uint8 and width < 64:  # into the signed range, without relying on wrap
            digit = torch.where(digit >= (1 << (width - 1)), digit - (1 << width), digit)
        if per_element == 2:
            words = torch.stack((digit, ~digit), dim=1)
        else:
            words = digit.to(word)
        del digit
        words = words.reshape(*problem.shape[:-1], problem.shape[-1] * per_element)
        x = words.view(self.torch_dtypes[dtype])
        assert x.shape == problem.shape and x.is_contiguous()
        return x, words

    def sources(self, problem):
        """(o0, o1, index): output elements o0 .. o1 - 1 (row-major) at a time, index the flat
        input element each must hold. The definition, by integer arithmetic and not by permute:
        output multi-index (j_0, j_1, ...) holds input element sum_k j_k * source_strides[k]."""
        torch = self.torch
        for o0 in range(0, problem.count, GATHER_CHUNK):
            o1 = min(problem.count, o0 + GATHER_CHUNK)
            rest = torch.arange(o0, o1, dtype=torch.int64, device=self.device)
            index = torch.zeros_like(rest)
            for extent, stride in zip(reversed(problem.out_shape),
                                      reversed(problem.source_strides)):
                index += (rest % extent) * stride
                rest = torch.div(rest, extent, rounding_mode="floor")
            del rest
            yield o0, o1, index

    def expected_complement(self, words, problem, poison):
        """Writes into poison (count x words per element) the bitwise complement of every
        expected output element: a value that differs from the right one at every position."""
        flat = words.reshape(problem.count, -1)
        for o0, o1, index in self.sources(problem):
            poison[o0:o1] = self.torch.bitwise_not(flat[index])

    def verify(self, out, words, problem):
        """(wrong, checked, first) for out against words, x's integer storage: every element of
        out must have the bits of the input element that sources() names. first: None or
        (where, got, want) of the first wrong element, got and want in hex."""
        flat = words.reshape(problem.count, -1)
        # out is contiguous, but where permute moved only axes of extent 1 it is x itself, with
        # any stride on those axes: flattened first, it views as words whatever the element size.
        got_all = out.reshape(-1).view(words.dtype).reshape(problem.count, -1)
        wrong, first = 0, None
        for o0, o1, index in self.sources(problem):
            want = flat[index]
            got = got_all[o0:o1]
            bad = (got != want).any(dim=1)
            count = int(bad.sum())
            if count and first is None:
                at = int(bad.nonzero()[0])
                first = (problem.where(o0 + at), self.hex(got[at]), self.hex(want[at]))
            wrong += count
        return wrong, problem.count, first

    @staticmethod
    def hex(words):
        width = words.element_size() * 2
        mask = (1 << (8 * words.element_size())) - 1
        return "0x" + "".join(f"{int(w) & mask:0{width}x}" for w in reversed(words.tolist()))


class Reference(Checker):
    """The GPU side: the poisoned output block and the timing, on CUDA device 0. torch is
    imported only where it is there, and passed in."""

    def __init__(self, torch):
        super().__init__(torch, torch.device("cuda", 0))
        properties = torch.cuda.get_device_properties(0)
        self.device_name = properties.name
        l2_bytes = getattr(properties, "L2_cache_size", 0) or FALLBACK_L2_BYTES
        self.flush_reads = l2_flush_kind() == "read"  # several L2s of bytes, read (a sum)
        multiple = L2_READ_FLUSH_MULTIPLE if self.flush_reads else 1
        self.flush_buffer = torch.zeros(l2_bytes * multiple, dtype=torch.uint8, device=self.device)
        self.spin = getattr(torch.cuda, "_sleep", None)  # a spin kernel; absent: no spin

    def poison_block(self, words, problem):
        """The address of a freed block of the output's size that holds the complement of every
        expected output element: the cache is emptied first, so that the caching allocator hands
        this block back for the next allocation of that size."""
        torch = self.torch
        torch.cuda.synchronize()
        torch.cuda.empty_cache()
        poison = torch.empty((problem.count, words.numel() // problem.count), dtype=words.dtype,
                             device=self.device)
        self.expected_complement(words, problem, poison)
        torch.cuda.synchronize()
        # The gather's temporaries are cached blocks too, and the allocator picks the best fit:
        # released here, while the poison is still held, its block is the only one left to reuse.
        torch.cuda.empty_cache()
        address = poison.data_ptr()
        del poison
        return address

    @staticmethod
    def require_poisoned(out, address):
        if out.data_ptr() != address:
            raise RuntimeError("the output did not reuse the poisoned block: the check would not "
                               "see an element left unwritten")

    def poisoned_permute(self, x, words, problem):
        """x.permute(perm).contiguous() into memory that held, just before, the complement of
        every expected output element (poison_block)."""
        permuted = x.permute(problem.perm)  # for a matrix, x.t(): the same view
        if permuted.is_contiguous():  # only axes of extent 1 move: no copy, out is x itself
            return permuted.contiguous()
        address = self.poison_block(words, problem)
        out = permuted.contiguous()
        self.torch.cuda.synchronize()
        self.require_poisoned(out, address)
        return out

    # --- Timing.

    def median_event_ms(self, reps, *work, before_last=None):
        """Medians of event-timed runs of each piece of work, alternating (a, b, a, b, ...),
        after warm-up; the L2 is flushed before each timed piece, outside the events.
        before_last(i), if given, runs ahead of piece i's last timed run (outside the events)."""
        torch = self.torch
        start_time, runs, minimum_ms = time.perf_counter(), 0, min_warmup_ms()
        while runs < WARMUP_RUNS or (time.perf_counter() - start_time) * 1e3 < minimum_ms:
            for piece in work:
                piece()
            torch.cuda.synchronize()
            runs += 1
        start = torch.cuda.Event(enable_timing=True)
        stop = torch.cuda.Event(enable_timing=True)
        times = [[] for _ in work]
        for rep in range(reps):
            for i, (piece, piece_times) in enumerate(zip(work, times)):
                if before_last is not None and rep == reps - 1:
                    before_last(i)
                if self.spin is not None:
                    self.spin(SPIN_CYCLES)  # busy GPU while the rest is enqueued
                if self.flush_reads:
                    self.flush_buffer.sum()
                else:
                    self.flush_buffer.zero_()
                start.record()
                piece()
                stop.record()
                stop.synchronize()
                piece_times.append(start.elapsed_time(stop))
        return [statistics.median(piece_times) for piece_times in times]


def measure(ref, dtype, problem, reps):
    """(the CSV row for dtype, the check's one line); raises VerificationFailed."""
    torch = ref.torch
    elem_bytes = DTYPES[dtype]
    fills, digit_bits = ref.fills_needed(elem_bytes, problem.count)
    for fill in range(fills - 1, -1, -1):  # the last one filled, fill 0, is the one timed
        x, words = ref.make_input(dtype, problem, fill, digit_bits)
        out = ref.poisoned_permute(x, words, problem)
        wrong, checked, first = ref.verify(out, words, problem)
        if wrong:
            raise VerificationFailed(dtype, fill, fills, wrong, checked, first)
        del out
        if fill:
            del x, words
    checked_line = (f"verified: all {problem.count} elements bitwise equal to the reference"
                    + (f" over {fills} fills" if fills > 1 else ""))
    copies = not x.permute(problem.perm).is_contiguous()
    if not copies:  # contiguous() returns the view, copying nothing
        checked_line += f" ({problem.view_text} is already contiguous: no copy)"

    copy_out = torch.empty_like(x)
    results = {}

    def permute():
        results["out"] = x.permute(problem.perm).contiguous()

    def copy():
        copy_out.copy_(x)

    def poison_last_output(piece):
        """Ahead of the last timed call: the earlier outputs freed, the block it will get
        poisoned (a block of earlier correct outputs would hide an element left unwritten)."""
        if piece == 0 and copies:
            results.pop("out", None)
            results["poisoned at"] = ref.poison_block(words, problem)

    permute_ms, copy_ms = ref.median_event_ms(reps, permute, copy,
                                              before_last=poison_last_output)
    torch.cuda.synchronize()
    if "poisoned at" in results:
        ref.require_poisoned(results["out"], results["poisoned at"])
    wrong, checked, first = ref.verify(results.pop("out"), words, problem)
    if wrong:
        raise VerificationFailed(dtype, 0, 1, wrong, checked, first, when="last timed call")
    del copy_out, x, words

    if permute_ms <= 0 or copy_ms <= 0:
        raise RuntimeError(f"{dtype}: a median time of 0 ms ({problem.variant} {permute_ms}, "
                           f"copy {copy_ms}): too small to time with CUDA events")
    moved = 2.0 * problem.count * elem_bytes
    gbps, ceiling_gbps = moved / permute_ms / 1e6, moved / copy_ms / 1e6
    return {
        "step": STEP, "variant": problem.variant, "device": ref.device_name, "dtype": dtype,
        "elem_bytes": elem_bytes, "kind": KIND, "threads": 0,
        "launch": f"torch {torch.__version__}", "reps": reps,
        "median_ms": f"{permute_ms:.6f}", "gbps": f"{gbps:.6g}",
        "ceiling_gbps": f"{ceiling_gbps:.6g}",
        "pct_of_ceiling": f"{100.0 * gbps / ceiling_gbps:.2f}", "e2e_ms": "",
        "verified": "yes", "summary": problem.summary,
        # torch's copy_ of one contiguous tensor into another is a device-to-device cudaMemcpy.
        "ceiling_kind": "memcpy", "memcpy_gbps": f"{ceiling_gbps:.6g}",
        **problem.csv_cells(),
    }, checked_line


class VerificationFailed(Exception):
    def __init__(self, dtype, fill, fills, wrong, checked, first, when="first run"):
        where, got, want = first
        super().__init__(f"{dtype} ({when}): verification FAILED (fill {fill + 1} of {fills}): "
                         f"{wrong} of {checked} elements wrong; first at {where}: got {got}, "
                         f"want {want}")


def main(argv=None):
    args = parse_args(argv)
    min_warmup_ms()  # a bad LAB_WARMUP_MS is bad input: refused before torch or a GPU
    l2_flush_kind()  # and so is a bad LAB_L2_FLUSH
    problem = args.problem
    try:
        import torch
    except Exception as failure:  # ImportError, or a broken install that fails while importing
        return skip(f"torch is not importable ({type(failure).__name__}: {failure})")
    if not torch.cuda.is_available() or torch.cuda.device_count() == 0:
        return skip(f"no CUDA device (torch {torch.__version__})")
    header_problem = check_csv_header(args.csv, problem.columns)
    if header_problem:
        return error(header_problem)

    ref = Reference(torch)
    out_of_memory = getattr(torch.cuda, "OutOfMemoryError", MemoryError)
    print(f"{STEP} {problem.variant}: {problem.summary}")
    print(f"  device   {ref.device_name}, torch {torch.__version__}")
    print(f"  {problem.describe()}; median of {args.reps} calls, L2 flushed"
          f"{' (read)' if ref.flush_reads else ''} before each; "
          "ceiling: out.copy_(x), device to device\n")
    print(f"  {'dtype':<11} {'ms':>10} {'GB/s':>9} {'copy GB/s':>10} {'% of copy':>10}  check")
    for dtype in args.dtypes:
        try:
            row, checked_line = measure(ref, dtype, problem, args.reps)
        except out_of_memory as failure:  # a RuntimeError too: caught first
            tensor = problem.count * DTYPES[dtype]
            return error(f"{problem.shape_text()} {dtype} does not fit in device memory (x, the "
                         f"output and the copy's output are {tensor} bytes each, and the check "
                         f"gathers in chunks): {str(failure).splitlines()[0]}", EXIT_NO_MEMORY)
        except (VerificationFailed, RuntimeError) as failure:
            return error(str(failure))
        append_row(args.csv, row, problem.columns)
        print(f"  {dtype:<11} {float(row['median_ms']):>10.3f} {float(row['gbps']):>9.1f} "
              f"{float(row['ceiling_gbps']):>10.1f} {float(row['pct_of_ceiling']):>9.1f}%  "
              f"{checked_line}", flush=True)
        torch.cuda.empty_cache()
    print(f"\nCSV: {args.csv}")
    return EXIT_OK


if __name__ == "__main__":
    sys.exit(main())
