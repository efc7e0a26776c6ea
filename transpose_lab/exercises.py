"""Exercises generated from the steps: the steps are the solutions, and a few marker comments in a
step's source bracket the lines that are its lesson.

    python -m transpose_lab.exercises [--out exercises] [--steps S...] [--force]   (make exercises)
    python -m transpose_lab.exercises --list                 the steps that have lesson markers

The markers, each a whole comment line (indentation free):

    // LESSON: begin <hint>      the lines up to `end` are the lesson
    // LESSON: stub <code>       optional, inside a region: a line the exercise gets instead
    // LESSON: end

In the exercise every region, markers included, becomes `// TODO: <hint>` followed by its stub
lines, if any, as code. Everything else is copied unchanged. A region must be one the program can
do without: whole statements, declaring nothing that the lines after it use (or a stub that
declares it), so that the exercise builds with the same `make`, runs, and fails verification
(the output is left unwritten, or wrong) until the student writes the lesson back.

A step joins the course by having markers: the steps are found by scanning every folder of the
repository root for a transpose.cu or transpose.cpp that holds a `LESSON: begin` line; no list
of steps is kept here. exercises/<step>/ gets the step's Makefile, its README.md, its
variants.cu (other launchers to compare, where it has them) and the exercise source;
exercises/common is a link to the real common/, so `include ../common/step.mk` and
`#include "../common/..."` resolve exactly as they do in the step. An exercise source that
differs from what would be written now (a student's work) is kept, unless --force.
"""
import argparse
import os
import re
import shutil
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path

from transpose_lab.lab import EXIT_USAGE, ROOT  # noqa: E402
SOURCES = ("transpose.cu", "transpose.cpp")
COPIED = ("Makefile", "README.md", "variants.cu")  # besides the source, copied unchanged if there
MARKER = re.compile(r"^(?P<indent>\s*)//\s*LESSON:\s*(?P<what>begin|stub|end)\b\s?(?P<text>.*)$")


class LessonError(Exception):
    """Markers that do not form regions; the message names the file and line."""


@dataclass
class Region:
    begin: int  # 0-based index of the `begin` marker line
    end: int  # 0-based index of the `end` marker line
    indent: str
    hint: str
    stubs: list = field(default_factory=list)

    def exercise_lines(self):
        return [f"{self.indent}// TODO: {self.hint}"] + [self.indent + s for s in self.stubs]


def parse_regions(text, name="<source>"):
    """The lesson regions of a source text, in order; LessonError where the markers are wrong."""
    regions, current = [], None
    for number, line in enumerate(text.splitlines()):
        where = f"{name}:{number + 1}"
        if "LESSON:" in line and not MARKER.match(line):
            raise LessonError(f"{where}: 'LESSON:' outside a marker line "
                              "(// LESSON: begin|stub|end)")
        match = MARKER.match(line)
        if not match:
            continue
        what, text_after = match["what"], match["text"].strip()
        if what == "begin":
            if current is not None:
                raise LessonError(f"{where}: 'LESSON: begin' inside the region opened at line "
                                  f"{current.begin + 1} (regions do not nest)")
            if not text_after:
                raise LessonError(f"{where}: 'LESSON: begin' needs a hint after it")
            current = Region(begin=number, end=-1, indent=match["indent"], hint=text_after)
        elif what == "stub":
            if current is None:
                raise LessonError(f"{where}: 'LESSON: stub' outside a region")
            if not text_after:
                raise LessonError(f"{where}: 'LESSON: stub' needs the code line after it")
            current.stubs.append(text_after)
        else:
            if current is None:
                raise LessonError(f"{where}: 'LESSON: end' without a 'LESSON: begin'")
            if text_after:
                raise LessonError(f"{where}: nothing may follow 'LESSON: end'")
            current.end = number
            regions.append(current)
            current = None
    if current is not None:
        raise LessonError(f"{name}:{current.begin + 1}: 'LESSON: begin' is never ended")
    return regions


def exercise_text(text, name="<source>"):
    """The exercise made from a solution's text: every region replaced by its TODO and stubs."""
    lines = text.splitlines()
    out, position = [], 0
    for region in parse_regions(text, name):
        out += lines[position:region.begin] + region.exercise_lines()
        position = region.end + 1
    out += lines[position:]
    return "\n".join(out) + ("\n" if text.endswith("\n") else "")


def step_source(folder):
    for name in SOURCES:
        if (folder / name).is_file():
            return folder / name
    return None


def find_steps(root=ROOT):
    """{step name: source path} for every folder of root whose source has lesson markers."""
    steps = {}
    for folder in sorted(p for p in Path(root).iterdir() if p.is_dir()):
        if folder.name.startswith(".") or folder.name in ("exercises", "common", "tests"):
            continue
        source = step_source(folder)
        if source and (folder / "Makefile").is_file() and \
                re.search(r"//\s*LESSON:\s*begin", source.read_text()):
            steps[folder.name] = source
    return steps


