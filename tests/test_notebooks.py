"""The generated notebooks: up to date, executable as shipped and with the solutions, gradable
from the command line; and the in-notebook API (check, hint, progress)."""
import ast
import json
import subprocess
import sys
from pathlib import Path

import nbformat
import pytest

from grader.app import notebook_build
from grader.app.notebook import ProgressFile, hint
from grader.course import kinds
from grader.source.capture import from_notebook, source_of
from paths import ROOT
from pristine import PRISTINE

BOOKS = ["00_start_here", "01_classic", "02_cs336", "03_transformer", "04_helion"]


def test_notebooks_are_generated_and_up_to_date(course):
    """Read in the course as committed (tests/pristine.py): a learner's work in the notebooks or in
    puzzles/ is not the course's. Only a course author regenerates them."""
    assert notebook_build.stale(course) == [], ("the committed notebooks differ from what the committed "
                                                "puzzles generate: a course author regenerates them")
    names = {p.stem for p in (course.root / "notebooks").glob("*.ipynb")}
    assert names == set(BOOKS)


def _course_copy(tmp_path: Path) -> Path:
    """Notebooks run in a copy of the course as committed (a learner's work left out), so their
    progress files stay out of the repo."""
    import shutil
    for folder in ("puzzles", "solutions", "notebooks"):
        shutil.copytree(PRISTINE / folder, tmp_path / folder, ignore=shutil.ignore_patterns(".progress.json"))
    return tmp_path / "notebooks"


def _execute(nb, cwd: Path) -> nbformat.NotebookNode:
    from nbclient import NotebookClient
    NotebookClient(nb, timeout=900, kernel_name="python3", resources={"metadata": {"path": str(cwd)}}).execute()
    return nb


def _check_outputs(nb) -> dict[str, str]:
    out = {}
    for cell in nb.cells:
        if cell.cell_type == "code" and cell.source.startswith("check("):
            puzzle = cell.source.split('"')[1]
            out[puzzle] = "".join(o.get("data", {}).get("text/plain", "") for o in cell.outputs)
            assert any("text/html" in o.get("data", {}) for o in cell.outputs), "the check shows an HTML table"
    return out


@pytest.mark.slow  # executes a notebook
@pytest.mark.parametrize("book", BOOKS[1:])
def test_shipped_notebook_runs_and_reports_not_attempted(book, tmp_path):
    folder = _course_copy(tmp_path)
    nb = _execute(nbformat.read(folder / f"{book}.ipynb", as_version=4), folder)
    outputs = _check_outputs(nb)
    assert outputs and all("not attempted" in text for text in outputs.values()), outputs


def _with_solutions(nb, course):
    for cell in nb.cells:
        if cell.get("id", "").endswith("-kernel"):
            puzzle_id = cell["id"].split("-")[0]
            source = course.solution_file(puzzle_id).read_text()
            # In a notebook the earlier puzzles' kernels are cells above, not modules to import.
            cell.source = "\n".join(line for line in source.splitlines()
                                    if not line.startswith(("from puzzle", "import sys", "sys.path")))
    return nb


@pytest.mark.slow  # executes a notebook
@pytest.mark.parametrize("book", BOOKS[1:])
def test_notebook_with_solutions_passes_every_check(book, course, tmp_path):
    folder = _course_copy(tmp_path)
    nb = _with_solutions(nbformat.read(folder / f"{book}.ipynb", as_version=4), course)
    outputs = _check_outputs(_execute(nb, folder))
    assert (folder / ".progress.json").is_file(), "checks record progress next to the notebook"
    failing = {p: t for p, t in outputs.items() if "✓" not in t}
    assert not failing, failing


@pytest.mark.slow  # runs the command line in a subprocess
def test_grading_a_notebook_file_runs_no_side_effects(tmp_path, course):
    nb = nbformat.v4.new_notebook(cells=[
        nbformat.v4.new_code_cell("!touch SHELL_RAN\n%load_ext autoreload\nimport triton\nimport triton.language as tl"),
        nbformat.v4.new_code_cell("open('SIDE_EFFECT', 'w').write('ran')\nprint('hello')"),
        nbformat.v4.new_code_cell("%%bash\ntouch CELL_MAGIC_RAN"),
        nbformat.v4.new_code_cell(course.solution_file("puzzle02").read_text()),
        nbformat.v4.new_code_cell('check(add_mask2_kernel, "puzzle02")'),
    ])
    path = tmp_path / "my_work.ipynb"
    nbformat.write(nb, path)
    run = subprocess.run([sys.executable, "-m", "grader", "--file", str(path), "--root", str(PRISTINE)],
                         cwd=tmp_path, capture_output=True, text=True, timeout=300)
    assert run.returncode == 0, run.stdout + run.stderr
    assert "✓ puzzle02 Constant add, blocked: 9/9 cases pass" in run.stdout
    assert not any((tmp_path / name).exists() for name in ("SHELL_RAN", "SIDE_EFFECT", "CELL_MAGIC_RAN"))


