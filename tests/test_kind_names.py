"""No module of the grader outside a kind's wings and the registries names a kind or its package.

A kind is declared inside its wings (grader/course/kinds/<kind>.py, grader/judge/kinds/<kind>/,
grader/sandbox/kinds/<kind>/, grader/channel/kinds/<kind>.py) and listed, one line each, by the
registries (those folders' ``__init__.py``). Elsewhere a kind's name or its package would be a spot
that a new kind must find and edit, or that silently leaves it out (``puzzle.kind == puzzle.track``
dropped a kind whose package is named otherwise). The scan reads every module's syntax, not its
prose: string constants equal to a kind's name or package, imports of the package (or of a module
named after it), names spelling the package (``imports_helion``, ``HelionRejected``), and a ``kind``
compared with a kind's name.
"""
from __future__ import annotations

import ast
import re
from pathlib import Path

import grader
from grader.course.kinds import SPECS

PACKAGE = Path(grader.__file__).parent
# Where a kind may be named: the registries, each a folder holding its kinds' wings.
REGISTRIES = tuple(PACKAGE / room / "kinds" for room in ("course", "channel", "sandbox", "judge"))

# Where a kind's name means something else, by file and value. "kernel" is also the name of the
# learner's object (Puzzle.kernel): a puzzle file's field, a stub's entry, a launch's record.
MEANS_SOMETHING_ELSE = {
    ("course/loader.py", "kernel"),         # the PUZZLE's `kernel` field, read from a puzzle file's text
    ("source/claims.py", "kernel"),         # Puzzle(kernel=...): the keyword naming the learner's object
    ("source/stubs.py", "kernel"),          # a stub's entry: the name of the kernel it stands for
    ("sandbox/perf/run.py", "kernel"),      # a profiled launch's record: the launched kernel's name
}


def _words(identifier: str) -> list[str]:
    """An identifier's words, lower case: ``imports_helion`` -> imports, helion; ``HelionRejected`` ->
    helion, rejected."""
    return [w.lower() for part in identifier.split("_") for w in re.findall(r"[A-Z]+(?![a-z])|[A-Z]?[a-z0-9]+", part)]


def _identifiers(node: ast.AST) -> list[str]:
    if isinstance(node, ast.Name):
        return [node.id]
    if isinstance(node, ast.Attribute):
        return [node.attr]
    if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
        return [node.name]
    if isinstance(node, (ast.arg, ast.keyword)):
        return [node.arg] if node.arg else []
    if isinstance(node, ast.alias):
        return [node.asname] if node.asname else []
    return []


def _imported(node: ast.AST) -> list[str]:
    if isinstance(node, ast.Import):
        return [alias.name for alias in node.names]
    if isinstance(node, ast.ImportFrom) and not node.level:
        return [node.module or ""] + [f"{node.module}.{alias.name}" for alias in node.names]
    return []


def _named(node: ast.AST, *names: str) -> bool:
    return (isinstance(node, ast.Name) and node.id in names) or (isinstance(node, ast.Attribute) and node.attr in names)


def _compares_kind(node: ast.AST, names: set[str]) -> bool:
    """``puzzle.kind == "function"``, ``kind in ("kernel", "function")``, and a kind taken for the
    name of its track or its package (``puzzle.kind == puzzle.track``: true of Helion only by its
    names, false of a kind whose package is named otherwise)."""
    if not isinstance(node, ast.Compare):
        return False
    operands = [node.left, *node.comparators]
    items = [i for o in operands for i in (o.elts if isinstance(o, (ast.Tuple, ast.List, ast.Set)) else [o])]
    return any(_named(o, "kind") for o in operands) and (
        any(isinstance(i, ast.Constant) and i.value in names for i in items)
        or any(_named(o, "track", "package") for o in operands))


