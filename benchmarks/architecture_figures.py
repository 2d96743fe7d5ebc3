"""The house's figures, read from the tree this script stands in: how deep the imports go, how
many files a trip through the grader enters, and which functions are long.

    python benchmarks/architecture_figures.py [--json] [--no-trips]

1. **Imports.** Every import of a ``grader/`` module counts, a function's lazy one and one
   under ``TYPE_CHECKING`` included (as ``tests/test_layout.py`` reads them); a package whose
   ``__init__`` is a docstring alone is no module of its own (``from grader.judge import x``
   imports ``x``). The deepest chain is the longest path of module -> module edges. The
   *floors* are the same over rooms (``course``, ``source``, ``channel``, ``sandbox``,
   ``judge``, ``report``, ``app``): the longest path of room -> room edges, the façades left out.
2. **Trips.** Three commands, each run afresh in a child process of this script that profiles
   itself (``sys.setprofile``, and ``threading.setprofile`` for the grading threads) and then
   runs ``python -m grader``: one kernel solution (puzzle 7), one Helion solution (puzzle 35),
   and ``batch`` of a class of two made in a temporary folder. Counted, in the **main process
   only** (a worker is started in its jail with an environment of the grader's choosing, which
   carries no profiler in): *files entered*, the ``grader/`` files one of whose functions ran
   (module bodies not counted); *file pairs*, the distinct ``caller file -> callee file`` of
   those calls where the files differ, the caller being the nearest ``grader/`` frame below
   the call (a call handed through a thread pool or ``functools`` still has its caller), and
   *imported*, the ``grader`` modules loaded by the end.
3. **Long functions.** Every function or method of ``grader/`` of 70 lines or more, from its
   ``def`` to its last line.
"""
from __future__ import annotations

import argparse
import ast
import functools
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PACKAGE = ROOT / "grader"
ROOMS = ("course", "source", "channel", "sandbox", "judge", "report", "app")
LONG = 70


# --- 1. imports ---------------------------------------------------------------------------------

def modules() -> dict[str, Path]:
    """Every module of the package by dotted name; a package by its own name."""
    found = {}
    for path in sorted(PACKAGE.rglob("*.py")):
        parts = path.relative_to(ROOT).with_suffix("").parts
        found[".".join(parts[:-1] if parts[-1] == "__init__" else parts)] = path
    return found


def named(path: Path, module: str) -> set[str]:
    """The dotted names an import in ``path`` could mean: the module, and each name taken from it."""
    here = module if path.name == "__init__.py" else module.rpartition(".")[0]
    names = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:  # relative: climb from this module's package
                up = here.split(".")[: len(here.split(".")) - node.level + 1]
                base = ".".join([*up, *([node.module] if node.module else [])])
            names.add(base)
            names.update(f"{base}.{alias.name}" for alias in node.names)
    return names


def import_graph() -> dict[str, set[str]]:
    """Module -> the modules of the package it imports."""
    every = modules()
    hollow = {name for name, path in every.items() if path.name == "__init__.py" and all(
        isinstance(n, ast.Expr) and isinstance(n.value, ast.Constant) for n in ast.parse(path.read_text()).body)}
    return {name: {t for t in named(path, name) if t in every and t not in hollow and t not in (name, "grader")}
            for name, path in every.items()}


def longest_path(graph: dict[str, set[str]]) -> list[str]:
    """The longest path of edges, the first in name order of equals (a circle, which the layout
    test forbids, is not followed round)."""
    on_stack: set[str] = set()

    @functools.cache
    def from_(node: str) -> tuple[str, ...]:
        on_stack.add(node)
        onward = [(node, *from_(t)) for t in sorted(graph.get(node, ())) if t not in on_stack]
        best = max(onward, key=len, default=(node,))
        on_stack.discard(node)
        return best
    return list(max((from_(node) for node in sorted(graph)), key=len, default=()))


def room(module: str) -> str | None:
    parts = module.split(".")
    return parts[1] if len(parts) > 2 and parts[1] in ROOMS else None


def room_graph(graph: dict[str, set[str]]) -> dict[str, set[str]]:
    rooms: dict[str, set[str]] = {name: set() for name in ROOMS}
    for name, targets in graph.items():
        for target in targets:
            if room(name) and room(target) and room(name) != room(target):
                rooms[room(name)].add(room(target))
    return rooms


# --- 2. trips -----------------------------------------------------------------------------------

def trace(out: Path, argv: list[str]) -> None:
    """In the child: run ``python -m grader ARGV`` under a profiler and write what it entered."""
    import runpy
    import threading
    inside = str(PACKAGE) + os.sep
    entered: set[str] = set()
    pairs: set[tuple[str, str]] = set()

    def profile(frame, event, _arg):
        if event != "call" or not frame.f_code.co_filename.startswith(inside) or frame.f_code.co_name == "<module>":
            return
        callee = frame.f_code.co_filename
        entered.add(callee)
        caller = frame.f_back
        while caller is not None and not caller.f_code.co_filename.startswith(inside):
            caller = caller.f_back
        if caller is not None and caller.f_code.co_filename != callee:
            pairs.add((caller.f_code.co_filename, callee))

    sys.path.insert(0, str(ROOT))
    sys.argv = ["grader", *argv]
    threading.setprofile(profile)
    sys.setprofile(profile)
    code = 0
    try:
        runpy.run_module("grader", run_name="__main__", alter_sys=True)
    except SystemExit as ended:
        code = ended.code if isinstance(ended.code, int) else (0 if ended.code is None else 1)
    finally:
        sys.setprofile(None)
        threading.setprofile(None)
    short = lambda name: str(Path(name).relative_to(ROOT))  # noqa: E731 - a local shorthand
    imported = sorted(m for m, mod in list(sys.modules.items())
                      if m.startswith("grader") and str(getattr(mod, "__file__", "") or "").startswith(inside))
    out.write_text(json.dumps({"exit": code, "entered": sorted(map(short, entered)),
                               "pairs": sorted(f"{short(a)} -> {short(b)}" for a, b in pairs), "imported": imported}))


