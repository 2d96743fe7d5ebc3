"""What host Python may not do, wherever it is written: the learner's wrapper, Helion host code, and
the modules of the learner's own they import.

* Switch PyTorch's dispatch off, or make a tensor subclass that runs code of its own: the grader
  sees the PyTorch that host code runs through dispatch, so such code computes where nothing sees it.
* Ask a value's Python class in a Helion kernel's host code: on the CPU its tensors are the grader's
  GPU tensors (:mod:`grader.sandbox.world`), of a class of their own, and on a GPU plain ones.

Read from the source as text; nothing is run. :mod:`grader.source.sniffing` words what is found.
"""
from __future__ import annotations

import ast
from dataclasses import dataclass
from pathlib import Path

from grader.course import kinds
from grader.course.syntax import parse


@dataclass(frozen=True)
class Escape:
    function: str  # `f`, or `f` of `helpers.py`
    line: int
    source: str
    what: str


# What asks for a value's Python class, in Helion host code: on the CPU its tensors are the grader's
# GPU tensors (grader.sandbox.world), of a class of their own, and on a GPU plain ones.
CLASS_QUESTIONS = {
    "__class__": "asks for a value's Python class", "__mro__": "reads a class's ancestry",
    "__bases__": "reads a class's ancestry", "__subclasses__": "reads a class's descendants",
}


# What switches PyTorch's dispatch off or makes a tensor subclass that runs code of its own for every
# operation. The grader sees the PyTorch that wrappers and Helion host code run through dispatch, so
# each of these computes where nothing sees it; none has a use in a puzzle. Matched as a name, an
# attribute, an imported name (under any alias), a definition's name, or inside a string (getattr).
INTERNALS = {
    "_disable_current_modes": "switches off PyTorch's dispatch modes",
    "_DisableTorchDispatch": "switches off PyTorch's dispatch",
    "DisableTorchFunction": "switches off PyTorch's function overrides",
    "DisableTorchFunctionSubclass": "switches off PyTorch's function overrides",
    "_get_current_dispatch_mode": "asks whether a dispatch mode is watching",
    "_push_mode": "changes PyTorch's dispatch modes", "_pop_mode": "changes PyTorch's dispatch modes",
    "TorchDispatchMode": "intercepts PyTorch's dispatch", "TorchFunctionMode": "intercepts PyTorch's functions",
    "__torch_dispatch__": "makes a tensor subclass that runs its own code for every operation",
    "__torch_function__": "makes a tensor subclass that runs its own code for every function",
    "_make_subclass": "makes a tensor subclass", "_make_wrapper_subclass": "makes a tensor subclass",
    "_python_dispatch": "reaches PyTorch's dispatch machinery", "_C": "reaches PyTorch's C++ internals",
}
# Long enough to be looked for inside a string ("torch.utils._python_dispatch"); `_C` only whole.
_IN_TEXT = tuple(sorted((w for w in INTERNALS if len(w) > 2), key=len, reverse=True))


def params_of(fn: ast.FunctionDef) -> set[str]:
    return {a.arg for a in fn.args.posonlyargs + fn.args.args + fn.args.kwonlyargs}



def _internal(node: ast.AST) -> tuple[str, str] | None:
    """(the internal named, how) where ``node`` names one of INTERNALS, else None."""
    names: list[str] = []
    if isinstance(node, ast.Name):
        names = [node.id] if node.id != "_C" else []  # a learner's own `_C = 4`; `torch._C` is an attribute
    elif isinstance(node, ast.Attribute):
        names = [node.attr]
    elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
        names = [node.name] if node.name != "_C" else []
    elif isinstance(node, ast.alias):
        names = [node.asname if node.asname != "_C" else "", *_reached(node.name)]  # a name of the learner's
    elif isinstance(node, ast.ImportFrom):
        names = _reached(node.module or "")
    elif isinstance(node, ast.Constant) and isinstance(node.value, str):
        if node.value in INTERNALS:
            return node.value, f"`{node.value!r}` names `{node.value}`, which"
        word = next((w for w in _IN_TEXT if w in node.value), None)
        return None if word is None else (word, f"`{node.value!r}` names `{word}`, which")
    word = next((n for n in names if n in INTERNALS), None)
    return None if word is None else (word, f"`{word}`")


def _reached(dotted: str) -> list[str]:
    """The parts of an imported module path, the most particular first; ``_C`` only under
    ``torch`` (``import helpers as _C`` or a package's own ``_C`` extension reaches no dispatch)."""
    parts = dotted.split(".")
    return [p for p in reversed(parts) if p != "_C" or parts[0] == "torch"]


def _helper_modules(path: Path, tree: ast.Module) -> list[Path]:
    """The learner's own modules beside ``path`` that it imports (``import helpers``,
    ``from helpers import f``): their code runs as the wrapper's or the host code's does."""
    names = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names |= {a.name.split(".")[0] for a in node.names}
        elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
            names.add(node.module.split(".")[0])
    return [path.parent / f"{n}.py" for n in sorted(names) if (path.parent / f"{n}.py").is_file()
            and (path.parent / f"{n}.py").resolve() != path.resolve()]


