"""Importing a file by path without leaving its neighbours behind in ``sys.modules``.

An autograd puzzle's file imports the kernels of earlier puzzles from its own folder
(``from puzzle13_weighted_sum_forward import ...``). Left in ``sys.modules``, those would be
what the next file from another folder gets for the same name: a learner's solutions file
would silently run the course's stubs. So each import forgets the modules it pulled in from
outside the installed packages; the imported module keeps its own references to them.
"""
from __future__ import annotations

import contextlib
import importlib.util
import os
import sys
import threading
import types

_LOCK = threading.RLock()  # sys.path and sys.modules are process-wide: one import at a time


def _installed_roots() -> tuple[str, ...]:
    return tuple(os.path.realpath(p) for p in {sys.prefix, sys.base_prefix, os.path.dirname(os.__file__)})


def import_file(path: str, name: str, run=None, spec=None) -> types.ModuleType:
    """Import ``path`` as module ``name``, with its folder on ``sys.path`` while it runs.

    ``run(callable)`` may wrap the execution (the worker captures what it prints); ``spec``
    may bring a loader of its own (the worker's definitions-only loader).
    """
    with _LOCK:
        return _import_file(path, name, run, spec)


def _import_file(path: str, name: str, run, spec) -> types.ModuleType:
    spec = spec or importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    folder = os.path.dirname(path)
    sys.path.insert(0, folder)
    before = set(sys.modules)
    try:
        (run or (lambda f: f()))(lambda: spec.loader.exec_module(module))
    except BaseException:
        sys.modules.pop(name, None)
        raise
    finally:
        if sys.path and sys.path[0] == folder:
            sys.path.pop(0)
        _forget(before)
    return module


def _forget(before: set[str]) -> None:
    installed = _installed_roots()
    package = os.path.dirname(os.path.dirname(os.path.realpath(__file__)))  # grader/
    for name in set(sys.modules) - before:
        origin = getattr(sys.modules.get(name), "__file__", None)
        if origin is None:
            continue
        origin = os.path.realpath(origin)
        if not origin.startswith(installed) and not origin.startswith(package):
            sys.modules.pop(name, None)


class _StandIn(types.ModuleType):
    """Any attribute, any call, any decoration: what a course file's kernel code touches of a
    package when only its ``PUZZLE`` is wanted."""

    def __getattr__(self, name: str):
        if name.startswith("__"):
            raise AttributeError(name)
        return _StandIn(f"{self.__name__}.{name}")

    def __call__(self, *args, **kwargs):
        return self


@contextlib.contextmanager
def standing_in(*modules: str):
    """Stand-ins for ``modules`` (a kind's spec lists them: its package, and what a puzzle file
    imports of it), of packages installed and not imported yet, while a course file is imported for
    its ``PUZZLE``: a Helion puzzle's file decorates its kernel with ``@helion.kernel``, and
    importing helion costs seconds of the command's CPU (torch's compiler stack), though only the
    worker runs the kernel, and imports helion itself. Removed after, so a real import still works;
    a package not installed is left missing, so the file still says that it needs it."""
    with _LOCK:
        roots = {m.split(".")[0] for m in modules}
        stood = {p for p in roots if p not in sys.modules and importlib.util.find_spec(p) is not None}
        for module in modules:
            parts = module.split(".")
            if parts[0] not in stood:
                continue
            for i in range(1, len(parts) + 1):  # a module's packages first, each an attribute of the one above
                name = ".".join(parts[:i])
                if name not in sys.modules:
                    sys.modules[name] = _StandIn(name) if i == 1 else getattr(sys.modules[".".join(parts[:i - 1])],
                                                                              parts[i - 1])
        try:
            yield
        finally:
            for name in [n for n in sys.modules if n.split(".")[0] in stood]:
                if isinstance(sys.modules[name], _StandIn):
                    del sys.modules[name]
