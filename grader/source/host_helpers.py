"""The learner's Python that Triton itself calls: compile-time helpers and config pruning.

Three idioms of real kernel libraries run plain Python of the submission's:

* ``@tl.constexpr`` helpers (FlagGems: ``get_scan_accum_type(dtype)``), called while a kernel
  compiles, and ``@triton.constexpr_function`` helpers, their newer spelling;
* ``@triton.autotune(prune_configs_by={"early_config_prune": fn})``, called at launch with
  the configs and the launch's arguments (the grader passes tensors without values).

Each runs in the interpreter and in the compiler, where its arguments may differ in type
(a ``@tl.constexpr`` helper gets ``tl.constexpr`` objects compiled, plain ints interpreted).
So each is read before it runs, and may use only what computes the same value both ways:
arithmetic, comparisons, ``if``, ``for``, comprehensions, indexing, attributes and methods of
its own values, Triton's functions and types, a few pure builtins, and the file's other
helpers and constants. No ``type``/``isinstance``/``str``/f-strings, no ``is``, no ``try``,
no names of the file's other functions: nothing that can tell the interpreter from a GPU.
"""
from __future__ import annotations

import ast
import sys
from dataclasses import dataclass

from grader.course.syntax import parse
from grader.source.definition_rules import CONSTEXPR_HELPER, Bindings, bindings_of
from grader.source.literals import data_problem

SAFE_BUILTINS = {"min", "max", "abs", "int", "float", "bool", "round", "len", "range", "sum", "any", "all",
                 "divmod", "pow", "sorted", "enumerate", "zip", "list", "tuple", "dict", "set", "reversed"}
STATEMENTS = (ast.Return, ast.If, ast.Assign, ast.AnnAssign, ast.AugAssign, ast.Pass, ast.For, ast.Expr)
EXPRESSIONS = (ast.Constant, ast.Name, ast.Attribute, ast.BinOp, ast.UnaryOp, ast.BoolOp, ast.Compare, ast.IfExp,
               ast.Tuple, ast.List, ast.Set, ast.Dict, ast.Subscript, ast.Slice, ast.Call, ast.Starred,
               ast.ListComp, ast.SetComp, ast.DictComp, ast.GeneratorExp, ast.comprehension, ast.keyword,
               ast.expr_context, ast.operator, ast.unaryop, ast.boolop, ast.cmpop, ast.arguments, ast.arg)
# attributes no computed value needs, each a way out of the helper's values
DENIED_ATTRIBUTES = {"handle", "environ", "getenv", "interpreter", "knobs", "runtime", "builtins", "value"}


@dataclass(frozen=True)
class Problem:
    function: str
    line: int
    source: str
    what: str


def helper_names(tree: ast.Module, bindings: Bindings) -> set[str]:
    """Module-level functions decorated as compile-time helpers."""
    return {n.name for n in tree.body if isinstance(n, ast.FunctionDef) and n.decorator_list
            and all(bindings.origin(d) in CONSTEXPR_HELPER for d in n.decorator_list)}


def prune_function(decorator: ast.expr) -> ast.expr | None:
    """The ``early_config_prune`` value of an ``@triton.autotune(...)`` call, if it has one."""
    if not isinstance(decorator, ast.Call):
        return None
    for keyword in decorator.keywords:
        if keyword.arg == "prune_configs_by" and isinstance(keyword.value, ast.Dict):
            for key, value in zip(keyword.value.keys, keyword.value.values):
                if isinstance(key, ast.Constant) and key.value == "early_config_prune":
                    return value
    return None


def constants_of(tree: ast.Module, bindings: Bindings) -> set[str]:
    """Module-level constants of data (``NAME = literal``, a table of dtypes: grader.source.literals),
    which a helper may read."""
    constants: dict = {}
    for node in tree.body:
        targets = node.targets if isinstance(node, ast.Assign) else [node.target] if isinstance(node, ast.AnnAssign) \
            else []
        if targets and node.value is not None and data_problem(node.value, bindings, constants) is None:
            constants |= {t.id: node.value for t in targets if isinstance(t, ast.Name)}
    return set(constants)


