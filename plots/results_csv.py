"""The one reader of the lab's CSV files, and the selections the plots make from them.

The results schema is the one common/report.cpp writes (kCsvHeader there); COLUMNS below must
stay equal to it. Standard library only, so that tools/ can read results without matplotlib.

Every problem with an input file raises ResultsError, whose text names the file and the problem
(and the line and column where there is one). A valid file that holds nothing a plot can use
raises NothingToPlot. run_script() turns both into the exit codes every plot script shares.
"""

import csv
import math
import statistics
import sys
from pathlib import Path

COLUMNS = [
    "step", "variant", "device", "rows", "cols", "threads", "launch", "reps", "median_ms",
    "gbps", "ceiling_gbps", "pct_of_ceiling", "e2e_ms", "verified", "summary",
]

# What tools/ writes from an Nsight Compute run (metric names in the design's profiling facts).
PROFILE_COLUMNS = [
    "step", "kernel", "rows", "cols", "device", "gld_sectors", "gst_sectors",
    "gld_sectors_per_request", "gst_sectors_per_request", "shared_ld_bank_conflicts",
    "shared_st_bank_conflicts", "dram_pct_of_peak", "dram_bytes_read", "dram_bytes_write",
    "store_sectors_vs_copy",
]

BYTES_PER_ELEMENT = 4  # every matrix is fp32
SECTOR_BYTES = 32      # the unit of a global memory transaction in Nsight Compute's counters


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


def yes_no(text):
    if text not in ("yes", "no"):
        raise ValueError(f"{text!r} is neither 'yes' nor 'no'")
    return text == "yes"


RESULT_CONVERTERS = {
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


def read_csv_table(path, columns, converters):
    """Rows of the CSV file at path as dicts, with fields converted.

    columns: the exact header the file must start with.
    converters: column name -> function(text) -> value that raises ValueError (e.g. int,
    positive_number); columns not named keep their text. Blank lines are ignored; quoted
    fields (RFC 4180) are read as the csv module reads them.
    """
    path = Path(path)
    try:
        with path.open(newline="", encoding="utf-8-sig") as handle:
            reader = csv.reader(handle)
            header = next(reader, None)
            if not header:
                raise ResultsError(f"{path}: the file is empty (expected the header "
                                   f"{','.join(columns)})")
            _check_header(path, header, columns)
            table = []
            for fields in reader:
                if not fields:
                    continue
                if len(fields) != len(columns):
                    raise ResultsError(f"{path}: line {reader.line_num} has {len(fields)} "
                                       f"field(s), the header has {len(columns)}")
                row = dict(zip(columns, fields))
                for name, convert in converters.items():
                    try:
                        row[name] = convert(row[name])
                    except ValueError as problem:
                        raise ResultsError(f"{path}: line {reader.line_num}, column "
                                           f"'{name}': {problem}") from None
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

    rows, cols, threads, reps are ints; the times, bandwidths and percentage floats; e2e_ms is
    None where empty; verified is a bool.
    """
    return read_csv_table(path, COLUMNS, RESULT_CONVERTERS)


def read_profile(path):
    """The profiled kernels in a profile CSV (PROFILE_COLUMNS): one dict per row, rows and cols
    ints, every counter a float."""
    text_columns = ("step", "kernel", "device")
    converters = {name: non_negative_number for name in PROFILE_COLUMNS
                  if name not in text_columns}
    converters.update(rows=positive_int, cols=positive_int)
    return read_csv_table(path, PROFILE_COLUMNS, converters)


# --- Selections shared by the plots.

def is_cpu_step(step):
    return step.startswith("CPU.")


def is_gpu_step(step):
    return step.startswith("CUDA.")


def is_cpu(row):
    return is_cpu_step(row["step"])


def is_gpu(row):
    return is_gpu_step(row["step"])


def steps_in_order(rows):
    """Step names in order of first appearance: the runner writes them in progression order."""
    return list(dict.fromkeys(row["step"] for row in rows))


def shape(row):
    return (row["rows"], row["cols"])


def matrix_mib(rows, cols):
    return rows * cols * BYTES_PER_ELEMENT / 2**20


def shape_label(rows, cols):
    return f"{rows} x {cols}"


def size_label(rows, cols):
    """'8192 x 8192 fp32 (256 MiB a matrix)'."""
    return f"{shape_label(rows, cols)} fp32 ({matrix_mib(rows, cols):g} MiB a matrix)"


def usable_rows(rows, path):
    """The rows a plot may show: the last measurement of each (step, variant, size, threads),
    for files a runner appended to more than once, and only those that passed verification
    (a wrong answer does not count, however fast). Says on stderr what it leaves out."""
    latest = {}
    for row in rows:
        latest[(row["step"], row["variant"], shape(row), row["threads"])] = row
    if len(latest) < len(rows):
        print(f"note: {path}: {len(rows) - len(latest)} repeated measurement(s); "
              "using the last of each", file=sys.stderr)
    kept = []
    for row in latest.values():
        if row["verified"]:
            kept.append(row)
        else:
            print(f"warning: {path}: {row['step']} {row['variant']} "
                  f"{shape_label(*shape(row))} failed verification; left out of the plot",
                  file=sys.stderr)
    return kept


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
    """{(step, (rows, cols)): fastest row}: e.g. CPU.omp's better variant at each size."""
    best = {}
    for row in rows:
        key = (row["step"], shape(row))
        if key not in best or row["gbps"] > best[key]["gbps"]:
            best[key] = row
    return best


def median_ceiling_per_size(rows):
    """{(rows, cols): median ceiling_gbps}: each process measures its own ceiling; the median
    is the one line to draw for a device."""
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


# --- How every plot script ends.

def fail(message):
    """Report a problem the way every script does: one 'error:' line on stderr, exit 1."""
    print(f"error: {message}", file=sys.stderr)
    sys.exit(1)


def run_script(main):
    """Run a plot script's main(): a bad input file is an error (exit 1); a valid file with
    nothing for this plot is a skip (one 'skipped:' line, exit 0, no PNG)."""
    try:
        main()
    except ResultsError as problem:
        fail(str(problem))
    except NothingToPlot as reason:
        print(f"skipped: {reason}")
        sys.exit(0)
