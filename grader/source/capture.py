"""Turning code a learner wrote somewhere else into a file the worker can import.

* ``source_of(obj)``: a kernel (or autograd Function) defined in a notebook, with what it
  refers to: other @triton.jit functions, ``tl.constexpr`` and plain constants, and the
  modules it uses.
* ``from_notebook(path)``: the definitions in a notebook's code cells, and nothing else: no
  calls, no prints, no shell magics, so that grading a notebook runs none of its side effects.

Both write a module whose line numbers are not the learner's. Each also comes with a
:class:`LineMap` (``captured(obj)``, ``notebook_module(text)``) that turns the module's
"line N" in a result's messages back into the line the learner sees: "line 5 of the cell
defining `add_kernel`", "line 5 of code cell 9".
"""
from __future__ import annotations

import ast
import inspect
import json
import linecache
import re
import textwrap
import types
from dataclasses import dataclass, field, replace

from grader.course.syntax import parse
from grader.source.definitions import definitions
from grader.source.literals import source_of_data
from grader.source.source_lines import statement_start
from grader.source.wrapped import python_function

HEADER = "import math\nimport torch\nimport triton\nimport triton.language as tl\n"


def _decorator_names(src: str) -> set[str]:
    """The names a definition's decorators use (``helion`` of ``@helion.kernel(...)``, ``configs`` of
    ``@triton.autotune(configs=configs, ...)``): they are not in its code's names, and a module or a
    constant among them must be written too."""
    try:
        tree = parse(src)
    except SyntaxError:
        return set()
    return {inner.id for node in tree.body[:1] for decorator in getattr(node, "decorator_list", ())
            for inner in ast.walk(decorator) if isinstance(inner, ast.Name)}


def _names(code: types.CodeType) -> set[str]:
    names = set(code.co_names)
    for const in code.co_consts:
        if isinstance(const, types.CodeType):
            names |= _names(const)
    return names


# "line N", Python's `File "x.py", line N`, or a warning's "line N of x.py" (with a file named,
# only where x.py is the graded module)
_LINE = re.compile(r'(?:File "(?P<file>[^"]*)", )?\bline (?P<line>\d+)\b(?: of (?P<of>[\w.-]+\.py)\b)?')


@dataclass(frozen=True)
class LineMap:
    """Where each line of a written module came from: module line -> (place, line there).

    Places name what the learner sees ("the cell defining `add_kernel`", "code cell 9",
    "my_kernels.py"). ``module`` is the written module's file name: a traceback's line is
    mapped only in that file, and ``shown`` (the notebook's name, say) replaces it in messages.
    """

    lines: dict[int, tuple[str, int]] = field(default_factory=dict)
    module: str = ""
    shown: str = ""

    def where(self, line: int) -> str | None:
        """"line 5 of the cell defining `add_kernel`" for a module line, None if it has no origin."""
        found = self.lines.get(line)
        return None if found is None else f"line {found[1]} of {found[0]}"

    def relabel(self, text: str) -> str:
        """``text`` with every "line N" of the module said as the learner's line.
        Code quoted in backticks is left alone."""
        if not text or not self.lines:
            return text
        pieces = re.split(r"(`[^`\n]*`)", text)
        for i in range(0, len(pieces), 2):  # the odd pieces are quoted code
            pieces[i] = _LINE.sub(self._one, pieces[i])
            if self.module and self.shown:
                pieces[i] = pieces[i].replace(self.module, self.shown)
        return "".join(pieces)

    def _one(self, found: re.Match) -> str:
        file, of = found.group("file"), found.group("of")
        if file is not None and not (self.module and ("/" + file.replace("\\", "/")).endswith("/" + self.module)):
            return found.group(0)  # a line of some other file (Triton's, the grader's)
        if of is not None and of != self.module:
            return found.group(0)
        where = self.where(int(found.group("line")))
        if where is None:
            return found.group(0)
        return (f'File "{file}", ' if file is not None else "") + where

    def apply(self, result):
        """A :class:`~grader.judge.results.PuzzleResult` with its messages relabelled."""
        if not self.lines:
            return result
        cases = tuple(replace(c, message=self.relabel(c.message), printed=self.relabel(c.printed))
                      for c in result.cases)
        checks = {name: replace(c, message=self.relabel(c.message)) for name, c in result.checks.items()}
        return replace(result, cases=cases, checks=checks, message=self.relabel(result.message))


