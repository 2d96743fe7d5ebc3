"""What a learner's definition may evaluate at import: the rules :mod:`grader.source.definitions` applies.

Every check reads the syntax tree only. Names are resolved through the file's own imports
(:class:`Bindings`), so ``@jit`` is Triton's only where ``jit`` came from ``triton`` and was
never bound to anything else in the module.
"""
from __future__ import annotations

import ast
import builtins
from dataclasses import dataclass

from grader.course import kinds
from grader.source.literals import ARITHMETIC, autotune_problem, import_try, is_literal, keywords_problem  # noqa: F401 (import_try, is_literal: the rules' API)

AUTOGRAD_FUNCTION = {"torch.autograd.Function", "torch.autograd.function.Function"}
CONSTEXPR = {"triton.language.constexpr"}
# Decorators that make a compile-time helper: `@tl.constexpr` (as FlagGems writes it) and
# `@triton.constexpr_function`. Decorating runs nothing; the body runs when a kernel calls it,
# and grader.source.host_helpers reads it first.
CONSTEXPR_HELPER = CONSTEXPR | {"triton.constexpr_function", "triton.runtime.jit.constexpr_function",
                                "triton.runtime.constexpr_function"}
PLAIN_DECORATORS = {"builtins.staticmethod", "builtins.classmethod",
                    "torch.autograd.function.once_differentiable"}
HEURISTIC_CALLS = {"triton.next_power_of_2", "triton.cdiv", "builtins.min", "builtins.max",
                   "builtins.int", "builtins.bool", "builtins.abs"}
# star imports known not to rebind triton, torch or a decorator, with the builtins they do shadow
HARMLESS_STAR = {"math": (), "triton.language": ("min", "max", "abs")}


@dataclass(frozen=True)
class Bindings:
    """Where the module's names come from: ``origins`` from its top-level imports (``tl`` ->
    ``triton.language``), ``rebound`` the names also bound some other way, with a line."""
    origins: dict
    rebound: dict

    def origin(self, node: ast.expr) -> str | None:
        """The dotted name an expression stands for, or None if the module may have changed it."""
        if isinstance(node, ast.Attribute):
            base = self.origin(node.value)
            return base and f"{base}.{node.attr}"
        if not isinstance(node, ast.Name) or node.id in self.rebound:
            return None
        if node.id in self.origins:
            return self.origins[node.id]
        return f"builtins.{node.id}" if hasattr(builtins, node.id) else None

    def shadowed_by(self, names: dict) -> Bindings:
        """The view from a class body, whose own assignments and defs hide module names."""
        return Bindings(self.origins, {**self.rebound, **names})

    def why_untrusted(self, node: ast.expr) -> str:
        root = node
        while isinstance(root, ast.Attribute):
            root = root.value
        if isinstance(root, ast.Name) and root.id in self.rebound and root.id in self.origins:
            return f" (`{root.id}` is bound again on line {self.rebound[root.id]}, so it may not be what it seems)"
        return ""


