"""A static check of an autograd wrapper for code that could tell the grader's recording from real use.

The grader records a wrapper on tensors without values and grades the replay of what it
recorded (:mod:`grader.judge.kinds.function.run`). A wrapper that could tell it is being recorded could
launch its kernels then and compute with PyTorch everywhere else: right only while someone is
looking. An honest wrapper allocates, reshapes, launches and saves; it never asks what kind of
object a tensor is, which frames called it, what the process's environment or PyTorch's
dispatch state is, or what an attribute named at run time holds. So the grader reads (never
runs) the wrapper class's methods and the module's functions they call, and refuses those
constructs with the line. Everything an honest wrapper does (``kernel.warmup``, ``triton.cdiv``,
``x.new_empty``, ``.reshape``, ``.stride()``, ``x.data_ptr() % 16``, ``partial.sum(0)``,
``torch.cuda.get_device_properties``) passes.

A wrapper may ask which device it runs on (``x.is_cuda``, ``x.device.type == "cpu"``,
``torch.cuda.is_available()``), as library code does: wherever it is graded it sees a GPU
(:mod:`grader.sandbox.world`), so it takes the path it takes where it is used.
"""
from __future__ import annotations

import ast
from dataclasses import dataclass
from pathlib import Path

from grader.course.syntax import parse

_REFLECTS = "can tell the grader's recording from real use"
# Modules that look at the interpreter rather than the tensors, by their top-level name. (Threads,
# NumPy and PyTorch's dispatch switches cannot hide anything: what they compute on tensors without
# values reaches the replay as a tensor no recorded step made, and fails there.)
FORBIDDEN_MODULES = {
    "inspect": "reads the call stack", "sys": "reads the interpreter's state", "traceback": "reads the call stack",
    "gc": "reaches objects through the garbage collector", "ctypes": "reaches into memory",
    "importlib": "imports modules by name", "builtins": "reaches Python's builtins",
    "weakref": "reaches objects by reference", "operator": "reads attributes named by strings",
}
# Builtins with no honest use in a wrapper that reflect on objects or names.
FORBIDDEN_BUILTINS = {
    "type": "asks for an object's Python type", "getattr": "reads an attribute named at run time",
    "setattr": "sets an attribute named at run time", "hasattr": "asks whether an object has an attribute",
    "delattr": "deletes an attribute", "vars": "reads an object's attributes", "dir": "lists an object's attributes",
    "globals": "reads the module's globals", "locals": "reads local variables by name", "eval": "runs Python source",
    "exec": "runs Python source", "compile": "compiles Python source", "__import__": "imports a module by name",
    "repr": "turns an object into text", "id": "reads an object's identity",
}
# Attributes that reach PyTorch's or Python's internals.
FORBIDDEN_ATTRIBUTES = {
    "_C": "reaches PyTorch's internals", "_subclasses": "reaches PyTorch's internals",
    "_python_dispatch": "reaches PyTorch's dispatch machinery", "_guards": "reaches PyTorch's internals",
    "_dynamo": "reaches PyTorch's internals", "compiler": "asks PyTorch what it is doing",
    "fake_mode": "asks whether a tensor is fake", "is_meta": "asks whether a tensor has memory",
    "untyped_storage": "reads a tensor's storage object", "storage": "reads a tensor's storage object",
    "_cdata": "reads an object's address", "__class__": "asks for an object's Python type",
    "__dict__": "reads an object's attributes", "__qualname__": "reads a function's qualified name",
    "__module__": "reads where an object was defined", "__code__": "reads a function's code",
    "__globals__": "reads a function's globals", "__closure__": "reads a function's closure",
    "__self__": "reads a bound method's object", "__func__": "reads a method's function",
    "environ": "reads the process's environment", "getenv": "reads the process's environment",
    "f_back": "reads the call stack", "_getframe": "reads the call stack",
}
# Words that only name the grader's tools.
FORBIDDEN_WORDS = ("fake", "meta", "triton_interpret")


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


