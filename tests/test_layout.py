"""The package's boundaries: what runs learner code decides no verdict."""
from __future__ import annotations

import ast
from pathlib import Path

import grader

PACKAGE = Path(grader.__file__).parent
VERDICT_MODULES = {"grader.judge.compare", "grader.judge.grade", "grader.judge.grade_function", "grader.judge.results",
                   "grader.app.batch", "grader.judge.session", "grader.judge.messages"}


def _imports(path: Path, module: str) -> set[str]:
    """Every grader module ``path`` imports, at the top or inside a function."""
    package = module.rsplit(".", 1)[0] if path.name != "__init__.py" else module
    found = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")
                base = base[:len(base) - (node.level - 1)]
                target = ".".join(base + ([node.module] if node.module else []))
            else:
                target = node.module or ""
            names = [f"{target}.{alias.name}" for alias in node.names]
            found.update(n for n in [target, *names] if n.startswith("grader"))
        elif isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names if alias.name.startswith("grader"))
    return found


def _module_path(name: str) -> Path | None:
    if name == "grader":  # `from .. import x` inside a sub-package names the package itself
        return PACKAGE / "__init__.py"
    relative = Path(*name.split(".")[1:])
    for candidate in (PACKAGE / relative.with_suffix(".py"), PACKAGE / relative / "__init__.py"):
        if candidate.is_file():
            return candidate
    return None


def _subpackage(folder: str) -> list[str]:
    return [f"grader.{folder}.{p.stem}" if p.stem != "__init__" else f"grader.{folder}"
            for p in (PACKAGE / folder).glob("*.py")]


def _reached(start: list[str]) -> tuple[set[str], dict[str, str]]:
    """Every module ``start`` imports, followed through the package, and which module first
    imported each one."""
    seen, queue, via = set(), list(start), {}
    while queue:
        name = queue.pop()
        if name in seen:
            continue
        seen.add(name)
        path = _module_path(name)
        if path is None:
            continue
        for target in _imports(path, name):
            if _module_path(target) and target not in seen:
                via.setdefault(target, name)
                queue.append(target)
    return seen, via


def test_the_sandbox_side_reaches_no_verdict_code():
    """Everything ``grader.sandbox`` imports, followed through the package, stays clear of the
    modules that compare results and write verdicts."""
    seen, via = _reached(_subpackage("sandbox"))
    reached = sorted(seen & VERDICT_MODULES)
    assert not reached, {name: via.get(name) for name in reached}


RUNS_LEARNER_CODE = {"grader.channel.worker_pool", "grader.channel.isolation", "grader.judge.session", "grader.app.batch"}


def test_the_report_side_runs_no_learner_code():
    """Renderers turn results into text, JSON, HTML, files and pictures: nothing they import,
    followed through the package, starts a worker or runs a learner's kernel."""
    seen, via = _reached(_subpackage("report"))
    reached = sorted(name for name in seen
                     if name in RUNS_LEARNER_CODE or name == "grader.sandbox" or name.startswith("grader.sandbox."))
    assert not reached, {name: via.get(name) for name in reached}


def test_the_report_package_holds_the_renderers():
    names = {p.stem for p in (PACKAGE / "report").glob("*.py")}
    assert {"text", "json_report", "html", "batch_files", "pictures"} <= names
    assert not any((PACKAGE / f"render_{kind}.py").exists() for kind in ("text", "json", "html", "batch"))
    assert not (PACKAGE / "viz.py").exists()


def test_the_sandbox_package_holds_the_worker():
    names = {p.stem for p in (PACKAGE / "sandbox").glob("*.py")}
    assert {"zygote", "worker", "launch", "learner_import", "bounds", "function_record", "function_replay"} <= names


def _graph() -> dict[str, set[str]]:
    modules = {}
    for path in PACKAGE.rglob("*.py"):
        parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
        name = ".".join(parts[:-1] if parts[-1] == "__init__" else parts)
        modules[name] = path
    return {name: {t for t in _imports(path, name) if t in modules and t not in (name, "grader")}
            for name, path in modules.items()}


def test_no_import_circles():
    """Every import counts, a function's own included: a circle through a lazy import is
    still two modules that cannot be understood one without the other."""
    graph, state, path = _graph(), {}, []

    def visit(name: str) -> list[str] | None:
        state[name] = "open"
        path.append(name)
        for target in sorted(graph[name]):
            if state.get(target) == "open":
                return path[path.index(target):] + [target]
            if target not in state:
                found = visit(target)
                if found:
                    return found
        state[name] = "done"
        path.pop()
        return None

    for name in sorted(graph):
        if name not in state:
            circle = visit(name)
            assert circle is None, " -> ".join(circle)


def test_public_surfaces_are_pinned():
    """Authors use grader.course.puzzle, learners grader.app.notebook: what they may import is fixed
    here, so a change to it is a decision, not an accident."""
    import grader.app.notebook
    import grader.course.puzzle
    assert sorted(grader.course.puzzle.__all__) == ["Bench", "Case", "LookAlike", "Mistake", "Puzzle", "cdiv", "seeds"]
    assert sorted(grader.app.notebook.__all__) == ["check", "course_panel", "hint", "show"]
    for module in (grader.course.puzzle, grader.app.notebook):
        assert all(callable(getattr(module, name)) for name in module.__all__)


def test_importing_the_public_surfaces_stays_light():
    """A notebook's first cell and a puzzle file import these; torch comes later, when a
    kernel is graded or a spec runs."""
    import subprocess
    import sys
    code = ("import sys, grader.course.puzzle, grader.app.notebook, grader.app.cli; "
            "heavy = [m for m in ('torch', 'triton', 'numpy', 'matplotlib') if m in sys.modules]; "
            "print(','.join(heavy))")
    run = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert run.returncode == 0, run.stderr
    assert run.stdout.strip() == ""
