"""A static check of kernel bodies for code that tells the interpreter from a GPU.

Compiled Triton accepts ``hasattr``, ``getattr`` and attribute access on its values, so a
kernel can ask ``hasattr(x_ptr.handle, "data")`` (true only in the interpreter) and compute
one thing on a laptop and another on a GPU. Nothing a correct kernel needs looks like that,
so the grader reads the source (it never runs it) and refuses such kernels with the line.

Host Python sees a GPU wherever it is graded (:mod:`grader.sandbox.world`), so asking for a
tensor's device finds nothing; what is left to refuse there is read by
:mod:`grader.source.host_escapes` and worded here, with the kernels' findings.
"""
from __future__ import annotations

import ast
from dataclasses import dataclass
from pathlib import Path

from grader.course.syntax import parse
from grader.source.host_escapes import Escape, class_question, internals, params_of

# Names that have no business in a kernel: reflection, and the process's environment.
FORBIDDEN_NAMES = {
    "hasattr": "asks whether a value has an attribute",
    "getattr": "reads an attribute by name",
    "setattr": "sets an attribute by name",
    "vars": "reads an object's attributes",
    "globals": "reads the module's globals",
    "locals": "reads local variables by name",
    "eval": "runs Python source",
    "exec": "runs Python source",
    "__import__": "imports a module",
    "open": "opens a file",
    "os": "reads the process's environment",
    "sys": "reads the interpreter's state",
    "TRITON_INTERPRET": "names the interpreter's switch",
}
FORBIDDEN_ATTRIBUTES = {
    "handle": "reads the interpreter's storage behind a value",
    "environ": "reads the process's environment",
    "getenv": "reads the process's environment",
    "interpreter": "reaches into Triton's interpreter",
    "knobs": "reads Triton's settings",
    "runtime": "reaches into Triton's runtime",
    "__dict__": "reads an object's attributes",
    "__class__": "asks for a value's Python type",
}


@dataclass(frozen=True)
class Finding:
    function: str
    line: int
    source: str
    what: str
    helper: str = ""  # "" for a kernel; else what kind of host Python (see grader.source.host_helpers)
    host_class: bool = False  # a value's class asked in a kind's own kernel's host code (a Helion kernel's)
    internals: bool = False  # switches PyTorch's dispatch off, or makes a tensor subclass


def _jit_functions(tree: ast.Module) -> dict[str, ast.FunctionDef]:
    """Top-level functions decorated with triton.jit (bare, called, or under autotune/heuristics)."""
    found = {}
    for node in tree.body:
        if isinstance(node, ast.FunctionDef) and any("jit" in ast.unparse(d) for d in node.decorator_list):
            found[node.name] = node
    return found


def _called_names(fn: ast.FunctionDef) -> set[str]:
    return {n.func.id for n in ast.walk(fn) if isinstance(n, ast.Call) and isinstance(n.func, ast.Name)}


def find(source: str, kernel: str) -> Finding | None:
    """The first interpreter-sniffing construct in ``kernel`` or a @triton.jit helper it calls."""
    try:
        tree = parse(source)
    except SyntaxError:
        return None  # the worker reports it, with the line
    jitted = _jit_functions(tree)
    lines = source.splitlines()
    todo, seen = [kernel], set()
    found = _kernel_finding(jitted, lines, todo, seen)
    return found or _host_finding(source, tree, jitted, seen)


def _host_finding(source: str, tree: ast.Module, jitted: dict, kernels: set) -> Finding | None:
    """The first thing the compile-time helpers and prune functions of ``kernels`` may not do."""
    from grader.source.definition_rules import bindings_of
    from grader.source.host_helpers import HELPER, PRUNE, helper_names, problems, prune_function
    helpers = helper_names(tree, bindings_of(tree))
    called = set().union(*(_called_names(jitted[k]) for k in kernels)) & helpers
    defs = {n.name: n for n in tree.body if isinstance(n, ast.FunctionDef)}
    grown = None
    while grown != called:  # helpers call helpers
        grown = set(called)
        called |= set().union(*(_called_names(defs[n]) for n in grown)) & helpers
    checks = [(called, HELPER)]
    for name in kernels:
        pruner = next(filter(None, map(prune_function, jitted[name].decorator_list)), None)
        if isinstance(pruner, ast.Name):
            checks.append(({pruner.id}, PRUNE))
    for names, kind in checks:
        problem = problems(source, names)
        if problem:
            return Finding(problem.function, problem.line, problem.source, problem.what, kind)
    return None


