"""The one reader of the lab's CSV files, and the selections the plots and tables make from them.

The results schema is the one common/report.cpp writes (kCsvHeader there); COLUMNS below must
stay equal to it. Files written before the last columns existed (EARLIER_COLUMNS) still read, with
those columns None. Standard library only, so that the runners can read results without
matplotlib.

Rows are told apart by step, variant, dtype, shape and threads: two rows that differ only in their
element type are two measurements, never a repeat of one. Whether a row is a CPU or a GPU
measurement is its `kind` column, never its step's name.

Every problem with an input file raises ResultsError, whose text names the file and the problem
(and the line and column where there is one). A valid file that holds nothing a plot can use
raises NothingToPlot. run_script() turns both into the exit codes every plot script shares.
"""

import csv
import math
import statistics
import sys
from pathlib import Path

from transpose_lab import lab

COLUMNS = [
    "step", "variant", "device", "dtype", "elem_bytes", "kind", "rows", "cols", "threads",
    "launch", "reps", "median_ms", "gbps", "ceiling_gbps", "pct_of_ceiling", "e2e_ms", "verified",
    "summary", "ceiling_kind", "memcpy_gbps",
]
# The schema before ceiling_kind and memcpy_gbps: its files read with both None.
EARLIER_COLUMNS = COLUMNS[:COLUMNS.index("ceiling_kind")]

# What ceiling_gbps was measured from (ceiling_kind): kernel steps report the faster of the
# device-to-device cudaMemcpy and the lab's vector copy kernel; the other kinds their own copy.
CEILING_KINDS = ("memcpy", "vector_copy", "openmp_copy", "bus", "all_to_all")

# What ncu_profile writes from an Nsight Compute run (metric names in the design's profiling
# facts).
PROFILE_COLUMNS = [
    "step", "kernel", "dtype", "elem_bytes", "rows", "cols", "device", "gld_sectors",
    "gst_sectors", "gld_sectors_per_request", "gst_sectors_per_request",
    "shared_ld_bank_conflicts", "shared_st_bank_conflicts", "dram_pct_of_peak",
    "dram_bytes_read", "dram_bytes_write", "store_sectors_vs_copy",
]

# Every element type a program takes (--dtype NAME), in order of size, with its size in bytes.
DTYPES = dict(lab.ELEM_BYTES)  # common/dtypes.def
DEFAULT_DTYPE = "float32"

# What the harness ran: the CPU kind against an OpenMP copy, every other kind on the GPU.
CPU_KINDS = ("cpu",)
GPU_KINDS = ("kernel", "host_pipeline", "distributed", "reference")
KINDS = CPU_KINDS + GPU_KINDS

SECTOR_BYTES = 32  # the unit of a global memory transaction in Nsight Compute's counters

# How a reference row's summary begins (CUDA.copy, CUDA.cublas, CUDA.cublaslt, the PyTorch row):
# a yardstick measured like a step, not a step of the progression.
REFERENCE_MARK = "reference:"


class ResultsError(Exception):
    """An input file that cannot be used; the message names the file and the problem."""


class NothingToPlot(Exception):
    """A valid input file that holds no rows a given plot can use."""


# --- Field converters: each takes the text of one field and raises ValueError saying why not.

def _parse_number(text):
    try:
        value = float(text)
    except ValueError:
        raise ValueError(f"{text!r} is not a number") from None
    if not math.isfinite(value):
        raise ValueError(f"{text!r} is not a finite number")
    return value


def _parse_int(text):
    try:
        return int(text)
    except ValueError:
        raise ValueError(f"{text!r} is not a whole number") from None


def positive_int(text):
    value = _parse_int(text)
    if value <= 0:
        raise ValueError(f"{text!r} must be positive")
    return value


def non_negative_int(text):
    value = _parse_int(text)
    if value < 0:
        raise ValueError(f"{text!r} must not be negative")
    return value


def positive_number(text):
    value = _parse_number(text)
    if value <= 0:
        raise ValueError(f"{text!r} must be positive")
    return value


def non_negative_number(text):
    value = _parse_number(text)
    if value < 0:
        raise ValueError(f"{text!r} must not be negative")
    return value


def optional(convert):
    """An empty field means 'not applicable' (None); anything else must convert."""
    def convert_or_none(text):
        return None if text.strip() == "" else convert(text)
    return convert_or_none


