"""Grading from a notebook: ``check(kernel, "puzzle07")``, ``hint("puzzle07")``, ``course_panel()``.

The kernel defined in the notebook is written to a file with what it needs
(:func:`grader.source.capture.source_of`) and graded in a worker process, as the command line does:
a kernel that crashes cannot take the notebook's kernel down, nothing blocks, and no server
is opened. Progress goes to ``.progress.json`` in the notebook's folder.
"""
from __future__ import annotations

import atexit
import shutil
import tempfile
import threading
from dataclasses import dataclass
from pathlib import Path

from grader.app.learner import ProgressFile  # noqa: F401  (for learners and tests: grader.app.notebook.ProgressFile)
from grader.course.loader import Course, find_root, normalise_id
from grader.judge.kinds import kind_of
from grader.judge.options import Options
from grader.judge.results import PuzzleResult, Status
from grader.source.attempts import SavedStatus

# What a learner calls from a notebook; everything else here is private.
__all__ = ["check", "check_puzzle_file", "course_panel", "hint", "perf", "show"]

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
        from grader.report.text import render_puzzle
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
    return _check_in(_kept.folder(), course, kernel, puzzle_id, picture, Options(device=device, timeout=timeout),
                     progress, triton_viz)


class _Kept:
    """What this notebook's checks keep between them, until its Python process ends: one folder
    for the kernels they capture, and one grading context per course and options, whose zygotes
    stay warm. Every check still gets fresh workers, forked after the last one ended: nothing of
    one check's code reaches the next. A context is for this notebook's own checks only."""

    def __init__(self) -> None:
        self._folder: Path | None = None
        self.contexts: dict = {}  # (course root, options) -> session.Grading
        self._lock = threading.Lock()  # a course panel's buttons may check while a cell does

    def folder(self) -> Path:
        if self._folder is None or not self._folder.is_dir():
            self._folder = Path(tempfile.mkdtemp(prefix="triton-puzzles-"))
            atexit.register(shutil.rmtree, self._folder, True)
        return self._folder

    def grading(self, course: Course, options: Options):
        from grader.judge.session import Grading
        key = (course.root, options)
        if key not in self.contexts:
            if not self.contexts:
                atexit.register(self.close)
            self.contexts[key] = Grading(course, [self.folder() / "_"], options)
        return self.contexts[key]

    def close(self) -> None:
        for grading in self.contexts.values():
            grading.close()
        self.contexts.clear()


_kept = _Kept()


@dataclass
class Estimated:
    """What ``perf`` returns: displays itself as the estimate's table."""

    text: str
    result: object  # grader.judge.perf.model.PerfResult

    def _repr_html_(self) -> str:
        import html
        return f"<pre>{html.escape(self.text)}</pre>"

    def __repr__(self) -> str:
        return self.text


def perf(kernel, puzzle: str) -> Estimated:
    """Estimate ``kernel``'s time on an H100 at the puzzle's benchmark size, with no GPU: its
    memory traffic, coalescing, FLOPs, registers and occupancy, beside the reference's."""
    from grader.judge.perf.run import run_perf
    from grader.report.perf import render_text
    from grader.source.capture import captured
    course = _course()
    puzzle_id = normalise_id(puzzle)
    course.puzzle_file(puzzle_id)
    capture = captured(kernel)
    path = _kept.folder() / f"{puzzle_id}_notebook.py"
    with _kept._lock:
        path.write_text(capture.text)
        result = run_perf(_kept.grading(course, Options(device="cpu").on_device()), puzzle_id, path)
    return Estimated(render_text(result), result)


def _check_in(folder: Path, course: Course, kernel, puzzle_id: str, picture: bool, options: Options,
              progress: ProgressFile | None, triton_viz: bool) -> Checked:
    """check()'s work, with its files in ``folder``."""
    from dataclasses import replace

    from grader.source.capture import captured

    capture = captured(kernel)
    path = folder / f"{puzzle_id}_notebook.py"  # one file per puzzle, written again by each check
    # messages say the cell's line numbers, not the written module's
    return _graded(folder, course, puzzle_id, path, picture, options, progress, triton_viz,
                   write=capture.text, relabel=replace(capture.lines, module=path.name).apply)