def class_of_two(folder: Path) -> Path:
    """A class of two students: one hands in two solutions (a kernel, a Helion), one a wrong kernel."""
    alice, bob = folder / "class" / "alice", folder / "class" / "bob"
    alice.mkdir(parents=True)
    bob.mkdir(parents=True)
    for puzzle in ("puzzle01", "puzzle35"):
        solution = next((ROOT / "solutions").glob(f"{puzzle}_*.py"))
        (alice / solution.name).write_text(solution.read_text())
    wrong = next((ROOT / "tests" / "wrong_kernels").glob("puzzle02_*.py"))
    (bob / next((ROOT / "puzzles").glob("puzzle02_*.py")).name).write_text(wrong.read_text())
    return folder / "class"


def trips(scratch: Path) -> dict[str, list[str]]:
    solution = lambda puzzle: str(next((ROOT / "solutions").glob(f"{puzzle}_*.py")).relative_to(ROOT))  # noqa: E731
    return {
        "puzzle07 (kernel)": ["puzzle07", "--file", solution("puzzle07"), "--device", "cpu"],
        "puzzle35 (helion)": ["puzzle35", "--file", solution("puzzle35"), "--device", "cpu"],
        "batch of two": ["batch", str(class_of_two(scratch)), "--out", str(scratch / "out"), "--device", "cpu"],
    }


def walk(name: str, argv: list[str], scratch: Path) -> dict:
    out = scratch / f"trip-{len(list(scratch.glob('trip-*')))}.json"
    started = time.perf_counter()
    run = subprocess.run([sys.executable, __file__, "--trace", str(out), "--", *argv], cwd=ROOT,
                         capture_output=True, text=True)
    if not out.exists():
        raise SystemExit(f"{name}: the traced run wrote nothing (exit {run.returncode}):\n{run.stderr[-2000:]}")
    found = json.loads(out.read_text())
    return {"command": "python -m grader " + " ".join(argv).replace(str(scratch), "<tmp>"),
            "exit": found["exit"], "seconds": round(time.perf_counter() - started, 1),
            "files_entered": len(found["entered"]), "file_pairs": len(found["pairs"]),
            "modules_imported": len(found["imported"]), "entered": found["entered"], "pairs": found["pairs"]}


# --- 3. long functions --------------------------------------------------------------------------

def long_functions(least: int = LONG) -> list[dict]:
    found = []
    for path in sorted(PACKAGE.rglob("*.py")):
        def visit(node, prefix: str) -> None:
            for child in ast.iter_child_nodes(node):
                name = prefix
                if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                    name = f"{prefix}{child.name}"
                    lines = child.end_lineno - child.lineno + 1
                    if not isinstance(child, ast.ClassDef) and lines >= least:
                        where = f"{path.relative_to(ROOT)}:{child.lineno}"
                        found.append({"where": where, "name": name, "lines": lines})
                    name += "."
                visit(child, name)
        visit(ast.parse(path.read_text()), "")
    return sorted(found, key=lambda f: -f["lines"])


# --- the figures, together ----------------------------------------------------------------------

def figures(with_trips: bool) -> dict:
    graph = import_graph()
    chain = longest_path(graph)
    floors = longest_path(room_graph(graph))
    found = {"tree": str(ROOT), "modules": len(graph),
             "imports": {"edges": sum(map(len, graph.values())), "deepest": len(chain) - 1, "chain": chain},
             "floors": {"edges": len(floors) - 1, "chain": floors},
             "long_functions": long_functions()}
    if with_trips:
        with tempfile.TemporaryDirectory(prefix="figures-") as scratch:
            found["trips"] = {name: walk(name, argv, Path(scratch)) for name, argv in trips(Path(scratch)).items()}
    return found


def render(found: dict) -> str:
    lines = [f"tree: {found['tree']} ({found['modules']} modules, {found['imports']['edges']} import edges)",
             f"deepest import chain: {found['imports']['deepest']} edges",
             "  " + " -> ".join(found["imports"]["chain"]),
             f"floors of rooms: {found['floors']['edges'] + 1} ({found['floors']['edges']} room -> room edges: "
             f"{' -> '.join(found['floors']['chain'])})"]
    for name, trip in found.get("trips", {}).items():
        lines.append(f"trip {name}: {trip['files_entered']} files entered, {trip['file_pairs']} file pairs, "
                     f"{trip['modules_imported']} modules imported (main process; exit {trip['exit']}, "
                     f"{trip['seconds']} s)\n  {trip['command']}")
    lines.append(f"functions of {LONG} lines or more: {len(found['long_functions'])}")
    lines += [f"  {f['lines']:4}  {f['name']}  ({f['where']})" for f in found["long_functions"]]
    return "\n".join(lines)


def main(argv=None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if argv[:1] == ["--trace"]:  # the child of a trip: --trace OUT -- GRADER ARGS
        trace(Path(argv[1]), argv[3:])
        return 0
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--json", action="store_true", help="one JSON object, with every file and pair named")
    parser.add_argument("--no-trips", action="store_true", help="the static figures only (seconds, not minutes)")
    args = parser.parse_args(argv)
    found = figures(not args.no_trips)
    print(json.dumps(found, indent=1) if args.json else render(found))
    return 0


if __name__ == "__main__":
    sys.exit(main())