class _ModuleTargets(ast.NodeVisitor):
    """Names a statement binds in the module's scope, whether or not it is kept: conservative,
    so a name bound twice is never trusted. Function bodies count only through ``global``."""

    def __init__(self) -> None:
        self.names: dict[str, int] = {}

    def _bind(self, name: str, line: int) -> None:
        self.names.setdefault(name, line)

    def visit_Name(self, node: ast.Name) -> None:
        if not isinstance(node.ctx, ast.Load):
            self._bind(node.id, node.lineno)

    def visit_FunctionDef(self, node) -> None:
        self._bind(node.name, node.lineno)
        for part in (*node.decorator_list, node.args, *([node.returns] if node.returns else [])):
            self.visit(part)
        self._globals(node)

    visit_AsyncFunctionDef = visit_FunctionDef

    def visit_ClassDef(self, node: ast.ClassDef) -> None:
        self._bind(node.name, node.lineno)
        for part in (*node.decorator_list, *node.bases, *node.keywords):
            self.visit(part)
        self._globals(node)

    def visit_Lambda(self, node: ast.Lambda) -> None:
        self.visit(node.args)

    def visit_Import(self, node) -> None:  # only nested imports get here: top-level ones are origins
        for alias in node.names:
            self._bind((alias.asname or alias.name).split(".")[0], node.lineno)

    visit_ImportFrom = visit_Import

    def visit_ExceptHandler(self, node: ast.ExceptHandler) -> None:
        if node.name:
            self._bind(node.name, node.lineno)
        self.generic_visit(node)

    def visit_MatchAs(self, node) -> None:
        if node.name:
            self._bind(node.name, node.lineno)
        self.generic_visit(node)

    visit_MatchStar = visit_MatchAs

    def _globals(self, node: ast.AST) -> None:
        for inner in ast.walk(node):
            if isinstance(inner, ast.Global):
                for name in inner.names:
                    self._bind(name, inner.lineno)


def module_targets(statements: list[ast.stmt]) -> dict[str, int]:
    visitor = _ModuleTargets()
    for statement in statements:
        visitor.visit(statement)
    return visitor.names