def _what(node: ast.AST, imported: dict[str, str], local: set[str]) -> str | None:
    """Why ``node`` is refused in a wrapper, or None."""
    if isinstance(node, (ast.Import, ast.ImportFrom)):
        modules = [a.name for a in node.names] if isinstance(node, ast.Import) else [node.module or ""]
        for module in modules:
            root = module.split(".")[0]
            if root in FORBIDDEN_MODULES:
                return f"`import {module}` {FORBIDDEN_MODULES[root]}"
            inner = next((part for part in module.split(".") if part in FORBIDDEN_ATTRIBUTES), None)
            if inner is not None:
                return f"`import {module}` {FORBIDDEN_ATTRIBUTES[inner]}"
        return None
    if isinstance(node, ast.Name):
        if node.id in local:
            return None
        origin = imported.get(node.id)
        if origin is not None:
            root = origin.split(".")[0]
            if root in FORBIDDEN_MODULES:
                return f"`{node.id}` (from `{origin}`) {FORBIDDEN_MODULES[root]}"
            inner = next((part for part in origin.split(".") if part in FORBIDDEN_ATTRIBUTES), None)
            return f"`{node.id}` (from `{origin}`) {FORBIDDEN_ATTRIBUTES[inner]}" if inner is not None \
                else _word(node.id, origin)
        if node.id in FORBIDDEN_BUILTINS:
            return f"`{node.id}` {FORBIDDEN_BUILTINS[node.id]}"
        return _word(node.id, node.id)
    if isinstance(node, ast.Attribute):
        if node.attr in FORBIDDEN_ATTRIBUTES:
            return f"`.{node.attr}` {FORBIDDEN_ATTRIBUTES[node.attr]}"
        return _word(node.attr, f".{node.attr}")
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        if node.value in FORBIDDEN_ATTRIBUTES or node.value in FORBIDDEN_BUILTINS:
            return f"`{node.value!r}` names `{node.value}`, which a wrapper reaches only to reflect on objects"
        return _word(node.value, repr(node.value))
    return None


def _word(text: str, shown: str) -> str | None:
    lowered = text.lower()
    found = next((w for w in FORBIDDEN_WORDS if w in lowered), None)
    return None if found is None else f"`{shown}` names {found!r}, which only the grader's tools are about"


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
        elif any("jit" in ast.unparse(d) for d in node.decorator_list):
            continue  # a kernel: the kernel checks read it
        else:
            found.append((name, node))
        todo.extend(sorted({n.id for n in ast.walk(node) if isinstance(n, ast.Name)} - seen))
    return found


def _local_names(fn: ast.AST) -> set[str]:
    """Parameters and names the function binds itself: a local called `meta` is the learner's own."""
    names = set()
    for node in ast.walk(fn):
        if isinstance(node, ast.arg):
            names.add(node.arg)
        elif isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
            names.add(node.id)
    return names


def find(source: str, cls_name: str) -> Finding | None:
    """The first refused construct in the wrapper ``cls_name`` or a function it reaches."""
    try:
        tree = parse(source)
    except SyntaxError:
        return None  # the worker reports it, with the line
    imported = _imported_names(tree)
    lines = source.splitlines()
    for name, fn in _wrapper_functions(tree, cls_name):
        local = _local_names(fn)
        for node in sorted((n for n in ast.walk(fn) if hasattr(n, "lineno")), key=lambda n: (n.lineno, n.col_offset)):
            what = _what(node, imported, local)
            if what is not None:
                text = lines[node.lineno - 1].strip() if node.lineno <= len(lines) else ""
                return Finding(name, node.lineno, text, what)
    return None


def check_file(path: Path, cls_name: str) -> Finding | None:
    try:
        return find(Path(path).read_text(encoding="utf-8"), cls_name)
    except (OSError, UnicodeDecodeError):
        return None


def message(finding: Finding) -> str:
    where = f"`{finding.function}`" + (f" at line {finding.line}: `{finding.source}`" if finding.source else "")
    return (f"{where}: {finding.what}, which {_REFLECTS}. The grader records your wrapper on tensors without "
            f"values and grades the replay, so a wrapper must do the same whatever it is given: allocate, "
            f"reshape, launch your Triton kernels and save for backward, using only the tensors' shapes, "
            f"strides, dtypes and devices.")
