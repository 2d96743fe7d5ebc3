"""A learner's file reduced to definitions whose evaluation runs none of the learner's code.

Importing a module evaluates more than function bodies: decorators, default values,
annotations, class bases and module-level statements all run. :func:`definitions` keeps
only what cannot call into the learner's code (the rules are in
:mod:`grader.source.definition_rules`) and says what it left out and why. Line numbers stay the
learner's: a dropped statement leaves blank lines, a removed annotation leaves spaces.
"""
from __future__ import annotations

import ast
from dataclasses import dataclass, field, replace

from grader.course.syntax import parse
from grader.source import kept_data
from grader.source.definition_rules import (
    AUTOGRAD_FUNCTION,
    CONSTEXPR,
    Bindings,
    bindings_of,
    decorator_problem,
    import_try,
    is_literal,
    module_targets,
)
from grader.source.source_lines import statement_start


@dataclass(frozen=True)
class Dropped:
    line: int    # 1-based, the learner's
    text: str    # the statement's first line
    reason: str


@dataclass(frozen=True)
class Definitions:
    text: str
    dropped: tuple[Dropped, ...]
    missing: dict = field(default_factory=dict)  # a module-level name -> the Dropped statement that binds it


@dataclass(frozen=True)
class _Piece:
    """One statement's fate: kept (``reason`` None), with spans to blank out, or left out."""
    node: ast.stmt
    reason: str | None = None
    blanks: tuple = ()              # (start, end) offsets in the text of removed annotations
    notes: tuple = ()               # a Dropped entry for each removed annotation
    body: tuple | None = None       # a kept class: its statements' pieces

    @property
    def first(self) -> int:
        return statement_start(self.node)

    @property
    def last(self) -> int:
        return self.node.end_lineno - 1


SHARED_LINE = "shares its line with a statement that is not kept: put it on a line of its own"


def definitions(source: str) -> Definitions:
    """``source``'s definitions, line for line (a syntax error propagates)."""
    source = source.replace("\r\n", "\n").replace("\r", "\n")
    tree = parse(source)
    text = _Text(source)
    planner = _Planner(text)
    pieces = planner.statements(tree.body, bindings_of(tree), {}, "at module level")
    return replace(text.render(pieces), missing=planner.missing)


def why_dropped(source: str, name: str) -> Dropped | None:
    """Why the module-level definition of ``name`` was left out of ``source``, if it was: the
    dropped entry that falls on its decorators or its ``def``/``class`` line."""
    try:
        tree = parse(source)
        dropped = definitions(source).dropped
    except (SyntaxError, ValueError, RecursionError):
        return None
    for node in tree.body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)) and node.name == name:
            span = range(statement_start(node) + 1, node.lineno + 1)
            return next((d for d in dropped if d.line in span), None)
    return None


class _Text:
    """The source, addressed as the syntax tree does (line, UTF-8 byte column) or by offset."""

    def __init__(self, source: str) -> None:
        self.source = source
        self.lines = source.split("\n")
        self.starts = [0]
        for line in self.lines[:-1]:
            self.starts.append(self.starts[-1] + len(line) + 1)

    def offset(self, lineno: int, byte_col: int) -> int:
        line = self.lines[lineno - 1]
        return self.starts[lineno - 1] + len(line.encode()[:byte_col].decode())

    def arrow_before(self, offset: int) -> int | None:
        """Where the ``->`` of a return annotation starting at ``offset`` begins."""
        i = offset - 1
        while i > 0 and self.source[i] in " \t\f\\\n":
            i -= 1
        return i - 1 if self.source[i - 1:i + 1] == "->" else None

    def starts_line(self, node: ast.stmt) -> bool:
        return not self.lines[statement_start(node)][:node.col_offset].strip()

    def note(self, lineno: int, reason: str) -> Dropped:
        return Dropped(lineno, self.lines[lineno - 1].strip(), reason)

    def render(self, pieces: list[_Piece]) -> Definitions:
        blanked = self.source
        for start, end in sorted((s for p in _kept(pieces) for s in p.blanks), reverse=True):
            # spaces keep every column; a span over several lines (a return annotation) needs
            # backslashes, since outside brackets a bare newline would end the statement
            blank = "".join("\\\n" if c == "\n" else " " for c in blanked[start:end])
            blanked = blanked[:start] + blank + blanked[end:]
        lines = blanked.split("\n")
        out = [""] * len(lines)
        dropped: list[Dropped] = []
        self._copy(pieces, lines, out, dropped)
        text = "\n".join(out)
        return Definitions(text if text.endswith("\n") else text + "\n",
                           tuple(sorted(dropped, key=lambda d: d.line)))

    def _copy(self, pieces, lines, out, dropped) -> None:
        for piece in pieces:
            if piece.reason is not None:
                dropped.append(self.note(piece.first + 1, piece.reason))
                continue
            dropped.extend(piece.notes)
            if piece.body is None:
                out[piece.first:piece.last + 1] = lines[piece.first:piece.last + 1]
                continue
            body_first = piece.body[0].first
            out[piece.first:body_first] = lines[piece.first:body_first]
            self._copy(piece.body, lines, out, dropped)
            if all(p.reason is not None for p in piece.body):  # an empty class body would not parse
                indent = len(lines[body_first]) - len(lines[body_first].lstrip())
                out[body_first] = lines[body_first][:indent] + "pass"


