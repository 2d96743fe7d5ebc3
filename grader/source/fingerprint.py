"""Fingerprints of a learner's code for finding copies (winnowing, as MOSS does: Schleimer,
Wilkerson and Aiken, SIGMOD 2003). Nothing here runs the code: it is parsed, never imported.

Only the learner's part counts: the definitions a puzzle asks for (its kernel, a wrapper
class) and the functions of the same file they call, so a file holding every puzzle is cut per
puzzle. The code is normalised before it is hashed, so the usual disguises change nothing:

* every name the learner chose (variables, parameters, helpers) reads ``V``; modules read as
  what they import (``tl`` and ``lang`` both read ``triton.language``), attribute and keyword
  names stay (``tl.load(..., mask=...)`` is the API, not a choice);
* comments, docstrings and ``pass`` go; ``x += y`` reads ``x = x + y``;
* helpers are inlined, loops over chunk numbers read as loops over offsets, dead code goes
  (:mod:`grader.source.fingerprint_rewrite`);
* within each block, statements that do not depend on each other (neither reads what the
  other writes, nor both have effects) are put in one canonical order, so swapping them
  hides nothing.

Then every run of :data:`K` tokens is hashed, and of every :data:`WINDOW` consecutive hashes
the smallest is kept: any shared run of ``K + WINDOW - 1`` tokens or more is certain to
share a fingerprint. Each fingerprint keeps the lines it came from, to show what is shared.
"""
from __future__ import annotations

import ast
import builtins
import copy
import functools
import hashlib
import io
import keyword
import re
import tokenize
from dataclasses import dataclass

from grader.course.syntax import parse
from grader.source.fingerprint_rewrite import inlinable, rewrite
from grader.source.source_lines import marker_lines

K = 25       # tokens per hashed run, about two statements: one statement alike is everyone's idiom
WINDOW = 5   # a fingerprint per window of 5 runs: a shared run of K + WINDOW - 1 = 29 tokens always shows
ANONYMOUS = "V"
MAX_BLOCK = 300      # statements in one block, at most, put in canonical order (the order is quadratic)
MAX_TOKENS = 50_000  # of one learner's part: far past any kernel; a bigger one is cut there
BUILTINS = frozenset(dir(builtins))
# Calls with effects beyond their value: statements making them keep their order.
EFFECTS = ("store", "atomic_", "device_print", "debug_barrier", "print", "static_print", "copy_", "zero_",
           "fill_", "save_for_backward")


@dataclass(frozen=True)
class Token:
    text: str
    first_line: int  # the lines of the statement it belongs to, in the learner's file
    last_line: int


@dataclass(frozen=True)
class Fingerprints:
    """A learner's part, winnowed: each fingerprint with the lines of its first occurrence."""
    lines: dict[int, tuple[int, int]]
    tokens: int

    @property
    def hashes(self) -> frozenset[int]:
        return frozenset(self.lines)


def part_names(text: str) -> tuple[str, ...]:
    """The top-level definitions of a puzzle file's learner part (between its markers)."""
    lines = text.splitlines()
    opening, closing = marker_lines(lines)
    if len(opening) != 1 or len(closing) != 1 or opening[0] > closing[0]:
        return ()
    tree = parse("\n".join(lines[opening[0] + 1:closing[0]]))
    return tuple(n.name for n in tree.body if isinstance(n, (ast.FunctionDef, ast.ClassDef)))


def _module_names(tree: ast.Module) -> dict[str, str]:
    """Names the file binds to modules and their members by import: alias -> dotted name."""
    found = {}
    for node in tree.body:  # a function's own import is rare in a kernel file; the top level is enough
        if isinstance(node, ast.Import):
            for alias in node.names:
                found[alias.asname or alias.name.split(".")[0]] = (alias.name if alias.asname
                                                                    else alias.name.split(".")[0])
        elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
            for alias in node.names:
                found[alias.asname or alias.name] = f"{node.module}.{alias.name}"
    return found


def learner_definitions(tree: ast.Module, roots: tuple[str, ...]) -> list[ast.stmt]:
    """The definitions named ``roots`` and every top-level function or class they reach by name,
    in the file's order."""
    defined = {n.name: n for n in tree.body if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef))}
    wanted, queue = set(), [r for r in roots if r in defined]
    while queue:
        name = queue.pop()
        if name in wanted:
            continue
        wanted.add(name)
        queue += [n.id for n in ast.walk(defined[name]) if isinstance(n, ast.Name) and n.id in defined]
    return [node for node in tree.body if getattr(node, "name", None) in wanted]