def one_of(names, what):
    def convert(text):
        if text not in names:
            raise ValueError(f"{text!r} is not {what} (one of {', '.join(names)})")
        return text
    return convert


dtype_name = one_of(list(DTYPES), "an element type")
kind_name = one_of(list(KINDS), "a kind of step")
ceiling_kind_name = one_of(list(CEILING_KINDS), "a kind of ceiling")


def yes_no(text):
    if text not in ("yes", "no"):
        raise ValueError(f"{text!r} is neither 'yes' nor 'no'")
    return text == "yes"


RESULT_CONVERTERS = {
    "dtype": dtype_name,
    "elem_bytes": positive_int,
    "kind": kind_name,
    "rows": positive_int,
    "cols": positive_int,
    "threads": non_negative_int,  # 0: a library call that hides its launch
    "reps": positive_int,
    "median_ms": positive_number,  # the speedups divide by it
    "gbps": non_negative_number,
    "ceiling_gbps": non_negative_number,
    "pct_of_ceiling": non_negative_number,
    "e2e_ms": optional(positive_number),  # empty where a step has no end-to-end time
    "verified": yes_no,
    "ceiling_kind": optional(ceiling_kind_name),  # empty where a program does not say
    "memcpy_gbps": optional(non_negative_number),  # empty where no cudaMemcpy was timed
}


# --- Reading.

def _check_header(path, header, columns):
    if header == columns:
        return
    missing = [name for name in columns if name not in header]
    extra = [name for name in header if name not in columns]
    problems = []
    if missing:
        problems.append("missing column(s) " + ", ".join(missing))
    if extra:
        problems.append("unexpected column(s) " + ", ".join(extra))
    if not problems:
        problems.append("the columns are repeated or in another order")
    raise ResultsError(f"{path}: line 1 is not the expected header ({'; '.join(problems)}); "
                       f"expected: {','.join(columns)}")


def elem_bytes_match_dtype(row):
    """A row's element size must be its dtype's: the bandwidths are computed from it."""
    if row["elem_bytes"] != DTYPES[row["dtype"]]:
        raise ValueError(f"{row['elem_bytes']} is not the size of {row['dtype']} "
                         f"({DTYPES[row['dtype']]} bytes)")


def read_csv_table(path, columns, converters, check_row=None, earlier_columns=None):
    """Rows of the CSV file at path as dicts, with fields converted.

    columns: the exact header the file must start with.
    earlier_columns: a header of an earlier schema, the first of `columns`, that is read too: the
    columns it lacks are None in every row.
    converters: column name -> function(text) -> value that raises ValueError (e.g. int,
    positive_number); columns not named keep their text. Blank lines are ignored; quoted
    fields (RFC 4180) are read as the csv module reads them.
    check_row: function(row) raising ValueError where the fields disagree with each other; the
    error names the elem_bytes column (the one check there is).
    """
    path = Path(path)
    try:
        with path.open(newline="", encoding="utf-8-sig") as handle:
            reader = csv.reader(handle)
            header = next(reader, None)
            if not header:
                raise ResultsError(f"{path}: the file is empty (expected the header "
                                   f"{','.join(columns)})")
            present = header if earlier_columns and header == earlier_columns else columns
            _check_header(path, header, present)
            table = []
            for fields in reader:
                if not fields:
                    continue
                if len(fields) != len(present):
                    raise ResultsError(f"{path}: line {reader.line_num} has {len(fields)} "
                                       f"field(s), the header has {len(present)}")
                row = dict(zip(present, fields))
                row.update((name, None) for name in columns if name not in row)
                for name, convert in converters.items():
                    if row[name] is None:
                        continue
                    try:
                        row[name] = convert(row[name])
                    except ValueError as problem:
                        raise ResultsError(f"{path}: line {reader.line_num}, column "
                                           f"'{name}': {problem}") from None
                if check_row is not None:
                    try:
                        check_row(row)
                    except ValueError as problem:
                        raise ResultsError(f"{path}: line {reader.line_num}, column "
                                           f"'elem_bytes': {problem}") from None
                table.append(row)
            return table
    except FileNotFoundError:
        raise ResultsError(f"{path}: no such file") from None
    except IsADirectoryError:
        raise ResultsError(f"{path}: is a directory, not a CSV file") from None
    except PermissionError:
        raise ResultsError(f"{path}: permission denied") from None
    except UnicodeDecodeError:
        raise ResultsError(f"{path}: not a UTF-8 text file") from None
    except csv.Error as problem:
        raise ResultsError(f"{path}: not valid CSV: {problem}") from None


