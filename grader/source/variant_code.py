"""Where a learner's file writes one of a puzzle's free constants (``Variant.code``), read
without running it: a module constant (``GROUP = tl.constexpr(16)``) or a parameter's default
(``eps: tl.constexpr = 1e-5``). Grading names the value found there when it is not the
student's; a release per student writes the student's value there in the stub.
"""
from __future__ import annotations

import ast
from dataclasses import dataclass

from grader.course.syntax import parse


@dataclass(frozen=True)
class Written:
    """A literal the file writes for the constant: its value, and where its text lies
    (1-based line, 0-based columns, as ``ast`` gives them)."""

    value: object
    line: int
    col: int
    end_line: int
    end_col: int


def find(source: str, code: str) -> Written | None:
    """The literal ``code`` names in ``source`` (the last one, as Python keeps it); None where the
    file does not parse, lacks it, or computes it (then nothing is claimed about it)."""
    try:
        tree = parse(source)
    except SyntaxError:
        return None
    found = None
    if "." in code:
        function, parameter = code.split(".", 1)
        for node in tree.body:
            if isinstance(node, ast.FunctionDef) and node.name == function:
                found = _default(node.args, parameter)
    else:
        for node in tree.body:
            target = _assigned(node)
            if target == code:
                found = _literal(node.value)
    return found


def _assigned(node: ast.stmt) -> str | None:
    if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name):
        return node.targets[0].id
    if isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name) and node.value is not None:
        return node.target.id
    return None


def _default(args: ast.arguments, name: str) -> Written | None:
    positional = args.posonlyargs + args.args
    for arg, default in zip(positional[len(positional) - len(args.defaults):], args.defaults):
        if arg.arg == name:
            return _literal(default)
    for arg, default in zip(args.kwonlyargs, args.kw_defaults):
        if arg.arg == name and default is not None:
            return _literal(default)
    return None


def _literal(node: ast.expr) -> Written | None:
    """A number written out, or wrapped once as ``tl.constexpr(...)`` (any ``*.constexpr``)."""
    if (isinstance(node, ast.Call) and len(node.args) == 1 and not node.keywords
            and isinstance(node.func, (ast.Attribute, ast.Name))
            and (node.func.attr if isinstance(node.func, ast.Attribute) else node.func.id) == "constexpr"):
        node = node.args[0]
    try:
        value = ast.literal_eval(node)
    except (ValueError, SyntaxError, TypeError):
        return None
    if not isinstance(value, (int, float)) or isinstance(value, bool):
        return None
    return Written(value, node.lineno, node.col_offset, node.end_lineno, node.end_col_offset)


def rewrite(source: str, code: str, text: str) -> str:
    """``source`` with the literal ``code`` names replaced by ``text``; unchanged where there is none."""
    written = find(source, code)
    if written is None or written.line != written.end_line:
        return source
    lines = source.splitlines(keepends=True)
    line = lines[written.line - 1]
    # ast's columns count UTF-8 bytes
    raw = line.encode()
    lines[written.line - 1] = (raw[:written.col] + text.encode() + raw[written.end_col:]).decode()
    return "".join(lines)
