"""The PyTorch reference row: what a user gets from `x.t().contiguous()`, for each element type,
measured like the steps and against the same kind of ceiling.

    python -m transpose_lab.torch_reference --rows R --cols C [--dtypes T...] --csv FILE
                                            [--reps N]

For each dtype (torch names: uint8 float16 bfloat16 float32 float64 complex64 complex128):

- Correct first. The input is built through an integer view of its bytes, so that every element
  holds bits that depend on its position; a type narrower than the position (uint8: 256 values)
  is checked once per fill, fill f holding the f-th "digit" of the position (as common/matrix.hpp
  does), so that any element read from the wrong place differs in at least one fill. The output's
  memory is poisoned just before the call with the bitwise complement of every element's expected
  value (never a constant byte: 0xFF is a real uint8 value), in a block the caching allocator then
  hands back for the output (checked by its address), and every element of `out` is compared,
  bitwise, with an independent gather of x's flat storage at index r * cols + c.
- Then timed: CUDA events around each call, median of --reps calls after warm-up, alternating
  with the same-run ceiling, a device-to-device copy of the same bytes (`out.copy_(x)` of two
  contiguous tensors: cudaMemcpyAsync). The last timed call's output is poisoned the same way
  and verified. Before each timed call the L2 cache is overwritten
  (a zero_() of an L2-sized buffer, outside the events, as NVIDIA's nvbench does), and a short
  spin kernel ahead of it keeps the GPU busy while Python enqueues the call, so that the events
  time the GPU's work rather than the interpreter.
- One row per dtype is appended to FILE in the lab's schema (results_csv.COLUMNS), kind
  `reference`; a file with another header is refused.

Exit codes, as the steps': 0 done; 1 verification failed or another error; 2 bad arguments;
3 out of device memory; 77 skipped (torch not importable, or no CUDA device), in one line.
"""
import argparse
import csv
import statistics
import sys
import time
from pathlib import Path

from .results_csv import COLUMNS, DTYPES, positive_int

STEP = "PyTorch"
VARIANT = "t().contiguous()"
KIND = "reference"
SUMMARY = "reference: PyTorch x.t().contiguous() (the transpose a PyTorch user gets)"
DEFAULT_REPS = 50  # as the GPU steps (common/config.hpp)
MAX_REPS = 100000
WARMUP_RUNS, MIN_WARMUP_MS = 2, 200.0  # as common/config.hpp: clocks ramp up when work starts
FALLBACK_L2_BYTES = 128 << 20  # where torch does not report the L2 size: more than any L2 today
SPIN_CYCLES = 200_000  # about 0.1 ms of GPU clock: longer than Python takes to enqueue a call
GATHER_CHUNK = 1 << 25  # output elements compared at a time: bounds the index tensor's memory
EXIT_OK, EXIT_FAILED, EXIT_USAGE, EXIT_NO_MEMORY, EXIT_SKIPPED = 0, 1, 2, 3, 77


