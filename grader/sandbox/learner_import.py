"""Importing learner files inside the worker: definitions only, everywhere.

A learner's file, and every module it imports from outside the installed packages (their
other puzzle files, a helper of theirs), is executed as its definitions only
(:func:`grader.source.capture.definitions_only`): imports, functions, Triton's decorators,
autograd classes and literal constants. Nothing else of the file runs, so no import-time
code can patch Triton, torch or the worker.

``linecache`` is given the same sanitised text, so everything that reads a kernel's source
(Triton's compiler, the interpreter's rewrite of the function, error messages) sees what
was executed, line for line the learner's numbering.
"""
from __future__ import annotations

import importlib.abc
import importlib.machinery
import importlib.util
import linecache
import os
import sys
import threading

_INSTALLED = threading.Lock()
_extra_globals: dict = {}
_loaded: set[str] = set()  # the learner files imported in this process
_missing: dict[str, dict] = {}  # a learner file -> each module-level name it left out -> why (a Dropped)


def _trusted_roots() -> tuple[str, ...]:
    package = os.path.dirname(os.path.dirname(os.path.realpath(__file__)))  # grader/
    roots = {os.path.realpath(p) for p in (sys.prefix, sys.base_prefix, os.path.dirname(os.__file__))}
    return tuple(sorted(roots | {package}))


def _trusted(origin: str) -> bool:
    real = os.path.realpath(origin)
    return any(real == root or real.startswith(root + os.sep) for root in _trusted_roots())


def sanitised_source(path: str) -> str:
    """The file's definitions, line for line; also what ``linecache`` shows for it."""
    from grader.source.definitions import definitions
    with open(path, encoding="utf-8") as f:
        kept = definitions(f.read())
    text = kept.text
    _missing[path] = kept.missing
    lines = text.splitlines(keepends=True)
    linecache.cache[path] = (len(text), None, lines, path)  # mtime None: never reloaded from disk
    return text


class _Loader(importlib.abc.Loader):
    def __init__(self, path: str) -> None:
        self.path = path

    def create_module(self, spec):
        return None

    def exec_module(self, module) -> None:
        _loaded.add(self.path)
        code = compile(sanitised_source(self.path), self.path, "exec", dont_inherit=True)
        module.__dict__.update(_extra_globals)
        exec(code, module.__dict__)


class _Finder(importlib.abc.MetaPathFinder):
    """Modules found outside the installed packages are learner code: sanitise them."""

    def find_spec(self, name, path, target=None):
        spec = importlib.machinery.PathFinder.find_spec(name, path)
        if spec is None or spec.origin in (None, "built-in", "frozen") or _trusted(spec.origin):
            return None
        if not spec.origin.endswith(".py"):
            raise ImportError(f"`import {name}`: only .py files are imported from a learner's folder, "
                              f"not {os.path.basename(spec.origin)}")
        return importlib.util.spec_from_file_location(
            name, spec.origin, loader=_Loader(spec.origin),
            submodule_search_locations=spec.submodule_search_locations)


def install(extra_globals: dict | None = None) -> None:
    """Sanitise every learner module imported from now on in this process. ``extra_globals``
    go into each such module first (the interpreter's compiled-meaning ``min``/``max``)."""
    with _INSTALLED:
        _extra_globals.update(extra_globals or {})
        if not any(isinstance(f, _Finder) for f in sys.meta_path):
            sys.meta_path.insert(0, _Finder())


def import_learner(path: str, name: str, run=None):
    """Import a learner's file by path, definitions only (its folder importable meanwhile)."""
    from grader.course.imports import import_file
    spec = importlib.util.spec_from_file_location(name, path, loader=_Loader(path))
    return import_file(path, name, run=run, spec=spec)


def learner_files() -> set[str]:
    """Every learner file imported in this process: where a wrapper's lines are looked for."""
    return set(_loaded)


def why_missing(name: str, filename: str | None = None):
    """Why ``name`` is not defined in a learner file imported here (``filename``'s first): the
    statement the definitions-only import left out that binds it (a Dropped), or None."""
    files = [filename] if filename in _missing else []
    for path in [*files, *sorted(_missing)]:
        found = _missing[path].get(name)
        if found is not None:
            return found
    return None