def _graded(folder: Path, course: Course, puzzle_id: str, path: Path, picture: bool, options: Options,
            progress: ProgressFile | None, triton_viz: bool, write: str | None = None, relabel=None) -> Checked:
    """``path`` graded by the kept context (``write``: its text, written first), its picture drawn
    where it fails, the check saved to progress."""
    from grader.report.html import render

    options = options.on_device()
    with _kept._lock:
        if write is not None:
            path.write_text(write)
        grading = _kept.grading(course, options)
        result = grading.grade([(puzzle_id, path)]).results[0]
        result = relabel(result) if relabel is not None else result
        drawn = None
        if picture and result.status == Status.FAIL and kind_of(course.puzzle(puzzle_id)).pictures and result.cases:
            drawn = _picture(course, puzzle_id, path, folder, result, grading, options.timeout)
    (progress or ProgressFile()).attempt(puzzle_id, result.status.saved)
    html = render(result, drawn)  # the picture goes into the page itself
    if triton_viz:
        html += _viewer_html(course, puzzle_id, path, None, result)
    return Checked(result, html)


def check_puzzle_file(puzzle: str, *, picture: bool = True, device: str = Options.ASKED_DEVICE,
                      timeout: float = Options.timeout, progress: ProgressFile | None = None) -> Checked:
    """Grade the kernel as it is in the course's ``puzzles/`` file (solved in an editor, not in this
    notebook), as ``python -m grader`` does, and show the result."""
    course = _course()
    puzzle_id = normalise_id(puzzle)
    path = course.puzzle_file(puzzle_id)
    return _graded(_kept.folder(), course, puzzle_id, path, picture, Options(device=device, timeout=timeout),
                   progress, False)


def _picture(course: Course, puzzle_id: str, path: Path, folder: Path, result, grading, timeout: float):
    """The failing case's memory-access picture, traced by the kept context's warm workers (the
    solution's among them, each in a jail of its own); None if it cannot be
    drawn (the picture is a help, never a reason for check() to fail)."""
    from grader.judge.pictures import traced
    from grader.report.pictures import draw_traced
    try:
        return draw_traced(traced(grading, puzzle_id, path, result=result, timeout=timeout),
                    folder / f"{puzzle_id}_accesses.png").path
    except Exception:  # noqa: BLE001
        return None


_viewers: dict = {}  # puzzle id -> the running viewer: a new one replaces it


def _start_viewer(course: Course, puzzle_id: str, path: Path, case: str | None, result):
    from grader.app.viewer import start
    from grader.judge.pictures import choose_case
    kind = kind_of(course.puzzle(puzzle_id))
    if not kind.viewer:
        raise ValueError(f"{puzzle_id} is {kind.called}: triton-viz traces one kernel launch")
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
    from grader.source.capture import source_of
    course = _course()
    puzzle_id = normalise_id(puzzle)
    folder = Path(tempfile.mkdtemp(prefix="triton-puzzles-"))
    atexit.register(shutil.rmtree, folder, True)  # the viewer reads the module for as long as it runs
    path = folder / f"{puzzle_id}_notebook.py"
    path.write_text(source_of(kernel))
    return _start_viewer(course, puzzle_id, path, case, None).iframe(width=width, height=height)


class HintText(str):
    """Hints as Markdown: a notebook renders them (code in code font); ``repr`` gets the text,
    code between its backticks."""

    def _repr_markdown_(self) -> str:
        return "\n\n".join(self.splitlines())

    def __repr__(self) -> str:
        from grader.app.learner import plain
        return plain(self)


def hint(puzzle: str, *, progress: ProgressFile | None = None) -> HintText:
    """The next hint of ``puzzle`` (one more per call; all of them once they are all shown)."""
    from grader.app.learner import next_hint
    course = _course()
    puzzle_id = normalise_id(puzzle)
    return HintText("\n".join(next_hint(course, puzzle_id, progress or ProgressFile()).lines()))


