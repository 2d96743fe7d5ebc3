"""Grading from a notebook: ``check(kernel, "puzzle07")``, ``hint("puzzle07")``, ``course_panel()``.

The kernel defined in the notebook is written to a file with what it needs
(:func:`grader.capture.source_of`) and graded in a worker process, as the command line does:
a kernel that crashes cannot take the notebook's kernel down, nothing blocks, and no server
is opened. Progress goes to ``.progress.json`` in the notebook's folder.
"""
from __future__ import annotations

import shutil
import tempfile
from dataclasses import dataclass
from pathlib import Path

from .course import Course, find_root, normalise_id
from .learner import STATUS_WORDS, ProgressFile  # noqa: F401  (for learners and tests: grader.notebook.ProgressFile)
from .options import Options
from .results import PuzzleResult

# What a learner calls from a notebook; everything else here is private.
__all__ = ["check", "course_panel", "hint", "show"]

@dataclass
class Checked:
    """What ``check`` returns: displays itself as the result table (and picture)."""

    result: PuzzleResult
    html: str

    def _repr_html_(self) -> str:
        return self.html

    @property
    def passed(self) -> bool:
        return self.result.passed

    def __repr__(self) -> str:
        from .report.text import render_puzzle
        return render_puzzle(self.result)


def _course() -> Course:
    return Course(find_root())


def check(kernel, puzzle: str, *, picture: bool = True, device: str = Options.ASKED_DEVICE,
          timeout: float = Options.timeout, progress: ProgressFile | None = None, triton_viz: bool = False) -> Checked:
    """Grade ``kernel`` (defined in this notebook) on ``puzzle``'s cases and show the result.
    ``triton_viz=True`` also shows triton-viz's 3-D viewer of the first failing case (see :func:`show`)."""
    course = _course()
    puzzle_id = normalise_id(puzzle)
    course.puzzle_file(puzzle_id)
    folder = Path(tempfile.mkdtemp(prefix="triton-puzzles-"))
    try:
        checked = _check_in(folder, course, kernel, puzzle_id, picture, Options(device=device, timeout=timeout),
                            progress, triton_viz)
    except BaseException:
        shutil.rmtree(folder, ignore_errors=True)
        raise
    if triton_viz:  # the viewer reads the module later: removed when this Python process ends
        _remove_at_exit(folder)
    else:
        shutil.rmtree(folder, ignore_errors=True)  # one folder per check(): never left behind
    return checked


def _remove_at_exit(folder: Path) -> None:
    import atexit
    atexit.register(shutil.rmtree, folder, True)


def _check_in(folder: Path, course: Course, kernel, puzzle_id: str, picture: bool, options: Options,
              progress: ProgressFile | None, triton_viz: bool) -> Checked:
    """check()'s work, with its files in ``folder``."""
    from dataclasses import replace

    from .capture import captured
    from .report.html import render
    from .session import grade_many

    path = folder / f"{puzzle_id}_notebook.py"
    capture = captured(kernel)
    path.write_text(capture.text)
    options = options.on_device()
    timeout = options.timeout
    report = grade_many(course, [(puzzle_id, path)], options, jobs=1)
    # messages say the cell's line numbers, not the written module's
    result = replace(capture.lines, module=path.name).apply(report.results[0])
    drawn = None
    if picture and result.status == "fail" and course.puzzle(puzzle_id).kind == "kernel" and result.cases:
        from .pictures import picture as draw_picture
        try:
            drawn = draw_picture(course, puzzle_id, path, folder / "accesses.png", result=result, timeout=timeout).path
        except Exception:  # the picture is a help, never a reason for check() to fail
            drawn = None
    (progress or ProgressFile()).attempt(puzzle_id, STATUS_WORDS.get(result.status, result.status))
    html = render(result, drawn)  # the picture goes into the page itself
    if triton_viz:
        html += _viewer_html(course, puzzle_id, path, None, result)
    return Checked(result, html)


_viewers: dict = {}  # puzzle id -> the running viewer: a new one replaces it


def _start_viewer(course: Course, puzzle_id: str, path: Path, case: str | None, result):
    from .pictures import choose_case
    from .triton_viz_view import start
    if course.puzzle(puzzle_id).kind != "kernel":
        raise ValueError(f"{puzzle_id} is an autograd puzzle: triton-viz traces one kernel launch")
    label = choose_case(course.puzzle(puzzle_id).cases, case, result).label
    old = _viewers.pop(puzzle_id, None)
    if old is not None:
        old.stop()
    _viewers[puzzle_id] = viewer = start(course.root, puzzle_id, path, label)
    return viewer


