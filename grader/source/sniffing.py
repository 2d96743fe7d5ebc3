"""A static check of kernel bodies for code that tells the interpreter from a GPU.

Compiled Triton accepts ``hasattr``, ``getattr`` and attribute access on its values, so a
kernel can ask ``hasattr(x_ptr.handle, "data")`` (true only in the interpreter) and compute
one thing on a laptop and another on a GPU. Nothing a correct kernel needs looks like that,
so the grader reads the source (it never runs it) and refuses such kernels with the line.

A Helion kernel's host code sees a GPU wherever it is graded (:mod:`grader.sandbox.world`), so
asking for a tensor's device finds nothing; asking for its Python class (``type(x)``,
``x.__class__``) is the one question left that tells the CPU's tensors from a GPU's, and is
refused in the kernel and the functions of its file it calls.
"""
from __future__ import annotations

import ast
from dataclasses import dataclass
from pathlib import Path

from grader.course.syntax import parse

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


# What asks for a value's Python class, in Helion host code: on the CPU its tensors are the grader's
# GPU tensors (grader.sandbox.world), of a class of their own, and on a GPU plain ones.
CLASS_QUESTIONS = {
    "__class__": "asks for a value's Python class", "__mro__": "reads a class's ancestry",
    "__bases__": "reads a class's ancestry", "__subclasses__": "reads a class's descendants",
}


# What switches PyTorch's dispatch off or makes a tensor subclass that runs code of its own for every
# operation. The grader sees the PyTorch that wrappers and Helion host code run through dispatch, so
# each of these computes where nothing sees it; none has a use in a puzzle. Matched as a name, an
# attribute, an imported name (under any alias), a definition's name, or inside a string (getattr).
INTERNALS = {
    "_disable_current_modes": "switches off PyTorch's dispatch modes",
    "_DisableTorchDispatch": "switches off PyTorch's dispatch",
    "DisableTorchFunction": "switches off PyTorch's function overrides",
    "DisableTorchFunctionSubclass": "switches off PyTorch's function overrides",
    "_get_current_dispatch_mode": "asks whether a dispatch mode is watching",
    "_push_mode": "changes PyTorch's dispatch modes", "_pop_mode": "changes PyTorch's dispatch modes",
    "TorchDispatchMode": "intercepts PyTorch's dispatch", "TorchFunctionMode": "intercepts PyTorch's functions",
    "__torch_dispatch__": "makes a tensor subclass that runs its own code for every operation",
    "__torch_function__": "makes a tensor subclass that runs its own code for every function",
    "_make_subclass": "makes a tensor subclass", "_make_wrapper_subclass": "makes a tensor subclass",
    "_python_dispatch": "reaches PyTorch's dispatch machinery", "_C": "reaches PyTorch's C++ internals",
}
# Long enough to be looked for inside a string ("torch.utils._python_dispatch"); `_C` only whole.
_IN_TEXT = tuple(sorted((w for w in INTERNALS if len(w) > 2), key=len, reverse=True))


@dataclass(frozen=True)
class Finding:
    function: str
    line: int
    source: str
    what: str
    helper: str = ""  # "" for a kernel; else what kind of host Python (see grader.source.host_helpers)
    helion: bool = False  # in a Helion kernel's host code (or a function of its file it calls)
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
            if isinstance(node, ast.Name) and node.id in FORBIDDEN_NAMES and node.id not in _params(fn):
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


def _params(fn: ast.FunctionDef) -> set[str]:
    return {a.arg for a in fn.args.posonlyargs + fn.args.args + fn.args.kwonlyargs}


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
        return escape
    found = next(filter(None, (find(source, name) for name in sorted(_jit_functions(tree)))), None)
    return found or _class_question(tree, source.splitlines())


def _internal(node: ast.AST) -> tuple[str, str] | None:
    """(the internal named, how) where ``node`` names one of INTERNALS, else None."""
    names: list[str] = []
    if isinstance(node, ast.Name):
        names = [node.id] if node.id != "_C" else []  # a learner's own `_C = 4`; `torch._C` is an attribute
    elif isinstance(node, ast.Attribute):
        names = [node.attr]
    elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
        names = [node.name] if node.name != "_C" else []
    elif isinstance(node, ast.alias):
        names = [node.asname or "", *reversed(node.name.split("."))]  # the most particular first
    elif isinstance(node, ast.ImportFrom):
        names = (node.module or "").split(".")
    elif isinstance(node, ast.Constant) and isinstance(node.value, str):
        if node.value in INTERNALS:
            return node.value, f"`{node.value!r}` names `{node.value}`, which"
        word = next((w for w in _IN_TEXT if w in node.value), None)
        return None if word is None else (word, f"`{node.value!r}` names `{word}`, which")
    word = next((n for n in names if n in INTERNALS), None)
    return None if word is None else (word, f"`{word}`")


