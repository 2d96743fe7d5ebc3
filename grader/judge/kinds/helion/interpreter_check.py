"""A static check of a Helion kernel for code that decides by whether an interpreter runs it.

The grader runs a Helion kernel on a CPU (in Helion's interpreter, and its Triton tile by tile
in Triton's) and on GPUs. Its host code sees a GPU wherever it is graded
(:mod:`grader.sandbox.world`), so asking the device (``x.device.type == "cpu"``, ``x.is_cuda``,
``torch.cuda.is_available()``) takes the path it takes where the kernel is used, and passes. What
still tells the grader's CPU from a GPU is the process's environment (``HELION_INTERPRET``,
``TRITON_INTERPRET``) and Helion's ``ref_mode``: a kernel that decides by them could do one thing
where it is graded and another where it is used.

The kernel and the functions of the learner's file it calls (and they call) are read; a
condition (``if``, ``while``, ``... if ... else ...``, ``assert``, ``and``/``or``, an index)
that uses such a question, or a name assigned from one, is refused with its line.
"""
from __future__ import annotations

import ast
from dataclasses import dataclass
from pathlib import Path

from grader.course.syntax import parse

# Attributes that ask whether an interpreter runs this process.
INTERPRETER_QUESTIONS = {
    "environ": "the process's environment", "getenv": "the process's environment",
    "ref_mode": "whether Helion's interpreter runs",
}
SWITCHES = {"HELION_INTERPRET", "TRITON_INTERPRET"}


@dataclass(frozen=True)
class InterpreterBranch:
    function: str
    line: int
    source: str
    what: str  # what the condition asks


def _query(node: ast.AST, tainted: set[str]) -> str | None:
    """What question of the interpreter ``node`` asks, if any: an attribute, a switch's name, or
    a name assigned from such a question."""
    for sub in ast.walk(node):
        if isinstance(sub, ast.Attribute) and sub.attr in INTERPRETER_QUESTIONS:
            return f"`{ast.unparse(sub)}` ({INTERPRETER_QUESTIONS[sub.attr]})"
        if isinstance(sub, ast.Constant) and sub.value in SWITCHES:
            return f"`{sub.value}` (the interpreter's switch)"
        if isinstance(sub, ast.Name) and sub.id in tainted:
            return f"`{sub.id}` (assigned from it)"
    return None


def _conditions(node: ast.AST):
    """The expressions of ``node`` that decide which code runs."""
    if isinstance(node, (ast.If, ast.While, ast.IfExp, ast.Assert)):
        yield node.test
    elif isinstance(node, ast.BoolOp):
        yield from node.values[:-1]
    elif isinstance(node, ast.comprehension):
        yield from node.ifs
    elif isinstance(node, ast.Match):
        yield node.subject
    elif isinstance(node, ast.Subscript):
        yield node.slice


def _tainted(fn: ast.FunctionDef) -> set[str]:
    """Names assigned (directly or through other such names) from a question of the interpreter."""
    tainted: set[str] = set()
    grown = None
    while grown != tainted:
        grown = set(tainted)
        for node in ast.walk(fn):
            if isinstance(node, (ast.Assign, ast.AnnAssign, ast.NamedExpr)) and node.value is not None \
                    and _query(node.value, tainted):
                targets = node.targets if isinstance(node, ast.Assign) else [node.target]
                tainted |= {name for t in targets for name in _bound(t)}
    return tainted


def _bound(target: ast.AST) -> set[str]:
    """The names an assignment binds: ``a, (b, *c) = ...`` binds a, b and c; ``out[i] = ...`` and
    ``obj.x = ...`` bind none (they write into ``out`` and ``obj``, indexed by what they read)."""
    if isinstance(target, ast.Name):
        return {target.id}
    if isinstance(target, (ast.Tuple, ast.List)):
        return {name for element in target.elts for name in _bound(element)}
    if isinstance(target, ast.Starred):
        return _bound(target.value)
    return set()


def find(source: str, kernel: str) -> InterpreterBranch | None:
    """The first condition on the interpreter in ``kernel`` or a function of the file it calls."""
    try:
        tree = parse(source)
    except SyntaxError:
        return None  # the worker reports it, with the line
    defs = {n.name: n for n in tree.body if isinstance(n, ast.FunctionDef)}
    lines = source.splitlines()
    todo, seen = [kernel], set()
    while todo:
        name = todo.pop(0)
        if name in seen or name not in defs:
            continue
        seen.add(name)
        fn = defs[name]
        tainted = _tainted(fn)
        for node in ast.walk(fn):
            for condition in _conditions(node):
                what = _query(condition, tainted)
                if what is not None:
                    line = condition.lineno
                    return InterpreterBranch(name, line, lines[line - 1].strip() if line <= len(lines) else "", what)
        todo += sorted(n.func.id for n in ast.walk(fn) if isinstance(n, ast.Call) and isinstance(n.func, ast.Name))
    return None


def check_file(path: Path, kernel: str) -> InterpreterBranch | None:
    try:
        return find(Path(path).read_text(encoding="utf-8"), kernel)
    except (OSError, UnicodeDecodeError):
        return None


def message(found: InterpreterBranch) -> str:
    return (f"`{found.function}` at line {found.line}: `{found.source}` decides by {found.what}. The grader "
            f"runs Helion kernels on a CPU and on GPUs, and a kernel must do the same work on both: code that "
            f"branches on whether an interpreter runs it could pass where it is graded and compute something "
            f"else where it is used, so the grader does not run it. Fix: remove the condition, and compute the "
            f"same way everywhere.")
