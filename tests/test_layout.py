"""The package's boundaries, read from the code's own imports (every import counts, a function's
lazy one included): which room may import which, that nothing imports the front-ends, that no
front-end imports another, that the sandbox reaches no verdict code and the renderers no worker,
no circles, and how many floors of rooms a request goes down. docs/architecture.md draws the same rules.
"""
from __future__ import annotations

import ast
import functools
from pathlib import Path

import grader

PACKAGE = Path(grader.__file__).parent

# Each room, and the rooms it may import (its own always). Downwards only: a request goes
# front-end -> judge -> channel -> sandbox, and no import runs back up.
ROOMS = {
    "course": set(),                                    # the author API and the course on disk
    "source": {"course"},                               # reading learner text; runs nothing
    "channel": {"course"},                              # the parent side of the boundary
    "sandbox": {"channel", "source", "course"},         # the worker: runs learner code
    "judge": {"channel", "source", "course"},           # planning, running, comparing, results
    "report": {"judge"},                                # renderers (of the judge's result model only)
    "app": {"judge", "report", "source", "course"},     # the front-ends
}
# What the sandbox may take from the channel: the messages and their framing, and how buffers bind.
SANDBOX_FROM_CHANNEL = {"grader.channel.wire", "grader.channel.wire_format", "grader.channel.wire_measure",
                        "grader.channel.protocol", "grader.channel.binding"}
# What renderers may take from the judge: the result model, plain data.
REPORT_FROM_JUDGE = {"grader.judge.results", "grader.judge.status", "grader.judge.bench.model",
                     "grader.judge.perf.model", "grader.judge.failures", "grader.judge.similarity.model"}
# The viewer's child process is a front-end and a worker at once: it imports the learner's file
# (definitions only, as the worker does) and runs one case under triton-viz, outside the sandbox,
# on the learner's own machine (never for a class: docs/architecture.md).
VIEWER_CHILD = ("grader.app.triton_viz_view", {"grader.channel.binding", "grader.sandbox.learner_import"})
# The public names kept for authors and learners, and `python -m grader`: each imports one module.
FACADES = {"grader.puzzle": "grader.course.puzzle", "grader.notebook": "grader.app.notebook",
           "grader.__main__": "grader.app.cli"}
# `python -m grader` asks first whether this Python has the grader's packages (one line, not a
# traceback, outside the course's environment): a standard-library module before the CLI.
ENTRY_PROBE = ("grader.__main__", "grader.app.ready")
# The front-ends, each one entry point with the modules that are its own. The rest of app/ is
# shared by them and imports none of them.
FRONT_ENDS = {
    "command line": {"grader.app.cli", "grader.app.commands", "grader.app.doctor",
                     "grader.app.release", "grader.app.selftest",
                     "grader.app.watch", "grader.app.warm_server", "grader.app.warm_link"},
    "notebook": {"grader.app.notebook"},
    "viewer": {"grader.app.triton_viz_view"},
}
# Floors of rooms: a room stands a floor above the rooms it imports. Five, from the ground up: course;
# source and channel; sandbox and judge; report; app. A sixth is a new room between two, a decision.
# (How deep imports run inside a room is not capped: a helper between two modules is no new floor.)
MAX_FLOORS = 5


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
        elif _lists_wings(node):  # a registry imports its wings by name, when first asked for
            found.update(value.value for value in node.value.values if value.value.startswith("grader"))
    return found


def _lists_wings(node: ast.AST) -> bool:
    """A registry's ``WINGS = {kind: its wing's module}``."""
    return (isinstance(node, ast.Assign) and [getattr(t, "id", None) for t in node.targets] == ["WINGS"]
            and isinstance(node.value, ast.Dict)
            and all(isinstance(v, ast.Constant) and isinstance(v.value, str) for v in node.value.values))


@functools.cache
def graph() -> dict[str, frozenset[str]]:
    """Module -> the grader modules it imports (packages' ``__init__`` only where imported as such)."""
    modules = {}
    for path in PACKAGE.rglob("*.py"):
        parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
        modules[".".join(parts[:-1] if parts[-1] == "__init__" else parts)] = path
    # `from grader.judge import x` imports x: a package whose __init__ is a docstring alone (a room,
    # an inner room, a kind's wing of messages) is no edge of its own
    hollow = {name for name, path in modules.items() if path.name == "__init__.py"
              and all(isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant)
                      for node in ast.parse(path.read_text()).body)}
    return {name: frozenset(t for t in _imports(path, name) if t in modules and t not in (name, "grader", *hollow))
            for name, path in modules.items()}


