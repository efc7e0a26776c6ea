"""Writes every table and figure quoted in the lab's Markdown from docs/results (make texts), or
checks that they are equal (make texts-check).

    python -m transpose_lab.texts            rewrite every marked block of every tracked *.md
    python -m transpose_lab.texts --check    regenerate in memory; fail on any difference

A generated table (filters COLUMN=VALUE, exact match on the CSV cell, A|B for either):

    <!-- table: h100/kernels.csv step=CUDA.v3|CUDA.v4 dtype=float32 columns=step,median_ms -->
    <!-- end -->

takes `columns=A,B,...` (which columns, in order), `pivot=ROWCOL,COLCOL,VALUECOL` (one row per
ROWCOL value, one column per COLCOL value) and `sort=COL`; rows keep the CSV's order otherwise.
An inline figure selects exactly one row:

    <!-- fig: h100/kernels.csv step=CUDA.v4 rows=8192 value=pct_of_ceiling -->55.3%<!-- end -->
    <!-- fig: h100/kernels.csv step=CUDA.v4 rows=8192 value=gbps over=step=CUDA.v3 -->1.75x<!-- end -->
    <!-- fig: h100/machine.txt key=gpu -->NVIDIA H100 80GB HBM3<!-- end -->

`over=COL=VALUE` divides by the row the same filters select with that one filter changed. A
value holding spaces is quoted: variant="gpus=2 single-process". Paths are relative to
docs/results. Markers inside fenced code blocks or right after a backtick are examples, not
markers. Image links into docs/results must point at files that exist.
"""
import argparse
import csv
import re
import shlex
import subprocess
import sys
from pathlib import Path

from transpose_lab.lab import ROOT  # noqa: E402
RESULTS = ROOT / "docs" / "results"

MARKER = re.compile(r"<!--\s*(table|fig):(.*?)-->(.*?)<!--\s*end\s*-->", re.DOTALL)
FENCE = re.compile(r"^ {0,3}(```|~~~).*?^ {0,3}\1", re.DOTALL | re.MULTILINE)
IMAGE = re.compile(r"!\[[^\]]*\]\(\s*<?([^)\s>]+)>?[^)]*\)|<img[^>]*\bsrc=\"([^\"]+)\"")
# The columns a table shows when its marker names none (those of them the CSV has).
DEFAULT_COLUMNS = ["step", "variant", "dtype", "rows", "cols", "median_ms", "gbps",
                   "pct_of_ceiling"]
OPTIONS = {"columns", "pivot", "sort", "value", "over", "key"}
MISSING = "-"  # a table cell whose CSV cell is empty, or a pivot cell no row fills


class TextError(Exception):
    """A marker that cannot be generated, or a text that differs from its data."""


def _number(text):
    try:
        return float(text)
    except ValueError:
        return None


def format_value(column, text):
    """A CSV cell as a text shows it: the format follows the column (see the module's doc)."""
    value = _number(text)
    if value is None:
        return text if text != "" else MISSING
    if column.startswith("pct_") or "_pct_" in column:
        return f"{value:.1f}%"
    if column in ("gbps", "ceiling_gbps", "gbs"):
        return f"{value:.0f}"
    if column.endswith("_ms") or column == "ms":
        return f"{value:.3f}"
    if column.endswith("_per_request"):
        return f"{value:.2f}"
    if "_vs_" in column:
        return f"{value:.2f}x"
    if any(word in column for word in ("sectors", "conflicts", "bytes")):
        return f"{round(value):d}"
    return text


def format_ratio(ratio):
    return f"{ratio:.2f}x"


class Data:
    """The files under a results folder, each read once."""

    def __init__(self, results):
        self.results = Path(results)
        self._tables = {}
        self._machines = {}

    def _path(self, name):
        path = self.results / name
        if not path.is_file():
            raise TextError(f"{path} does not exist")
        return path

    def table(self, name):
        if name not in self._tables:
            with open(self._path(name), newline="") as f:
                reader = csv.DictReader(f)
                self._tables[name] = (reader.fieldnames or [], list(reader))
        return self._tables[name]

    def machine(self, folder):
        """machine.txt of a machine folder as a dict ({} when there is none)."""
        if folder not in self._machines:
            path = self.results / folder / "machine.txt"
            keys = {}
            if path.is_file():
                for line in path.read_text().splitlines():
                    key, sep, value = line.partition(":")
                    if sep:
                        keys[key.strip()] = value.strip()
            self._machines[folder] = keys
        return self._machines[folder]

    def caption(self, name):
        """The line above a table: the machine it was measured on and the file it comes from."""
        folder = Path(name).parent.as_posix()
        keys = self.machine(folder)
        gpu = keys.get("gpu", "unknown")
        if gpu in ("", "none", "unknown"):
            what = keys.get("cpu", "unknown CPU")
            if keys.get("cores", "unknown") != "unknown":
                what += f", {keys['cores']} cores"
        else:
            what = gpu
        return f"*Measured on {what} (`docs/results/{name}`).*"


