"""Planted bugs for every kernel step, as small rewrites of the step's one store statement
(`out[INDEX] = VALUE;`, or v7_packed's 16-byte `*reinterpret_cast<uint4*>(out + INDEX) = VALUE;`),
not copies of its source: the bug stays the same as the step changes.

    python3 tests/planted_bugs/plant.py --list
    python3 tests/planted_bugs/plant.py STEP BUG DIR    writes DIR/transpose.cu, then:
    make check STEP=STEP FROM=DIR

The bugs, each caught by the verifier (the output is poisoned from the fill, docs/verification.md):
  unwritten   the last element of the output is never stored
  moved       the first element is stored one place further on (out[1]); out[0] keeps its poison
  tile-edge   the threads at the edge of a block (threadIdx.x == blockDim.x - 1) store one place
              early: an off-by-one at every tile edge the matrix reaches
CUDA.v7_packed stores a 16-byte vector (N elements) at a time, so there a place is a vector: an
element over would be a misaligned 16-byte store, a fault instead of a wrong answer. Its plants are
in the packed kernel (transpose.cu), which runs only where rows and cols are multiples of N (of the
grader's shapes, 8192 x 8192 float32); other shapes take ragged.cu's kernels and pass.
"""
import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]

# The store statement of each kernel step: the one statement the bugs rewrite. A step whose store
# changes must be listed again here (the test says so, naming the step).
STORES = {
    "CUDA.v1": "out[static_cast<size_t>(c) * rows + r] = in[static_cast<size_t>(r) * cols + c];",
    "CUDA.v2": "out[static_cast<size_t>(c) * rows + r] = in[static_cast<size_t>(r) * cols + c];",
    "CUDA.v3": "out[static_cast<size_t>(r) * rows + c] = tile[threadIdx.x][threadIdx.y];",
    "CUDA.v4": "out[static_cast<size_t>(r) * rows + c] = tile[threadIdx.x][threadIdx.y];",
    "CUDA.v5_unroll": "out[static_cast<size_t>(r) * rows + c] = tile[c - tile_r][r - tile_c];",
    "CUDA.v6_locality": ("out[static_cast<size_t>(r) * rows + c] ="
                         " tile[threadIdx.x + i][threadIdx.y + j];"),
    "CUDA.copy": "out[i] = in[i];",
    "CUDA.v7_packed": ("*reinterpret_cast<uint4*>(out + static_cast<size_t>(out_row) * rows"
                       " + out_col) =\n        tile[cell<N>(out_row_local, g)];"),
}
# The two ways a store is written: an element, or (v7_packed) a 16-byte vector of N elements. For
# each: its pattern, the store rewritten to place `at`, one place (in elements), and the test a
# thread at a tile's edge passes (v7: the thread of the last vector of an output row of its tile).
ELEMENT = (re.compile(r"out\[(?P<index>.+)\] = (?P<value>.+);$"), "out[{at}] = {value};", "1",
           "threadIdx.x == blockDim.x - 1")
VECTOR = (re.compile(r"\*reinterpret_cast<uint4\*>\(out \+ (?P<index>.+)\) =\s+(?P<value>.+);$"),
          "*reinterpret_cast<uint4*>(out + {at}) = {value};", "N", "g == GROUPS - 1")
LAST = "static_cast<size_t>(rows) * cols - {one}"  # the last place's first element
# Each bug: (the condition the store is made under, or None; where it stores), o the right place.
BUGS = {
    "unwritten": ("o != " + LAST, "o"),
    "moved": (None, "o == 0 && " + LAST + " > 0 ? {one} : o"),
    "tile-edge": (None, "{edge} && o > 0 ? o - {one} : o"),
}


def planted_source(step, bug):
    """The step's transpose.cu with `bug` planted in its store, marked `// BUG:`."""
    source = (ROOT / step / "transpose.cu").read_text()
    store = STORES[step]
    if source.count(store) != 1:
        raise ValueError(f"{step}/transpose.cu does not hold its store statement once: {store}")
    form = VECTOR if store.startswith("*") else ELEMENT
    pattern, rewritten, one, edge = form
    parts = pattern.match(store)
    condition, at = (part and part.format(one=one, edge=edge) for part in BUGS[bug])
    if form is VECTOR and at != "o":
        at = f"({at})"  # out + (the whole place)
    planted = rewritten.format(at=at, value=parts["value"])
    if condition:
        planted = f"if ({condition}) {planted}"
    planted = f"{{ const size_t o = {parts['index']}; {planted} }}"
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
