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

from .definitions import definitions
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


def definitions_only(source: str) -> str:
    """A Python file reduced to its definitions, line for line (see :mod:`grader.definitions`)."""
    return definitions(source).text


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
    # cells joined into one module, so a later cell's decorator resolves through an earlier
    # cell's imports, exactly as when the notebook runs
    parts, skipped = [HEADER], []
    for cell in cells:
        source = cell.get("source", "")
        source = _strip_magics("".join(source) if isinstance(source, list) else source)
        try:
            ast.parse(source)
        except SyntaxError as exc:
            skipped.append(f"a cell that does not parse (line {exc.lineno}: {exc.msg})")
            continue
        parts.append(source if source.endswith("\n") else source + "\n")
    result = definitions("\n".join(parts))
    skipped += [d.text for d in result.dropped if not d.reason.startswith("annotation")]
    return result.text, skipped