def parse_marker(args):
    """'h100/kernels.csv step=A|B value=gbps' -> (path, {column: [values]}, {option: value})."""
    try:
        words = shlex.split(args)
    except ValueError as e:
        raise TextError(f"cannot read the marker's arguments: {e}") from None
    if not words:
        raise TextError("the marker names no file")
    path, filters, options = words[0], {}, {}
    for word in words[1:]:
        key, sep, value = word.partition("=")
        if not sep or not key:
            raise TextError(f"'{word}' is not COLUMN=VALUE")
        if key in OPTIONS:
            options[key] = value
        else:
            filters[key] = value.split("|")
    return path, filters, options


def select(data, name, filters):
    fields, rows = data.table(name)
    for column in filters:
        if column not in fields:
            raise TextError(f"{name} has no column '{column}'")
    return fields, [row for row in rows
                    if all(row[column] in values for column, values in filters.items())]


def _describe(filters):
    return " ".join(f"{k}={'|'.join(v)}" for k, v in filters.items()) or "(no filters)"


def one_row(data, name, filters):
    _, rows = select(data, name, filters)
    if len(rows) != 1:
        raise TextError(f"{name} {_describe(filters)}: {len(rows)} rows match, a figure needs 1")
    return rows[0]


def figure(data, args):
    """The text of an inline figure marker."""
    name, filters, options = parse_marker(args)
    if name.endswith("machine.txt"):
        key = options.get("key")
        if not key:
            raise TextError(f"{name}: a machine figure needs key=NAME")
        keys = data.machine(Path(name).parent.as_posix())
        data._path(name)
        if key not in keys:
            raise TextError(f"{name} has no key '{key}'")
        return keys[key]
    column = options.get("value")
    if not column:
        raise TextError(f"{name}: a figure needs value=COLUMN")
    fields, _ = data.table(name)
    if column not in fields:
        raise TextError(f"{name} has no column '{column}'")
    row = one_row(data, name, filters)
    if "over" not in options:
        if row[column] == "":
            raise TextError(f"{name} {_describe(filters)}: {column} is empty")
        return format_value(column, row[column])
    over_column, sep, over_value = options["over"].partition("=")
    if not sep:
        raise TextError(f"over={options['over']} is not over=COLUMN=VALUE")
    other = dict(filters)
    other[over_column] = over_value.split("|")
    base = one_row(data, name, other)
    top, bottom = _number(row[column]), _number(base[column])
    if top is None or not bottom:
        raise TextError(f"{name}: cannot divide {column} {row[column]!r} by {base[column]!r}")
    return format_ratio(top / bottom)


def markdown_table(header, body):
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    lines += ["| " + " | ".join(cells) + " |" for cells in body]
    return lines


def _sort_key(column):
    def key(row):
        value = _number(row[column])
        return (0, value, "") if value is not None else (1, 0.0, row[column])
    return key


def table(data, args):
    """The lines of a table marker's block: a caption, a blank line, the table."""
    name, filters, options = parse_marker(args)
    fields, rows = select(data, name, filters)
    if not rows:
        raise TextError(f"{name} {_describe(filters)}: no row matches")
    if "sort" in options:
        if options["sort"] not in fields:
            raise TextError(f"{name} has no column '{options['sort']}'")
        rows = sorted(rows, key=_sort_key(options["sort"]))
    if "pivot" in options:
        parts = options["pivot"].split(",")
        if len(parts) != 3:
            raise TextError(f"pivot={options['pivot']} is not ROWCOL,COLCOL,VALUECOL")
        for column in parts:
            if column not in fields:
                raise TextError(f"{name} has no column '{column}'")
        across, down, value = parts
        keys = list(dict.fromkeys(row[across] for row in rows))
        tops = list(dict.fromkeys(row[down] for row in rows))
        cells = {}
        for row in rows:
            cell = (row[across], row[down])
            if cell in cells:
                raise TextError(f"{name} {_describe(filters)}: more than one row for "
                                f"{across}={cell[0]} {down}={cell[1]}: filter further")
            cells[cell] = format_value(value, row[value])
        body = [[k] + [cells.get((k, t), MISSING) for t in tops] for k in keys]
        lines = markdown_table([across] + tops, body)
    else:
        columns = (options["columns"].split(",") if "columns" in options
                   else [c for c in DEFAULT_COLUMNS if c in fields])
        for column in columns:
            if column not in fields:
                raise TextError(f"{name} has no column '{column}'")
        lines = markdown_table(columns, [[format_value(c, row[c]) for c in columns]
                                         for row in rows])
    return [data.caption(name), ""] + lines