def relabel_report(report, maps: dict):
    """``report`` with each result's messages relabelled by the map of the file it graded
    (``maps``: the graded file's path, as a string -> :class:`LineMap`)."""
    from pathlib import Path
    if not maps:
        return report
    maps = {str(Path(path).resolve()): lines for path, lines in maps.items()}  # as the grader says it
    return replace(report, results=tuple(maps[r.source].apply(r) if r.source in maps else r
                                         for r in report.results))


def _is_cell(filename: str) -> bool:
    """A notebook cell's code (ipykernel's /tmp/ipykernel_123/456.py, IPython's <ipython-input-…>)."""
    return bool(re.search(r"ipykernel_\d+[/\\][^/\\]+\.py$|^<ipython-input-", filename or ""))


@dataclass(frozen=True)
class Captured:
    """A written module and where its lines came from."""

    text: str
    lines: LineMap


def source_of(obj) -> str:
    """A module's text defining ``obj`` and everything module-level it needs."""
    return captured(obj).text


def captured(obj) -> Captured:
    """:func:`source_of`, with the :class:`LineMap` back to the cells (or files) the code is in."""
    import triton.language as tl

    seen: dict[str, str] = {}
    origins: dict[str, tuple[str, int]] = {}  # name -> (its cell or file, the line its source starts on)
    cells: dict[str, str] = {}  # a cell's file name -> its label, after the first thing found in it
    imports: list[str] = []
    defined: set[str] = set()  # the functions and classes written, after every constant

    def visit(target) -> None:
        fn = python_function(target, classes=True)
        if fn is None:
            raise TypeError(f"{target!r} is neither a @triton.jit kernel nor a class")
        if fn.__name__ in seen:
            return
        prune = _early_config_prune(target)
        if prune is not None:  # written above the kernel: its decorator names it
            visit(prune)
        seen[fn.__name__] = ""  # mark first: recursion
        defined.add(fn.__name__)
        src, filename, first = _class_source(fn) if inspect.isclass(fn) else _function_source(fn)
        src = textwrap.dedent(src)  # keeps the lines, so the map holds
        if filename is not None:
            if _is_cell(filename):
                place = cells.setdefault(filename, f"the cell defining `{fn.__name__}`")
            else:
                place = filename.replace("\\", "/").rsplit("/", 1)[-1]
            origins[fn.__name__] = (place, first)
        namespace = getattr(fn, "__globals__", None)
        functions = [fn] if inspect.isfunction(fn) else [
            m for m in vars(fn).values() if isinstance(m, (staticmethod, classmethod, types.FunctionType))]
        for member in functions:
            member = getattr(member, "__func__", member)
            namespace = member.__globals__
            for name in sorted(_names(member.__code__) | _decorator_names(src)):
                if name not in namespace or name in seen:
                    continue
                value = namespace[name]
                if isinstance(value, types.ModuleType):
                    line = f"import {value.__name__} as {name}" if value.__name__ != name else f"import {name}"
                    if line not in imports and line + "\n" not in HEADER:
                        imports.append(line)
                elif isinstance(value, tl.constexpr) and inspect.isfunction(value.value):
                    visit(value.value)  # a helper decorated @tl.constexpr: its source, decorator included
                elif isinstance(value, tl.constexpr):
                    seen[name] = f"{name} = tl.constexpr({value.value!r})"
                elif (data := source_of_data(value)) is not None:  # a config list, a table of dtypes
                    seen[name] = f"{name} = {data}"
                elif python_function(value, classes=True) is not None and getattr(value, "__module__", "") != "torch":
                    module = getattr(python_function(value, classes=True), "__module__", "")
                    if module.startswith(("torch", "triton")) and getattr(value, "__name__", None):
                        # a library function imported by name (`from triton.language.core import ...`)
                        alias = "" if value.__name__ == name else f" as {name}"
                        line = f"from {module} import {value.__name__}{alias}"
                        if line not in imports:
                            imports.append(line)
                    if module.startswith(("torch", "triton", "grader")):
                        continue
                    visit(value)
        seen[fn.__name__] = src

    visit(obj)
    text = HEADER + "\n".join(imports) + "\n\n\n"
    lines = {}
    # constants first: a decorator's (`configs=configs`) is read when the definition runs
    written = sorted(((n, v) for n, v in seen.items() if v), key=lambda item: item[0] in defined)
    for number, (name, src) in enumerate(written):
        if number:
            text += "\n\n\n"
        start = text.count("\n") + 1  # the module line this source starts on
        if name in origins:
            place, first = origins[name]
            lines.update({start + i: (place, first + i) for i in range(len(src.splitlines()))})
        text += src
    return Captured(text + "\n", LineMap(lines))


