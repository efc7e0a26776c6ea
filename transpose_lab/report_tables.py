"""The comparison tables, built once from result rows (results_csv.read_results) and rendered
either as aligned text (the make targets) or as Markdown (the README).

Every table keeps rows that differ only in their element type apart: where a table holds more
than one dtype, each line names its dtype, and speedups compare rows of the same dtype only.
"""

from .results_csv import DTYPES, dtypes_in_order, is_cpu, is_reference


def ratio(numerator, denominator):
    return f"{numerator / denominator:.2f}x" if numerator and denominator else "-"


def best_cpu(rows):
    """The fastest CPU row (by kind), or None."""
    cpu = [row for row in rows if is_cpu(row)]
    return min(cpu, key=lambda row: row["median_ms"]) if cpu else None


def devices(rows):
    return " / ".join(dict.fromkeys(row["device"] for row in rows)) or "no device"


def dtypes_label(rows, default="float32"):
    """'float32', or 'float16, float32' where rows hold several types."""
    return ", ".join(dtypes_in_order(rows)) or default


def progression_table(rows, steps, statuses=None):
    """One line per measurement in step order: speedups against the best CPU variant and the
    line before, both of the same dtype. A reference row (results_csv.is_reference: the copy
    kernel, the libraries) is compared with the last line of the progression before it, and is
    never the line the next one is compared with. A step with several variants has a line per
    variant: a CPU variant says how it splits the work, a kernel variant what it does. statuses
    maps a step with no rows to why (skipped, n/a, failed, not built). Rows of several dtypes: one
    block per dtype, each line naming it."""
    header = ["step", "what it does", "ms", "GB/s", "% of copy", "vs best CPU", "vs previous",
              "end-to-end ms", "check"]
    present = dtypes_in_order(rows)
    several = len(present) > 1
    lines = []
    for dtype in present or [None]:
        of_type = [row for row in rows if row["dtype"] == dtype]
        lines += _progression_lines(of_type, steps, statuses, dtype if several else None)
    return header, lines


def _progression_lines(rows, steps, statuses, dtype_label):
    cpu = best_cpu(rows)
    suffix = f" {dtype_label}" if dtype_label else ""
    lines, previous = [], None
    for step in steps:
        step_rows = [row for row in rows if row["step"] == step]
        if not step_rows:
            lines.append([step + suffix, (statuses or {}).get(step, "no result")] + ["-"] * 7)
            continue
        for row in step_rows:
            one_kernel = row["variant"] == "kernel"
            lines.append([
                (step if one_kernel else f"{step} {row['variant']}") + suffix,
                row["launch"] if is_cpu(row) and not one_kernel else row["summary"],
                f"{row['median_ms']:.3f}", f"{row['gbps']:.1f}", f"{row['pct_of_ceiling']:.1f}%",
                ratio(cpu["median_ms"], row["median_ms"]) if cpu else "-",
                ratio(previous["median_ms"], row["median_ms"]) if previous else "-",
                f"{row['e2e_ms']:.2f}" if row["e2e_ms"] is not None else "-",
                "verified" if row["verified"] else "WRONG"])
            if not is_reference(row):
                previous = row
    return lines


def bench_table(rows, shapes, reference, last):
    """One line per shape (and dtype, where rows hold several): the copy, the reference step and
    the last step, the last against the reference. `reference` may be a list of library steps:
    then each line compares with the fastest of them that ran for its shape and type."""
    if not isinstance(reference, str):
        return best_library_table(rows, shapes, list(reference), last)
    header = ["shape", "copy GB/s", f"{reference} GB/s", f"{last} GB/s", f"{reference} % of copy",
              f"{last} % of copy", f"{last} vs {reference}"]
    present = dtypes_in_order(rows)
    lines = []
    for shape in shapes:
        r, c = map(int, shape.split("x"))
        for dtype in present or [None]:
            label = f"{shape} {dtype}" if len(present) > 1 else shape
            find = lambda step: next((row for row in rows if row["step"] == step  # noqa: E731
                                      and row["dtype"] == dtype
                                      and (row["rows"], row["cols"]) == (r, c)), None)
            ref, own = find(reference), find(last)
            if not ref or not own:
                lines.append([label] + ["-"] * 6)
                continue
            lines.append([label, f"{own['ceiling_gbps']:.1f}", f"{ref['gbps']:.1f}",
                          f"{own['gbps']:.1f}", f"{ref['pct_of_ceiling']:.1f}%",
                          f"{own['pct_of_ceiling']:.1f}%",
                          ratio(ref["median_ms"], own["median_ms"])])
    return header, lines


def best_library_table(rows, shapes, libraries, last):
    """One line per dtype and shape: the last step and the fastest library row measured for that
    shape and type (a library that refuses the type has no row), each as % of its own run's copy,
    and the last step's speed over that library. Where the last step ran in several variants (v7's
    own kernel and its tma), a line per variant that ran, named in a column of its own."""
    variants = list(dict.fromkeys(row["variant"] for row in rows if row["step"] == last))
    several = len(variants) > 1
    header = ["dtype", "shape", *(["variant"] if several else []), f"{last} % of copy",
              "best library", "library % of copy", f"{last} vs library"]
    lines = []
    for dtype in dtypes_in_order(rows) or [None]:
        for shape in shapes:
            r, c = map(int, shape.split("x"))
            here = [row for row in rows if row["dtype"] == dtype
                    and (row["rows"], row["cols"]) == (r, c)]
            found = [row for row in here if row["step"] in libraries]
            best = min(found, key=lambda row: row["median_ms"]) if found else None
            for variant in variants or [None]:
                own = next((row for row in here if row["step"] == last
                            and variant in (None, row["variant"])), None)
                if own is None and variant not in (None, variants[0]):
                    continue  # a variant left out at this shape: bench says why
                lines.append([dtype or "-", shape, *([variant] if several else []),
                              f"{own['pct_of_ceiling']:.1f}%" if own else "-",
                              best["step"] if best else "-",
                              f"{best['pct_of_ceiling']:.1f}%" if best else "-",
                              ratio(best["median_ms"], own["median_ms"]) if best and own else "-"])
    return header, lines