def room(module: str) -> str | None:
    parts = module.split(".")
    return parts[1] if len(parts) > 2 or (len(parts) == 2 and parts[1] in ROOMS) else None


def _reached(start: set[str]) -> dict[str, str]:
    """Every module ``start`` imports, followed through the package: module -> who imported it."""
    via, queue = {}, list(start)
    while queue:
        name = queue.pop()
        for target in graph()[name]:
            if target not in via and target not in start:
                via[target] = name
                queue.append(target)
    return via


def room_imports() -> dict[str, dict[str, str]]:
    """Room -> each other room it imports -> one import that does it ("module -> module")."""
    found: dict[str, dict[str, str]] = {}
    for name, targets in sorted(graph().items()):
        for target in sorted(targets):
            here, there = room(name), room(target)
            if here is not None and there is not None and here != there:
                found.setdefault(here, {}).setdefault(there, f"{name} -> {target}")
    return found


def floors() -> list[str]:
    """The longest way down through the rooms, top room first: each imports the next (a room
    met twice, a circle the downwards rule names, ends the way)."""
    edges = room_imports()

    def down(here: str, seen: tuple[str, ...]) -> tuple[str, ...]:
        return max((down(there, seen + (there,)) for there in edges.get(here, {}) if there not in seen),
                   key=len, default=seen)
    return list(max((down(name, (name,)) for name in ROOMS), key=len))


def test_every_module_lives_in_a_room_or_is_a_facade():
    loose = sorted(m for m in graph() if room(m) is None and m not in FACADES and m != "grader")
    assert not loose, f"modules outside the rooms: {loose}"
    assert sorted(p.stem for p in PACKAGE.glob("*.py")) == ["__init__", "__main__", "notebook", "puzzle"]


def test_a_room_is_its_modules():
    """A room's ``__init__`` holds its docstring only: importing one module of a room runs nothing else."""
    for name in ROOMS:
        tree = ast.parse((PACKAGE / name / "__init__.py").read_text())
        assert len(tree.body) == 1 and isinstance(tree.body[0], ast.Expr), f"grader/{name}/__init__.py holds code"


def test_rooms_import_only_downwards():
    wrong = []
    for name, targets in graph().items():
        here = room(name)
        for target in sorted(targets):
            there = room(target)
            if name in FACADES:
                ok = target == FACADES[name] or (name, target) == ENTRY_PROBE
            elif name == VIEWER_CHILD[0] and target in VIEWER_CHILD[1]:
                ok = True
            elif here == there:
                ok = True
            elif here == "sandbox" and there == "channel":
                ok = target in SANDBOX_FROM_CHANNEL or target.startswith("grader.channel.kinds.")  # a kind's messages
            elif here == "report" and there == "judge":
                ok = target in REPORT_FROM_JUDGE
            else:
                ok = there in ROOMS.get(here, set())
            if not ok:
                wrong.append(f"{name} -> {target}")
    assert not wrong, "imports against the rooms' order:\n" + "\n".join(wrong)


def test_nothing_imports_the_front_ends():
    own = set().union(*FRONT_ENDS.values())
    wrong = [f"{name} -> {target}" for name, targets in graph().items() for target in targets
             if target in own and room(name) != "app" and FACADES.get(name) != target]
    assert not wrong, wrong


def test_no_front_end_imports_another():
    owner = {module: front for front, modules in FRONT_ENDS.items() for module in modules}
    wrong = [f"{name} ({owner.get(name, 'shared')}) -> {target} ({owner[target]})"
             for name, targets in graph().items() if room(name) == "app"
             for target in targets if target in owner and owner.get(name) != owner[target]]
    assert not wrong, wrong


