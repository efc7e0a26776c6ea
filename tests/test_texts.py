"""The text generator (transpose_lab/texts.py): every table and figure in every Markdown file is
the one its markers make from docs/results, and a change on either side is caught."""
import shutil
import subprocess
import sys

import pytest

from conftest import ROOT
from transpose_lab import texts

RESULTS = ROOT / "docs" / "results"

CSV = """step,variant,device,dtype,rows,median_ms,gbps,pct_of_ceiling,gst_sectors_per_request
CUDA.v3,kernel,GPU X,float32,8192,0.400,1342.1772,45.31,4
CUDA.v4,kernel,GPU X,float32,8192,0.2,2684.3545,90.62,4
CUDA.v4,kernel,GPU X,uint8,8192,0.1,1342.1772,45.3,1
"""

TEXT = """# A text

<!-- table: gx/kernels.csv dtype=float32 columns=step,median_ms,gbps,pct_of_ceiling -->
<!-- end -->

v4 reaches <!-- fig: gx/kernels.csv step=CUDA.v4 dtype=float32 value=pct_of_ceiling -->?<!-- end -->
of the copy, <!-- fig: gx/kernels.csv step=CUDA.v4 dtype=float32 value=gbps over=step=CUDA.v3 -->?<!-- end -->
v3's speed, on <!-- fig: gx/machine.txt key=gpu -->?<!-- end -->.

<!-- table: gx/kernels.csv step=CUDA.v4 pivot=step,dtype,pct_of_ceiling -->
<!-- end -->

```
<!-- fig: gx/kernels.csv step=CUDA.v9 value=gbps -->an example, not a marker<!-- end -->
```

![the progression](docs/results/gx/progression.png)
"""


def check(root, *extra):
    return subprocess.run([sys.executable, "-m", "transpose_lab.texts", "--root", str(root),
                           *extra], cwd=ROOT, capture_output=True, text=True)


@pytest.fixture
def tree(tmp_path):
    """A copy of a small lab: one machine folder, one text, generated once."""
    folder = tmp_path / "docs" / "results" / "gx"
    folder.mkdir(parents=True)
    (folder / "kernels.csv").write_text(CSV)
    (folder / "machine.txt").write_text("gpu: GPU X\ncpu: CPU Y\ncores: 4\n")
    (folder / "progression.png").write_bytes(b"")
    (tmp_path / "README.md").write_text(TEXT)
    done = check(tmp_path)
    assert done.returncode == 0, done.stderr
    return tmp_path


def test_generates_tables_figures_ratios_and_machine_keys(tree):
    text = (tree / "README.md").read_text()
    assert "*Measured on GPU X (`docs/results/gx/kernels.csv`).*" in text
    assert "| step | median_ms | gbps | pct_of_ceiling |" in text
    assert "| CUDA.v3 | 0.400 | 1342 | 45.3% |" in text
    assert "| CUDA.v4 | 0.200 | 2684 | 90.6% |" in text
    assert "v4 reaches <!-- fig: gx/kernels.csv step=CUDA.v4 dtype=float32 " \
           "value=pct_of_ceiling -->90.6%<!-- end -->" in text
    assert "-->2.00x<!-- end -->" in text
    assert "key=gpu -->GPU X<!-- end -->" in text
    assert "| step | float32 | uint8 |" in text and "| CUDA.v4 | 90.6% | 45.3% |" in text
    assert "an example, not a marker" in text  # fenced: left alone
    assert check(tree, "--check").returncode == 0


def test_a_changed_table_cell_is_caught(tree):
    readme = tree / "README.md"
    readme.write_text(readme.read_text().replace("| CUDA.v4 | 0.200 | 2684 | 90.6% |",
                                                 "| CUDA.v4 | 0.200 | 2684 | 91.6% |"))
    done = check(tree, "--check")
    assert done.returncode == 1
    line = next(n for n, text in enumerate(readme.read_text().splitlines(), 1) if "91.6%" in text)
    assert f"README.md:{line}: table gx/kernels.csv" in done.stderr
    assert "'| CUDA.v4 | 0.200 | 2684 | 91.6% |'" in done.stderr
    assert "'| CUDA.v4 | 0.200 | 2684 | 90.6% |'" in done.stderr


