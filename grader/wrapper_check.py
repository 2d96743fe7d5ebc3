"""A static check of an autograd wrapper for code that would hide where its result came from.

The worker sees PyTorch's operators through dispatch modes and replaces the kernels' launches
in a poisoned run; neither sees a wrapper that asks whether it runs in the interpreter and
computes with PyTorch only on a GPU. Nor is there any honest use, in a wrapper, of the
process's environment, NumPy, threads or the switches that turn PyTorch's dispatch modes off.
So the grader reads (never runs) the wrapper class's methods and the module's functions they
call, and names the line. Everything an honest wrapper does (``kernel.warmup``,
``triton.cdiv``, ``x.new_empty``, ``.reshape``, ``.stride()``, ``partial.sum(0)``) passes.
"""
from __future__ import annotations

import ast
from dataclasses import dataclass
from pathlib import Path

# Modules a wrapper has no business using, by their top-level name.
FORBIDDEN_MODULES = {
    "numpy": "computes with NumPy, which the grader cannot see",
    "threading": "uses threads, whose work the grader cannot see",
    "_thread": "uses threads, whose work the grader cannot see",
    "concurrent": "uses a thread or process pool, whose work the grader cannot see",
    "multiprocessing": "uses other processes, whose work the grader cannot see",
}
# Attributes (or names imported by themselves) that only serve to hide the computation.
FORBIDDEN_ATTRIBUTES = {
    "environ": "reads the process's environment (a wrapper that checks for the interpreter computes "
               "differently on a laptop than on a GPU)",
    "getenv": "reads the process's environment (a wrapper that checks for the interpreter computes "
              "differently on a laptop than on a GPU)",
    "numpy": "turns a tensor into a NumPy array, whose computations the grader cannot see",
    "from_numpy": "makes a tensor of a NumPy array, whose computations the grader cannot see",
    "__array__": "turns a tensor into a NumPy array, whose computations the grader cannot see",
}
# PyTorch's switches for the dispatch modes the grader records operators with.
DISPATCH_SWITCHES = ("DisableTorchDispatch", "disable_current_modes", "_pop_mode", "_pop_torch_dispatch",
                     "_python_dispatch", "dispatch_mode", "TorchFunction", "ExcludeDispatchKey", "_mode_stack")
SWITCH_WHAT = "turns off the dispatch modes through which the grader watches PyTorch's operators"


@dataclass(frozen=True)
class Finding:
    function: str
    line: int
    source: str
    what: str


def _imported_names(tree: ast.AST) -> dict[str, str]:
    """Local name -> the module (or module.attribute) it was imported as."""
    names = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                names[(alias.asname or alias.name).split(".")[0]] = alias.name if alias.asname else \
                    alias.name.split(".")[0]
        elif isinstance(node, ast.ImportFrom) and node.module:
            for alias in node.names:
                names[alias.asname or alias.name] = f"{node.module}.{alias.name}"
    return names


def _what(node: ast.AST, imported: dict[str, str]) -> str | None:
    """Why ``node`` is forbidden in a wrapper, or None."""
    if isinstance(node, (ast.Import, ast.ImportFrom)):
        modules = [a.name for a in node.names] if isinstance(node, ast.Import) else [node.module or ""]
        for module in modules:
            if module.split(".")[0] in FORBIDDEN_MODULES:
                return f"`import {module}` {FORBIDDEN_MODULES[module.split('.')[0]]}"
        if isinstance(node, ast.ImportFrom):
            for alias in node.names:
                what = _name_what(alias.name)
                if what:
                    return what
        return None
    if isinstance(node, ast.Name):  # judged by what it was imported as: a local may be called anything
        origin = imported.get(node.id)
        if origin is None:
            return None
        root = origin.split(".")[0]
        if root in FORBIDDEN_MODULES:
            return f"`{node.id}` (from `{origin}`) {FORBIDDEN_MODULES[root]}"
        return _name_what(origin.split(".")[-1])
    if isinstance(node, ast.Attribute):
        return _name_what(node.attr)
    if isinstance(node, ast.Constant) and node.value == "TRITON_INTERPRET":
        return "`'TRITON_INTERPRET'` names the interpreter's switch (a wrapper that checks for the interpreter " \
               "computes differently on a laptop than on a GPU)"
    return None


def _name_what(name: str) -> str | None:
    if name in FORBIDDEN_ATTRIBUTES:
        return f"`{name}` {FORBIDDEN_ATTRIBUTES[name]}"
    if any(part in name for part in DISPATCH_SWITCHES):
        return f"`{name}` {SWITCH_WHAT}"
    return None


def _wrapper_functions(tree: ast.Module, cls_name: str) -> list[tuple[str, ast.AST]]:
    """The class's methods, then the module-level functions (and classes) they reach by name."""
    top = {n.name: n for n in tree.body if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef))}
    if not isinstance(top.get(cls_name), ast.ClassDef):
        return []
    found, todo, seen = [], [cls_name], set()
    while todo:
        name = todo.pop(0)
        if name in seen or name not in top:
            continue
        seen.add(name)
        node = top[name]
        if isinstance(node, ast.ClassDef):
            found += [(f"{name}.{m.name}", m) for m in node.body
                      if isinstance(m, (ast.FunctionDef, ast.AsyncFunctionDef))]
        else:
            found.append((name, node))
        todo.extend(sorted({n.id for n in ast.walk(node) if isinstance(n, ast.Name)} - seen))
    return found


def find(source: str, cls_name: str) -> Finding | None:
    """The first forbidden construct in the wrapper ``cls_name`` or a function it reaches."""
    try:
        tree = ast.parse(source)
    except SyntaxError:
        return None  # the worker reports it, with the line
    imported = _imported_names(tree)
    lines = source.splitlines()
    for name, fn in _wrapper_functions(tree, cls_name):
        for node in sorted((n for n in ast.walk(fn) if hasattr(n, "lineno")), key=lambda n: (n.lineno, n.col_offset)):
            what = _what(node, imported)
            if what is not None:
                text = lines[node.lineno - 1].strip() if node.lineno <= len(lines) else ""
                return Finding(name, node.lineno, text, what)
    return None


def check_file(path: Path, cls_name: str) -> Finding | None:
    try:
        return find(Path(path).read_text(encoding="utf-8"), cls_name)
    except (OSError, UnicodeDecodeError):
        return None
