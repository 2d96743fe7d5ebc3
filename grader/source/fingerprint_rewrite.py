"""Rewrites that see through a disguised copy, applied to the learner's part before it is
fingerprinted (:mod:`grader.source.fingerprint`). Each keeps what the code computes and takes
away one way of writing it differently:

* **helpers inlined**: a call to a top-level function of the same file whose body ends in its
  only ``return`` becomes that body, its parameters replaced by the arguments (a copy that moves
  three lines into an ``@triton.jit`` helper reads as the original);
* **loops over chunk numbers read as loops over offsets**: ``for c in range(tl.cdiv(T, B))``
  whose body uses ``c`` only as ``c * B`` is ``for c in range(0, T, B)`` using ``c``;
* **dead code removed**: an assignment nobody reads (without effects), a bare expression,
  ``if False:``/``if 0:``; repeated until nothing more goes;
* **tuples split**: ``a, b = x, y`` is two assignments where neither reads the other's target
  (what an inlined helper returning two values leaves).

The statement order is the fingerprint's own canonical order, applied after these. Operand
order (``a + b``, ``b > a``) is left as written: normalising it too made three honest students
of the synthetic class's puzzle 7 read alike (docs/similarity.md). Nothing here runs the code.
"""
from __future__ import annotations

import ast
import copy
import itertools

MAX_INLINE_ROUNDS = 8  # helpers calling helpers, at most this deep; recursion stops here
_SIMPLE = (ast.Assign, ast.AugAssign, ast.AnnAssign, ast.Expr, ast.Return)


def _stores(nodes) -> set[str]:
    return {n.id for node in nodes for n in ast.walk(node) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store)}


def _loads(nodes) -> set[str]:
    return {n.id for node in nodes for n in ast.walk(node) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load)}


def _blocks(node: ast.AST):
    for field in ("body", "orelse", "finalbody"):
        block = getattr(node, field, None)
        if isinstance(block, list) and (not block or isinstance(block[0], ast.stmt)):
            yield field, block


def _map_blocks(node: ast.AST, rewrite) -> None:
    """``rewrite(block) -> block`` on every statement list under ``node``, innermost first."""
    for field, block in list(_blocks(node)):
        for stmt in block:
            _map_blocks(stmt, rewrite)
        setattr(node, field, rewrite(block) or ([ast.Pass()] if field == "body" else []))


# ---- helpers inlined ---------------------------------------------------------------------------

class _Substitute(ast.NodeTransformer):
    def __init__(self, names: dict[str, ast.expr]) -> None:
        self.names = names

    def visit_Name(self, node: ast.Name):
        if node.id in self.names:
            replacement = self.names[node.id]
            if isinstance(node.ctx, ast.Load) or isinstance(replacement, ast.Name):
                new = copy.deepcopy(replacement)
                if isinstance(new, ast.Name):
                    new.ctx = node.ctx
                return ast.copy_location(new, node)
        return node


def inlinable(func: ast.FunctionDef) -> bool:
    """A body whose last statement is its only return, with plain positional parameters."""
    body = [s for s in func.body if not (isinstance(s, ast.Expr) and isinstance(s.value, ast.Constant))]
    returns = [n for n in ast.walk(func) if isinstance(n, ast.Return)]
    nested = any(isinstance(n, (ast.FunctionDef, ast.Lambda, ast.ClassDef, ast.Yield, ast.YieldFrom,
                                ast.Global, ast.Nonlocal)) for s in body for n in ast.walk(s))
    args = func.args
    return bool(body) and isinstance(body[-1], ast.Return) and returns == [body[-1]] and not nested and \
        not (args.vararg or args.kwarg or args.posonlyargs or args.kwonlyargs)


