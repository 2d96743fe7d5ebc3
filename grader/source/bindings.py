"""Where a learner module's names come from, read from its syntax tree alone: ``tl`` is
``triton.language`` where the file imported it so and never bound it again (:func:`bindings_of`),
and which names each statement binds (:func:`module_targets`)."""
from __future__ import annotations

import ast
import builtins
from dataclasses import dataclass

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
