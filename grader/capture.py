"""Turning code a learner wrote somewhere else into a file the worker can import.

* ``source_of(obj)``: a kernel (or autograd Function) defined in a notebook, with what it
  refers to: other @triton.jit functions, ``tl.constexpr`` and plain constants, and the
  modules it uses.
* ``from_notebook(path)``: the definitions in a notebook's code cells, and nothing else: no
  calls, no prints, no shell magics, so that grading a notebook runs none of its side effects.
"""
from __future__ import annotations

import ast
import inspect
import json
import linecache
import textwrap
import types

from .source_lines import statement_start

HEADER = "import math\nimport torch\nimport triton\nimport triton.language as tl\n"


def _python_function(obj):
    for _ in range(8):
        if inspect.isfunction(obj) or inspect.isclass(obj):
            return obj
        obj = getattr(obj, "fn", None)
    return None


def _names(code: types.CodeType) -> set[str]:
    names = set(code.co_names)
    for const in code.co_consts:
        if isinstance(const, types.CodeType):
            names |= _names(const)
    return names


def _is_literal(value) -> bool:
    """Plain data (numbers, strings, and dicts, lists, tuples of them) that repr writes back exactly."""
    if not isinstance(value, (int, float, str, bool, dict, list, tuple)):
        return False
    try:
        return ast.literal_eval(repr(value)) == value
    except (ValueError, SyntaxError):
        return False


def source_of(obj) -> str:
    """A module's text defining ``obj`` and everything module-level it needs."""
    import triton.language as tl

    seen: dict[str, str] = {}
    imports: list[str] = []

    def visit(target) -> None:
        fn = _python_function(target)
        if fn is None:
            raise TypeError(f"{target!r} is neither a @triton.jit kernel nor a class")
        if fn.__name__ in seen:
            return
        seen[fn.__name__] = ""  # mark first: recursion
        src = textwrap.dedent(_class_source(fn) if inspect.isclass(fn) else inspect.getsource(fn))
        namespace = getattr(fn, "__globals__", None)
        functions = [fn] if inspect.isfunction(fn) else [m for m in vars(fn).values()
                                                         if isinstance(m, (staticmethod, classmethod, types.FunctionType))]
        for member in functions:
            member = getattr(member, "__func__", member)
            namespace = member.__globals__
            for name in sorted(_names(member.__code__)):
                if name not in namespace or name in seen:
                    continue
                value = namespace[name]
                if isinstance(value, types.ModuleType):
                    line = f"import {value.__name__} as {name}" if value.__name__ != name else f"import {name}"
                    if line not in imports:
                        imports.append(line)
                elif isinstance(value, tl.constexpr):
                    seen[name] = f"{name} = tl.constexpr({value.value!r})"
                elif _is_literal(value):
                    seen[name] = f"{name} = {value!r}"
                elif _python_function(value) is not None and getattr(value, "__module__", "") != "torch":
                    module = getattr(_python_function(value), "__module__", "")
                    if module.startswith(("torch", "triton", "grader")):
                        continue
                    visit(value)
        seen[fn.__name__] = src

    visit(obj)
    return HEADER + "\n".join(imports) + "\n\n\n" + "\n\n\n".join(v for v in seen.values() if v) + "\n"


def _class_source(cls) -> str:
    """A class's source. Python 3.11 cannot find it for classes made in a notebook cell, but
    its methods know their cell: read the cell and cut the class out of it."""
    try:
        return inspect.getsource(cls)
    except (OSError, TypeError):
        pass
    for member in vars(cls).values():
        code = getattr(getattr(member, "__func__", member), "__code__", None)
        if code is None:
            continue
        lines = linecache.getlines(code.co_filename)
        for node in ast.walk(ast.parse("".join(lines))):
            if isinstance(node, ast.ClassDef) and node.name == cls.__name__:
                start = statement_start(node)
                return "".join(lines[start:node.end_lineno])
    raise OSError(f"cannot find the source of class {cls.__name__}: define it in a cell or a file")


ALLOWED_DECORATORS = {"triton.jit", "jit", "staticmethod", "classmethod"}