def course_panel(namespace: dict | None = None, progress: ProgressFile | None = None):
    """A panel of every puzzle with its status, a progress bar, and Check and Hint buttons.

    The Check button grades the object named like the puzzle's kernel in ``namespace``
    (by default the notebook's own variables); where the notebook has none, the kernel in the
    course's ``puzzles/`` file (solved in an editor). Each row says the latest check's result and
    the best one reached. What a row's buttons give (the result table, the hint) appears right
    under that row, where the learner clicked, not below the last of the 42.
    """
    import html

    import ipywidgets as widgets
    from IPython import get_ipython

    course = _course()
    store = progress or ProgressFile()
    if namespace is None:
        shell = get_ipython()
        namespace = shell.user_ns if shell is not None else {}
    ids = course.ids
    bar = widgets.IntProgress(min=0, max=len(ids), description="passed")
    summary = widgets.HTML()
    labels, outputs = {}, {}

    def refresh() -> None:
        statuses = {p: store.status(p) for p in ids}
        bar.value = sum(s == SavedStatus.PASSED for s in statuses.values())
        summary.value = f"<b>{bar.value}/{len(ids)}</b> puzzles passed"
        for p, label in labels.items():
            label.value = f"<code>{p}</code> {html.escape(course.puzzle(p).title)}: {_standing(store, p)}"

    def on_check(puzzle_id: str):
        def handler(_button) -> None:
            name = course.puzzle(puzzle_id).kernel
            _show(outputs[puzzle_id], f"Checking {puzzle_id}...")
            try:
                if name in namespace:
                    _show(outputs[puzzle_id], check(namespace[name], puzzle_id, progress=store).html, html=True)
                else:  # solved in an editor: the puzzles/ file, as the command line grades it
                    _show(outputs[puzzle_id], *_checked_in_file(course, puzzle_id, name, store))
            except Exception as error:  # said in the row: a callback's exception shows nowhere
                _show(outputs[puzzle_id], f"{puzzle_id} could not be checked: {type(error).__name__}: {error}")
            refresh()
        return handler

    def on_hint(puzzle_id: str):
        def handler(_button) -> None:
            shown = hint(puzzle_id, progress=store)
            _show(outputs[puzzle_id], shown._repr_markdown_(), markdown=True)
        return handler

    rows = []
    for p in ids:
        labels[p] = widgets.HTML()
        outputs[p] = widgets.Output()
        outputs[p].add_class("tp-row-output")
        check_button = widgets.Button(description="Check", layout=widgets.Layout(width="6em"))
        hint_button = widgets.Button(description="Hint", layout=widgets.Layout(width="6em"))
        check_button.on_click(on_check(p))
        hint_button.on_click(on_hint(p))
        row = widgets.VBox([widgets.HBox([check_button, hint_button, labels[p]]), outputs[p]])
        row.add_class("tp-row")
        row.add_class(f"tp-row-{p}")
        rows.append(row)
    refresh()
    panel = widgets.VBox([widgets.HBox([bar, summary]), *rows])
    panel.add_class("tp-course-panel")
    return panel


def _standing(store: ProgressFile, puzzle_id: str) -> str:
    """A row's words: the latest check's result and the best reached, each with its time (the best
    alone once they agree). Progress never goes backwards, but a failing check right after a pass
    is said as failing."""
    import html
    best, latest = store.status(puzzle_id), store.latest(puzzle_id)
    best_at = store.best_at(puzzle_id)
    if latest is None or latest["status"] == best:
        when = f" (latest check {latest['at'][:16]})" if latest and latest.get("at") else ""
        return f"<i>{html.escape(best)}</i>{when}"
    return (f"<i>{html.escape(latest['status'])}</i> at the latest check ({latest.get('at', '')[:16]}); "
            f"best <i>{html.escape(best)}</i>" + (f" ({best_at[:16]})" if best_at else ""))


def _checked_in_file(course: Course, puzzle_id: str, name: str, store: ProgressFile) -> tuple[str, bool]:
    """What a row shows when the notebook defines no ``name``: the puzzles/ file's kernel graded
    (the table, said as that file's), or, where that is still the stub, how to give it one."""
    import html
    path = course.puzzle_file(puzzle_id)
    shown = f"puzzles/{path.name}"
    checked = check_puzzle_file(puzzle_id, progress=store)
    if checked.result.status == Status.NOT_ATTEMPTED:
        return (f"No `{name}` in this notebook, and the one in {shown} is still the stub: define `{name}` in this "
                f"notebook (run its cell), or solve it in {shown}, then press Check.", False)
    return (f"<p>No <code>{name}</code> in this notebook: graded the one in <code>{html.escape(shown)}</code>."
            f"</p>{checked.html}", True)


def _show(output, text: str, html: bool = False, markdown: bool = False) -> None:
    """Replace what a row's output holds with ``text``: HTML (a check's table), Markdown (hints, code
    in code font) or plain text. Set as the widget's outputs, so it shows at once, from a button's
    callback as from a test, with no display hook needed."""
    mime = "text/html" if html else "text/markdown" if markdown else "text/plain"
    output.outputs = ({"output_type": "display_data", "data": {mime: text, "text/plain": text}, "metadata": {}},)