def test_the_sandbox_side_reaches_no_verdict_code():
    """Everything ``grader.sandbox`` imports, followed through the package, stays clear of the
    judge, where results are compared and verdicts written."""
    start = {m for m in graph() if room(m) == "sandbox"}
    via = _reached(start)
    reached = sorted(m for m in via if room(m) in ("judge", "app", "report"))
    assert not reached, {name: via[name] for name in reached}


def test_the_report_side_runs_no_learner_code():
    """Renderers turn results into text, JSON, HTML, files and pictures: nothing they import,
    followed through the package, starts a worker or runs a learner's kernel."""
    start = {m for m in graph() if room(m) == "report"}
    via = _reached(start)
    reached = sorted(m for m in via if room(m) in ("channel", "sandbox", "app") or m == "grader.judge.session")
    assert not reached, {name: via[name] for name in reached}


def test_no_import_circles():
    """A circle through a lazy import is still two modules that cannot be understood one
    without the other."""
    state, path = {}, []

    def visit(name: str) -> list[str] | None:
        state[name] = "open"
        path.append(name)
        for target in sorted(graph()[name]):
            if state.get(target) == "open":
                return path[path.index(target):] + [target]
            if target not in state:
                found = visit(target)
                if found:
                    return found
        state[name] = "done"
        path.pop()
        return None

    for name in sorted(graph()):
        if name not in state:
            circle = visit(name)
            assert circle is None, " -> ".join(circle)


def test_the_rooms_stand_on_few_floors():
    way = floors()
    steps = [room_imports()[a][b] for a, b in zip(way, way[1:])]
    assert len(way) <= MAX_FLOORS, " -> ".join(way) + ":\n" + "\n".join(steps)


def test_the_floors_count_rooms():
    """The cap is met, not loose: a front-end's request goes down all five (app, report, judge, then
    channel or source, course)."""
    way = floors()
    assert len(way) == MAX_FLOORS and way[:3] == ["app", "report", "judge"] and way[-1] == "course", way


# The inner rooms of sandbox/ and judge/, a folder per feature, each with its face: the modules of it that the
# rest may import. The others are its own.
INNER_ROOMS = {
    "grader.sandbox.interpreter": {"semantics", "speed", "limits", "filling", "hooks", "grid_limits"},
    "grader.sandbox.batched": {"setup", "engine", "lanes", "differential", "control"},
    "grader.sandbox.bench": {"run", "loop", "guard"},
    "grader.sandbox.perf": {"run"},
    "grader.judge.bench": {"run", "model"},
    "grader.judge.perf": {"run", "model"},
    "grader.judge.similarity": {"find", "model"},
}
# A kind's wing: a folder (or module) of its own below each of these, which are the registries.
WINGS = ("grader.course.kinds", "grader.sandbox.kinds", "grader.channel.kinds", "grader.judge.kinds")


def _wing(module: str) -> str | None:
    """The kind whose wing ``module`` is in (``grader.sandbox.kinds.helion.run``: helion), or None."""
    parts = module.split(".")
    return parts[3] if len(parts) > 3 and ".".join(parts[:3]) in WINGS and parts[3] != "kind" else None


def test_an_inner_room_is_reached_through_its_face():
    through_the_back = []
    for module, imported in graph().items():
        for room, face in INNER_ROOMS.items():
            if module != room and not module.startswith(room + "."):
                through_the_back += [f"{module} -> {name}" for name in imported
                                     if name.startswith(room + ".") and name.rsplit(".", 1)[1] not in face]
    assert not through_the_back


def test_a_kinds_wing_is_reached_only_through_the_registries():
    """A kind is added as wings (its messages, its worker side, its grader side) and a name in each
    registry: nothing else in the grader imports a wing (the worker routes the kind's requests by
    the registry's ``answers``), and no kind's wing imports another kind's."""
    crossing = [f"{module} -> {name}" for module, imported in graph().items() for name in imported
                if _wing(name) is not None and _wing(name) != _wing(module) and module not in WINGS]
    assert not crossing


def test_the_wing_rule_sees_a_crossing():
    assert _wing("grader.sandbox.kinds.helion.run") == _wing("grader.channel.kinds.helion") == "helion"
    assert _wing("grader.sandbox.kinds.function") == _wing("grader.judge.kinds.function.runner") == "function"
    assert _wing("grader.sandbox.kinds") is None and _wing("grader.sandbox.worker") is None
    assert _wing("grader.judge.kinds.kind") is None  # the judge registry's own description of a kind
    assert _wing("grader.course.kinds.helion") == "helion" and _wing("grader.course.kinds.kind") is None