def _skipped_spans(text):
    return [m.span() for m in FENCE.finditer(text)]


def _line_of(text, offset):
    return text.count("\n", 0, offset) + 1


def generate(text, data, label="text"):
    """(the text with every marked block regenerated, [errors], [differences]); each error and
    difference names the file and the line."""
    fences = _skipped_spans(text)
    out, errors, diffs, last = [], [], [], 0
    for m in MARKER.finditer(text):
        start = m.start()
        if any(a <= start < b for a, b in fences) or (start and text[start - 1] == "`"):
            continue
        kind, args, found = m.group(1), " ".join(m.group(2).split()), m.group(3)
        line = _line_of(text, start)
        try:
            new = (figure(data, args) if kind == "fig"
                   else "\n" + "\n".join(table(data, args)) + "\n")
        except TextError as e:
            errors.append(f"{label}:{line}: {kind} {args}: {e}")
            new = found
        if new != found:
            diffs.append(_difference(label, _line_of(text, m.start(3)), kind, args, found, new))
        out.append(text[last:m.start(3)])
        out.append(new)
        last = m.end(3)
    out.append(text[last:])
    return "".join(out), errors, diffs


def _difference(label, line, kind, args, found, new):
    """Where a block differs from its data: the first differing line, its text and the data's."""
    if kind == "fig":
        return (f"{label}:{line}: fig {args}: the text says {found!r}, "
                f"the data gives {new!r}")
    old_lines, new_lines = found.split("\n"), new.split("\n")
    offset = next((i for i, (a, b) in enumerate(zip(old_lines, new_lines)) if a != b),
                  min(len(old_lines), len(new_lines)))
    a = old_lines[offset] if offset < len(old_lines) else "(nothing)"
    b = new_lines[offset] if offset < len(new_lines) else "(nothing)"
    return (f"{label}:{line + offset}: table {args}: the text says {a!r}, "
            f"the data gives {b!r}")


def broken_images(text, path, root):
    errors = []
    for m in IMAGE.finditer(text):
        link = m.group(1) or m.group(2)
        if "://" in link or link.startswith("#"):
            continue
        target = (path.parent / link.split("#")[0]).resolve()
        try:
            relative = target.relative_to(root.resolve()).as_posix()
        except ValueError:
            continue
        if relative.startswith("docs/results/") and not target.exists():
            errors.append(f"{path.relative_to(root)}:{_line_of(text, m.start())}: the picture "
                          f"{link} does not exist")
    return errors


def markdown_files(root):
    """Every git-tracked *.md under root (every *.md outside build folders without git)."""
    try:
        listed = subprocess.run(["git", "-C", str(root), "ls-files", "-z", "--", "*.md"],
                                capture_output=True, text=True, check=True).stdout
        files = [root / name for name in listed.split("\0") if name]
    except (OSError, subprocess.CalledProcessError):
        skip = {".git", ".venv", "results", "exercises", "build"}
        files = [p for p in root.rglob("*.md") if not skip & set(p.relative_to(root).parts)]
    return sorted(p for p in files if p.is_file())


def run(root, results, files, check):
    """Regenerates (or checks) files; returns the list of problems, empty when all is well."""
    data = Data(results)
    problems = []
    for path in files:
        label = str(path.relative_to(root)) if path.is_relative_to(root) else str(path)
        text = path.read_text()
        new, errors, diffs = generate(text, data, label)
        problems += errors
        problems += broken_images(text, path, root)
        if new != text:
            if check:
                problems += diffs
            elif not errors:
                path.write_text(new)
                print(f"rewrote {label}")
    return problems


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true",
                        help="change nothing; fail on any text that differs from its data")
    parser.add_argument("--root", type=Path, default=ROOT,
                        help="the repository (default: this one)")
    parser.add_argument("--results", type=Path,
                        help="the results folder the paths start from (default ROOT/docs/results)")
    parser.add_argument("files", nargs="*", type=Path,
                        help="Markdown files (default: every tracked *.md under ROOT)")
    args = parser.parse_args(argv)
    root = args.root.resolve()
    results = args.results or root / "docs" / "results"
    files = [f.resolve() for f in args.files] or markdown_files(root)
    problems = run(root, results, files, args.check)
    for problem in problems:
        print(problem, file=sys.stderr)
    if problems:
        what = "differ from docs/results" if args.check else "could not be generated"
        print(f"{len(problems)} problem(s): texts {what} (make texts rewrites them)",
              file=sys.stderr)
        return 1
    print(f"{len(files)} Markdown file(s) {'agree with' if args.check else 'written from'} "
          f"{results}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