def _kept(pieces):
    for piece in pieces:
        if piece.reason is None:
            yield piece
            yield from _kept(piece.body or ())


class _Planner:
    def __init__(self, text: _Text) -> None:
        self.text = text
        self.functions: set[str] = set()  # the functions kept so far: a default may name one
        self.missing: dict[str, Dropped] = {}  # the statements last planned: what names were left out

    def statements(self, body, bindings: Bindings, constants: dict, where: str) -> list[_Piece]:
        """Pieces for a module's or class's statements. ``constants``: the names bound so far by
        kept assignments of data, with their values' nodes, which later values and decorators use.
        Planned again while a kept value turns out stale: changed later by a statement not run."""
        stale: dict[ast.stmt, str] = {}
        functions = set(self.functions)
        while True:
            self.functions = set(functions)
            pieces, missing = self._plan(body, bindings, dict(constants), where, stale)
            found = kept_data.stale_values(pieces, self.text.lines)
            if not found.keys() - stale.keys():
                self.missing = missing
                return _settle(pieces)
            stale |= found

    def _plan(self, body, bindings, constants: dict, where: str, stale: dict):
        pieces, missing = [], {}  # missing: a name a statement left out binds -> that statement
        for node in body:
            piece = _Piece(node, stale[node]) if node in stale else \
                self.statement(node, bindings, dict(constants), missing, where)
            pieces.append(piece)
            bound = kept_data.bound_by(node)
            if piece.reason is not None:
                for name in bound:
                    constants.pop(name, None)
                    missing[name] = self.text.note(piece.first + 1, piece.reason)
                continue
            for name in bound:
                missing.pop(name, None)
            if isinstance(node, (ast.Assign, ast.AnnAssign, ast.AugAssign)):
                constants.update(kept_data.values_bound(node, constants))
            else:
                for name in bound:
                    constants.pop(name, None)
            self.functions = (self.functions - set(bound)) | \
                ({node.name} if isinstance(node, ast.FunctionDef) and where == "at module level" else set())
        return pieces, missing

    def statement(self, node, bindings, constants: dict, missing: dict, where) -> _Piece:
        if isinstance(node, ast.Pass) or (isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant)):
            return _Piece(node)  # docstrings
        if isinstance(node, (ast.Import, ast.ImportFrom)) or import_try(node):
            return _Piece(node) if where == "at module level" else _Piece(node, "imports belong at module level")
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            return self.function(node, bindings, constants, missing)
        if isinstance(node, ast.ClassDef):
            return self.cls(node, bindings, constants) if where == "at module level" \
                else _Piece(node, "a class inside a class is not kept: define it at module level")
        if isinstance(node, (ast.Assign, ast.AnnAssign)):
            return self.constant(node, bindings, constants, where)
        if kept_data.is_data_update(node, bindings, constants):  # `configs += [triton.Config(...)]`
            return _Piece(node)
        return _Piece(node, kept_data.why_not_run(node, where))

    def function(self, node, bindings: Bindings, constants: dict, missing: dict) -> _Piece:
        for decorator in node.decorator_list:
            problem = decorator_problem(decorator, bindings, constants,
                                        {name: kept_data.said(d) for name, d in missing.items()})
            if problem:
                return _Piece(node, problem)
        args = node.args
        positional = args.posonlyargs + args.args
        with_defaults = list(zip(positional[len(positional) - len(args.defaults):], args.defaults))
        for arg, default in with_defaults + list(zip(args.kwonlyargs, args.kw_defaults)):
            if default is not None and not self._default(default, constants):
                return _Piece(node, f"default value of `{arg.arg}` is not a literal: write a number, a string, "
                                    f"None, a constant or a function defined above, or a lambda")
        blanks, notes = [], []
        for arg in positional + args.kwonlyargs + [a for a in (args.vararg, args.kwarg) if a]:
            ann = arg.annotation
            if ann is None or _is_string(ann) or bindings.origin(ann) in CONSTEXPR:
                continue
            start = self.text.offset(arg.lineno, arg.col_offset) + len(arg.arg)
            blanks.append((start, self.text.offset(ann.end_lineno, ann.end_col_offset)))
            notes.append(self.text.note(ann.lineno, f"annotation of `{arg.arg}` removed: only `tl.constexpr` "
                                                    f"annotations are kept (others are never evaluated)"))
        if node.returns is not None:
            ann = node.returns
            arrow = self.text.arrow_before(self.text.offset(ann.lineno, ann.col_offset))
            if arrow is None:
                return _Piece(node, f"the return annotation of `{node.name}` could not be removed: delete it")
            blanks.append((arrow, self.text.offset(ann.end_lineno, ann.end_col_offset)))
            notes.append(self.text.note(ann.lineno, f"annotation of the return value of `{node.name}` removed"))
        return _Piece(node, blanks=tuple(blanks), notes=tuple(notes))

    def _default(self, node: ast.expr, constants) -> bool:
        """A default value evaluated at import: a literal, a function kept above, or a lambda
        (made, not called: its body runs only when the kernel calls it), whose own defaults are so."""
        if isinstance(node, ast.Name) and node.id in self.functions:
            return True
        if isinstance(node, ast.Lambda):
            return all(self._default(d, constants) for d in (*node.args.defaults, *node.args.kw_defaults)
                       if d is not None)
        return is_literal(node, constants)

    def cls(self, node: ast.ClassDef, bindings: Bindings, constants) -> _Piece:
        if node.decorator_list:
            return _Piece(node, "class decorators are not run when grading: write the class without one")
        if node.keywords:
            return _Piece(node, "`metaclass=` and other class keywords are not allowed when grading")
        for base in node.bases:
            if bindings.origin(base) not in AUTOGRAD_FUNCTION:
                return _Piece(node, f"class base `{ast.unparse(base)}` is not torch.autograd.Function"
                                    f"{bindings.why_untrusted(base)}")
        inner = bindings.shadowed_by(module_targets(node.body))  # a method named `staticmethod`...
        body = self.statements(node.body, inner, dict(constants), "in a class body")
        if any(p.reason for p in body) and not self.text.starts_line(node.body[0]):
            return _Piece(node, "put the class body on its own lines: part of it is not kept")
        return _Piece(node, body=tuple(body))

    def constant(self, node, bindings: Bindings, constants, where) -> _Piece:
        targets = node.targets if isinstance(node, ast.Assign) else [node.target]
        names = []
        for target in targets:
            elements = target.elts if isinstance(target, (ast.Tuple, ast.List)) else [target]
            if not all(isinstance(e, ast.Name) for e in elements):
                return _Piece(node, f"assignment to `{ast.unparse(target)}` is not run: "
                                    f"only assignments of data to names (`NAME = ...`) are kept")
            names += [e.id for e in elements]
        shown = ", ".join(names)
        if any(n.startswith("__") and n.endswith("__") and n != "__all__" for n in names):
            return _Piece(node, f"`{shown}` is Python's own name: it is not assigned when grading")
        value = node.value
        if value is None:
            return _Piece(node, f"`{shown}` is annotated but given no value")
        problem = kept_data.value_problem(value, shown, bindings, constants, where)
        if problem:
            return _Piece(node, problem)
        if isinstance(node, ast.AnnAssign) and not (_is_string(node.annotation)
                                                    or bindings.origin(node.annotation) in CONSTEXPR):
            if not node.simple:
                return _Piece(node, f"write `{shown}` without parentheses around it")
            span = (self.text.offset(node.target.end_lineno, node.target.end_col_offset),
                    self.text.offset(node.annotation.end_lineno, node.annotation.end_col_offset))
            return _Piece(node, blanks=(span,), notes=(self.text.note(
                node.lineno, f"annotation of `{shown}` removed: only `tl.constexpr` annotations are kept"),))
        return _Piece(node)


def _is_string(node: ast.expr) -> bool:
    return isinstance(node, ast.Constant) and isinstance(node.value, str)


def _settle(pieces: list[_Piece]) -> list[_Piece]:
    """Blanking works line by line, so a kept statement sharing a line (``a = 1; f()``) with a
    dropped one goes too."""
    changed = True
    while changed:
        changed = False
        for i in range(len(pieces) - 1):
            a, b = pieces[i], pieces[i + 1]
            if a.last == b.first and (a.reason is None) != (b.reason is None):
                if a.reason is None:
                    pieces[i] = replace(a, reason=SHARED_LINE)
                else:
                    pieces[i + 1] = replace(b, reason=SHARED_LINE)
                changed = True
    return pieces