def parse_args(argv):
    def reps(text):
        value = positive_int(text)
        if value > MAX_REPS:
            raise ValueError(f"{text!r} is more than {MAX_REPS}")
        return value

    parser = argparse.ArgumentParser(prog="python -m transpose_lab.torch_reference",
                                     description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rows", type=positive_int, required=True)
    parser.add_argument("--cols", type=positive_int, required=True)
    parser.add_argument("--dtypes", nargs="+", choices=list(DTYPES), default=list(DTYPES),
                        metavar="DTYPE", help=f"default: all ({' '.join(DTYPES)})")
    parser.add_argument("--reps", type=reps, default=DEFAULT_REPS)
    parser.add_argument("--csv", type=Path, required=True)
    return parser.parse_args(argv)


def skip(reason):
    print(f"PyTorch reference: skipped: {reason}", file=sys.stderr)
    return EXIT_SKIPPED


def error(message, code=EXIT_FAILED):
    print(f"PyTorch reference: error: {message}", file=sys.stderr)
    return code


def check_csv_header(path):
    """None if rows can be appended to path (absent, empty or the same header), else why not."""
    try:
        with open(path, newline="", encoding="utf-8-sig") as handle:
            first = handle.readline().rstrip("\r\n")
    except FileNotFoundError:
        return None
    except OSError as problem:
        return f"cannot read {path}: {problem.strerror}"
    if first and first != ",".join(COLUMNS):
        return f"{path} has another header; refusing to mix schemas in one file"
    return None


def append_row(path, row):
    path.parent.mkdir(parents=True, exist_ok=True)
    new = not path.exists() or path.stat().st_size == 0
    with open(path, "a", newline="", encoding="utf-8") as handle:
        writer = csv.writer(handle, lineterminator="\n")
        if new:
            writer.writerow(COLUMNS)
        writer.writerow([row[name] for name in COLUMNS])


class Reference:
    """The torch side: every call that needs torch, which is imported only when it is there."""

    def __init__(self, torch):
        self.torch = torch
        self.device = torch.device("cuda", 0)
        properties = torch.cuda.get_device_properties(0)
        self.device_name = properties.name
        l2_bytes = getattr(properties, "L2_cache_size", 0) or FALLBACK_L2_BYTES
        self.flush_buffer = torch.empty(l2_bytes, dtype=torch.uint8, device=self.device)
        self.spin = getattr(torch.cuda, "_sleep", None)  # a spin kernel; absent: no spin
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

    def make_input(self, dtype, rows, cols, fill, digit_bits):
        """rows x cols of dtype, element (r, c) holding digit `fill` of p = r * cols + c in
        base 2^digit_bits (16-byte elements: that digit and its complement, so that the two
        halves differ). Built and returned as (x, words): words is the integer view."""
        torch = self.torch
        elem_bytes = DTYPES[dtype]
        word, per_element = self.word_type(elem_bytes)
        position = torch.arange(rows * cols, dtype=torch.int64, device=self.device)
        digit = (position >> (fill * digit_bits)) & ((1 << digit_bits) - 1)
        del position
        width = 8 * word.itemsize
        if word != torch.uint8 and width < 64:  # into the signed range, without relying on wrap
            digit = torch.where(digit >= (1 << (width - 1)), digit - (1 << width), digit)
        if per_element == 2:
            words = torch.stack((digit, ~digit), dim=1).reshape(rows, cols * 2)
        else:
            words = digit.to(word).reshape(rows, cols)
        del digit
        x = words.view(self.torch_dtypes[dtype])
        assert x.shape == (rows, cols) and x.is_contiguous()
        return x, words

    def output_chunks(self, rows, cols):
        """(c0, c1, index): output rows c0 .. c1 - 1 at a time, index the flat input element
        (r * cols + c) of each of their elements, in output order."""
        torch = self.torch
        row_step = max(1, GATHER_CHUNK // max(rows, 1))
        r_index = torch.arange(rows, dtype=torch.int64, device=self.device) * cols
        for c0 in range(0, cols, row_step):
            c1 = min(cols, c0 + row_step)
            c_index = torch.arange(c0, c1, dtype=torch.int64, device=self.device)
            yield c0, c1, (c_index[:, None] + r_index[None, :]).reshape(-1)

    def poison_block(self, words, rows, cols):
        """The address of a freed block of the output's size that holds the complement of every
        expected output element: the cache is emptied first, so that the caching allocator hands
        this block back for the next allocation of that size."""
        torch = self.torch
        torch.cuda.synchronize()
        torch.cuda.empty_cache()
        per_element = words.shape[1] // cols
        flat = words.reshape(rows * cols, per_element)
        poison = torch.empty((cols * rows, per_element), dtype=words.dtype, device=self.device)
        for c0, c1, index in self.output_chunks(rows, cols):
            poison[c0 * rows:c1 * rows] = torch.bitwise_not(flat[index])
        del index, flat
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

    def poisoned_transpose(self, x, words, rows, cols):
        """x.t().contiguous() into memory that held, just before, the complement of every expected
        output element (poison_block)."""
        if x.t().is_contiguous():  # 1 x N or N x 1: no copy is made, out is x itself
            return x.t().contiguous()
        address = self.poison_block(words, rows, cols)
        out = x.t().contiguous()
        self.torch.cuda.synchronize()
        self.require_poisoned(out, address)
        return out

    def verify(self, out, words, rows, cols):
        """(wrong, checked, first) for out (cols x rows) against words, x's integer storage:
        out[c, r] must have the bits of flat element r * cols + c. first: None or
        (output row, output col, got, want) of the first wrong element, in hex."""
        per_element = words.shape[1] // cols
        flat = words.reshape(rows * cols, per_element)
        # out is contiguous, but a 1 x N or N x 1 result may be x itself with a stride of N on a
        # dimension of size 1: flattened first, it views as words whatever the element size.
        got_all = out.reshape(-1).view(words.dtype).reshape(cols * rows, per_element)
        wrong, first = 0, None
        for c0, c1, index in self.output_chunks(rows, cols):  # output rows c0 .. c1 - 1
            want = flat[index]
            got = got_all[c0 * rows:c1 * rows]
            bad = (got != want).any(dim=1)
            count = int(bad.sum())
            if count and first is None:
                at = int(bad.nonzero()[0])
                first = (c0 + at // rows, at % rows, self.hex(got[at]), self.hex(want[at]))
            wrong += count
        return wrong, rows * cols, first

    @staticmethod
    def hex(words):
        width = words.element_size() * 2
        mask = (1 << (8 * words.element_size())) - 1
        return "0x" + "".join(f"{int(w) & mask:0{width}x}" for w in reversed(words.tolist()))

    # --- Timing.

    def median_event_ms(self, reps, *work, before_last=None):
        """Medians of event-timed runs of each piece of work, alternating (a, b, a, b, ...),
        after warm-up; the L2 is flushed before each timed piece, outside the events.
        before_last(i), if given, runs ahead of piece i's last timed run (outside the events)."""
        torch = self.torch
        start_time, runs = time.perf_counter(), 0
        while runs < WARMUP_RUNS or (time.perf_counter() - start_time) * 1e3 < MIN_WARMUP_MS:
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
                self.flush_buffer.zero_()
                start.record()
                piece()
                stop.record()
                stop.synchronize()
                piece_times.append(start.elapsed_time(stop))
        return [statistics.median(piece_times) for piece_times in times]


def measure(ref, dtype, rows, cols, reps):
    """(the CSV row for dtype, the check's one line); raises VerificationFailed."""
    torch = ref.torch
    elem_bytes = DTYPES[dtype]
    fills, digit_bits = ref.fills_needed(elem_bytes, rows * cols)
    for fill in range(fills - 1, -1, -1):  # the last one filled, fill 0, is the one timed
        x, words = ref.make_input(dtype, rows, cols, fill, digit_bits)
        out = ref.poisoned_transpose(x, words, rows, cols)
        wrong, checked, first = ref.verify(out, words, rows, cols)
        if wrong:
            raise VerificationFailed(dtype, fill, fills, wrong, checked, first)
        del out
        if fill:
            del x, words
    checked_line = (f"verified: all {rows * cols} elements bitwise equal to the reference"
                    + (f" over {fills} fills" if fills > 1 else ""))
    if x.t().is_contiguous():  # 1 x N or N x 1: contiguous() returns the view, copying nothing
        checked_line += " (x.t() is already contiguous: no copy)"

    copy_out = torch.empty_like(x)
    results = {}

    def transpose():
        results["out"] = x.t().contiguous()

    def copy():
        copy_out.copy_(x)

    def poison_last_output(piece):
        """Ahead of the last timed transpose: the earlier outputs freed, the block it will get
        poisoned (a block of earlier correct outputs would hide an element left unwritten)."""
        if piece == 0 and not x.t().is_contiguous():
            results.pop("out", None)
            results["poisoned at"] = ref.poison_block(words, rows, cols)

    transpose_ms, copy_ms = ref.median_event_ms(reps, transpose, copy,
                                                before_last=poison_last_output)
    torch.cuda.synchronize()
    if "poisoned at" in results:
        ref.require_poisoned(results["out"], results["poisoned at"])
    wrong, checked, first = ref.verify(results.pop("out"), words, rows, cols)
    if wrong:
        raise VerificationFailed(dtype, 0, 1, wrong, checked, first, when="last timed call")
    del copy_out, x, words

    if transpose_ms <= 0 or copy_ms <= 0:
        raise RuntimeError(f"{dtype}: a median time of 0 ms (transpose {transpose_ms}, copy "
                           f"{copy_ms}): too small to time with CUDA events")
    moved = 2.0 * rows * cols * elem_bytes
    gbps, ceiling_gbps = moved / transpose_ms / 1e6, moved / copy_ms / 1e6
    return {
        "step": STEP, "variant": VARIANT, "device": ref.device_name, "dtype": dtype,
        "elem_bytes": elem_bytes, "kind": KIND, "rows": rows, "cols": cols, "threads": 0,
        "launch": f"torch {torch.__version__}", "reps": reps,
        "median_ms": f"{transpose_ms:.6f}", "gbps": f"{gbps:.6g}",
        "ceiling_gbps": f"{ceiling_gbps:.6g}",
        "pct_of_ceiling": f"{100.0 * gbps / ceiling_gbps:.2f}", "e2e_ms": "",
        "verified": "yes", "summary": SUMMARY,
        # torch's copy_ of one contiguous tensor into another is a device-to-device cudaMemcpy.
        "ceiling_kind": "memcpy", "memcpy_gbps": f"{ceiling_gbps:.6g}",
    }, checked_line


class VerificationFailed(Exception):
    def __init__(self, dtype, fill, fills, wrong, checked, first, when="first run"):
        row, col, got, want = first
        super().__init__(f"{dtype} ({when}): verification FAILED (fill {fill + 1} of {fills}): "
                         f"{wrong} of {checked} elements wrong; first at output row {row}, "
                         f"col {col}: got {got}, want {want}")


def main(argv=None):
    args = parse_args(argv)
    try:
        import torch
    except Exception as problem:  # ImportError, or a broken install that fails while importing
        return skip(f"torch is not importable ({type(problem).__name__}: {problem})")
    if not torch.cuda.is_available() or torch.cuda.device_count() == 0:
        return skip(f"no CUDA device (torch {torch.__version__})")
    header_problem = check_csv_header(args.csv)
    if header_problem:
        return error(header_problem)

    ref = Reference(torch)
    out_of_memory = getattr(torch.cuda, "OutOfMemoryError", MemoryError)
    print(f"{STEP} {VARIANT}: {SUMMARY}")
    print(f"  device   {ref.device_name}, torch {torch.__version__}")
    print(f"  matrix   {args.rows} x {args.cols}; median of {args.reps} calls, L2 flushed "
          "before each; ceiling: out.copy_(x), device to device\n")
    print(f"  {'dtype':<11} {'ms':>10} {'GB/s':>9} {'copy GB/s':>10} {'% of copy':>10}  check")
    for dtype in args.dtypes:
        try:
            row, checked_line = measure(ref, dtype, args.rows, args.cols, args.reps)
        except out_of_memory as problem:  # a RuntimeError too: caught first
            matrix = args.rows * args.cols * DTYPES[dtype]
            return error(f"{args.rows} x {args.cols} {dtype} does not fit in device memory (x, "
                         f"the output and the copy's output are {matrix} bytes each, and the "
                         f"check gathers in chunks): {str(problem).splitlines()[0]}",
                         EXIT_NO_MEMORY)
        except (VerificationFailed, RuntimeError) as failure:
            return error(str(failure))
        append_row(args.csv, row)
        print(f"  {dtype:<11} {float(row['median_ms']):>10.3f} {float(row['gbps']):>9.1f} "
              f"{float(row['ceiling_gbps']):>10.1f} {float(row['pct_of_ceiling']):>9.1f}%  "
              f"{checked_line}", flush=True)
        torch.cuda.empty_cache()
    print(f"\nCSV: {args.csv}")
    return EXIT_OK


if __name__ == "__main__":
    sys.exit(main())
