"""What a student and an instructor open speaks of the lab only: no tracked path or text names a
period of work, a call or a development commit, the README and every step text fit 200 lines,
and every step text has the sections every step text has (docs: how a lab text reads)."""
import re
import subprocess

import pytest

from conftest import ROOT

# A period of work or a call, a date, said as such.
HISTORY = re.compile(r"(?i)\b(session|call)[ _-]?\d|period of work|\b20\d\d-\d\d-\d\d\b")
# A commit hash in prose: 7 to 40 hex digits with a letter and a digit, not a 0x constant.
HASH = re.compile(r"(?<![0-9A-Za-z_x#])(?=[0-9a-f]*[a-f])(?=[0-9a-f]*[0-9])[0-9a-f]{7,40}\b")
TEXT_SUFFIXES = {".md", ".py", ".cpp", ".hpp", ".cu", ".cuh", ".mk", ".sh", ".txt", ".yml",
                 ".yaml", ".toml", ".cfg", ".in"}
TEXT_NAMES = {"Makefile", "run", ".clang-format", ".gitignore"}
MAX_LINES = 200
# The sections of a step text, in order; "What did not help" only where it teaches.
SECTIONS = ["The idea", "Run it", "What you should see", "Why", "Questions"]
OPTIONAL = ["What did not help"]


def tracked():
    out = subprocess.run(["git", "-C", str(ROOT), "ls-files", "-z"], capture_output=True,
                         text=True, check=True).stdout
    return [name for name in out.split("\0") if name]


def texts():
    """Tracked Markdown, code and comments: not the data under docs/results, not this test."""
    for name in tracked():
        path = ROOT / name
        if name.startswith("docs/results/") and not name.endswith(".md"):
            continue
        if name == "tests/test_course_surface.py" or not path.is_file():
            continue
        if path.suffix in TEXT_SUFFIXES or path.name in TEXT_NAMES:
            yield name, path.read_text(errors="replace")


def step_texts():
    return sorted(p.relative_to(ROOT).as_posix() for pattern in ("CPU.*/README.md",
                                                                "CUDA.*/README.md")
                  for p in ROOT.glob(pattern))


def test_no_tracked_path_names_a_period_of_work_a_call_or_a_date():
    bad = [name for name in tracked() if HISTORY.search(name)]
    assert not bad, "paths named after a period of work, a call or a date:\n" + "\n".join(bad)


def test_no_tracked_text_names_a_period_of_work_a_call_or_a_date():
    bad = [f"{name}:{number}: {line.strip()[:100]}"
           for name, text in texts()
           for number, line in enumerate(text.splitlines(), 1) if HISTORY.search(line)]
    assert not bad, f"{len(bad)} line(s) name a period of work, a call or a date:\n" + \
        "\n".join(bad[:60])


def test_no_markdown_text_names_a_commit():
    bad = []
    for name, text in texts():
        if not name.endswith(".md"):
            continue
        for number, line in enumerate(text.splitlines(), 1):
            found = HASH.findall(line)
            if found:
                bad.append(f"{name}:{number}: {', '.join(found)}")
    assert not bad, f"{len(bad)} line(s) name a commit:\n" + "\n".join(bad[:60])


def test_the_patterns_catch_what_they_must_and_pass_what_they_must():
    # The samples are joined from their parts here, so that the tree itself never says them.
    session, call = "sess" + "ion", "ca" + "ll"
    for said in (f"{session}5/", f"{call}3_ramp.csv", f"the third {session} 4", "a period of work",
                 "lent on " + "-".join(["2026", "11", "22"])):
        assert HISTORY.search(said), said
    for said in ("one call per step", "sessions of a course", "cudaMemcpy2D"):
        assert not HISTORY.search(said), said
    assert HASH.findall("fixed in 6726ef4 since") == ["6726ef4"]
    assert not HASH.findall("0xdeadbeef1 and 12345678 and a_1234abc and cafebabe")


@pytest.mark.parametrize("name", ["README.md"] + step_texts())
def test_a_text_is_at_most_200_lines(name):
    lines = len((ROOT / name).read_text().splitlines())
    assert lines <= MAX_LINES, f"{name}: {lines} lines (at most {MAX_LINES})"


@pytest.mark.parametrize("name", step_texts())
def test_a_step_text_has_the_sections_of_every_step_text_in_order(name):
    headings = [line[3:].strip() for line in (ROOT / name).read_text().splitlines()
                if line.startswith("## ")]
    found = [h for h in headings for s in SECTIONS + OPTIONAL if h.lower().startswith(s.lower())]
    wanted = [h for h in found if not any(h.lower().startswith(o.lower()) for o in OPTIONAL)]
    missing = [s for s in SECTIONS if not any(h.lower().startswith(s.lower()) for h in wanted)]
    assert not missing, f"{name}: no section {missing} (its sections: {headings})"
    order = [next(i for i, s in enumerate(SECTIONS) if h.lower().startswith(s.lower()))
             for h in wanted]
    assert order == sorted(order), f"{name}: sections out of order: {headings}"
