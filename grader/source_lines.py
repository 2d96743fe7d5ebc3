"""Reading one line of a learner's kernel: which tl.load/tl.store it holds, and its parts."""
from __future__ import annotations

import ast
import re


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