def _viewer_html(course: Course, puzzle_id: str, path: Path, case: str | None, result) -> str:
    import html
    try:
        viewer = _start_viewer(course, puzzle_id, path, case, result)
    except Exception as exc:  # the viewer is a help: say why it is missing, keep the result
        return f"<p><b>triton-viz:</b> {html.escape(str(exc))}</p>"
    return (f"<p>triton-viz, case <code>{html.escape(viewer.case)}</code> "
            f"(<a href='{viewer.url}' target='_blank'>{viewer.url}</a>)</p>" + viewer._repr_html_())


def show(kernel, puzzle: str, case: str | None = None, *, width: str = "100%", height: int = 640):
    """triton-viz's 3-D view of ``kernel`` (defined in this notebook) on one case of ``puzzle``
    (``case`` by name, default the first), as an IFrame served on 127.0.0.1 and offline.
    Needs the [viz] extra; the viewer runs in its own process until the notebook's kernel stops."""
    from .capture import source_of
    course = _course()
    puzzle_id = normalise_id(puzzle)
    folder = Path(tempfile.mkdtemp(prefix="triton-puzzles-"))
    _remove_at_exit(folder)  # the viewer reads the module for as long as it runs
    path = folder / f"{puzzle_id}_notebook.py"
    path.write_text(source_of(kernel))
    return _start_viewer(course, puzzle_id, path, case, None).iframe(width=width, height=height)


class HintText(str):
    """Hints as Markdown: a notebook renders them (code in code font); ``repr`` and a terminal
    get plain text, without the backtick marks."""

    def _repr_markdown_(self) -> str:
        return "\n\n".join(self.splitlines())

    def __repr__(self) -> str:
        from .learner import plain
        return plain(self)


def hint(puzzle: str, *, progress: ProgressFile | None = None) -> HintText:
    """The next hint of ``puzzle`` (one more per call; all of them once they are all shown)."""
    from .learner import next_hint
    course = _course()
    puzzle_id = normalise_id(puzzle)
    return HintText("\n".join(next_hint(course, puzzle_id, progress or ProgressFile()).lines()))


def course_panel(namespace: dict | None = None, progress: ProgressFile | None = None):
    """A panel of every puzzle with its status, a progress bar, and Check and Hint buttons.

    The Check button grades the object named like the puzzle's kernel in ``namespace``
    (by default the notebook's own variables).
    """
    import ipywidgets as widgets
    from IPython import get_ipython
    from IPython.display import HTML, display

    course = _course()
    store = progress or ProgressFile()
    if namespace is None:
        shell = get_ipython()
        namespace = shell.user_ns if shell is not None else {}
    ids = course.ids
    bar = widgets.IntProgress(min=0, max=len(ids), description="passed")
    summary = widgets.HTML()
    output = widgets.Output()
    labels = {}

    def refresh() -> None:
        statuses = {p: store.status(p) for p in ids}
        bar.value = sum(s == "passed" for s in statuses.values())
        summary.value = f"<b>{bar.value}/{len(ids)}</b> puzzles passed"
        for p, label in labels.items():
            label.value = f"<code>{p}</code> {course.puzzle(p).title}: <i>{statuses[p]}</i>"

    def on_check(puzzle_id: str):
        def handler(_button) -> None:
            name = course.puzzle(puzzle_id).kernel
            with output:
                output.clear_output()
                if name not in namespace:
                    print(f"Define `{name}` in this notebook first (run its cell), then press Check.")
                else:
                    display(HTML(check(namespace[name], puzzle_id, progress=store).html))
            refresh()
        return handler

    def on_hint(puzzle_id: str):
        def handler(_button) -> None:
            with output:
                output.clear_output()
                display(hint(puzzle_id, progress=store))
        return handler

    rows = []
    for p in ids:
        labels[p] = widgets.HTML()
        check_button = widgets.Button(description="Check", layout=widgets.Layout(width="6em"))
        hint_button = widgets.Button(description="Hint", layout=widgets.Layout(width="6em"))
        check_button.on_click(on_check(p))
        hint_button.on_click(on_hint(p))
        rows.append(widgets.HBox([check_button, hint_button, labels[p]]))
    refresh()
    panel = widgets.VBox([widgets.HBox([bar, summary]), *rows, output])
    panel.add_class("tp-course-panel")
    return panel
