"""``--triton-viz``: one case of a puzzle traced with triton-viz, its 3-D viewer on 127.0.0.1.

The trace and the server run in a child process (``python -m grader.app.triton_viz_view``), so the
grader's own process never imports the learner's file. The child is not the bubblewrap sandbox
the grader uses: a server inside it could not be reached (no network shared with the host).
The child imports the learner's file as its definitions only (as the sandboxed worker does),
but the kernel body itself runs in Triton's interpreter unsandboxed: use this on your own
code, never on a class's submissions.

We do not call ``triton_viz.launch``: ``share=True`` (its default) opens a public tunnel, and
``share=False`` binds 0.0.0.0 with Flask's debugger on. We serve triton-viz's Flask app with
werkzeug on 127.0.0.1, through a wrapper that makes its page work offline: an import map
sends the esm.sh imports to the copies in ``grader/app/static/vendor``, and troika's text uses
matplotlib's DejaVu Sans instead of fetching fonts from a CDN.

This module is the child, the viewer's own process; :mod:`grader.app.viewer` starts it, from the
command line or a notebook, without importing it.
"""
from __future__ import annotations

import argparse
import json
import re
import sys
from pathlib import Path

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


# ---- in the child process -------------------------------------------------------------------

def trace_case(course_root: Path, puzzle_id: str, kernel_file: Path, case_label: str) -> None:
    """Run the learner's kernel on one case under triton-viz's tracer (records stay in triton_viz)."""
    import torch
    import triton_viz

    from grader.channel.binding import Param, bind
    from grader.course.loader import Course
    from grader.judge.pictures import choose_case
    from grader.judge.plan import SpecShapes
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
    parser = argparse.ArgumentParser(prog="python -m grader.app.triton_viz_view")
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
