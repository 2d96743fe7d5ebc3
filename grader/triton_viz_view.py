"""``--triton-viz``: one case of a puzzle traced with triton-viz, its 3-D viewer on 127.0.0.1.

The trace and the server run in a child process (``python -m grader.triton_viz_view``), so the
grader's own process never imports the learner's file. The child is not the bubblewrap sandbox
the grader uses: a server inside it could not be reached (no network shared with the host).
The child imports the learner's file as its definitions only (as the sandboxed worker does),
but the kernel body itself runs in Triton's interpreter unsandboxed: use this on your own
code, never on a class's submissions.

We do not call ``triton_viz.launch``: ``share=True`` (its default) opens a public tunnel, and
``share=False`` binds 0.0.0.0 with Flask's debugger on. We serve triton-viz's Flask app with
werkzeug on 127.0.0.1, through a wrapper that makes its page work offline: an import map
sends the esm.sh imports to the copies in ``grader/static/vendor``, and troika's text uses
matplotlib's DejaVu Sans instead of fetching fonts from a CDN.
"""
from __future__ import annotations

import argparse
import importlib.metadata
import importlib.util
import json
import re
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path

from grader.doctor import release

WORKING_TRITON = "3.7.1"
INSTALL = 'pip install -e ".[viz]" -c constraints.txt'
VENDOR = Path(__file__).parent / "static" / "vendor"
PREFIX = "/triton-puzzles/"
_V = PREFIX + "vendor/"
# What each module the page asks esm.sh for (or a vendored module imports by bare name) is.
LOCAL_MODULES = {
    "three": _V + "three/three.module.min.js",
    "three/examples/jsm/controls/OrbitControls.js": _V + "three/OrbitControls.js",
    "troika-three-text": _V + "troika-three-text/troika-three-text.esm.js",
    "troika-three-utils": _V + "troika-three-utils/troika-three-utils.esm.js",
    "troika-worker-utils": _V + "troika-worker-utils/troika-worker-utils.esm.js",
    "webgl-sdf-generator": _V + "webgl-sdf-generator/webgl-sdf-generator.min.mjs",
    "bidi-js": _V + "bidi-js/bidi.min.mjs",
}
ESM_URL = re.compile(r"""https://esm\.sh/[^'"`\s]+""")
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