class _Reader:
    def __init__(self, tree: ast.Module, lines: list[str]) -> None:
        self.bindings = bindings_of(tree)
        self.helpers = helper_names(tree, self.bindings)
        self.constants = constants_of(tree, self.bindings)
        self.lines = lines

    def problem(self, fn: ast.FunctionDef) -> Problem | None:
        local = {a.arg for a in ast.walk(fn.args) if isinstance(a, ast.arg)}
        local |= {t.id for node in ast.walk(fn) if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store)
                  for t in [node]}
        for node in ast.walk(fn):
            if node is fn or isinstance(node, ast.arguments):
                continue
            what = self._what(node, local, fn)
            if what:
                line = getattr(node, "lineno", fn.lineno)
                text = self.lines[line - 1].strip() if line <= len(self.lines) else ""
                return Problem(fn.name, line, text, what)
        return None

    def _what(self, node: ast.AST, local: set, fn: ast.FunctionDef) -> str | None:
        if isinstance(node, ast.stmt):
            if node in fn.decorator_list:
                return None
            if not isinstance(node, STATEMENTS):
                return f"`{type(node).__name__.lower()}` statements are not allowed here"
            targets = node.targets if isinstance(node, ast.Assign) else [getattr(node, "target", None)]
            for target in filter(None, targets):
                elements = target.elts if isinstance(target, (ast.Tuple, ast.List)) else [target]
                if not all(isinstance(e, (ast.Name, ast.Subscript)) for e in elements):
                    return f"assigning to `{ast.unparse(target)}` is not allowed here: assign to a name"
            return None
        if any(node is d or node in ast.walk(d) for d in fn.decorator_list):
            return None
        if isinstance(node, (ast.JoinedStr, ast.FormattedValue)):
            return "an f-string shows a value's type, which differs between the interpreter and the compiler"
        if isinstance(node, ast.Compare) and any(isinstance(op, (ast.Is, ast.IsNot)) for op in node.ops):
            return "`is` compares identities, which differ between the interpreter and the compiler: use `==`"
        if not isinstance(node, EXPRESSIONS):
            return f"`{type(node).__name__}` is not allowed here"
        if isinstance(node, ast.Attribute) and (node.attr.startswith("_") or node.attr in DENIED_ATTRIBUTES
                                                or node.attr in sys.stdlib_module_names):
            return f"`.{node.attr}` reaches outside the helper's values"
        if isinstance(node, ast.keyword) and node.arg is None:
            return "`**` arguments are not allowed here"
        if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Load) and node.id not in local:
            return self._name(node)
        return None

    def _name(self, node: ast.Name) -> str | None:
        if node.id in self.helpers or node.id in self.constants:
            return None
        origin = self.bindings.origin(node) or ""
        parts = origin.split(".")
        if parts[0] in ("triton", "math") and not DENIED_ATTRIBUTES & set(parts):  # not through triton.runtime
            return None
        if origin.startswith("builtins.") and node.id in SAFE_BUILTINS:
            return None
        return (f"`{node.id}` is not one of its arguments, Triton's, a constant of the file, another "
                f"compile-time helper or a plain builtin ({', '.join(sorted(SAFE_BUILTINS))})")


def problems(source: str, names: set[str]) -> Problem | None:
    """The first thing in the module-level functions ``names`` that a helper may not do."""
    tree = parse(source)
    reader = _Reader(tree, source.splitlines())
    for node in tree.body:
        if isinstance(node, ast.FunctionDef) and node.name in names:
            found = reader.problem(node)
            if found:
                return found
    return None


HELPER = "A compile-time helper (`@tl.constexpr`, `@triton.constexpr_function`) runs as Python in the " \
         "interpreter and in Triton's compiler"
PRUNE = "An `early_config_prune` function runs as Python at every launch, in the interpreter and on a GPU alike"


def message(problem: Problem, kind: str) -> str:
    where = f"`{problem.function}` at line {problem.line}" + (f": `{problem.source}`" if problem.source else "")
    return (f"{where}: {problem.what}. {kind}, so the grader reads it first: it may use its arguments, "
            f"arithmetic, comparisons, `if`, `for`, comprehensions, Triton's functions and types, the file's "
            f"constants and other compile-time helpers.")