def _early_config_prune(target):
    """The function an autotuner around ``target`` prunes its configs with, if any."""
    for _ in range(8):
        prune = getattr(target, "early_config_prune", None)
        if inspect.isfunction(prune):
            return prune
        target = getattr(target, "fn", None)
    return None


def _function_source(fn) -> tuple[str, str | None, int]:
    """A function's source, the file it is in and the line it starts on (its decorators')."""
    lines, first = inspect.getsourcelines(fn)
    return "".join(lines), getattr(fn.__code__, "co_filename", None), first


def _class_source(cls) -> tuple[str, str | None, int]:
    """A class's source, file and first line. Python 3.11 cannot find the source of classes
    made in a notebook cell, but their methods know their cell: read the cell and cut the
    class out of it."""
    try:
        lines, first = inspect.getsourcelines(cls)
        return "".join(lines), inspect.getsourcefile(cls), first
    except (OSError, TypeError):
        pass
    for member in vars(cls).values():
        code = getattr(getattr(member, "__func__", member), "__code__", None)
        if code is None:
            continue
        lines = linecache.getlines(code.co_filename)
        for node in ast.walk(parse("".join(lines))):
            if isinstance(node, ast.ClassDef) and node.name == cls.__name__:
                start = statement_start(node)
                return "".join(lines[start:node.end_lineno]), code.co_filename, start + 1
    raise OSError(f"cannot find the source of class {cls.__name__}: define it in a cell or a file")


def definitions_only(source: str) -> str:
    """A Python file reduced to its definitions, line for line (see :mod:`grader.source.definitions`)."""
    return definitions(source).text


def _strip_magics(source: str) -> str:
    """Shell escapes and magics are never run: blank them (and cell magics drop the whole cell).
    A blanked line stays a line, so that the cell's line numbers hold."""
    lines = source.splitlines()
    if lines and lines[0].lstrip().startswith("%%"):
        return ""
    return "\n".join("" if line.lstrip().startswith(("%", "!")) else line for line in lines)


def from_notebook(text: str) -> tuple[str, list[str]]:
    """The definitions of a notebook's code cells as one module, and what was left out."""
    module = notebook_module(text)
    return module.text, module.skipped


@dataclass(frozen=True)
class NotebookModule:
    """A notebook's definitions as one module, what was left out, and the module's lines'
    places in the notebook ("code cell 9": the ninth code cell, counted from the top)."""

    text: str
    skipped: list[str]
    lines: LineMap


def notebook_module(text: str, module: str = "", shown: str = "") -> NotebookModule:
    """:func:`from_notebook` with its :class:`LineMap` (``module``: the file name the text will
    be written to; ``shown``: the notebook's, said instead of it in messages)."""
    try:
        nb = json.loads(text)
        cells = [c for c in nb.get("cells", []) if c.get("cell_type") == "code"]
    except (ValueError, AttributeError) as exc:
        raise ValueError(f"not a notebook: {exc}") from exc
    # cells joined into one module, so a later cell's decorator resolves through an earlier
    # cell's imports, exactly as when the notebook runs
    module, skipped, lines = HEADER, [], {}
    for number, cell in enumerate(cells, start=1):
        source = cell.get("source", "")
        source = _strip_magics("".join(source) if isinstance(source, list) else source)
        try:
            parse(source)
        except SyntaxError as exc:
            skipped.append(f"a cell that does not parse (line {exc.lineno}: {exc.msg})")
            continue
        module += "\n"
        start = module.count("\n") + 1  # the module line the cell's first line lands on
        lines.update({start + i: (f"code cell {number}", i + 1) for i in range(len(source.splitlines()))})
        module += source if source.endswith("\n") else source + "\n"
    result = definitions(module)
    skipped += [d.text for d in result.dropped if not d.reason.startswith("annotation")]
    return NotebookModule(result.text, skipped, LineMap(lines, module, shown))