def _kernel_finding(jitted: dict, lines: list, todo: list, seen: set) -> Finding | None:
    while todo:
        name = todo.pop(0)
        if name in seen or name not in jitted:
            continue
        seen.add(name)
        fn = jitted[name]
        for node in ast.walk(fn):
            what = None
            if isinstance(node, ast.Name) and node.id in FORBIDDEN_NAMES and node.id not in params_of(fn):
                what = f"`{node.id}` {FORBIDDEN_NAMES[node.id]}"
            elif isinstance(node, ast.Attribute) and node.attr in FORBIDDEN_ATTRIBUTES:
                what = f"`.{node.attr}` {FORBIDDEN_ATTRIBUTES[node.attr]}"
            elif isinstance(node, ast.Constant) and node.value == "TRITON_INTERPRET":
                what = f"`{node.value!r}` {FORBIDDEN_NAMES['TRITON_INTERPRET']}"
            if what is not None:
                text = lines[node.lineno - 1].strip() if node.lineno <= len(lines) else ""
                return Finding(name, node.lineno, text, what)
        todo.extend(sorted(_called_names(fn)))
    return None


def check_file(path: Path, kernel: str | None) -> Finding | None:
    """The first finding in ``kernel`` (and what it calls), or, for ``None``, in any kernel of the
    file: an autograd wrapper may launch any of them."""
    try:
        source = Path(path).read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError):
        return None
    if kernel is not None:
        return find(source, kernel)
    try:
        tree = parse(source)
    except SyntaxError:
        return None
    escape = internals(Path(path), source, tree)
    if escape is not None:
        return _finding(escape, internals=True)
    found = next(filter(None, (find(source, name) for name in sorted(_jit_functions(tree)))), None)
    question = None if found else class_question(Path(path), tree, source.splitlines())
    return found or (question and _finding(question, host_class=True))


def _finding(escape: Escape, **kind: bool) -> Finding:
    return Finding(escape.function, escape.line, escape.source, escape.what, **kind)


def message(finding: Finding) -> str:
    if finding.helper:
        from grader.source.host_helpers import Problem
        from grader.source.host_helpers import message as helper_message
        return helper_message(Problem(finding.function, finding.line, finding.source, finding.what), finding.helper)
    where = f"`{finding.function}`" + (f" at line {finding.line}: `{finding.source}`" if finding.source else "")
    if finding.internals:
        return (f"{where}: {finding.what}. The grader sees the PyTorch your wrapper or Helion host code runs "
                f"through PyTorch's dispatch; code that switches it off or makes tensor subclasses computes "
                f"where nothing sees it, so the grader does not run it. Fix: delete it; outside your kernels, "
                f"only allocate outputs (`torch.empty_like(x)`), take views and sizes, launch the kernels and "
                f"save for backward (a `torch.autograd.Function` subclass is how a puzzle's wrapper is written).")
    if finding.host_class:
        return (f"{where}: {finding.what}. Graded on a CPU, your host code gets tensors that act as a GPU's, of a "
                f"class of the grader's own; on a GPU they are plain `torch.Tensor`s. A question of their class "
                f"could take one path where the kernel is graded and another where it is used, so the grader "
                f"does not run it. Fix: ask `isinstance(x, torch.Tensor)`, which is true on every machine.")
    return (f"{where}: {finding.what}. A kernel that inspects its values or its environment can behave "
            f"differently in the interpreter than on a GPU, so the grader does not run it. Compute with "
            f"`tl.*` operations on the values themselves, and pass anything else as a `tl.constexpr` parameter.")
