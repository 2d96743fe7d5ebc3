"""Which module-level assignments the definitions-only import keeps, and what it says of the rest.

An assignment is kept when its value is data (:mod:`grader.source.literals`), and so is
``configs += [triton.Config(...)]`` on a kept constant. A kept value must also be the one the
file's code would see: where a later statement that is left out (``configs = prune(configs)``,
``if torch.version.hip: configs = ...``, ``configs.append(...)``) would change it, the first
assignment is left out too, with that line named, rather than graded with a value the learner's
code never has.
"""
from __future__ import annotations

import ast

from grader.source.bindings import module_targets
from grader.source.literals import CONFIG, PURE_CALLS, WHAT_IS_DATA, data_problem

# the methods of lists, dicts and sets that change them in place
MUTATORS = {"append", "extend", "insert", "pop", "remove", "clear", "update", "setdefault", "sort", "reverse", "add",
            "discard", "popitem", "__setitem__", "__delitem__", "__iadd__"}
# what a statement left out is called in its message
STATEMENT_WORDS = {ast.If: "if", ast.For: "for", ast.AsyncFor: "for", ast.While: "while", ast.With: "with",
                   ast.AsyncWith: "with", ast.Try: "try", ast.Match: "match", ast.Raise: "raise",
                   ast.Assert: "assert", ast.Delete: "del", ast.Global: "global", ast.AugAssign: "x += ..."}


def said(dropped) -> str:
    """A left-out statement as a message names it: "line 12, `X = f()`, was not run: <why>"."""
    return f"line {dropped.line}, `{dropped.text}`, was not run: {dropped.reason}"


def value_problem(value: ast.expr, shown: str, bindings, constants: dict, where: str) -> str | None:
    """Why the assignment of ``value`` to ``shown`` is left out, or None if it is data."""
    problem = data_problem(value, bindings, constants)
    if problem is None:
        return None
    if isinstance(value, ast.Call) and bindings.origin(value.func) not in PURE_CALLS | {CONFIG}:
        return (f"`{shown}` is set by a call (`{ast.unparse(value.func)}(...)`), and a call {where} is not run: "
                f"only definitions of data are kept ({WHAT_IS_DATA}). Write the value out (a comprehension "
                f"over literals will do), or compute it inside the function that uses it")
    return (f"the value of `{shown}` is not data: {problem}. Only definitions of data are kept "
            f"({WHAT_IS_DATA}): write the value out, or compute it inside the function that uses it")


def bound_by(node: ast.stmt) -> list[str]:
    """The names a statement binds in its scope."""
    if isinstance(node, (ast.Import, ast.ImportFrom)):
        return [(a.asname or a.name).split(".")[0] for a in node.names]
    return list(module_targets([node]))


def values_bound(node: ast.stmt, constants: dict) -> dict:
    """A kept assignment's names, each with its value's node where the source shows it."""
    if isinstance(node, ast.AugAssign):
        return {node.target.id: ast.BinOp(left=constants.get(node.target.id), op=node.op, right=node.value)}
    targets = node.targets if isinstance(node, ast.Assign) else [node.target]
    found = {}
    for target in targets:
        if isinstance(target, ast.Name):
            found[target.id] = node.value
            continue
        values = node.value.elts if isinstance(node.value, (ast.Tuple, ast.List)) else ()
        written = len(values) == len(target.elts) and not any(isinstance(v, ast.Starred) for v in values)
        found.update({e.id: values[i] if written else None for i, e in enumerate(target.elts)})
    return found


def is_data_update(node: ast.stmt, bindings, constants: dict) -> bool:
    """``NAME += data`` (or another arithmetic operator) on a kept constant."""
    return (isinstance(node, ast.AugAssign) and isinstance(node.target, ast.Name) and node.target.id in constants
            and data_problem(node.value, bindings, constants) is None)


def _runs_on_import(node: ast.stmt) -> bool:
    """Whether a statement that is left out would run when the file is imported: neither the
    ``if __name__ == "__main__":`` block nor ``if TYPE_CHECKING:`` would."""
    if not isinstance(node, ast.If):
        return True
    test = ast.unparse(node.test)
    return not (("__main__" in test and "__name__" in test) or test.endswith("TYPE_CHECKING"))


def _run_on_import(node: ast.AST):
    """``node`` and what in it runs when it does: a function's decorators and defaults, not its body."""
    todo = [node]
    while todo:
        inner = todo.pop()
        yield inner
        if isinstance(inner, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
            args = inner.args
            todo += [*getattr(inner, "decorator_list", ()), *args.defaults, *(d for d in args.kw_defaults if d)]
        else:
            todo += list(ast.iter_child_nodes(inner))


def _changed_by(node: ast.stmt) -> set[str]:
    """Names a statement binds or changes in place (``X.append(...)``, ``X[k] = v``, ``del X[k]``)."""
    names = set(bound_by(node))
    for inner in _run_on_import(node):
        target = None
        if isinstance(inner, ast.Call) and isinstance(inner.func, ast.Attribute) and inner.func.attr in MUTATORS:
            target = inner.func.value
        elif isinstance(inner, (ast.Subscript, ast.Attribute)) and not isinstance(inner.ctx, ast.Load):
            target = inner.value
        if isinstance(target, ast.Name):
            names.add(target.id)
    return names


def stale_values(pieces, lines: list[str]) -> dict:
    """Kept assignments (by node) whose names a later statement left out would change, with why."""
    found = {}
    for i, piece in enumerate(pieces):
        node = piece.node
        if piece.reason is not None or not isinstance(node, (ast.Assign, ast.AnnAssign, ast.AugAssign)):
            continue
        names = set(bound_by(node))
        for later in pieces[i + 1:]:
            changed = names & _changed_by(later.node) if later.reason is not None and _runs_on_import(later.node) \
                else set()
            if changed:
                name, line = sorted(changed)[0], later.first + 1
                found[node] = (f"`{name}` is changed again at line {line} (`{lines[line - 1].strip()}`), which is "
                               f"not run ({later.reason}), so the value kept here would not be the one your code "
                               f"uses: write the final value out in one assignment of data")
                break
    return found


def why_not_run(node: ast.stmt, where: str) -> str:
    """Why a statement that is neither an import, a definition nor an assignment is left out."""
    if isinstance(node, ast.If) and "__main__" in ast.unparse(node.test) and "__name__" in ast.unparse(node.test):
        return 'the `if __name__ == "__main__":` block is not run when grading'
    if isinstance(node, ast.Expr):
        return f"a call {where} is not run: only definitions are kept; call it inside the function that needs it" \
            if isinstance(node.value, ast.Call) else f"an expression {where} is not evaluated: delete it"
    word = STATEMENT_WORDS.get(type(node), type(node).__name__)
    return (f"`{word}` {where} is not run: only definitions are kept (imports, functions, classes and "
            f"assignments of data); move it into the function that needs it")
