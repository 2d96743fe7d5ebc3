"""Reading one line of a learner's kernel: which tl.load/tl.store it holds, and its parts."""
from __future__ import annotations

import ast
import re


def statement_start(node: ast.stmt) -> int:
    """The 0-based index of a top-level statement's first line, its decorators included."""
    decorators = getattr(node, "decorator_list", None)
    return (decorators[0].lineno if decorators else node.lineno) - 1


def defined_names(source: str) -> set[str]:
    """Top-level functions and classes of a module's text, read without running it."""
    try:
        tree = ast.parse(source)
    except SyntaxError:
        return set()  # the worker reports the error with its line when it imports the file
    return {n.name for n in tree.body if isinstance(n, (ast.FunctionDef, ast.ClassDef))}


def access_call(source: str, op: str) -> ast.Call | None:
    """The tl.load / tl.store / tl.atomic_* call on a line, if the line parses on its own."""
    try:
        tree = ast.parse(source.strip())
    except SyntaxError:
        return None
    wanted = {"load": ("load",), "store": ("store",)}.get(op, ("atomic_",))
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.args \
                and node.func.attr.startswith(wanted):
            return node
    return None


def pointer_names(source: str, op: str) -> set[str]:
    """Names in the pointer argument of the line's access (every name on the line if unparsable)."""
    call = access_call(source, op)
    if call is None:
        return set(re.findall(r"[A-Za-z_]\w*", source))
    return {n.id for n in ast.walk(call.args[0]) if isinstance(n, ast.Name)}
