"""Reading docs/results for the figure tests (test_text_figures*.py): rows of a results CSV, the
one row a quote rests on, and the metrics of a raw `ncu --csv` file."""
import csv

from conftest import ROOT

RESULTS = ROOT / "docs" / "results"


def flat(text):
    """Line breaks and runs of spaces as one space: the text may wrap a quote anywhere."""
    return " ".join(text.split())


def rows(name):
    with open(RESULTS / name, newline="") as f:
        return list(csv.DictReader(f))


def one(name, **where):
    found = [r for r in rows(name) if all(r[k] == str(v) for k, v in where.items())]
    assert len(found) == 1, f"{name}: {len(found)} rows match {where}"
    return found[0]


def pct(name, **where):
    return float(one(name, **where)["pct_of_ceiling"])


def ms(name, **where):
    return float(one(name, **where)["median_ms"])


def ncu_table(name):
    """The metric rows of a raw `ncu --csv` file: its lines that start with a quote are the CSV,
    the others the program's own output."""
    text = (RESULTS / name).read_text()
    return list(csv.DictReader(line for line in text.splitlines() if line.startswith('"')))


def ncu_metrics(name):
    """{metric name: value} of a raw `ncu --csv` file (values carry thousands separators)."""
    return {r["Metric Name"]: float(r["Metric Value"].replace(",", "")) for r in ncu_table(name)}
