"""`grader.notebook.show()`: the learner's kernel written where the viewer reads it, and removed
when Python ends (it once raised NameError before reaching the viewer)."""
from __future__ import annotations

import atexit
import shutil

import triton
import triton.language as tl

import grader.app.notebook as notebook


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
    assert notebook.show(add_kernel, "1", case="first", height=300) == "iframe 100% 300"
    (puzzle_id, path, text, case), = started
    assert (puzzle_id, path.name, case) == ("puzzle01", "puzzle01_notebook.py", "first")
    assert "def add_kernel(x_ptr, z_ptr, N0, B0: tl.constexpr):" in text
    assert removed == [path.parent]
    shutil.rmtree(path.parent)
