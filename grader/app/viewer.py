"""Starting the triton-viz viewer (:mod:`grader.app.triton_viz_view`, a process of its own) from
the command line or a notebook, and why it cannot start here. Imports neither triton nor
triton-viz, and not the viewer's module: the child is started by name."""
from __future__ import annotations

import importlib.metadata
import importlib.util
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path

from grader.app.versions import release
from grader.judge.results import ExitCode

WORKING_TRITON = "3.7.1"
INSTALL = 'pip install -e ".[viz]" -c constraints.txt'
VIEW_TIMEOUT = 120.0  # seconds for the child to trace the case and start serving


class VizUnavailable(Exception):
    """triton-viz cannot run here; the message says what to install."""


def unavailable_reason(triton_version: str | None = None, has_triton_viz: bool | None = None) -> str | None:
    """Why ``--triton-viz`` cannot work in this environment, or None. Imports neither package."""
    if triton_version is None:
        try:
            triton_version = importlib.metadata.version("triton")
        except importlib.metadata.PackageNotFoundError:
            triton_version = "none"
    if has_triton_viz is None:
        has_triton_viz = importlib.util.find_spec("triton_viz") is not None
    if triton_version != "none" and release(triton_version) >= (3, 8):
        return (f"triton-viz 3.0 imports only on triton < 3.8, and this environment has triton "
                f"{triton_version}. Use the tested set (triton {WORKING_TRITON}): {INSTALL}")
    if not has_triton_viz:
        return f"triton-viz is not installed. Install it with the tested versions (triton {WORKING_TRITON}): {INSTALL}"
    return None


@dataclass
class Viewer:
    """A running viewer child. In a notebook it displays itself in an IFrame."""

    url: str
    case: str
    process: subprocess.Popen

    def stop(self) -> None:
        if self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(timeout=5)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()

    def iframe(self, width: str = "100%", height: int = 640):
        from IPython.display import IFrame
        return IFrame(self.url, width=width, height=height)

    def _repr_html_(self) -> str:
        return self.iframe()._repr_html_()


def start(course_root: Path, puzzle_id: str, kernel_file: Path, case_label: str, port: int = 0) -> Viewer:
    """Start the child; return once it serves (it prints its URL as its first line)."""
    reason = unavailable_reason()
    if reason:
        raise VizUnavailable(reason)
    command = [sys.executable, "-m", "grader.app.triton_viz_view", "--root", str(course_root),
               "--puzzle", puzzle_id, "--file", str(kernel_file), "--case", case_label, "--port", str(port)]
    # stderr to a file, not a pipe: the server logs every request, and a full pipe would hang it.
    log = tempfile.TemporaryFile("w+")
    # stdin stays open for the child's life: when it closes (this process is gone), the child stops.
    process = subprocess.Popen(command, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=log, text=True,
                               cwd=str(course_root))
    import selectors
    selector = selectors.DefaultSelector()
    selector.register(process.stdout, selectors.EVENT_READ)
    line = process.stdout.readline() if selector.select(VIEW_TIMEOUT) else ""
    if not line.startswith("URL "):
        Viewer("", case_label, process).stop()
        log.seek(0)
        detail = (line + log.read()).strip()
        raise RuntimeError(f"the triton-viz view of {puzzle_id} did not start:\n{detail[-3000:]}")
    return Viewer(line.split()[1], case_label, process)


def serve_from_cli(course, puzzle_id: str, kernel_file: Path, case_name: str | None, result) -> int:
    """``python -m grader PUZZLE --triton-viz``: serve until Ctrl-C. Returns the exit code."""
    from grader.judge.kinds import kind_of
    from grader.judge.pictures import choose_case
    kind = kind_of(course.puzzle(puzzle_id))
    if not kind.viewer:
        print(f"error: --triton-viz traces one kernel launch; {puzzle_id} is {kind.called} "
              "that launches its own kernels", file=sys.stderr)
        return ExitCode.USAGE_ERROR
    case = choose_case(course.puzzle(puzzle_id).cases, case_name, result)
    try:
        viewer = start(course.root, puzzle_id, kernel_file, case.label)
    except (VizUnavailable, RuntimeError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return ExitCode.USAGE_ERROR if isinstance(exc, VizUnavailable) else ExitCode.FAILED
    print(f"triton-viz view of {puzzle_id}, case {case.label}: {viewer.url}\n"
          "(served on this machine only, works offline; press Ctrl-C to stop)", file=sys.stderr)
    try:
        viewer.process.wait()
    except KeyboardInterrupt:
        pass
    finally:
        viewer.stop()
    print("triton-viz view stopped", file=sys.stderr)
    return ExitCode.OK