def _expanded(func: ast.FunctionDef, call: ast.Call, fresh: str) -> tuple[list[ast.stmt], ast.expr] | None:
    """The helper's statements and the value of its return, for ``call``: its locals renamed
    apart, each parameter replaced by its argument (or assigned it, where the body rebinds it)."""
    params = [a.arg for a in func.args.args]
    values: dict[str, ast.expr] = dict(zip(params, call.args))
    if len(call.args) > len(params) or any(isinstance(a, ast.Starred) for a in call.args):
        return None
    for keyword in call.keywords:
        if keyword.arg is None or keyword.arg not in params or keyword.arg in values:
            return None
        values[keyword.arg] = keyword.value
    defaults = dict(zip(params[len(params) - len(func.args.defaults):], func.args.defaults))
    for name in params:
        if name not in values:
            if name not in defaults:
                return None
            values[name] = defaults[name]
    body = [copy.deepcopy(s) for s in func.body if not (isinstance(s, ast.Expr) and isinstance(s.value, ast.Constant))]
    rebound = _stores(body)
    renames: dict[str, ast.expr] = {name: ast.Name(f"{fresh}{name}", ast.Load()) for name in rebound}
    prelude: list[ast.stmt] = []
    for name in params:
        if name in rebound:
            prelude.append(ast.Assign([ast.Name(f"{fresh}{name}", ast.Store())], values[name], lineno=call.lineno))
        else:
            renames[name] = values[name]
    body = [_Substitute(renames).visit(s) for s in body]
    result = body[-1].value if body[-1].value is not None else ast.Constant(None)
    # `r = expr; return r`, r read nowhere else: the call's value is expr (no copy left behind)
    if len(body) >= 2 and isinstance(result, ast.Name) and isinstance(body[-2], ast.Assign) and \
            [ast.dump(t) for t in body[-2].targets] == [ast.dump(ast.Name(result.id, ast.Store()))] and \
            sum(isinstance(n, ast.Name) and n.id == result.id for s in body for n in ast.walk(s)) == 2:
        result = body[-2].value
        body = body[:-2] + body[-1:]
    for stmt in prelude + body:
        for node in ast.walk(stmt):  # the lines of the call: what a shared fragment shows is the caller's
            if hasattr(node, "lineno"):
                node.lineno, node.end_lineno = call.lineno, getattr(call, "end_lineno", call.lineno)
    return prelude + body[:-1], result


class _ReplaceCall(ast.NodeTransformer):
    def __init__(self, target: ast.Call, value: ast.expr) -> None:
        self.target, self.value = target, value

    def visit_Call(self, node: ast.Call):
        return self.value if node is self.target else self.generic_visit(node)


def inline_helpers(root: ast.FunctionDef, helpers: dict[str, ast.FunctionDef]) -> None:
    """Every call to one of ``helpers`` in a simple statement of ``root`` replaced by its body."""
    counter = itertools.count()

    def rewrite(block: list[ast.stmt]) -> list[ast.stmt]:
        out: list[ast.stmt] = []
        for stmt in block:
            pending = [stmt]
            for _ in range(MAX_INLINE_ROUNDS):
                current = pending[-1]
                call = next((n for n in ast.walk(current) if isinstance(current, _SIMPLE) and isinstance(n, ast.Call)
                             and isinstance(n.func, ast.Name) and n.func.id in helpers and n.func.id != root.name),
                            None)
                expanded = call and _expanded(helpers[call.func.id], call, f"_inl{next(counter)}_")
                if not expanded:
                    break
                lines, value = expanded
                if isinstance(current, ast.Expr) and current.value is call:
                    pending[-1:] = lines  # a call for its effects alone: its statements
                    if not lines:
                        break
                else:
                    pending[-1:] = [*lines, _ReplaceCall(call, value).visit(current)]
            out += pending
        return out

    _map_blocks(root, rewrite)


# ---- loops over chunk numbers ------------------------------------------------------------------

def _chunks(iterator: ast.expr) -> tuple[ast.expr, ast.expr] | None:
    """``(N, B)`` of ``range(tl.cdiv(N, B))``, ``range(0, cdiv(N, B))`` or ``range((N + B - 1) // B)``."""
    if not (isinstance(iterator, ast.Call) and getattr(iterator.func, "id", None) == "range" and not iterator.keywords):
        return None
    args = iterator.args
    if len(args) == 2 and isinstance(args[0], ast.Constant) and args[0].value == 0:
        args = args[1:]
    if len(args) != 1:
        return None
    count = args[0]
    if isinstance(count, ast.Call) and len(count.args) == 2 and not count.keywords and \
            (getattr(count.func, "attr", None) or getattr(count.func, "id", None)) == "cdiv":
        return count.args[0], count.args[1]
    if isinstance(count, ast.BinOp) and isinstance(count.op, ast.FloorDiv) and isinstance(count.left, ast.BinOp) \
            and isinstance(count.left.op, ast.Sub) and isinstance(count.left.left, ast.BinOp) \
            and isinstance(count.left.left.op, ast.Add) and ast.dump(count.left.left.right) == ast.dump(count.right):
        return count.left.left.left, count.right
    return None


