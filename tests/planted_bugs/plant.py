"""Planted bugs for every kernel step, as small rewrites of the step's one store statement
(`out[INDEX] = VALUE;`), not copies of its source: the bug stays the same as the step changes.

    python3 tests/planted_bugs/plant.py --list
    python3 tests/planted_bugs/plant.py STEP BUG DIR    writes DIR/transpose.cu, then:
    make check STEP=STEP FROM=DIR

The bugs, each caught by the verifier (the output is poisoned from the fill, docs/verification.md):
  unwritten   the last element of the output is never stored
  moved       the first element is stored one place further on (out[1]); out[0] keeps its poison
  tile-edge   the threads at the edge of a block (threadIdx.x == blockDim.x - 1) store one place
              early: an off-by-one at every tile edge the matrix reaches
"""
import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]

# The store statement of each kernel step: the one line the bugs rewrite. A step whose store
# changes must be listed again here (the test says so, naming the step).
STORES = {
    "CUDA.v1": "out[static_cast<size_t>(c) * rows + r] = in[static_cast<size_t>(r) * cols + c];",
    "CUDA.v2": "out[static_cast<size_t>(c) * rows + r] = in[static_cast<size_t>(r) * cols + c];",
    "CUDA.v3": "out[static_cast<size_t>(r) * rows + c] = tile[threadIdx.x][threadIdx.y];",
    "CUDA.v4": "out[static_cast<size_t>(r) * rows + c] = tile[threadIdx.x][threadIdx.y];",
    "CUDA.v5_unroll": "out[static_cast<size_t>(r + j) * rows + c] = tile[threadIdx.x][threadIdx.y + j];",
    "CUDA.v6_locality": "out[row_start + out_col] = tile[out_col - tile_r][threadIdx.y + j];",
    "CUDA.copy": "out[i] = in[i];",
}
LAST = "static_cast<size_t>(rows) * cols - 1"
BUGS = {
    "unwritten": "{{ const size_t o = {index}; if (o != " + LAST + ") out[o] = {value}; }}",
    "moved": "{{ const size_t o = {index}; out[o == 0 && " + LAST + " > 0 ? 1 : o] = {value}; }}",
    "tile-edge": ("{{ const size_t o = {index}; "
                  "out[threadIdx.x == blockDim.x - 1 && o > 0 ? o - 1 : o] = {value}; }}"),
}
STORE = re.compile(r"out\[(?P<index>.+)\] = (?P<value>.+);$")


def planted_source(step, bug):
    """The step's transpose.cu with `bug` planted in its store, marked `// BUG:`."""
    source = (ROOT / step / "transpose.cu").read_text()
    store = STORES[step]
    if source.count(store) != 1:
        raise ValueError(f"{step}/transpose.cu does not hold its store statement once: {store}")
    parts = STORE.match(store)
    planted = BUGS[bug].format(index=parts["index"], value=parts["value"])
    return source.replace(store, f"{planted}  // BUG: {bug}")


def write(step, bug, folder):
    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "transpose.cu").write_text(planted_source(step, bug))
    return folder


def main(argv):
    if argv == ["--list"]:
        for step in STORES:
            print(step, " ".join(BUGS))
        return 0
    if len(argv) != 3 or argv[0] not in STORES or argv[1] not in BUGS:
        print(__doc__, file=sys.stderr)
        return 2
    print(write(*argv) / "transpose.cu")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
