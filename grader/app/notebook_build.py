"""The course notebooks, generated from the puzzle files: never edited by hand.

``python -m grader notebooks`` writes them; ``--check`` fails when they differ from what the
puzzle files would generate now. Each puzzle gets its statement, its spec, the learner's
part (what the puzzle file marks with its `# ---- your part` lines) and a check cell.
"""
from __future__ import annotations

import ast
from pathlib import Path

import nbformat

from grader.course import kinds
from grader.course.loader import Course, LoadFailure, PuzzleLoadError
from grader.source.source_lines import marker_lines, statement_start

KERNEL_ENV = {"display_name": "Python 3", "language": "python", "name": "python3"}

SETUP = '''\
# Set-up: run this first. Without a GPU, kernels run in Triton's interpreter.
import torch
import triton
import triton.language as tl
from jaxtyping import Float32, Int32
from torch import Tensor

from grader.notebook import check, course_panel, hint, perf'''

# The modules a puzzle file imports beyond the Triton set-up go in after this line; a kind with a
# set-up of its own (grader.course.kinds) says its own line.
_TRITON_IMPORTS_AFTER = "import triton.language as tl\n"
from grader.course.syntax import parse
from grader.course.variant import shown

START_HERE = [
    ("markdown", """\
# Triton Puzzles: start here

Each puzzle states a formula, gives a PyTorch **spec** to match and a **stub** kernel for you
to finish. A `check(...)` cell grades your kernel on many generated cases, in a separate
process (a crash in your kernel cannot take this notebook down), and shows which case
failed, where, and how to fix it.

**Set-up** (once, in a terminal, from the course folder), as the README says:

```bash
make notebooks    # creates .venv with the course and JupyterLab, then opens this notebook
```

By hand, the same: the torch line takes PyTorch's CPU-only build (on Linux, PyPI's `torch`
is the 5 GB CUDA build). On a GPU machine that already has torch, skip it and leave out
`-c constraints.txt`.

```bash
python3 -m venv .venv && source .venv/bin/activate
pip install torch --index-url https://download.pytorch.org/whl/cpu
pip install -e ".[test,helion]" -c constraints.txt
pip install -e ".[notebooks]" -c constraints.txt
jupyter lab notebooks/00_start_here.ipynb
```

Then open `01_classic.ipynb`. No GPU is needed: without one, kernels run in Triton's
interpreter, and the grader also compiles them for a GPU so that interpreter-only code
does not pass."""),
    ("code", SETUP),
    ("markdown", """\
## How to check

Write the kernel in its cell, run the cell, then run the check cell under it, for example
`check(add_kernel, "puzzle01")`. A table shows every case with its sizes and blocks, ✓ or ✗,
and for a failure the message; beside it, a picture of which elements each program read and
wrote, yours against the reference. `hint("puzzle01")` reveals the puzzle's hints one at a
time. Your progress is saved in `.progress.json` next to the notebook."""),
    ("code", "course_panel()"),
    ("markdown", """\
## How to debug

* `print(x)` and `tl.device_print("x", x)` print inside a kernel in the interpreter; only
  `tl.device_print` also runs on a GPU. The check shows what your kernel printed.
* Out-of-bounds loads and stores are reported with the tensor, the program id and the line.
* From a terminal, `python -m grader puzzle01 --file my_work.ipynb` grades the kernel in a
  notebook, and `python -m grader puzzle02 --viz accesses.png` draws the memory-access picture."""),
    ("markdown", """\
## How fast

Once a kernel passes, `perf(softmax_kernel, "puzzle18")` estimates how long it would take on an
H100, with no GPU: the memory it moves against the least any kernel needs, how well its loads
use each 32-byte sector, its FLOPs, registers and occupancy, what bounds it, and the lines that
cost the most, beside the reference's. On a GPU, `python -m grader puzzle18 --bench` times it."""),
]




def learner_part(path: Path) -> str:
    """The learner's part of a puzzle file: the lines between its ``# ---- your part: ... ----``
    line and the ``# ------...`` line that closes it (the stub, and any constants it reads),
    without the blank lines at either end. Exactly one pair, opening first, or the file is
    named in a :class:`PuzzleLoadError`."""
    lines = path.read_text().splitlines()
    opening, closing = marker_lines(lines)
    if len(opening) != 1 or len(closing) != 1 or closing[0] < opening[0]:
        found = sorted(opening + closing)
        where = ", ".join(f"line {i + 1}" for i in found) or "none"
        raise PuzzleLoadError(f"{path.name}: the learner's part needs one `# ---- your part: ... ----` line "
                              f"and, after it, one closing `# ------...` line (marker lines found: {where})",
                              kind=LoadFailure.NOT_FOUND, line=found[0] + 1 if found else None)
    return "\n".join(lines[opening[0] + 1:closing[0]]).strip("\n")


def _spec_source(path: Path, puzzle) -> str:
    """The spec function's source, read from the puzzle file."""
    text = path.read_text()
    lines = text.splitlines()
    for node in parse(text).body:
        if isinstance(node, ast.FunctionDef) and node.name == puzzle.spec.__name__:
            return "\n".join(lines[statement_start(node):node.end_lineno])
    return ""