def test_a_registry_imports_the_wings_it_lists():
    """A registry names its wings as strings, imported when asked for: the graph counts them as its imports."""
    assert {"grader.judge.kinds.helion", "grader.judge.kinds.kernel"} <= graph()["grader.judge.kinds"]
    assert "grader.course.kinds.helion" in graph()["grader.course.kinds"]


def test_the_report_package_holds_the_renderers():
    names = {p.stem for p in (PACKAGE / "report").glob("*.py")}
    assert {"text", "json_report", "html", "batch_files", "pictures", "progress"} <= names


def test_the_sandbox_package_holds_the_worker():
    names = {p.relative_to(PACKAGE / "sandbox").with_suffix("").as_posix() for p in (PACKAGE / "sandbox").rglob("*.py")}
    assert {"zygote", "worker", "launch", "learner_import", "bounds", "kinds/function/record",
            "kinds/function/replay", "kinds/helion/run"} <= names


def test_public_surfaces_are_pinned():
    """Authors use grader.puzzle, learners grader.notebook: what they may import is fixed
    here, so a change to it is a decision, not an accident."""
    import grader.notebook
    import grader.puzzle
    assert sorted(grader.puzzle.__all__) == ["Bench", "Case", "Check", "LookAlike", "Mistake", "Puzzle", "Variant",
                                             "cdiv", "seeds", "tex"]
    assert sorted(grader.notebook.__all__) == ["check", "check_puzzle_file", "course_panel", "hint", "perf", "show"]
    for module in (grader.puzzle, grader.notebook):
        assert all(callable(getattr(module, name)) for name in module.__all__)


def test_importing_the_public_surfaces_stays_light():
    """A notebook's first cell and a puzzle file import these; torch comes later, when a
    kernel is graded or a spec runs."""
    import subprocess
    import sys
    code = ("import sys, grader.puzzle, grader.notebook, grader.app.cli; "
            "heavy = [m for m in ('torch', 'triton', 'numpy', 'matplotlib') if m in sys.modules]; "
            "print(','.join(heavy))")
    run = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert run.returncode == 0, run.stderr
    assert run.stdout.strip() == ""


def test_every_parse_takes_the_lock():
    """CPython 3.11's AST constructor shares its recursion depth between threads
    (python/cpython#106905): the grader parses through grader.course.syntax.parse, one thread at a time."""
    direct = [f"{path.relative_to(PACKAGE.parent)}:{node.lineno}"
              for path in PACKAGE.rglob("*.py") if path.name != "syntax.py"
              for node in ast.walk(ast.parse(path.read_text()))
              if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "parse"
              and isinstance(node.func.value, ast.Name) and node.func.value.id == "ast"]
    assert not direct, direct


def _indexed_modules() -> set[str]:
    """The module paths docs/architecture.md lists under "Every module, by room"."""
    import re
    doc = (PACKAGE.parent / "docs" / "architecture.md").read_text()
    index = doc.split("## Every module, by room", 1)[1]
    rooms = {"Façades and entry": ""} | {room: room for room in ("course/", "source/", "channel/", "sandbox/",
                                                                 "judge/", "report/", "app/")}
    found: set[str] = set()
    for paragraph in index.split("\n\n"):
        heading = re.match(r"\*\*(.+?):?\*\*", paragraph.strip())
        if heading and heading.group(1).rstrip(":") in rooms:
            room = rooms[heading.group(1).rstrip(":")]
            found |= {room + name for name in re.findall(r"`([\w/]+\.py)`", paragraph)}
    return found


def test_the_plan_names_every_module():
    modules = {str(p.relative_to(PACKAGE)) for p in PACKAGE.rglob("*.py") if p.name != "__init__.py"}
    indexed = _indexed_modules()
    assert not sorted(modules - indexed), "modules docs/architecture.md does not name (add each to its room)"
    assert not sorted(indexed - modules), "docs/architecture.md names modules that are not there"