def _helper_modules(path: Path, tree: ast.Module) -> list[Path]:
    """The learner's own modules beside ``path`` that it imports (``import helpers``,
    ``from helpers import f``): their code runs as the wrapper's or the host code's does."""
    names = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names |= {a.name.split(".")[0] for a in node.names}
        elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
            names.add(node.module.split(".")[0])
    return [path.parent / f"{n}.py" for n in sorted(names) if (path.parent / f"{n}.py").is_file()
            and (path.parent / f"{n}.py").resolve() != path.resolve()]


def internals(path: Path, source: str, tree: ast.Module) -> Finding | None:
    """The first use of PyTorch's dispatch switches or tensor-subclass machinery (INTERNALS) in the
    file or in a module of the learner's own it imports, with its line and enclosing function."""
    files = [(path, source, tree)]
    for helper in _helper_modules(path, tree):
        try:
            text = helper.read_text(encoding="utf-8")
            files.append((helper, text, parse(text)))
        except (OSError, UnicodeDecodeError, SyntaxError):
            continue  # the import reports it when it runs
    for where, text, module in files:
        lines = text.splitlines()
        owner = {}
        for fn in ast.walk(module):
            if isinstance(fn, (ast.FunctionDef, ast.AsyncFunctionDef)):
                owner.update({id(n): fn.name for n in ast.walk(fn) if n is not fn})
        prose = {id(n.value) for n in ast.walk(module) if isinstance(n, ast.Expr)}  # docstrings say, not do
        nodes = [n for n in ast.walk(module) if hasattr(n, "lineno") and id(n) not in prose]
        for node in sorted(nodes, key=lambda n: (n.lineno, n.col_offset)):
            named = _internal(node)
            if isinstance(node, (ast.Import, ast.ImportFrom)):  # what it imports, then from where
                named = next(filter(None, map(_internal, node.names)), None) or named
            if named is None:
                continue
            word, shown = named
            function = owner.get(id(node), where.name)
            if where != path and function != where.name:
                function = f"{function}` of `{where.name}"
            source_line = lines[node.lineno - 1].strip() if node.lineno <= len(lines) else ""
            return Finding(function, node.lineno, source_line, f"{shown} {INTERNALS[word]}", internals=True)
    return None


def _class_question(tree: ast.Module, lines: list[str]) -> Finding | None:
    """The first question of a value's Python class in a Helion kernel's host code, or in a
    function of its file that it calls: ``type(x) is torch.Tensor`` is false of the tensors the
    grader's CPU hands it and true on a GPU, so it could take one path where it is graded and
    another where it is used (``isinstance`` is true on both)."""
    defs = {n.name: n for n in tree.body if isinstance(n, ast.FunctionDef)}
    todo = [name for name, fn in defs.items() if any("helion" in ast.unparse(d) for d in fn.decorator_list)]
    seen: set[str] = set()
    while todo:
        name = todo.pop(0)
        if name in seen or name not in defs:
            continue
        seen.add(name)
        fn = defs[name]
        for node in ast.walk(fn):
            what = None
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "type" \
                    and len(node.args) == 1 and "type" not in _params(fn):
                what = f"`{ast.unparse(node)}` asks for a value's Python class"
            elif isinstance(node, ast.Attribute) and node.attr in CLASS_QUESTIONS:
                what = f"`{ast.unparse(node)}` {CLASS_QUESTIONS[node.attr]}"
            if what is not None:
                text = lines[node.lineno - 1].strip() if node.lineno <= len(lines) else ""
                return Finding(name, node.lineno, text, what, helion=True)
        todo.extend(sorted(_called_names(fn)))
    return None


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
    if finding.helion:
        return (f"{where}: {finding.what}. Graded on a CPU, your host code gets tensors that act as a GPU's, of a "
                f"class of the grader's own; on a GPU they are plain `torch.Tensor`s. A question of their class "
                f"could take one path where the kernel is graded and another where it is used, so the grader "
                f"does not run it. Fix: ask `isinstance(x, torch.Tensor)`, which is true on every machine.")
    return (f"{where}: {finding.what}. A kernel that inspects its values or its environment can behave "
            f"differently in the interpreter than on a GPU, so the grader does not run it. Compute with "
            f"`tl.*` operations on the values themselves, and pass anything else as a `tl.constexpr` parameter.")