class _Scaled(ast.NodeTransformer):
    """``i * B`` and ``B * i`` read ``i``; counts any other use of ``i``."""

    def __init__(self, name: str, size: str) -> None:
        self.name, self.size, self.other_uses = name, size, 0

    def visit_BinOp(self, node: ast.BinOp):
        if isinstance(node.op, ast.Mult):
            for this, that in ((node.left, node.right), (node.right, node.left)):
                if isinstance(this, ast.Name) and this.id == self.name and ast.dump(that) == self.size:
                    return ast.copy_location(ast.Name(self.name, ast.Load()), node)
        return self.generic_visit(node)

    def visit_Name(self, node: ast.Name):
        if node.id == self.name:
            self.other_uses += 1
        return node


def offsets_loops(root: ast.AST) -> None:
    """Every ``for`` over chunk numbers, used only scaled by the chunk, as a ``for`` over offsets."""
    for node in ast.walk(root):
        if not (isinstance(node, ast.For) and isinstance(node.target, ast.Name) and not node.orelse):
            continue
        found = _chunks(node.iter)
        if found is None or node.target.id in _stores(node.body):
            continue
        total, size = found
        trial = [copy.deepcopy(s) for s in node.body]
        scaled = _Scaled(node.target.id, ast.dump(size))
        trial = [scaled.visit(s) for s in trial]
        if scaled.other_uses:
            continue
        node.iter = ast.Call(ast.Name("range", ast.Load()), [ast.Constant(0), total, size], [])
        node.body = trial


# ---- dead code, and one spelling ----------------------------------------------------------------

def _effects(node: ast.AST, effects: tuple[str, ...]) -> bool:
    return any((f.func.attr if isinstance(f.func, ast.Attribute) else getattr(f.func, "id", "")).startswith(effects)
               for f in ast.walk(node) if isinstance(f, ast.Call))


def remove_dead_code(root: ast.FunctionDef, effects: tuple[str, ...]) -> None:
    """Assignments to names nobody reads (and without effects), bare expressions without a
    call, and ``if`` blocks on a constant false, until none is left."""
    def constant_false(test: ast.expr) -> bool:
        return isinstance(test, ast.Constant) and not test.value

    for _ in range(20):
        read = _loads(root.body)
        changed = False

        def rewrite(block: list[ast.stmt]) -> list[ast.stmt]:
            nonlocal changed
            out = []
            for stmt in block:
                if isinstance(stmt, (ast.If, ast.While)) and constant_false(stmt.test):
                    changed = True
                    out += [s for s in stmt.orelse if not isinstance(s, ast.Pass)] if isinstance(stmt, ast.If) else []
                    continue
                if isinstance(stmt, ast.Expr) and not isinstance(stmt.value, ast.Constant) and \
                        not any(isinstance(n, ast.Call) for n in ast.walk(stmt.value)):
                    changed = True
                    continue
                if isinstance(stmt, (ast.Assign, ast.AnnAssign, ast.AugAssign)) and not _effects(stmt, effects):
                    targets = stmt.targets if isinstance(stmt, ast.Assign) else [stmt.target]
                    names = [n for t in targets for n in ast.walk(t)]
                    if all(isinstance(n, (ast.Name, ast.Tuple, ast.Store)) for n in names) and \
                            not (_stores(targets) & read):
                        changed = True
                        continue
                out.append(stmt)
            return out

        _map_blocks(root, rewrite)
        if not changed:
            return


def _split_tuples(block: list[ast.stmt]) -> list[ast.stmt]:
    out = []
    for stmt in block:
        if isinstance(stmt, ast.Assign) and len(stmt.targets) == 1 and isinstance(stmt.targets[0], ast.Tuple) and \
                isinstance(stmt.value, ast.Tuple) and len(stmt.targets[0].elts) == len(stmt.value.elts) and \
                all(isinstance(t, ast.Name) for t in stmt.targets[0].elts) and \
                not (_stores([stmt.targets[0]]) & _loads([stmt.value])):
            out += [ast.copy_location(ast.Assign([t], v), stmt) for t, v in zip(stmt.targets[0].elts, stmt.value.elts)]
        else:
            out.append(stmt)
    return out


def rewrite(definition: ast.AST, helpers: dict[str, ast.FunctionDef], effects: tuple[str, ...]) -> ast.AST:
    """``definition`` (a kernel, a wrapper class) with every rewrite of the module's docstring."""
    functions = [definition] + [n for n in ast.walk(definition)
                                if isinstance(n, ast.FunctionDef) and n is not definition]
    for func in functions:
        if isinstance(func, ast.FunctionDef):
            inline_helpers(func, helpers)
    offsets_loops(definition)
    _map_blocks(definition, _split_tuples)
    for func in functions:
        if isinstance(func, ast.FunctionDef):
            remove_dead_code(func, effects)
    return definition