def internals(path: Path, source: str, tree: ast.Module) -> Escape | None:
    """The first use of PyTorch's dispatch switches or tensor-subclass machinery (INTERNALS) in the
    file or in a module of the learner's own it imports, with its line and enclosing function."""
    files = [(path, source, tree)]
    for helper in _helper_modules(path, tree):
        try:
            text = helper.read_text(encoding="utf-8")
            files.append((helper, text, parse(text)))
        except (OSError, UnicodeDecodeError, SyntaxError):
            continue  # the import reports it when it runs
    for where, text, module in files:
        lines = text.splitlines()
        owner = {}
        for fn in ast.walk(module):
            if isinstance(fn, (ast.FunctionDef, ast.AsyncFunctionDef)):
                owner.update({id(n): fn.name for n in ast.walk(fn) if n is not fn})
        prose = {id(n.value) for n in ast.walk(module) if isinstance(n, ast.Expr)}  # docstrings say, not do
        nodes = [n for n in ast.walk(module) if hasattr(n, "lineno") and id(n) not in prose]
        for node in sorted(nodes, key=lambda n: (n.lineno, n.col_offset)):
            named = _internal(node)
            if isinstance(node, ast.ImportFrom):  # what it imports (by its whole path), then from where
                module = "." * node.level + (node.module or "")
                named = next(filter(None, (_internal(ast.alias(f"{module}.{a.name}", a.asname))
                                           for a in node.names)), None) or named
            elif isinstance(node, ast.Import):
                named = next(filter(None, map(_internal, node.names)), None) or named
            if named is None:
                continue
            word, shown = named
            function = owner.get(id(node), where.name)
            if where != path and function != where.name:
                function = f"{function}` of `{where.name}"
            source_line = lines[node.lineno - 1].strip() if node.lineno <= len(lines) else ""
            return Escape(function, node.lineno, source_line, f"{shown} {INTERNALS[word]}")
    return None


def _kinds_own(decorator: ast.expr) -> bool:
    """Whether a decorator is a kind's own (grader.course.kinds: ``@helion.kernel(...)``), whose
    kernel's host code runs as PyTorch on the tensors the grader hands it."""
    text = ast.unparse(decorator)
    return any(own.name.split(".")[0] in text for own in kinds.decorators())


def class_question(path: Path, tree: ast.Module, lines: list[str]) -> Escape | None:
    """The first question of a value's Python class in a Helion kernel's host code, or in a
    function it calls, of its file or of a module of the learner's own it imports: ``type(x) is
    torch.Tensor`` is false of the tensors the grader's CPU hands it and true on a GPU, so it could
    take one path where it is graded and another where it is used (``isinstance`` is true on both)."""
    modules = {path: (tree, lines)}
    for helper in _helper_modules(path, tree):
        try:
            text = helper.read_text(encoding="utf-8")
            modules[helper] = (parse(text), text.splitlines())
        except (OSError, UnicodeDecodeError, SyntaxError):
            continue  # the import reports it when it runs
    by_stem = {p.stem: p for p in modules}
    defs = {(p, n.name): n for p, (t, _) in modules.items() for n in t.body if isinstance(n, ast.FunctionDef)}
    todo = [key for key, fn in defs.items() if key[0] == path
            and any(map(_kinds_own, fn.decorator_list))]
    seen: set = set()
    while todo:
        key = todo.pop(0)
        if key in seen or key not in defs:
            continue
        seen.add(key)
        where, fn = key[0], defs[key]
        for node in ast.walk(fn):
            what = None
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "type" \
                    and len(node.args) == 1 and "type" not in params_of(fn):
                what = f"`{ast.unparse(node)}` asks for a value's Python class"
            elif isinstance(node, ast.Attribute) and node.attr in CLASS_QUESTIONS:
                what = f"`{ast.unparse(node)}` {CLASS_QUESTIONS[node.attr]}"
            if what is not None:
                text = modules[where][1][node.lineno - 1].strip() if node.lineno <= len(modules[where][1]) else ""
                name = fn.name if where == path else f"{fn.name}` of `{where.name}"
                return Escape(name, node.lineno, text, what)
        todo.extend(sorted(_callees(where, fn, modules[where][0], by_stem)))
    return None


def _callees(where: Path, fn: ast.FunctionDef, module: ast.Module, by_stem: dict[str, Path]) -> set:
    """(file, function) of what ``fn`` calls by name: its own module's functions, and those of the
    learner's modules it imports (``from helpers import f``, ``helpers.f(x)``)."""
    imported, aliases = {}, {}
    for node in ast.walk(module):
        if isinstance(node, ast.ImportFrom) and not node.level and node.module in by_stem:
            imported.update({a.asname or a.name: (by_stem[node.module], a.name) for a in node.names})
        elif isinstance(node, ast.Import):
            aliases.update({a.asname or a.name: by_stem[a.name] for a in node.names if a.name in by_stem})
    found = set()
    for call in (n for n in ast.walk(fn) if isinstance(n, ast.Call)):
        if isinstance(call.func, ast.Name):
            found.add(imported.get(call.func.id, (where, call.func.id)))
        elif isinstance(call.func, ast.Attribute) and isinstance(call.func.value, ast.Name) \
                and call.func.value.id in aliases:
            found.add((aliases[call.func.value.id], call.func.attr))
    return found