# ---- normalising ------------------------------------------------------------------------

def _base_name(target: ast.AST) -> str | None:
    while isinstance(target, (ast.Subscript, ast.Attribute, ast.Starred)):
        target = target.value
    return target.id if isinstance(target, ast.Name) else None


def _writes_reads(stmt: ast.stmt) -> tuple[set[str], set[str], bool]:
    """The names a statement writes and reads, and whether it has effects beyond them."""
    writes, reads = set(), set()
    for node in ast.walk(stmt):
        if isinstance(node, ast.Name):
            (writes if isinstance(node.ctx, (ast.Store, ast.Del)) else reads).add(node.id)
        elif isinstance(node, (ast.Subscript, ast.Attribute)) and isinstance(node.ctx, ast.Store):
            if (base := _base_name(node)) is not None:
                writes.add(base)
    if isinstance(stmt, ast.AugAssign) and (base := _base_name(stmt.target)) is not None:
        reads.add(base)
    simple = isinstance(stmt, (ast.Assign, ast.AugAssign, ast.AnnAssign))
    calls = [n.func for n in ast.walk(stmt) if isinstance(n, ast.Call)]
    effectful = not simple or any(
        (f.attr if isinstance(f, ast.Attribute) else getattr(f, "id", "")).startswith(EFFECTS) for f in calls)
    return writes, reads, effectful


class _Anonymise(ast.NodeTransformer):
    def __init__(self, modules: dict[str, str]) -> None:
        self.modules = modules

    def _name(self, name: str) -> str:
        module = self.modules.get(name)  # one token: `triton.language` would be three
        return module.replace(".", "_") if module else (name if name in BUILTINS else ANONYMOUS)

    def visit_Name(self, node: ast.Name) -> ast.Name:
        return ast.copy_location(ast.Name(self._name(node.id), node.ctx), node)

    def visit_arg(self, node: ast.arg) -> ast.arg:
        node.arg = ANONYMOUS
        if node.annotation is not None:
            node.annotation = self.visit(node.annotation)
        return node

    def visit_FunctionDef(self, node):
        node.name = ANONYMOUS
        return self.generic_visit(node)

    visit_AsyncFunctionDef = visit_FunctionDef

    def visit_ClassDef(self, node):
        node.name = ANONYMOUS
        return self.generic_visit(node)

    def visit_AugAssign(self, node: ast.AugAssign):
        node = self.generic_visit(node)
        load = copy.deepcopy(node.target)
        for sub in ast.walk(load):
            if hasattr(sub, "ctx"):
                sub.ctx = ast.Load()
        return ast.copy_location(ast.Assign([node.target], ast.BinOp(load, node.op, node.value)), node)

    def visit_Expr(self, node: ast.Expr):
        if isinstance(node.value, ast.Constant):  # a docstring, a bare `...`
            return None
        return self.generic_visit(node)

    def visit_Pass(self, node):
        return None


_IDENTIFIER = re.compile(r"(?<![.\w])[A-Za-z_]\w*")


def _key(stmt: ast.stmt, modules: dict[str, str]) -> str:
    """What orders independent statements: their text with the learner's names as ``V`` (a
    cheap stand-in for :class:`_Anonymise`; only the order depends on it)."""
    kept = {*modules, *BUILTINS, *keyword.kwlist}
    return _IDENTIFIER.sub(lambda m: m.group() if m.group() in kept else ANONYMOUS, ast.unparse(stmt))


def _canonical_order(body: list[ast.stmt], modules: dict[str, str]) -> list[ast.stmt]:
    """``body`` with independent statements in one order (the smallest normalised text first,
    among those whose dependencies are placed): the same for any order a learner wrote them in."""
    if len(body) > MAX_BLOCK:
        return body
    facts = [_writes_reads(s) for s in body]
    before: list[set[int]] = [set() for _ in body]
    for j, (w_j, r_j, e_j) in enumerate(facts):
        for i in range(j):
            w_i, r_i, e_i = facts[i]
            if (w_i & r_j) or (r_i & w_j) or (w_i & w_j) or (e_i and e_j):
                before[j].add(i)
    keys = [_key(s, modules) for s in body]
    placed: list[int] = []
    left = set(range(len(body)))
    while left:
        ready = [i for i in left if before[i] <= set(placed)]
        chosen = min(ready, key=lambda i: (keys[i], i))
        placed.append(chosen)
        left.remove(chosen)
    return [body[i] for i in placed]


