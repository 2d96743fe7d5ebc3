"""Reading a learner's text: the code of their part of a file, and which tl.load/tl.store a
line holds, and its parts."""
from __future__ import annotations

import ast
import io
import re
import tokenize

from grader.course.syntax import parse

# A puzzle file marks the learner's part: `# ---- your part: ... ----` opens it, `# ------...` closes it.
OPENING = re.compile(r"^# ---- your part\b.*$")
CLOSING = re.compile(r"^# -{10,}$")


IMPORTS_TORCH = re.compile(r"^\s*(?:import|from)\s+(?:torch|jaxtyping)\b", re.MULTILINE)


def imports_torch(text: str) -> bool:
    """Whether a learner's file imports torch (a puzzle file does, for its spec): its compile
    checker then imports it once, in its zygote, rather than in each worker (1.8 s each)."""
    return IMPORTS_TORCH.search(text) is not None


def imports_package(text: str, package: str) -> bool:
    """Whether a file imports ``package``, a kind's own (a Helion puzzle's file imports helion; so
    does the Triton Helion generates where it calls Helion's helpers): its zygote then imports it
    once, as it starts."""
    return re.search(rf"^\s*(?:import|from)\s+{re.escape(package)}\b", text, re.MULTILINE) is not None


def marker_lines(lines: list[str]) -> tuple[list[int], list[int]]:
    """The indices of the lines that open and that close a learner's part."""
    return ([i for i, line in enumerate(lines) if OPENING.match(line)],
            [i for i, line in enumerate(lines) if CLOSING.match(line)])


def learner_code(text: str) -> str:
    """What the learner wrote in a file, as code: their part where the file is a puzzle file
    (the statement and the spec around it are the course's), without comments and string
    literals. A known-mistake pattern is looked for here, so that the statement's own words
    ("subtracts the square of the mean") never pass for the learner's."""
    lines = text.splitlines()
    opening, closing = marker_lines(lines)
    if len(opening) == 1 and len(closing) == 1 and opening[0] < closing[0]:
        text = "\n".join(lines[opening[0] + 1:closing[0]]) + "\n"
    lines = text.splitlines(keepends=True)
    blanked = {tokenize.COMMENT, tokenize.STRING, getattr(tokenize, "FSTRING_MIDDLE", tokenize.STRING)}
    try:
        tokens = [t for t in tokenize.generate_tokens(io.StringIO(text).readline) if t.type in blanked]
    except (tokenize.TokenError, SyntaxError):
        return text  # does not tokenize: the worker reports the error with its line
    for token in reversed(tokens):  # each blanked in place, so patterns keep the code's own spacing
        (row, col), (end_row, end_col) = token.start, token.end
        for index in range(row - 1, end_row):
            line = lines[index]
            first = col if index == row - 1 else 0
            last = end_col if index == end_row - 1 else len(line.rstrip("\n"))
            lines[index] = line[:first] + " " * (last - first) + line[last:]
    return "".join(lines)


def kernel_code(text: str, kernel: str) -> str:
    """:func:`learner_code` of only the graded ``kernel`` (a function or class of the file) and the
    functions and classes of the file it reaches by name: a known-mistake note is about the kernel
    being graded, never about another puzzle's kernel kept in the same file (puzzle 7's
    ``other=0.0``, right there, is not puzzle 18's mistake). Within a puzzle file's part when it
    has one. The whole part where the kernel cannot be found (a file that does not parse: the
    worker reports that)."""
    try:
        tree = parse(text)
    except SyntaxError:
        return learner_code(text)
    lines = text.splitlines(keepends=True)
    opening, closing = marker_lines([line.rstrip("\n") for line in lines])
    part = range(opening[0] + 1, closing[0] + 1) if len(opening) == 1 and len(closing) == 1 else None
    defined = {node.name: node for node in tree.body if isinstance(node, (ast.FunctionDef, ast.ClassDef))
               and (part is None or node.lineno in part)}
    if kernel not in defined:
        return learner_code(text)
    reached, todo = set(), [kernel]
    while todo:
        name = todo.pop()
        if name in reached:
            continue
        reached.add(name)
        todo += [n.id for n in ast.walk(defined[name]) if isinstance(n, ast.Name) and n.id in defined]
    used = {n.id for name in reached for n in ast.walk(defined[name]) if isinstance(n, ast.Name)}
    # the module's constants the kernel reads (`GROUP = tl.constexpr(8)`) are part of what it computes
    constants = [node for node in tree.body if isinstance(node, (ast.Assign, ast.AnnAssign))
                 and (part is None or node.lineno in part)
                 and {t.id for t in ast.walk(node) if isinstance(t, ast.Name) and isinstance(t.ctx, ast.Store)} & used]
    kept = [""] * len(lines)
    for node in [defined[name] for name in reached] + constants:
        first = min([node.lineno] + [d.lineno for d in getattr(node, "decorator_list", ())]) - 1
        kept[first:node.end_lineno] = lines[first:node.end_lineno]
    return learner_code("".join(line if line else "\n" for line in kept))


EXPONENTIALS = ("exp", "exp2")  # tl.exp, tl.math.exp2, torch.exp, x.exp()


def kernel_traits(text: str, kernel: str) -> tuple[bool, bool]:
    """(loops, exponentiates): whether the graded kernel, with what it calls of its file
    (:func:`kernel_code`), has a ``for`` or ``while`` loop, and calls an exponential. Where the
    code does not parse, both True: a message then keeps its general words."""
    try:
        tree = parse(kernel_code(text, kernel))
    except SyntaxError:
        return True, True
    nodes = list(ast.walk(tree))
    loops = any(isinstance(n, (ast.For, ast.While)) for n in nodes)
    calls = [n.func for n in nodes if isinstance(n, ast.Call)]
    exponentiates = any((f.attr if isinstance(f, ast.Attribute) else getattr(f, "id", "")) in EXPONENTIALS
                        for f in calls)
    return loops, exponentiates


def is_stub_body(func: ast.FunctionDef | ast.AsyncFunctionDef) -> bool:
    """A body of only docstrings, ``pass``, ``...``, bare ``return`` and ``raise
    NotImplementedError`` is a stub, not an attempt."""
    for stmt in func.body:
        if isinstance(stmt, ast.Pass):
            continue
        if isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Constant):
            continue
        if isinstance(stmt, ast.Raise) and stmt.exc is not None and "NotImplementedError" in ast.unparse(stmt.exc):
            continue
        if isinstance(stmt, ast.Return) and (stmt.value is None or (
                isinstance(stmt.value, ast.Constant) and stmt.value.value is None)):
            continue
        return False
    return True


def statement_start(node: ast.stmt) -> int:
    """The 0-based index of a top-level statement's first line, its decorators included."""
    decorators = getattr(node, "decorator_list", None)
    return (decorators[0].lineno if decorators else node.lineno) - 1


def defined_names(source: str) -> set[str]:
    """Top-level functions and classes of a module's text, read without running it."""
    try:
        tree = parse(source)
    except SyntaxError:
        return set()  # the worker reports the error with its line when it imports the file
    return {n.name for n in tree.body if isinstance(n, (ast.FunctionDef, ast.ClassDef))}


def access_call(source: str, op: str) -> ast.Call | None:
    """The tl.load / tl.store / tl.atomic_* call on a line, if the line parses on its own."""
    try:
        tree = parse(source.strip())
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
