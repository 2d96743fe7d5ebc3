"""docs/architecture.md's "Where a change goes" kept true: every path it names is there, and each
row names the files that the code itself says such a change touches, found by reading the code
(where ``FailureKind`` is defined, which modules name every ``Status``, which modules list a kind's
wings...), so that the map fails here when the code moves, not when a contributor follows it.

A named path may hold a placeholder, ``<kind>``, ``<family>``, read as any name (it must match at
least one file or folder); a folder covers every file below it. The learner's folders are read as
committed (tests/pristine.py), as every test reads them.
"""
from __future__ import annotations

import ast
import fnmatch
import functools
import re
from pathlib import Path

import pytest

from paths import ROOT
from pristine import FOLDERS, PRISTINE

DOC = ROOT / "docs" / "architecture.md"
HEADING = "## Where a change goes"
PACKAGE = ROOT / "grader"
ROWS = ("a message", "a failure kind", "a status", "a puzzle", "a track", "a kind", "a report format",
        "a command", "an exit code", "a worker request")


# --- the map, as the page writes it ---------------------------------------------------------------

def section() -> str:
    doc = DOC.read_text(encoding="utf-8")
    assert HEADING in doc, f"docs/architecture.md has no section {HEADING!r}"
    return doc.split(HEADING, 1)[1].split("\n## ", 1)[0]


@functools.cache
def table() -> dict[str, tuple[str, ...]]:
    """Each row's change (its first cell, e.g. "a status") -> the paths it names, in any cell."""
    rows = {}
    for line in section().splitlines():
        cells = [cell.strip() for cell in line.strip().strip("|").split("|")]
        if not line.lstrip().startswith("|") or set(cells[0]) <= {"-", ":", " "} or cells[0] == "change":
            continue
        named = re.findall(r"`([^`\s]+)`", " ".join(cells[1:]))
        rows[cells[0].strip("*")] = tuple(p for p in named if p.split("/")[0] in {d.name for d in ROOT.iterdir()})
    return rows


def pattern(named: str) -> str:
    return re.sub(r"<[^>]+>", "*", named.rstrip("/"))


def exists(named: str) -> bool:
    return any((PRISTINE if named.split("/")[0] in FOLDERS else ROOT).glob(pattern(named)))


def relative(path: Path) -> str:
    return path.relative_to(PRISTINE if path.is_relative_to(PRISTINE) else ROOT).as_posix()


def covered(path: str, named: tuple[str, ...]) -> bool:
    """Whether ``path`` (relative to the repository) is one of ``named`` or lies in a folder of them."""
    return any(fnmatch.fnmatchcase(path, pattern(n)) or fnmatch.fnmatchcase(path, pattern(n) + "/*")
               for n in named)


def uncovered(row: str, paths) -> list[str]:
    return sorted(p for p in map(relative, paths) if not covered(p, table()[row]))


# --- the code, read -------------------------------------------------------------------------------

@functools.cache
def modules() -> dict[Path, ast.Module]:
    return {path: ast.parse(path.read_text(encoding="utf-8")) for path in sorted(PACKAGE.rglob("*.py"))}


def defining(name: str) -> Path:
    """The module that defines the class or function ``name`` (exactly one)."""
    found = [path for path, tree in modules().items() for node in tree.body
             if isinstance(node, (ast.ClassDef, ast.FunctionDef)) and node.name == name]
    assert len(found) == 1, f"{name} is defined in {found}: the map's check expects one place"
    return found[0]


def members(enum: str) -> set[str]:
    tree = modules()[defining(enum)]
    body = next(node for node in tree.body if isinstance(node, ast.ClassDef) and node.name == enum).body
    return {t.id for node in body if isinstance(node, ast.Assign) for t in node.targets if isinstance(t, ast.Name)}


