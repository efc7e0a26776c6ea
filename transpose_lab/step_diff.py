"""`make diff STEP=X`: what a step of the progression changed against the step before it.

The header comment of the step's main source (what changed and why) is printed once, set apart;
below it, a unified diff of the code only, file by file: transpose.cu (or .cpp), variants.cu and
any other source of the step's own folder. A file that only one of the two steps has is named in
one line with the first line of its header, not diffed whole (CUDA.v2's variants.cu, v7's
ragged.cu). Reference rows and the steps of other kinds are not steps of the progression: one
line says so, and the exit code is 0.

    python -m transpose_lab.step_diff STEP [--count]     (--count: only the number of changed lines)
"""
import argparse
import difflib
import re
import sys

from transpose_lab import lab

EXIT_USAGE = lab.EXIT_USAGE
LESSON_MARKER = re.compile(r"^\s*//\s*LESSON:")
SOURCE_SUFFIXES = (".cu", ".cpp", ".cuh", ".hpp")


def split_header(text):
    """(header comment lines at the top of a source, the code after them). The exercise markers
    (`// LESSON: ...`, transpose_lab/exercises.py) are scaffolding, not code: left out."""
    lines = text.split("\n")
    cut = 0
    while cut < len(lines) and lines[cut].startswith("//"):
        cut += 1
    return lines[:cut], [line for line in lines[cut:] if not LESSON_MARKER.match(line)]


def step_sources(step):
    """{file name: path} of the step's own sources, its main source first."""
    folder = lab.ROOT / step
    files = sorted((p for p in folder.iterdir() if p.suffix in SOURCE_SUFFIXES),
                   key=lambda p: (not p.stem == "transpose", p.name))
    return {p.name: p for p in files}


def main_source(sources):
    return next(p for name, p in sources.items() if name.startswith("transpose."))


def first_header_line(path):
    header, _ = split_header(path.read_text())
    return header[0].lstrip("/ ").rstrip() if header else "(no header)"


def diff_lines(previous, step):
    """The diff of the code of step against previous, as a list of lines."""
    old, new = step_sources(previous), step_sources(step)
    old_main, new_main = main_source(old), main_source(new)
    pairs = [(old_main, new_main)]
    pairs += [(old[name], new[name]) for name in new
              if name in old and new[name] != new_main and old[name] != old_main]
    out = []
    for a, b in pairs:
        _, a_code = split_header(a.read_text())
        _, b_code = split_header(b.read_text())
        out += difflib.unified_diff(a_code, b_code, f"{previous}/{a.name}", f"{step}/{b.name}",
                                    lineterm="")
    out += [f"only in {step}: {name}: {first_header_line(path)}" for name, path in new.items()
            if name not in old and path != new_main]
    # A step that links the step before it (STEP_KERNEL) runs that step's files as they are.
    kept = "linked (STEP_KERNEL), not repeated" if lab.step_kernel(step) == previous else \
        "not carried on"
    out += [f"only in {previous}: {name}, {kept}" for name, path in old.items()
            if name not in new and path != old_main]
    return out


def changed_count(lines):
    return sum(1 for line in lines if line[:1] in "+-" and line[:3] not in ("+++", "---"))


def not_in_progression(step):
    """One line why a known step has no diff, or None when it is a step of the progression."""
    if step in lab.steps("REFERENCE_STEPS"):
        return (f"{step} is a reference row, not a step of the progression: the same problem "
                "solved another way, with no step before it to diff against")
    if step in lab.steps("PIPELINE_STEPS") + lab.steps("DISTRIBUTED_STEPS"):
        kind = lab.step_kind(step)
        return (f"{step} is a step of another kind ({kind}): it links "
                f"{lab.step_kernel(step) or 'a kernel step'}'s launcher and its lesson is its own "
                "data movement, not a change to the kernel: read its transpose.cu")
    return None


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("step", nargs="?", default="")
    parser.add_argument("--count", action="store_true")
    args = parser.parse_args(argv)
    step = args.step.rstrip("/")
    why_not = not_in_progression(step)
    if why_not:
        print(why_not)
        return 0
    progression = lab.steps("PROGRESSION")
    if step in lab.steps("PERMUTE_STEPS"):  # chapter 3: a progression of its own
        progression = lab.steps("PERMUTE_STEPS")
    if step not in progression[1:]:
        print(f"usage: make diff STEP=X, X one of: {' '.join(progression[1:])}", file=sys.stderr)
        return EXIT_USAGE
    previous = progression[progression.index(step) - 1]
    lines = diff_lines(previous, step)
    if args.count:
        print(changed_count(lines))
        return 0
    header, _ = split_header(main_source(step_sources(step)).read_text())
    print(f"# {step} against {previous}: what changed (its header)\n")
    print("\n".join(header))
    print(f"\n# the code ({changed_count(lines)} changed lines)\n")
    if lab.step_kernel(step) == previous:
        print(f"{previous}'s launcher is linked (STEP_KERNEL in {step}/Makefile): its lines "
              f"marked - below still run, for the problems {step} hands to it\n")
    print("\n".join(lines))
    return 0


if __name__ == "__main__":
    sys.exit(main())