def _setup(course: Course, ids: list[str], base: str = SETUP) -> str:
    """The set-up cell of a notebook of ``ids``: :data:`SETUP`, with the jaxtyping dtypes and
    the modules (``math``, ``torch.nn.functional as F``) that those puzzle files import beyond
    it, since their specs' annotations and bodies need them. Imports of the grader and of
    earlier puzzles' files are left out: in a notebook those kernels are earlier cells."""
    bound = {"torch", "triton", "tl", "Tensor", "Float32", "Int32", "os"}  # what the set-ups import
    bound.update(name for spec in kinds.SPECS.values() for name in spec.notebook_binds)
    dtypes, modules = {"Float32", "Int32"}, []
    for puzzle_id in ids:
        for node in parse(course.puzzle_file(puzzle_id).read_text()).body:
            if isinstance(node, ast.ImportFrom) and node.module == "jaxtyping":
                dtypes.update(alias.name for alias in node.names)
            elif isinstance(node, ast.Import):
                for alias in node.names:
                    if (alias.asname or alias.name) not in bound and not alias.name.startswith("grader"):
                        bound.add(alias.asname or alias.name)
                        modules.append(ast.unparse(ast.Import(names=[alias])))
    setup = base.replace("from jaxtyping import Float32, Int32", f"from jaxtyping import {', '.join(sorted(dtypes))}")
    if modules:
        anchor = next((k.imports_after for k in kinds.SPECS.values() if k.notebook_setup == base),
                      _TRITON_IMPORTS_AFTER)
        setup = setup.replace(anchor, anchor + "".join(f"{line}\n" for line in sorted(modules)))
    return setup


def _track_setup(course: Course, ids: list[str]) -> str:
    """The set-up a track's notebook starts from: that of its puzzles' kind where the kind has one
    of its own (Helion's), else the Triton one."""
    own = {kinds.SPECS[course.puzzle(p).kind].notebook_setup for p in ids} - {None}
    if len(own) > 1:
        raise ValueError(f"the puzzles {', '.join(ids)} need more than one notebook set-up")
    return own.pop() if own else SETUP


def _puzzle_cells(course: Course, puzzle_id: str) -> list:
    puzzle = course.puzzle(puzzle_id)
    path = course.puzzle_file(puzzle_id)
    spec_src, part = _spec_source(path, puzzle), learner_part(path)
    # The spec reads the puzzle's free constants as keywords: say which values are this learner's.
    values = "".join(f"# {v.name} = {shown(puzzle.variant_values[v.name])}"
                     f"{'' if v.what == v.name else ': ' + v.what}, as the statement says.\n" for v in puzzle.variants)
    return [
        nbformat.v4.new_markdown_cell(puzzle.statement.strip(), id=f"{puzzle_id}-statement"),
        nbformat.v4.new_code_cell("# The spec: what your kernel must compute.\n" + values + spec_src,
                                  id=f"{puzzle_id}-spec"),
        nbformat.v4.new_code_cell(part, id=f"{puzzle_id}-kernel"),
        nbformat.v4.new_code_cell(f'check({puzzle.kernel}, "{puzzle_id}")', id=f"{puzzle_id}-check"),
    ]


def _notebook(cells: list) -> nbformat.NotebookNode:
    nb = nbformat.v4.new_notebook(cells=cells)
    nb.metadata = {"kernelspec": KERNEL_ENV, "language_info": {"name": "python"}}
    return nb


def build(course: Course) -> dict[str, nbformat.NotebookNode]:
    books = {"00_start_here": _notebook([
        nbformat.v4.new_markdown_cell(text, id=f"start-{i}") if kind == "markdown"
        else nbformat.v4.new_code_cell(text, id=f"start-{i}") for i, (kind, text) in enumerate(START_HERE)])}
    # Each track's notebook (grader.course.kinds.tracks: its name and title), of the puzzles of that
    # track. A track with no puzzle yet gets no notebook: none is written, none checked as stale.
    for track in kinds.tracks():
        name, title = track.notebook, track.title
        ids = [p for p in course.ids if course.puzzle(p).track == track.name]
        if not ids:
            continue
        cells = [nbformat.v4.new_markdown_cell(f"# Triton Puzzles: {title}\n\nRun the set-up cell first. Then, for "
                                               "each puzzle, write your kernel in its cell here and run the "
                                               "`check(...)` cell below it. Progress is kept in "
                                               "`.progress.json` beside this notebook and is shared with "
                                               "`python -m grader`, which grades the same kernels written in "
                                               "`puzzles/` instead: each puzzle keeps its best result.",
                                               id=f"{name}-title"),
                 nbformat.v4.new_code_cell(_setup(course, ids, _track_setup(course, ids)),
                                           id=f"{name}-setup"),
                 nbformat.v4.new_code_cell("course_panel()  # every puzzle's status, with Check and Hint buttons",
                                           id=f"{name}-panel")]
        for puzzle_id in ids:
            cells += _puzzle_cells(course, puzzle_id)
        books[name] = _notebook(cells)
    return books


def _text(nb: nbformat.NotebookNode) -> str:
    return nbformat.writes(nb) + "\n"


def write(course: Course) -> list[Path]:
    folder = course.root / "notebooks"
    folder.mkdir(exist_ok=True)
    written = []
    for name, nb in build(course).items():
        path = folder / f"{name}.ipynb"
        path.write_text(_text(nb))
        written.append(path)
    return written


def stale(course: Course) -> list[str]:
    """Notebooks that differ from what the puzzle files generate now (or are missing)."""
    folder = course.root / "notebooks"
    out = []
    for name, nb in build(course).items():
        path = folder / f"{name}.ipynb"
        if not path.is_file() or path.read_text() != _text(nb):
            out.append(path.name)
    return out