def _inert(node: ast.expr | None) -> bool:
    """An expression evaluated at definition time that can run no code of the submission's:
    a constant, a (dotted) name, a subscript or tuple of those (``Float32[Tensor, "N"]``),
    or ``tl.constexpr(<constant>)``."""
    if node is None or isinstance(node, (ast.Constant, ast.Name)):
        return True
    if isinstance(node, ast.Attribute):
        return _inert(node.value)
    if isinstance(node, (ast.Tuple, ast.List)):
        return all(_inert(e) for e in node.elts)
    if isinstance(node, ast.Subscript):
        return _inert(node.value) and _inert(node.slice)
    if isinstance(node, ast.UnaryOp):
        return _inert(node.operand)
    if isinstance(node, ast.Dict):
        return all(_inert(k) and _inert(v) for k, v in zip(node.keys, node.values))
    if isinstance(node, ast.Call):
        return ast.unparse(node.func).endswith("constexpr") and all(isinstance(a, ast.Constant) for a in node.args) \
            and not node.keywords
    return False


def _inert_def(node: ast.FunctionDef) -> bool:
    args = node.args
    every = args.posonlyargs + args.args + args.kwonlyargs + [a for a in (args.vararg, args.kwarg) if a]
    return (all(ast.unparse(d) in ALLOWED_DECORATORS for d in node.decorator_list)
            and all(_inert(a.annotation) for a in every) and _inert(node.returns)
            and all(_inert(d) for d in args.defaults + [d for d in args.kw_defaults if d is not None]))


def _keep(node: ast.stmt) -> bool:
    """Definitions whose evaluation runs none of the submission's code: imports, functions
    and classes (Triton's and Python's own decorators only), and constants bound to names."""
    if isinstance(node, (ast.Import, ast.ImportFrom)):
        return True
    if isinstance(node, ast.FunctionDef):
        return _inert_def(node)
    if isinstance(node, ast.ClassDef):
        return (not node.decorator_list and not node.keywords and all(_inert(b) for b in node.bases)
                and all(_keep(s) or isinstance(s, ast.Pass) or (isinstance(s, ast.Expr) and
                                                                isinstance(s.value, ast.Constant))
                        for s in node.body))
    if isinstance(node, ast.Assign):
        return all(isinstance(t, ast.Name) for t in node.targets) and _inert(node.value)
    if isinstance(node, ast.AnnAssign):
        return isinstance(node.target, ast.Name) and node.value is not None and _inert(node.value) \
            and _inert(node.annotation)
    return False


def definitions_only(source: str) -> str:
    """A Python file reduced to what :func:`_keep` allows, line for line (a syntax error propagates)."""
    tree = ast.parse(source)
    lines = source.splitlines()
    out = [""] * len(lines)  # dropped statements leave blank lines: line numbers stay the learner's
    for node in tree.body:
        if _keep(node):
            start = statement_start(node)
            out[start:node.end_lineno] = lines[start:node.end_lineno]
    return "\n".join(out) + "\n"


def _strip_magics(source: str) -> str:
    """Shell escapes and magics are never run: drop them (and cell magics drop the whole cell)."""
    lines = source.splitlines()
    if lines and lines[0].lstrip().startswith("%%"):
        return ""
    return "\n".join(line for line in lines if not line.lstrip().startswith(("%", "!")))


def from_notebook(text: str) -> tuple[str, list[str]]:
    """The definitions of a notebook's code cells as one module, and what was left out."""
    try:
        nb = json.loads(text)
        cells = [c for c in nb.get("cells", []) if c.get("cell_type") == "code"]
    except (ValueError, AttributeError) as exc:
        raise ValueError(f"not a notebook: {exc}") from exc
    kept, skipped = [HEADER], []
    for cell in cells:
        source = cell.get("source", "")
        source = "".join(source) if isinstance(source, list) else source
        try:
            tree = ast.parse(_strip_magics(source))
        except SyntaxError as exc:
            skipped.append(f"a cell that does not parse (line {exc.lineno}: {exc.msg})")
            continue
        lines = _strip_magics(source).splitlines()
        for node in tree.body:
            start = statement_start(node)
            snippet = "\n".join(lines[start:node.end_lineno])
            if _keep(node):
                kept.append(snippet)
            else:
                skipped.append(snippet.splitlines()[0][:60])
    return "\n\n".join(kept) + "\n", skipped