def scaling_table(rows):
    """One line per (variant, dtype, threads), each against the same variant and dtype at the
    fewest threads."""
    first = min((row["threads"] for row in rows), default=1)
    several = len(dtypes_in_order(rows)) > 1

    def series(row):
        return (row["step"], row["variant"], row["dtype"])

    base = {series(row): row for row in rows if row["threads"] == first}
    header = ["variant", "threads", "ms", "GB/s", "copy GB/s", "% of copy", f"vs {first} thread(s)"]
    lines = [[f"{row['step']} {row['variant']}" + (f" {row['dtype']}" if several else ""),
              row["threads"], f"{row['median_ms']:.2f}",
              f"{row['gbps']:.1f}", f"{row['ceiling_gbps']:.1f}", f"{row['pct_of_ceiling']:.1f}%",
              ratio(base[series(row)]["median_ms"], row["median_ms"])
              if series(row) in base else "-"]
             for row in sorted(rows, key=lambda row: (row["variant"], list(DTYPES).index(
                 row["dtype"]), row["threads"]))]
    return header, lines


def dtypes_table(rows, steps, statuses=None, with_gbps=False):
    """Element type (lines) x step (columns): % of the copy ceiling of each step's best variant
    for that type (and its GB/s with with_gbps). statuses maps (step, dtype) with no row to a
    word ('n/a' where the step does not support the type); a cell with neither is 'n/a' too:
    a step writes no row for a type it refuses."""
    best = {}
    for row in rows:
        key = (row["step"], row["dtype"])
        if key not in best or row["gbps"] > best[key]["gbps"]:
            best[key] = row
    header = ["dtype", "bytes", *steps]
    lines = []
    for dtype, elem_bytes in DTYPES.items():
        if not any(key[1] == dtype for key in best) and not any(
                key[1] == dtype for key in (statuses or {})):
            continue
        line = [dtype, str(elem_bytes)]
        for step in steps:
            row = best.get((step, dtype))
            if row is None:
                line.append((statuses or {}).get((step, dtype), "n/a"))
            elif not row["verified"]:
                line.append("WRONG")
            elif with_gbps:
                line.append(f"{row['pct_of_ceiling']:.1f}% ({row['gbps']:.0f} GB/s)")
            else:
                line.append(f"{row['pct_of_ceiling']:.1f}%")
        lines.append(line)
    return header, lines


def dtype_table_steps(rows, reference_steps):
    """The steps of the README's dtypes table: the reference steps present (e.g. CUDA.cublas)
    and the last two GPU steps of the kernel kind besides them, in the rows' order."""
    order = list(dict.fromkeys(row["step"] for row in rows))
    references = [step for step in order if step in reference_steps
                  or any(row["kind"] == "reference" for row in rows if row["step"] == step)]
    kernels = [step for step in order if step not in references
               and any(row["kind"] == "kernel" for row in rows if row["step"] == step)]
    return kernels[-2:] + references


def profile_table(rows):
    """One line per profiled step (rows as results_csv.read_profile reads a profile CSV); the
    step's dtype named where rows hold several."""
    several = len(dtypes_in_order(rows)) > 1
    header = ["step", "ld sectors", "st sectors", "ld sect/req", "st sect/req", "smem ld confl",
              "smem st confl", "DRAM % peak", "DRAM rd MB", "DRAM wr MB", "st vs copy"]
    lines = [[row["step"] + (f" {row['dtype']}" if several else ""),
              f"{row['gld_sectors']:,.0f}", f"{row['gst_sectors']:,.0f}",
              f"{row['gld_sectors_per_request']:.1f}", f"{row['gst_sectors_per_request']:.1f}",
              f"{row['shared_ld_bank_conflicts']:,.0f}", f"{row['shared_st_bank_conflicts']:,.0f}",
              f"{row['dram_pct_of_peak']:.1f}%", f"{row['dram_bytes_read'] / 1e6:.1f}",
              f"{row['dram_bytes_write'] / 1e6:.1f}", f"{row['store_sectors_vs_copy']:.2f}x"]
             for row in rows]
    return header, lines


def format_text(header, lines, name_columns=2):
    """Aligned columns: the first name_columns left-aligned (names), the numbers right-aligned."""
    widths = [max(len(str(cell)) for cell in column) for column in zip(header, *lines)]
    out = []
    for index, line in enumerate([header, *lines]):
        out.append("  ".join(str(cell).ljust(width) if i < name_columns else str(cell).rjust(width)
                             for i, (cell, width) in enumerate(zip(line, widths))).rstrip())
        if index == 0:
            out.append("  ".join("-" * width for width in widths))
    return "\n".join(out)


def format_markdown(header, lines, name_columns=2):
    align = ["---" if i < name_columns else "---:" for i in range(len(header))]
    rows = [header, align, *lines]
    return "\n".join("| " + " | ".join(str(cell) for cell in row) + " |" for row in rows)
