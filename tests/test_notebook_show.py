"""`grader.notebook.show()`: the learner's kernel written where the viewer reads it, and removed
when Python ends (it once raised NameError before reaching the viewer)."""
from __future__ import annotations

import atexit
import shutil

import triton
import triton.language as tl

import grader.app.notebook as notebook
from pristine import PRISTINE


@triton.jit
def add_kernel(x_ptr, z_ptr, N0, B0: tl.constexpr):
    offsets = tl.arange(0, B0)
    tl.store(z_ptr + offsets, tl.load(x_ptr + offsets) + 10)


def test_show_writes_the_kernel_for_the_viewer_and_removes_it_at_exit(monkeypatch):
    started, removed = [], []

    class Viewer:
        def iframe(self, width, height):
            return f"iframe {width} {height}"

    def start_viewer(course, puzzle_id, path, case, result):
        started.append((puzzle_id, path, path.read_text(), case))
        return Viewer()

    def register(function, *args):
        if function is shutil.rmtree:
            removed.append(args[0])
    monkeypatch.setattr(notebook, "_start_viewer", start_viewer)
    monkeypatch.setattr(atexit, "register", register)
    monkeypatch.chdir(PRISTINE)  # the course found from here: as committed, whatever a learner solved
    assert notebook.show(add_kernel, "1", case="first", height=300) == "iframe 100% 300"
    (puzzle_id, path, text, case), = started
    assert (puzzle_id, path.name, case) == ("puzzle01", "puzzle01_notebook.py", "first")
    assert "def add_kernel(x_ptr, z_ptr, N0, B0: tl.constexpr):" in text
    assert removed == [path.parent]
    shutil.rmtree(path.parent)


# ---- the course panel: the latest check beside the best; Check grades puzzles/ where the notebook has none ----
def test_a_row_says_the_latest_check_and_the_best(tmp_path):
    from grader.app.learner import ProgressFile
    store = ProgressFile(tmp_path / "progress.json")
    assert notebook._standing(store, "puzzle01") == "<i>not attempted</i>"
    store.attempt("puzzle01", "passed", when="2026-11-28 10:00:00")
    assert notebook._standing(store, "puzzle01") == "<i>passed</i> (latest check 2026-11-28 10:00)"
    store.attempt("puzzle01", "failing", when="2026-11-28 10:05:30")  # broken again after a pass
    assert store.status("puzzle01") == "passed"  # progress never goes backwards...
    assert notebook._standing(store, "puzzle01") == (  # ...but the row says the latest check first
        "<i>failing</i> at the latest check (2026-11-28 10:05); best <i>passed</i> (2026-11-28 10:00)")


def _one_puzzle_course(tmp_path, solved: bool):
    """A course of puzzle 1 alone (the panel lists every puzzle it has), its puzzles/ file solved or the stub."""
    from conftest import COURSE
    from grader.app.notebook_build import learner_part
    root = tmp_path / "course"
    (root / "puzzles").mkdir(parents=True)
    (root / "notebooks").mkdir()
    source = COURSE.puzzle_file("puzzle01")
    path = root / "puzzles" / source.name
    text = source.read_text()
    if solved:
        kernel = "\n".join(line for line in COURSE.solution_file("puzzle01").read_text().splitlines()
                           if not line.startswith(("import ", "from ")))
        text = text.replace(learner_part(source), kernel)
    path.write_text(text)
    return root, path


def _click_check(root, monkeypatch, tmp_path):
    from grader.app.learner import ProgressFile
    monkeypatch.chdir(root / "notebooks")
    monkeypatch.setattr(notebook, "_kept", notebook._Kept())
    store = ProgressFile(tmp_path / "progress.json")
    panel = notebook.course_panel(namespace={}, progress=store)  # the notebook defines no kernel
    row = panel.children[1]
    check = next(b for b in row.children[0].children if getattr(b, "description", "") == "Check")
    try:
        check.click()
    finally:
        notebook._kept.close()
    return row, store


def test_check_grades_the_kernel_solved_in_puzzles_when_the_notebook_has_none(tmp_path, monkeypatch):
    root, path = _one_puzzle_course(tmp_path, solved=True)
    row, store = _click_check(root, monkeypatch, tmp_path)
    shown = row.children[1].outputs[0]["data"]["text/html"]
    assert shown.startswith(f"<p>No <code>add_kernel</code> in this notebook: graded the one in <code>puzzles/"
                            f"{path.name}</code>.</p>")
    assert store.status("puzzle01") == "passed" and "<i>passed</i> (latest check" in row.children[0].children[2].value


def test_check_says_how_to_give_a_kernel_where_puzzles_holds_the_stub(tmp_path, monkeypatch):
    root, path = _one_puzzle_course(tmp_path, solved=False)
    row, store = _click_check(root, monkeypatch, tmp_path)
    assert row.children[1].outputs[0]["data"]["text/plain"] == (
        f"No `add_kernel` in this notebook, and the one in puzzles/{path.name} is still the stub: define "
        f"`add_kernel` in this notebook (run its cell), or solve it in puzzles/{path.name}, then press Check.")
    assert store.status("puzzle01") == "not attempted"