def test_from_notebook_keeps_definitions_only():
    text = json.dumps({"cells": [{"cell_type": "code", "source": [
        "import torch\n", "X = 3\n", "G = tl.constexpr(16)\n", "y = compute()\n", "def f():\n", "    return X\n",
        "f()\n"]}]})
    module, skipped = from_notebook(text)
    tree = ast.parse(module)
    assert [type(n).__name__ for n in tree.body][-4:] == ["Import", "Assign", "Assign", "FunctionDef"]
    assert skipped == ["y = compute()", "f()"]


def test_source_of_a_kernel_brings_its_constants():
    text = source_of(_load(ROOT / "solutions" / "puzzle12_quantized_matmul.py").quant_dot_kernel)
    assert "FPINT = tl.constexpr(8)" in text and "GROUP = tl.constexpr(16)" in text
    assert "def quant_dot_kernel(" in text
    ast.parse(text)


def _load(path):
    import importlib.util
    spec = importlib.util.spec_from_file_location(path.stem + "_t", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.mark.slow  # runs the command line in a subprocess
def test_progress_persists_and_hints_come_one_at_a_time(tmp_path, course, monkeypatch):
    monkeypatch.chdir(PRISTINE / "notebooks")  # the course found from here: as committed, whatever a learner solved
    store = ProgressFile(tmp_path / ".progress.json")
    first = hint("puzzle01", progress=store)
    assert first.startswith("Hint 1/") and "Hint 2/" not in first
    store.update("puzzle01", status="passed")
    again = ProgressFile(tmp_path / ".progress.json")   # a new kernel session reads the same file
    assert again.status("puzzle01") == "passed" and again.load()["puzzle01"]["hints"] == 1
    run = subprocess.run([sys.executable, "-m", "grader", "progress", "--file", str(tmp_path / ".progress.json")],
                         cwd=PRISTINE, capture_output=True, text=True, timeout=60)
    assert "puzzle01: passed, 1 hint(s) seen" in run.stdout and "1 passed" in run.stdout


def test_no_notebook_installs_a_cuda_build_of_torch():
    """On Linux PyPI's `torch` is the 5 GB CUDA build: every `pip install torch` the generated
    notebooks show (and `release` ships) takes PyTorch's CPU index. The generator's own text is
    read: the puzzles add no install line (the generated notebooks are checked up to date above)."""
    setups = [k.notebook_setup for k in kinds.SPECS.values() if k.notebook_setup]  # Helion's
    texts = [text for _, text in notebook_build.START_HERE] + [notebook_build.SETUP, *setups]
    lines = [line for text in texts for line in text.splitlines() if "pip install torch" in line]
    assert lines == ["pip install torch --index-url https://download.pytorch.org/whl/cpu"]
    shipped = (PRISTINE / "notebooks" / "00_start_here.ipynb").read_text()
    assert "pip install torch --index-url https://download.pytorch.org/whl/cpu" in shipped
    assert "torch==2.13.0" not in shipped


@pytest.mark.slow  # loads every puzzle of the course, Helion's too (the panel lists them all)
def test_the_panel_answers_in_the_row_that_was_clicked(tmp_path, monkeypatch):
    """Each row of `course_panel()` has its own output under its buttons: a Hint or a Check shows
    there, beside the row clicked, not below the panel's last row (issue 34)."""
    monkeypatch.chdir(PRISTINE / "notebooks")  # the course found from here: as committed, whatever a learner solved
    from grader.app.notebook import course_panel
    panel = course_panel(namespace={}, progress=ProgressFile(tmp_path / "progress.json"))
    rows = {next(c for c in row._dom_classes if c.startswith("tp-row-p")): row for row in panel.children[1:]}
    assert len(rows) == len(panel.children) - 1 and "tp-row-puzzle12" in rows

    def buttons(row):
        return {b.description: b for b in row.children[0].children if hasattr(b, "description") and b.description}
    buttons(rows["tp-row-puzzle12"])["Hint"].click()
    shown = rows["tp-row-puzzle12"].children[1].outputs
    assert len(shown) == 1 and shown[0]["data"]["text/markdown"].startswith("Hint 1/")
    assert all(not row.children[1].outputs for name, row in rows.items() if name != "tp-row-puzzle12")
    buttons(rows["tp-row-puzzle07"])["Check"].click()
    said = rows["tp-row-puzzle07"].children[1].outputs[0]["data"]["text/plain"]
    assert said == ("No `sum_kernel` in this notebook, and the one in puzzles/puzzle07_long_sum.py is still the "
                    "stub: define `sum_kernel` in this notebook (run its cell), or solve it in "
                    "puzzles/puzzle07_long_sum.py, then press Check.")


def test_the_learners_readme_installs_no_cuda_build_either():
    """`release` ships grader/app/learner_readme.md as the learner's README: its torch line takes
    PyTorch's CPU index, and its install gives the whole course, the Helion track included."""
    text = (ROOT / "grader" / "app" / "learner_readme.md").read_text()
    torch_lines = [line for line in text.splitlines() if line.startswith("pip install torch")]
    assert torch_lines and all("--index-url https://download.pytorch.org/whl/cpu" in line for line in torch_lines)
    assert 'pip install -e ".[test,helion]" -c constraints.txt' in text