def kind_mentions(source: str, names: set[str], packages: set[str]) -> list[tuple[int, str]]:
    """Where ``source`` names a kind (one of ``names``) or a kind's package (one of ``packages``):
    (line, what), in the module's order."""
    found = []
    for node in ast.walk(ast.parse(source)):
        line = getattr(node, "lineno", 0)
        if isinstance(node, ast.Constant) and isinstance(node.value, str) and (
                node.value in names | packages  # or a name built on the package: "HELION_", "helion.kernel"
                or (re.fullmatch(r"[\w.]+", node.value) and packages & set(_words(node.value)))):
            found.append((line, repr(node.value)))
        for module in _imported(node):
            parts = [w for part in module.split(".") for w in _words(part)]
            if packages & set(parts):
                found.append((line, f"import {module}"))
        found += [(line, name) for name in _identifiers(node) if packages & set(_words(name))]
        if _compares_kind(node, names):
            found.append((line, ast.unparse(node)))
    return sorted(set(found))


def _file_named(where: str, packages: set[str]) -> list[tuple[int, str]]:
    """A module whose path is named after a package (``judge/failures/helion.py``)."""
    return [(0, where)] if packages & {w for part in where.removesuffix(".py").split("/") for w in _words(part)} else []


def _kinds() -> tuple[set[str], set[str]]:
    return set(SPECS), {spec.package for spec in SPECS.values() if spec.package}


def test_the_scan_finds_what_it_forbids_in_a_made_up_module():
    offending = '''
import helion.language as hl
from grader.judge.failures.helion import HostWork
from grader.source.source_lines import imports_helion

class HelionRejected:
    pass

def warm(text, puzzle):
    if imports_helion(text) and puzzle.kind == puzzle.track:
        return {"helion"}
    if puzzle.kind in ("kernel", "function"):
        return set()
    return run(helion=True)
'''
    found = kind_mentions(offending, {"kernel", "function", "helion"}, {"helion"})
    assert found == [
        (2, "import helion.language"), (3, "import grader.judge.failures.helion"),
        (3, "import grader.judge.failures.helion.HostWork"), (4, "import grader.source.source_lines.imports_helion"),
        (6, "HelionRejected"), (10, "imports_helion"), (10, "puzzle.kind == puzzle.track"), (11, "'helion'"),
        (12, "'function'"), (12, "'kernel'"), (12, "puzzle.kind in ('kernel', 'function')"), (14, "helion")]


def test_the_scan_lets_other_words_be():
    """A kind's name inside prose, a kernel's name, another package's import: none of them names a kind."""
    fine = '''
"""Helion puzzles are graded in the interpreter; a kernel puzzle on its grid."""
import torch
from grader.course.kinds import SPECS

def kernel_file(kernel, function):
    kind = SPECS[puzzle_kind]
    message = "the kernel puzzle's failure"
    return failure.kind == "out_of_bounds" or kind.name in names
'''
    assert kind_mentions(fine, {"kernel", "function", "helion"}, {"helion"}) == []


def test_no_module_outside_the_wings_and_registries_names_a_kind():
    assert all(path.is_dir() for path in REGISTRIES), "a registry moved: REGISTRIES must follow it"
    names, packages = _kinds()
    assert names >= {"kernel", "function", "helion"} and "helion" in packages
    found, allowed_seen = [], set()
    for path in sorted(PACKAGE.rglob("*.py")):
        if any(path.is_relative_to(registry) for registry in REGISTRIES):
            continue
        where = path.relative_to(PACKAGE).as_posix()
        for line, what in _file_named(where, packages) + kind_mentions(path.read_text(), names, packages):
            if (where, what.strip("'")) in MEANS_SOMETHING_ELSE:
                allowed_seen.add((where, what.strip("'")))
            else:
                found.append(f"grader/{where}:{line}: {what}")
    assert not found, "declare it in the kind's wing, and ask the registry:\n" + "\n".join(found)
    assert allowed_seen == MEANS_SOMETHING_ELSE, "an allowed entry no longer occurs: remove it"
