"""The comparison tables, built once from result rows (plots/results_csv.py) and rendered either
as aligned text (the make targets) or as Markdown (the README)."""


def ratio(numerator, denominator):
    return f"{numerator / denominator:.2f}x" if numerator and denominator else "-"


def best_cpu(rows):
    cpu = [row for row in rows if row["step"].startswith("CPU.")]
    return min(cpu, key=lambda row: row["median_ms"]) if cpu else None


def devices(rows):
    return " / ".join(dict.fromkeys(row["device"] for row in rows)) or "no device"


def progression_table(rows, steps, statuses=None):
    """One line per measurement in step order: speedups against the best CPU variant and the
    line before. statuses maps a step with no rows to why (skipped, failed, not built)."""
    cpu = best_cpu(rows)
    header = ["step", "what it does", "ms", "GB/s", "% of copy", "vs best CPU", "vs previous",
              "end-to-end ms", "check"]
    lines, previous = [], None
    for step in steps:
        step_rows = [row for row in rows if row["step"] == step]
        if not step_rows:
            lines.append([step, (statuses or {}).get(step, "no result")] + ["-"] * 7)
            continue
        for row in step_rows:
            one_kernel = row["variant"] == "kernel"
            lines.append([
                step if one_kernel else f"{step} {row['variant']}",
                row["summary"] if one_kernel else row["launch"],
                f"{row['median_ms']:.3f}", f"{row['gbps']:.1f}", f"{row['pct_of_ceiling']:.1f}%",
                ratio(cpu["median_ms"], row["median_ms"]) if cpu else "-",
                ratio(previous["median_ms"], row["median_ms"]) if previous else "-",
                f"{row['e2e_ms']:.2f}" if row["e2e_ms"] is not None else "-",
                "verified" if row["verified"] else "WRONG"])
            previous = row
    return header, lines


def bench_table(rows, shapes, reference, last):
    header = ["shape", "copy GB/s", f"{reference} GB/s", f"{last} GB/s", f"{reference} % of copy",
              f"{last} % of copy", f"{last} vs {reference}"]
    lines = []
    for shape in shapes:
        r, c = map(int, shape.split("x"))
        find = lambda step: next((row for row in rows if row["step"] == step  # noqa: E731
                                  and (row["rows"], row["cols"]) == (r, c)), None)
        ref, own = find(reference), find(last)
        if not ref or not own:
            lines.append([shape] + ["-"] * 6)
            continue
        lines.append([shape, f"{own['ceiling_gbps']:.1f}", f"{ref['gbps']:.1f}", f"{own['gbps']:.1f}",
                      f"{ref['pct_of_ceiling']:.1f}%", f"{own['pct_of_ceiling']:.1f}%",
                      ratio(ref["median_ms"], own["median_ms"])])
    return header, lines


def scaling_table(rows):
    first = min((row["threads"] for row in rows), default=1)
    base = {(row["step"], row["variant"]): row for row in rows if row["threads"] == first}
    header = ["variant", "threads", "ms", "GB/s", "copy GB/s", "% of copy", f"vs {first} thread(s)"]
    lines = [[f"{row['step']} {row['variant']}", row["threads"], f"{row['median_ms']:.2f}",
              f"{row['gbps']:.1f}", f"{row['ceiling_gbps']:.1f}", f"{row['pct_of_ceiling']:.1f}%",
              ratio(base[(row["step"], row["variant"])]["median_ms"], row["median_ms"])
              if (row["step"], row["variant"]) in base else "-"]
             for row in sorted(rows, key=lambda row: (row["variant"], row["threads"]))]
    return header, lines


def profile_table(rows):
    """One line per profiled step (rows as plots/results_csv.py reads a profile CSV)."""
    header = ["step", "ld sectors", "st sectors", "ld sect/req", "st sect/req", "smem ld confl",
              "smem st confl", "DRAM % peak", "DRAM rd MB", "DRAM wr MB", "st vs copy"]
    lines = [[row["step"], f"{row['gld_sectors']:,.0f}", f"{row['gst_sectors']:,.0f}",
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