# ---- in the grader's process ---------------------------------------------------------------

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
    command = [sys.executable, "-m", "grader.triton_viz_view", "--root", str(course_root),
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
    from grader.kinds import kind_of
    from grader.pictures import choose_case
    kind = kind_of(course.puzzle(puzzle_id))
    if not kind.viewer:
        print(f"error: --triton-viz traces one kernel launch; {puzzle_id} is {kind.called} "
              "that launches its own kernels", file=sys.stderr)
        return 2
    case = choose_case(course.puzzle(puzzle_id).cases, case_name, result)
    try:
        viewer = start(course.root, puzzle_id, kernel_file, case.label)
    except (VizUnavailable, RuntimeError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2 if isinstance(exc, VizUnavailable) else 1
    print(f"triton-viz view of {puzzle_id}, case {case.label}: {viewer.url}\n"
          "(served on this machine only, works offline; press Ctrl-C to stop)", file=sys.stderr)
    try:
        viewer.process.wait()
    except KeyboardInterrupt:
        pass
    finally:
        viewer.stop()
    print("triton-viz view stopped", file=sys.stderr)
    return 0


# ---- in the child process -------------------------------------------------------------------

def trace_case(course_root: Path, puzzle_id: str, kernel_file: Path, case_label: str) -> None:
    """Run the learner's kernel on one case under triton-viz's tracer (records stay in triton_viz)."""
    import torch
    import triton_viz

    from grader.binding import Param, bind
    from grader.course import Course
    from grader.pictures import choose_case
    from grader.plan import SpecShapes
    from grader.sandbox.learner_import import import_learner, install

    puzzle = Course(course_root).puzzle(puzzle_id)
    case = choose_case(puzzle.cases, case_label, None)
    install()  # the learner's own helper modules load as definitions only too
    module = import_learner(str(kernel_file), f"learner_{puzzle_id}")
    kernel = getattr(module, puzzle.kernel, None)
    if kernel is None or not hasattr(kernel, "params"):
        raise SystemExit(f"{kernel_file} defines no @triton.jit kernel named {puzzle.kernel}")
    shapes = SpecShapes(puzzle)
    plan = shapes.plan(case)
    tensors = [_laid_out(x, case.layouts.get(s.name)) for s, x in zip(shapes.inputs, plan.inputs)]
    for buffer in plan.output_buffers:
        zeros = torch.zeros(tuple(buffer.shape), dtype=getattr(torch, buffer.dtype))
        tensors.append(_laid_out(zeros, case.layouts.get(buffer.name)))
    params = [Param(p.name, bool(p.is_constexpr)) for p in kernel.params]
    defaults = {p.name: p.default for p in kernel.params if p.has_default}
    binding = bind(params, [s.name for s in shapes.all], plan.values, puzzle.kernel, defaults=defaults)
    triton_viz.trace("tracer")(kernel)[plan.grid](*tensors, **binding.named)


def _laid_out(x, layout: str | None):
    return x.t().contiguous().t() if layout == "transposed" else x


def esm_imports(static_folder: Path) -> set[str]:
    """Every esm.sh URL the page's scripts import."""
    return {m for path in static_folder.rglob("*.js") for m in ESM_URL.findall(path.read_text(encoding="utf-8"))}


def import_map(urls: set[str]) -> tuple[dict, list[str]]:
    """Map each esm.sh URL (and the bare names vendored modules use) to our copy; and what we lack."""
    imports, missing = dict(LOCAL_MODULES), []
    for url in sorted(urls):
        name = re.sub(r"@[^/?]+", "", url.removeprefix("https://esm.sh/").split("?")[0])
        if name in LOCAL_MODULES:
            imports[url] = LOCAL_MODULES[name]
        else:
            missing.append(url)
    return {"imports": imports}, missing


def offline_page(html: str, imports: dict) -> str:
    """triton-viz's page with our import map and a local default font, before its own scripts."""
    head = (f'<script type="importmap">{json.dumps(imports)}</script>\n'
            '<script type="module">import { configureTextBuilder } from "troika-three-text";\n'
            f'configureTextBuilder({{ defaultFontURL: "{PREFIX}font.ttf" }});</script>\n')
    return html.replace("</head>", head + "</head>", 1)


def _font_file() -> Path:
    import matplotlib
    return Path(matplotlib.get_data_path()) / "fonts" / "ttf" / "DejaVuSans.ttf"


def offline_app(viz_app, static_folder: Path):
    """WSGI: triton-viz's app, its page rewritten, our vendored modules and font beside it."""
    imports, _ = import_map(esm_imports(static_folder))
    vendor = VENDOR.resolve()

    def file_response(path: Path, kind: str, start_response):
        body = path.read_bytes()
        start_response("200 OK", [("Content-Type", kind), ("Content-Length", str(len(body))),
                                  ("Cache-Control", "max-age=3600")])
        return [body]

    def app(environ, start_response):
        path = environ.get("PATH_INFO", "/")
        if path.startswith(_V):
            target = (vendor / path[len(_V):]).resolve()
            if target.is_file() and target.is_relative_to(vendor) and target.suffix in (".js", ".mjs"):
                return file_response(target, "text/javascript; charset=utf-8", start_response)
            start_response("404 Not Found", [("Content-Type", "text/plain")])
            return [b"not vendored"]
        if path == PREFIX + "font.ttf":
            return file_response(_font_file(), "font/ttf", start_response)
        if path == "/shutdown":  # only Ctrl-C (or the notebook's Viewer.stop) ends the server
            start_response("404 Not Found", [("Content-Type", "text/plain")])
            return [b""]
        if path not in ("/", "/index.html"):
            return viz_app(environ, start_response)
        captured = {}
        body = b"".join(viz_app(environ, lambda status, headers, exc=None: captured.update(status=status)))
        page = offline_page(body.decode("utf-8"), imports).encode("utf-8")
        start_response(captured["status"], [("Content-Type", "text/html; charset=utf-8"),
                                             ("Content-Length", str(len(page))), ("Cache-Control", "no-store")])
        return [page]

    return app


def _stop_when_parent_goes(server) -> None:
    """Our stdin is the parent's pipe: end of file means the grader (or notebook) has gone."""
    sys.stdin.read()
    server.shutdown()


def child_main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="python -m grader.triton_viz_view")
    for flag in ("--root", "--puzzle", "--file", "--case"):
        parser.add_argument(flag, required=True)
    parser.add_argument("--port", type=int, default=0)
    args = parser.parse_args(argv)
    from werkzeug.serving import make_server

    trace_case(Path(args.root), args.puzzle, Path(args.file), args.case)
    from triton_viz.visualizer import interface
    static = Path(interface.app.static_folder)
    _, missing = import_map(esm_imports(static))
    if missing:
        print(f"warning: this triton-viz page also imports {', '.join(missing)}, which is not vendored; "
              "without a network the page may stay blank", file=sys.stderr)
    server = make_server("127.0.0.1", args.port, offline_app(interface.app, static), threaded=True)
    print(f"URL http://127.0.0.1:{server.server_port}/", flush=True)
    import threading
    threading.Thread(target=_stop_when_parent_goes, args=(server,), daemon=True).start()
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        pass
    finally:
        server.server_close()
    return 0


if __name__ == "__main__":
    sys.exit(child_main())