def test_a_changed_prose_figure_is_caught(tree):
    readme = tree / "README.md"
    readme.write_text(readme.read_text().replace("-->2.00x<!--", "-->2.10x<!--"))
    done = check(tree, "--check")
    assert done.returncode == 1
    line = next(n for n, text in enumerate(readme.read_text().splitlines(), 1) if "2.10x" in text)
    assert f"README.md:{line}: fig gx/kernels.csv" in done.stderr
    assert "the text says '2.10x', the data gives '2.00x'" in done.stderr


def test_a_changed_csv_value_is_caught(tree):
    csv = tree / "docs" / "results" / "gx" / "kernels.csv"
    csv.write_text(csv.read_text().replace("90.62", "80.62"))
    done = check(tree, "--check")
    assert done.returncode == 1
    assert "the text says '90.6%', the data gives '80.6%'" in done.stderr
    assert "'| CUDA.v4 | 0.200 | 2684 | 80.6% |'" in done.stderr


def test_make_texts_rewrites_what_check_finds(tree):
    csv = tree / "docs" / "results" / "gx" / "kernels.csv"
    csv.write_text(csv.read_text().replace("90.62", "80.62"))
    assert check(tree).returncode == 0
    assert "-->80.6%<!-- end -->" in (tree / "README.md").read_text()
    assert check(tree, "--check").returncode == 0


@pytest.mark.parametrize("marker, message", [
    ("<!-- fig: gx/kernels.csv step=CUDA.v9 value=gbps -->1<!-- end -->", "0 rows match"),
    ("<!-- fig: gx/kernels.csv step=CUDA.v4 value=gbps -->1<!-- end -->", "2 rows match"),
    ("<!-- table: gx/kernels.csv step=CUDA.v9 -->\n<!-- end -->", "no row matches"),
    ("<!-- fig: gx/kernels.csv step=CUDA.v4 dtype=uint8 value=nope -->1<!-- end -->",
     "has no column 'nope'"),
    ("<!-- fig: gx/kernels.csv size=1 value=gbps -->1<!-- end -->", "has no column 'size'"),
    ("<!-- fig: gx/missing.csv step=CUDA.v4 value=gbps -->1<!-- end -->", "does not exist"),
    ("<!-- fig: gx/machine.txt key=nope -->1<!-- end -->", "has no key 'nope'"),
    ("<!-- table: gx/kernels.csv pivot=dtype,rows,pct_of_ceiling -->\n<!-- end -->",
     "more than one row"),
    ("![lost](docs/results/gx/lost.png)", "the picture docs/results/gx/lost.png does not exist"),
])
def test_a_marker_that_cannot_be_made_fails_naming_it(tree, marker, message):
    readme = tree / "README.md"
    readme.write_text(readme.read_text() + "\n" + marker + "\n")
    for args in (["--check"], []):
        done = check(tree, *args)
        assert done.returncode == 1
        assert "README.md:" in done.stderr and message in done.stderr
    assert marker in readme.read_text()  # a failing run rewrites nothing


def test_formats_follow_the_column():
    assert texts.format_value("pct_of_ceiling", "55.26") == "55.3%"
    assert texts.format_value("dram_pct_of_peak", "1.26") == "1.3%"
    assert texts.format_value("gbps", "1234.5678") == "1235"
    assert texts.format_value("e2e_ms", "13.5339") == "13.534"
    assert texts.format_value("gld_sectors_per_request", "4") == "4.00"
    assert texts.format_value("gst_sectors", "16777216.0") == "16777216"
    assert texts.format_value("variant", "kernel") == "kernel"
    assert texts.format_value("e2e_ms", "") == "-"


def test_the_real_texts_agree_with_docs_results():
    """make texts-check on the tree as committed: every marker of every tracked *.md."""
    problems = texts.run(ROOT, RESULTS, texts.markdown_files(ROOT), check=True)
    assert not problems, "\n".join(problems[:40] + [f"... {len(problems)} problem(s) in all"])


def test_the_real_texts_check_runs_without_a_gpu_in_well_under_a_minute():
    import time
    start = time.monotonic()
    texts.run(ROOT, RESULTS, texts.markdown_files(ROOT), check=True)
    assert time.monotonic() - start < 20
    assert shutil.which("python3")