def read_results(path):
    """The measurements in a results CSV: one dict per row, keyed by COLUMNS.

    elem_bytes, rows, cols, threads, reps are ints (elem_bytes the size of the row's dtype); dtype
    is one of DTYPES, kind one of KINDS; the times, bandwidths and percentage floats; e2e_ms is
    None where empty; verified is a bool; ceiling_kind one of CEILING_KINDS and memcpy_gbps a
    float, each None where empty or in a file of EARLIER_COLUMNS.
    """
    return read_csv_table(path, COLUMNS, RESULT_CONVERTERS, elem_bytes_match_dtype,
                          earlier_columns=EARLIER_COLUMNS)


# Chapter 3's rows add the tensor and its permutation (common/permute.cpp's kPermuteCsvColumns).
TENSOR_COLUMNS = ["shape", "perm"]
PERMUTE_COLUMNS = COLUMNS + TENSOR_COLUMNS


def read_permute_results(path):
    """Chapter 3's measurements (make permute): read_results' rows, with the tensor's shape
    ('64x64x56x56') and perm ('0,2,3,1') as text."""
    return read_csv_table(path, PERMUTE_COLUMNS, RESULT_CONVERTERS, elem_bytes_match_dtype)


def read_profile(path):
    """The profiled kernels in a profile CSV (PROFILE_COLUMNS): one dict per row, elem_bytes, rows
    and cols ints, dtype one of DTYPES, every counter a float."""
    text_columns = ("step", "kernel", "device", "dtype")
    converters = {name: non_negative_number for name in PROFILE_COLUMNS
                  if name not in text_columns}
    converters.update(dtype=dtype_name, elem_bytes=positive_int, rows=positive_int,
                      cols=positive_int)
    return read_csv_table(path, PROFILE_COLUMNS, converters, elem_bytes_match_dtype)


# --- Selections shared by the plots and the tables.

def is_cpu(row):
    """A CPU measurement: by the row's kind, whatever its step is called."""
    return row["kind"] in CPU_KINDS


def is_gpu(row):
    return row["kind"] in GPU_KINDS


def is_reference(row):
    """A reference row (the copy kernel, a library, PyTorch), which the tables and plots show
    apart from the progression: by its kind or by what its summary says, never by its name."""
    return row["kind"] == "reference" or row["summary"].startswith(REFERENCE_MARK)


def reference_steps(rows):
    """The steps whose rows are reference rows, in order of first appearance."""
    return [step for step in steps_in_order(rows)
            if any(is_reference(row) for row in rows if row["step"] == step)]


def cpu_steps(rows):
    """The steps that have CPU rows (by kind), in order of first appearance."""
    return [step for step in steps_in_order(rows)
            if any(is_cpu(row) for row in rows if row["step"] == step)]


def steps_in_order(rows):
    """Step names in order of first appearance: the runner writes them in progression order."""
    return list(dict.fromkeys(row["step"] for row in rows))


def dtypes_in_order(rows):
    """The element types of the rows, smallest first (in DTYPES order)."""
    present = set(row["dtype"] for row in rows)
    return [name for name in DTYPES if name in present]


def shape(row):
    return (row["rows"], row["cols"])


def measurement_key(row):
    """What one measurement is of: two rows with the same key are a repeat of one run."""
    return (row["step"], row["variant"], row["dtype"], shape(row), row["threads"])


def matrix_mib(rows, cols, elem_bytes):
    return rows * cols * elem_bytes / 2**20


def shape_label(rows, cols):
    return f"{rows} x {cols}"


def size_label(rows, cols, dtype):
    """'8192 x 8192 float32 (256 MiB a matrix)'."""
    return (f"{shape_label(rows, cols)} {dtype} "
            f"({matrix_mib(rows, cols, DTYPES[dtype]):g} MiB a matrix)")


def usable_rows(rows, path, key=measurement_key):
    """The rows a plot may show: the last measurement of each (step, variant, dtype, size,
    threads; or what `key` says one measurement is), for files a runner appended to more than
    once, and only those that passed verification (a wrong answer does not count, however fast).
    Says on stderr what it leaves out."""
    latest = {}
    for row in rows:
        latest[key(row)] = row
    if len(latest) < len(rows):
        print(f"note: {path}: {len(rows) - len(latest)} repeated measurement(s); "
              "using the last of each", file=sys.stderr)
    kept = []
    for row in latest.values():
        if row["verified"]:
            kept.append(row)
        else:
            print(f"warning: {path}: {row['step']} {row['variant']} {row['dtype']} "
                  f"{shape_label(*shape(row))} failed verification; left out of the plot",
                  file=sys.stderr)
    return kept