def _reorder(node: ast.AST, modules: dict[str, str]) -> None:
    for field in ("body", "orelse", "finalbody"):
        block = getattr(node, field, None)
        if isinstance(block, list) and block and isinstance(block[0], ast.stmt):
            for stmt in block:
                _reorder(stmt, modules)
            setattr(node, field, _canonical_order(block, modules))


def _text_tokens(text: str) -> list[str]:
    skip = {tokenize.NEWLINE, tokenize.NL, tokenize.INDENT, tokenize.DEDENT, tokenize.ENDMARKER, tokenize.COMMENT}
    return [t.string for t in tokenize.generate_tokens(io.StringIO(text).readline) if t.type not in skip]


def _statement_tokens(stmt: ast.stmt, out: list[Token]) -> None:
    blocks = [f for f in ("body", "orelse", "finalbody") if isinstance(getattr(stmt, f, None), list)]
    if not blocks:
        out += [Token(t, stmt.lineno, stmt.end_lineno or stmt.lineno) for t in _text_tokens(ast.unparse(stmt))]
        return
    header = copy.copy(stmt)
    for field in blocks:
        setattr(header, field, [])
    header.body = [ast.Pass()]
    text = ast.unparse(header).rsplit("pass", 1)[0]
    out += [Token(t, stmt.lineno, stmt.lineno) for t in _text_tokens(text)]
    for field in blocks:
        block = getattr(stmt, field)
        if field != "body" and block:
            out.append(Token(field, block[0].lineno, block[0].lineno))
        for inner in block:
            _statement_tokens(inner, out)


def normalised_tokens(text: str, roots: tuple[str, ...]) -> list[Token]:
    """The tokens of the learner's part of ``text`` (the definitions ``roots`` and what they
    call), normalised as the module's docstring says; [] when it does not parse or defines none."""
    try:
        tree = parse(text)
        modules = _module_names(tree)
        tokens: list[Token] = []
        defined = {n.name: n for n in tree.body if isinstance(n, ast.FunctionDef)}
        helpers = {name: f for name, f in defined.items() if name not in roots and inlinable(f)}
        for node in tree.body:  # the tree is this call's own: changed in place
            if getattr(node, "name", None) in roots:
                rewrite(node, helpers, EFFECTS)
        for definition in learner_definitions(tree, roots):  # the helpers still called, after inlining
            if definition.name not in roots:
                rewrite(definition, helpers, EFFECTS)
            _reorder(definition, modules)
            definition = _Anonymise(modules).visit(definition)
            if definition is not None:
                _statement_tokens(definition, tokens)
    except (SyntaxError, ValueError, RecursionError, MemoryError):  # nested past what Python parses or unparses
        return []
    return tokens[:MAX_TOKENS]


_PRIME = (1 << 61) - 1  # k-grams hashed as a rolling polynomial of their tokens' stable hashes
_BASE = 1_000_003


@functools.lru_cache(maxsize=65536)
def _token_hash(text: str) -> int:
    """A token's hash, the same in every process (``hash()`` of a str is salted per process)."""
    return int.from_bytes(hashlib.blake2b(text.encode(), digest_size=8).digest(), "big") % _PRIME


def _gram_hashes(tokens: list[Token], k: int) -> list[int]:
    values = [_token_hash(t.text) for t in tokens]
    if len(values) < k:
        return []
    top = pow(_BASE, k - 1, _PRIME)
    h = 0
    for v in values[:k]:
        h = (h * _BASE + v) % _PRIME
    hashes = [h]
    for old, new in zip(values, values[k:]):
        h = ((h - old * top) * _BASE + new) % _PRIME
        hashes.append(h)
    return hashes


def winnow(tokens: list[Token], k: int = K, window: int = WINDOW) -> Fingerprints:
    """Robust winnowing: of each window of ``window`` k-gram hashes, the smallest (the rightmost
    of equals), each recorded once where it is first chosen."""
    grams = [(h, tokens[i].first_line, tokens[i + k - 1].last_line) for i, h in enumerate(_gram_hashes(tokens, k))]
    if 0 < len(grams) < window:  # shorter than a window: its smallest run is its fingerprint
        window = len(grams)
    chosen: dict[int, tuple[int, int]] = {}
    last = -1
    for start in range(len(grams) - window + 1):
        best = min(range(start, start + window), key=lambda i: (grams[i][0], -i))
        if best != last:
            h, first, end = grams[best]
            chosen.setdefault(h, (min(first, end), max(first, end)))
            last = best
    return Fingerprints(chosen, len(tokens))


def fingerprint(text: str, roots: tuple[str, ...]) -> Fingerprints:
    return winnow(normalised_tokens(text, roots))
