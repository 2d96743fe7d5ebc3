"""Literal Python, as the definitions rules read it: values whose evaluation runs nothing."""
from __future__ import annotations

import ast

ARITHMETIC = (ast.Add, ast.Sub, ast.Mult, ast.Div, ast.FloorDiv, ast.Mod, ast.Pow,
              ast.LShift, ast.RShift, ast.BitOr, ast.BitAnd, ast.BitXor)
HUGE_EXPONENT = 1024  # 2 ** 10 ** 10 would hang the import: exponents and shifts stay small


def is_literal(node: ast.expr | None, constants: frozenset = frozenset()) -> bool:
    """Plain data written out: constants, containers of them, unary minus and arithmetic,
    and names of constants kept earlier in the file."""
    if isinstance(node, ast.Constant):
        return True
    if isinstance(node, ast.Name):
        return node.id in constants
    if isinstance(node, (ast.Tuple, ast.List, ast.Set)):
        return all(is_literal(e, constants) for e in node.elts)
    if isinstance(node, ast.Dict):
        return all(k is not None and is_literal(k, constants) for k in node.keys) \
            and all(is_literal(v, constants) for v in node.values)
    if isinstance(node, ast.UnaryOp):
        return is_literal(node.operand, constants)
    if isinstance(node, ast.BinOp) and isinstance(node.op, ARITHMETIC):
        if isinstance(node.op, (ast.Pow, ast.LShift)) and not _small_int(node.right):
            return False
        return is_literal(node.left, constants) and is_literal(node.right, constants)
    return False


def _small_int(node: ast.expr) -> bool:
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
        node = node.operand
    return isinstance(node, ast.Constant) and type(node.value) is int and node.value <= HUGE_EXPONENT


def keywords_problem(call: ast.Call, what: str) -> str | None:
    for keyword in call.keywords:
        if keyword.arg is None:
            return f"`**` arguments to {what} are not allowed: write each option out"
        if not is_literal(keyword.value):
            return f"option `{keyword.arg}` of {what} is not a literal"
    return None


def is_none(node: ast.expr) -> bool:
    return isinstance(node, ast.Constant) and node.value is None


def import_try(node: ast.stmt) -> bool:
    """``try: from a import f`` / ``except ImportError: from b import f``, as Liger imports
    libdevice: only imports run, whichever branch is taken."""
    caught = {"ImportError", "ModuleNotFoundError"}
    return (isinstance(node, ast.Try) and not node.orelse and not node.finalbody and node.handlers
            and all(isinstance(s, (ast.Import, ast.ImportFrom)) for s in node.body)
            and all(h.name is None and isinstance(h.type, ast.Name) and h.type.id in caught
                    and all(isinstance(s, (ast.Import, ast.ImportFrom)) for s in h.body) for h in node.handlers))