def naming_every(enum: str) -> set[Path]:
    """The modules that name every member of ``enum``: its tables and its deciders, which a new member joins."""
    every = members(enum)
    return {path for path, tree in modules().items()
            if every <= {node.attr for node in ast.walk(tree) if isinstance(node, ast.Attribute)
                         and isinstance(node.value, ast.Name) and node.value.id == enum}}


def calling(function: str, where=lambda tree: tree.body) -> set[Path]:
    """The modules whose statements (module level by default) call ``function`` by its bare name."""
    return {path for path, tree in modules().items()
            if any(isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == function
                   for statement in where(tree) for node in ast.walk(statement))}


@functools.cache
def wings() -> dict[Path, str]:
    """Each kind's wing, by its path: a module or package in a room's ``kinds/`` named after a kind."""
    kinds = {p.stem for p in (PACKAGE / "course" / "kinds").glob("*.py")} - {"__init__", "kind"}
    return {path: path.stem for folder in PACKAGE.glob("*/kinds") for path in folder.iterdir()
            if path.stem in kinds}


def in_wing(path: Path) -> bool:
    return any(path == wing or wing in path.parents for wing in wings())


def registries() -> set[Path]:
    """The modules outside every wing that name a wing's module, by import or as a string."""
    dotted = {".".join(w.relative_to(ROOT).with_suffix("").parts) for w in wings()}

    def names_a_wing(text: str) -> bool:
        return any(text == d or text.startswith(d + ".") for d in dotted)
    found = set()
    for path, tree in modules().items():
        for node in ast.walk(tree) if not in_wing(path) else ():
            texts = [node.value] if isinstance(node, ast.Constant) and isinstance(node.value, str) else \
                [node.module or ""] if isinstance(node, ast.ImportFrom) else \
                [a.name for a in node.names] if isinstance(node, ast.Import) else []
            if any(map(names_a_wing, texts)):
                found.add(path)
                break
    return found


# --- the checks -----------------------------------------------------------------------------------

def test_the_map_has_a_row_for_each_change_a_contributor_asks_about():
    assert not [row for row in ROWS if row not in table()], f"rows of {HEADING!r}: {sorted(table())}"
    assert all(table()[row] for row in ROWS), {row: table()[row] for row in ROWS}


@pytest.mark.parametrize("row", ROWS)
def test_every_path_the_map_names_is_there(row):
    assert not [p for p in table()[row] if not exists(p)], f"{row}: paths that are not in the repository"


def test_a_failure_kind_row_names_where_failure_kind_is_defined_and_the_corpus():
    assert not uncovered("a failure kind", {defining("FailureKind"), ROOT / "tests" / "wrong_kernels" / "x.py"})


def test_a_message_row_names_every_family_that_words_facts():
    # a family registers its words into the catalogue, a kind's own family included
    families = calling("register") & {p for p, t in modules().items() if _imports_failures(t)}
    assert families, "no module registers words: has the catalogue changed how words are given?"
    assert not uncovered("a message", families)


def _imports_failures(tree: ast.Module) -> bool:
    home = ".".join(defining("FailureKind").relative_to(ROOT).parent.parts)
    return any(isinstance(n, ast.ImportFrom) and (n.module or "").startswith(home) for n in ast.walk(tree))


def test_a_status_row_names_status_and_every_module_that_names_each_status():
    assert not uncovered("a status", {defining("Status")} | naming_every("Status"))


def test_a_puzzle_row_names_the_folders_the_course_reads_and_what_lies_beside_the_puzzles():
    course = next(node for node in modules()[defining("Course")].body
                  if isinstance(node, ast.ClassDef) and node.name == "Course")
    folders = {node.right.value for node in ast.walk(course) if isinstance(node, ast.BinOp)
               and isinstance(node.op, ast.Div) and isinstance(node.right, ast.Constant)}
    assert {"puzzles", "solutions"} <= folders, folders
    beside = [p for p in (PRISTINE / "puzzles").iterdir() if p.name.startswith(".") and p.is_file()]
    read = {path for folder in folders if folder in FOLDERS for path in (PRISTINE / folder).glob("*.py")}
    assert not uncovered("a puzzle", read | set(beside))