def bindings_of(tree: ast.Module) -> Bindings:
    origins: dict[str, str] = {}
    rebound: dict[str, int] = {}
    for node in tree.body:
        if isinstance(node, ast.Import):
            pairs = [(a.asname, a.name) if a.asname else (a.name.split(".")[0],) * 2 for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            module = "." * node.level + (node.module or "")
            if any(a.name == "*" for a in node.names):
                # it may bind any name at all: trust no name of this module's, unless known
                shadowed = HARMLESS_STAR.get(module, (*origins, *dir(builtins)))
                rebound.update({name: node.lineno for name in shadowed})
            pairs = [(a.asname or a.name, f"{module}.{a.name}") for a in node.names if a.name != "*"]
        else:
            continue
        for name, origin in pairs:
            if origins.setdefault(name, origin) != origin:
                rebound.setdefault(name, node.lineno)
    others = [n for n in tree.body if not isinstance(n, (ast.Import, ast.ImportFrom))]
    for name, line in module_targets(others).items():
        rebound.setdefault(name, line)
    return Bindings(origins, rebound)


def is_constexpr_call(node: ast.expr, bindings: Bindings, constants: frozenset) -> bool:
    """``tl.constexpr(<literal>)``."""
    return (isinstance(node, ast.Call) and bindings.origin(node.func) in CONSTEXPR
            and len(node.args) == 1 and not node.keywords and is_literal(node.args[0], constants))


def _heuristic_problem(node: ast.expr, bindings: Bindings) -> str | None:
    if not (isinstance(node, ast.Lambda) and len(node.args.args) == 1 and not node.args.defaults
            and not (node.args.posonlyargs or node.args.kwonlyargs or node.args.vararg or node.args.kwarg)):
        return "each heuristic must be `lambda args: ...`"
    if not _heuristic_expression(node.body, node.args.args[0].arg, bindings):
        return ("a heuristic may use only `args[\"name\"]`, numbers, arithmetic, comparisons, "
                "`x if c else y`, and triton.next_power_of_2, triton.cdiv, min, max, int, bool, abs")
    return None


def _heuristic_expression(node: ast.expr, param: str, bindings: Bindings) -> bool:
    def ok(child: ast.expr) -> bool:
        return _heuristic_expression(child, param, bindings)

    if isinstance(node, ast.Constant):
        return isinstance(node.value, (int, float))
    if isinstance(node, ast.Subscript):
        return (isinstance(node.value, ast.Name) and node.value.id == param
                and isinstance(node.slice, ast.Constant) and isinstance(node.slice.value, str))
    if isinstance(node, ast.BinOp):
        return isinstance(node.op, ARITHMETIC) and ok(node.left) and ok(node.right)
    if isinstance(node, ast.UnaryOp):
        return ok(node.operand)
    if isinstance(node, ast.BoolOp):
        return all(map(ok, node.values))
    if isinstance(node, ast.Compare):
        return ok(node.left) and all(map(ok, node.comparators))
    if isinstance(node, ast.IfExp):
        return ok(node.test) and ok(node.body) and ok(node.orelse)
    if isinstance(node, ast.Call):
        return (bindings.origin(node.func) in HEURISTIC_CALLS and not node.keywords
                and all(not isinstance(a, ast.Starred) and ok(a) for a in node.args))
    return False


def _kind_decorator_problem(decorator: kinds.Decorator, call: ast.Call | None, bindings: Bindings) -> str | None:
    """A kind's own kernel decorator (``@helion.kernel(...)``, grader.course.kinds): its options are
    keywords of literals, as triton.jit's, and its config options are written out as calls of the
    kind's config class with literal keywords (a list of them for a plural option)."""
    if call is None:
        return None
    if call.args:
        return f"`{decorator.name}(...)` takes options by keyword only"
    configs = decorator.config_options
    plain = ast.Call(func=call.func, args=[], keywords=[k for k in call.keywords if k.arg not in configs])
    problem = keywords_problem(plain, f"`{decorator.name}`")
    if problem is not None:
        return problem
    for keyword in (k for k in call.keywords if k.arg in configs):
        values = keyword.value.elts if keyword.arg in decorator.plural_options \
            and isinstance(keyword.value, (ast.List, ast.Tuple)) else [keyword.value]
        for value in values:
            if not (isinstance(value, ast.Call) and bindings.origin(value.func) in decorator.config_origins
                    and not value.args and keywords_problem(value, f"`{decorator.config_name}`") is None):
                return (f"option `{keyword.arg}` of `{decorator.name}` must be written out as "
                        f"`{decorator.config_example}` with literal values")
    return None


def decorator_problem(node: ast.expr, bindings: Bindings) -> str | None:
    """Why a decorator may not be evaluated at import, or None if it is Triton's or Python's."""
    target = node.func if isinstance(node, ast.Call) else node
    origin = bindings.origin(target)
    call = node if isinstance(node, ast.Call) else None
    if origin == "triton.jit":
        if call and call.args:
            return "`triton.jit(...)` takes options by keyword only"
        return call and keywords_problem(call, "`triton.jit`")
    if origin == "triton.autotune" and call:
        return autotune_problem(call, bindings)
    own = next((d for d in kinds.decorators() if origin in d.origins), None)
    if own is not None:  # a kind's own kernel decorator (Helion's)
        return _kind_decorator_problem(own, call, bindings)
    if origin == "triton.heuristics" and call:
        values = call.args + [k.value for k in call.keywords if k.arg == "values"]
        if len(call.args) + len(call.keywords) != 1 or len(values) != 1 or not isinstance(values[0], ast.Dict):
            return "`triton.heuristics` takes one dict written in place: {\"NAME\": lambda args: ...}"
        if not all(isinstance(k, ast.Constant) and isinstance(k.value, str) for k in values[0].keys):
            return "the keys of `triton.heuristics({...})` must be parameter names as strings"
        return next(filter(None, (_heuristic_problem(v, bindings) for v in values[0].values)), None)
    if origin in PLAIN_DECORATORS and not call:
        return None
    if origin in CONSTEXPR_HELPER:
        return f"`@{ast.unparse(target)}` takes no arguments: write it bare, above `def`" if call else None
    families = "".join(f"{d.family}, " for d in kinds.decorators()).rstrip(", ")
    return (f"decorator `{ast.unparse(target)}` is not one of Triton's (jit, autotune, heuristics, "
            f"constexpr, constexpr_function), {families} or "
            f"Python's (staticmethod, classmethod, once_differentiable){bindings.why_untrusted(target)}")