def plottable_rows(path):
    """The usable rows of a results CSV that a CPU-and-GPU plot shows; NothingToPlot if none."""
    rows = [row for row in usable_rows(read_results(path), path) if is_cpu(row) or is_gpu(row)]
    if not rows:
        raise NothingToPlot(f"{path} holds no verified CPU or GPU measurements")
    return rows


def choose_dtype(rows, path, wanted=None):
    """The element type a one-type plot shows: `wanted` if given (an error if the file has no
    row of it), else the only one, else float32 if present, else the smallest; says on stderr
    when it chose among several."""
    present = dtypes_in_order(rows)
    if wanted is not None:
        if wanted not in present:
            raise NothingToPlot(f"{path} has no rows of dtype {wanted} "
                                f"(it has: {', '.join(present) or 'none'})")
        return wanted
    chosen = DEFAULT_DTYPE if DEFAULT_DTYPE in present else present[0]
    if len(present) > 1:
        print(f"note: {path} holds {len(present)} element types; plotting {chosen} "
              "(--dtype to choose)", file=sys.stderr)
    return chosen


def of_dtype(rows, dtype):
    return [row for row in rows if row["dtype"] == dtype]


def choose_size(rows, path):
    """The matrix shape a one-size plot shows: the only one, or else the largest (the default
    size is the one over every cache), saying so on stderr."""
    shapes = sorted(set(shape(row) for row in rows), key=lambda s: (s[0] * s[1], s))
    if len(shapes) > 1:
        print(f"note: {path} holds {len(shapes)} matrix sizes; plotting the largest, "
              f"{shape_label(*shapes[-1])}", file=sys.stderr)
    return shapes[-1]


def at_size(rows, size):
    return [row for row in rows if shape(row) == size]


def best_row(rows):
    """The fastest measurement among rows (of one size): highest effective bandwidth."""
    return max(rows, key=lambda row: row["gbps"])


def best_per_step_and_size(rows):
    """{(step, dtype, (rows, cols)): fastest row}: e.g. CPU.omp's better variant at each size,
    for each element type apart."""
    best = {}
    for row in rows:
        key = (row["step"], row["dtype"], shape(row))
        if key not in best or row["gbps"] > best[key]["gbps"]:
            best[key] = row
    return best


def median_ceiling_per_size(rows):
    """{(rows, cols): median ceiling_gbps}: each process measures its own ceiling; the median
    is the one line to draw for a device (rows of one element type)."""
    by_size = {}
    for row in rows:
        by_size.setdefault(shape(row), []).append(row["ceiling_gbps"])
    return {size: statistics.median(values) for size, values in by_size.items()}


def only_device(rows, what, path):
    """The one device name the rows share; a file mixing machines would draw a misleading
    comparison, so that is an error."""
    devices = list(dict.fromkeys(row["device"] for row in rows))
    if len(devices) > 1:
        raise ResultsError(f"{path}: {what} rows come from several devices "
                           f"({'; '.join(devices)}); plot one machine per file")
    return devices[0] if devices else None


def cpu_threads_label(rows):
    """'32 threads' (or '8-32 threads') for the CPU rows shown."""
    counts = sorted(set(row["threads"] for row in rows))
    if not counts:
        return ""
    text = str(counts[0]) if len(counts) == 1 else f"{counts[0]}-{counts[-1]}"
    return f"{text} thread{'s' if counts[-1] != 1 else ''}"


# --- How every plot ends.

def fail(message):
    """Report a problem the way every script does: one 'error:' line on stderr, exit 1."""
    print(f"error: {message}", file=sys.stderr)
    sys.exit(1)


def run_plot(draw, *args):
    """Call draw(*args) and return the exit status of a plot: a bad input file is an error
    (one 'error:' line on stderr, 1); a valid file with nothing for this plot is a skip (one
    'skipped:' line, 0, no PNG); a drawn one 0."""
    try:
        draw(*args)
    except ResultsError as problem:
        print(f"error: {problem}", file=sys.stderr)
        return 1
    except NothingToPlot as reason:
        print(f"skipped: {reason}")
        return 0
    return 0