def test_a_track_row_names_the_tracks_table():
    def is_table(node) -> bool:  # a tuple or list literal of Track(...) calls
        return isinstance(node, (ast.Tuple, ast.List)) and bool(node.elts) and all(
            isinstance(e, ast.Call) and isinstance(e.func, ast.Name) and e.func.id == "Track" for e in node.elts)
    tables = {path for path, tree in modules().items() for node in ast.walk(tree) if is_table(node)}
    assert tables, "no tuple of Track(...) found: where is the tracks' table now?"
    assert not uncovered("a track", tables | {defining("Track")})


def test_a_kind_row_names_its_wings_and_every_registry_that_lists_them():
    assert len(set(wings().values())) >= 3, wings()
    assert not uncovered("a kind", set(wings()) | registries())


def test_a_report_format_row_names_the_renderers_and_the_options_that_ask_for_one():
    def offers_a_format(tree) -> bool:
        return any(isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute) and n.func.attr == "add_argument"
                   and any(isinstance(a, ast.Constant) and a.value in ("--json", "--format") for a in n.args)
                   for n in ast.walk(tree))
    options = {path for path, tree in modules().items() if offers_a_format(tree)}
    assert options, "no --json or --format option found"
    assert not uncovered("a report format", options | set((PACKAGE / "report").glob("*.py")))


def test_a_command_row_names_the_table_the_command_line_dispatches_on():
    def dispatches(tree) -> bool:  # a dict literal from a subcommand's name ("selftest") to its function
        return any(isinstance(n, ast.Dict) and any(isinstance(k, ast.Constant) and k.value == "selftest"
                                                   and isinstance(v, ast.Name) for k, v in zip(n.keys, n.values))
                   for n in ast.walk(tree))
    tables = {path for path, tree in modules().items() if dispatches(tree)}
    assert tables, "no table from 'selftest' to its function"
    assert not uncovered("a command", tables)


def test_an_exit_code_row_names_exit_code_and_where_exceptions_become_codes():
    def maps_interrupts(tree) -> bool:  # catches Ctrl-C and answers an ExitCode
        return any(isinstance(n, ast.ExceptHandler) and "KeyboardInterrupt" in ast.unparse(n.type or n)
                   and "ExitCode" in ast.unparse(n) for n in ast.walk(tree))
    mapping = {path for path, tree in modules().items() if maps_interrupts(tree)}
    assert mapping, "no handler of KeyboardInterrupt answers an ExitCode"
    assert not uncovered("an exit code", mapping | {defining("ExitCode")})


def test_a_worker_request_row_names_where_requests_are_declared_and_answered():
    declared = calling("register_requests") - {defining("register_requests")}
    answered = {path for path, tree in modules().items() if path.is_relative_to(PACKAGE / "sandbox") and any(
        isinstance(n, ast.FunctionDef) and n.name.startswith("op_") for n in ast.walk(tree))}
    assert declared and answered, (declared, answered)
    assert not uncovered("a worker request", declared | answered)


def test_the_covering_rule_reads_folders_and_placeholders():
    status = "grader/judge/status.py"
    assert covered(status, ("grader/judge/",)) and covered(status, ("grader/<room>/status.py",))
    assert not covered(status, ("grader/report/", "grader/judge/status_words.py"))
    assert exists("grader/<room>/kinds/") and not exists("grader/<room>/no_such_file.py")


def test_a_row_that_misses_a_file_the_code_names_is_seen(monkeypatch):
    import test_change_map
    home = relative(defining("Status"))
    rows = dict(table()) | {"a status": tuple(p for p in table()["a status"] if p not in (home, "grader/judge/"))}
    monkeypatch.setattr(test_change_map, "table", lambda: rows)
    assert home in uncovered("a status", {defining("Status")} | naming_every("Status"))