def link_common(out, root):
    """out/common -> root/common (relative where out lies inside root), as steps see ../common."""
    link, target = out / "common", (Path(root) / "common").resolve()
    try:
        relative = Path(os.path.relpath(target, out.resolve()))
    except ValueError:
        relative = target
    use = relative if not str(relative).startswith("../../") else target
    if link.is_symlink() or link.exists():
        if link.resolve() == target:
            return
        if link.is_symlink():
            link.unlink()
        else:
            raise LessonError(f"{link} exists and is not a link to {target}: remove it")
    link.symlink_to(use, target_is_directory=True)


def lesson_free_objects(step_folder):
    """The objects the step's make builds from sources other than the lesson's (its
    LESSON_FREE_OBJECTS: the harness and the driver), relative to the step's folder."""
    done = subprocess.run(["make", "--no-print-directory", "-s", "-C", str(step_folder), "-f",
                           "Makefile", "-f", str(step_folder.parent / "common" / "print.mk"),
                           "print-LESSON_FREE_OBJECTS"], capture_output=True, text=True,
                          env={k: v for k, v in os.environ.items() if k != "MAKEFLAGS"})
    return done.stdout.split() if done.returncode == 0 else []


def seed_build(solution, exercise):
    """Copies the solution's built objects that hold nothing of the lesson into the exercise's
    build folder, times kept, so that its make compiles only what the student writes (the same
    flags and the same sources built them; make rebuilds any that a source has since outdated).
    Nothing is copied where the solution is not built, or the exercise has objects of its own."""
    for name in lesson_free_objects(solution):
        built, seeded = solution / name, exercise / name
        if built.is_file() and not seeded.exists():
            seeded.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(built, seeded)


def write_exercises(out, root=ROOT, steps=None, force=False, log=print):
    """Writes out/<step>/ for each chosen step; returns the exercise folders written or kept."""
    out, found = Path(out), find_steps(root)
    chosen = steps or list(found)
    unknown = [s for s in chosen if s not in found]
    if unknown:
        raise LessonError(f"no lesson markers in: {', '.join(unknown)} (steps with markers: "
                          f"{', '.join(found) or 'none'})")
    out.mkdir(parents=True, exist_ok=True)
    link_common(out, root)
    readme = out / "README.md"
    readme.write_text(HANDOUT)
    folders = []
    for step in chosen:
        source = found[step]
        exercise = exercise_text(source.read_text(), str(source.relative_to(root)))
        folder = out / step
        folder.mkdir(exist_ok=True)
        for name in COPIED:
            if (source.parent / name).is_file():
                shutil.copyfile(source.parent / name, folder / name)
        seed_build(source.parent, folder)
        target = folder / source.name
        regions = len(parse_regions(source.read_text()))
        if target.exists() and target.read_text() != exercise and not force:
            log(f"{target}: kept: it differs from a fresh exercise (your work?); "
                "make exercises FORCE=1 overwrites it")
        else:
            target.write_text(exercise)
            log(f"{target}: {regions} TODO(s)")
        folders.append(folder)
    return folders


HANDOUT = """\
# Exercises (generated by `make exercises`; do not commit)

Each folder is a step of the lab with the lines of its lesson taken out: look for `// TODO:`.
The rest of the step, and its lab text (README.md), are as in the finished step. Each exercise
builds and runs as it is, and fails verification until you have written the lesson back.

    cd exercises/CUDA.v3 && make && ./transpose 1000 999     # try it yourself, any shape
    make check STEP=CUDA.v3 FROM=exercises                   # from the repository root: grade it

`make check` builds the exercise, runs it on shapes and element types you do not choose, under
compute-sanitizer when it is installed, and compares its speed with the expected range for your
GPU. One PASS/FAIL line per check; the last line sums up.

`make exercises` again keeps any exercise you have edited; `make exercises FORCE=1` starts over.
"""


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", default=str(ROOT / "exercises"),
                        help="folder to write (default: exercises/ at the repository root)")
    parser.add_argument("--steps", nargs="+", help="only these steps (default: every step with "
                        "lesson markers)")
    parser.add_argument("--force", action="store_true", help="overwrite edited exercises")
    parser.add_argument("--list", action="store_true", help="print the steps with markers")
    args = parser.parse_args(argv)
    try:
        if args.list:
            print(" ".join(find_steps()))
            return 0
        write_exercises(args.out, steps=args.steps, force=args.force)
    except LessonError as error:
        print(f"error: {error}", file=sys.stderr)
        return EXIT_USAGE
    return 0


if __name__ == "__main__":
    sys.exit(main())
