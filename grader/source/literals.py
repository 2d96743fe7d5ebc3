"""Literal Python and data, as the definitions rules read them: values whose evaluation runs
nothing of the learner's.

Literals (:func:`is_literal`) are what options and defaults may be. Data (:func:`data_problem`) is
what a module-level name may hold: kernel libraries name what their decorators and launches use,
``configs = [triton.Config(...)]`` then ``@triton.autotune(configs=configs, ...)``, ``BLOCK = 1024``,
``{torch.float16: tl.float16}``, ``LOG2E = math.log2(math.e)``. Evaluating data calls nothing of the
learner's and nothing with an effect, only constructors of plain values; the rules read the
syntax tree only, and names resolve through the file's imports (:class:`grader.source.bindings.Bindings`).
``constants`` maps each name a kept assignment bound so far to its value's node (None where one
statement bound several from a value not written out), so that a later value, or an autotune
decorator, can use it and see what it holds.
"""
from __future__ import annotations

import ast
import math

ARITHMETIC = (ast.Add, ast.Sub, ast.Mult, ast.Div, ast.FloorDiv, ast.Mod, ast.Pow,
              ast.LShift, ast.RShift, ast.BitOr, ast.BitAnd, ast.BitXor)
HUGE_EXPONENT = 1024  # 2 ** 10 ** 10 would hang the import: exponents and shifts stay small


def is_literal(node: ast.expr | None, constants: frozenset = frozenset()) -> bool:
    """Plain data written out: constants, containers of them, unary minus and arithmetic,
    and names of constants kept earlier in the file."""
    if isinstance(node, ast.Constant):
        return True
    if isinstance(node, ast.Name):
        return node.id in constants
    if isinstance(node, (ast.Tuple, ast.List, ast.Set)):
        return all(is_literal(e, constants) for e in node.elts)
    if isinstance(node, ast.Dict):
        return all(k is not None and is_literal(k, constants) for k in node.keys) \
            and all(is_literal(v, constants) for v in node.values)
    if isinstance(node, ast.UnaryOp):
        return is_literal(node.operand, constants)
    if isinstance(node, ast.BinOp) and isinstance(node.op, ARITHMETIC):
        if isinstance(node.op, (ast.Pow, ast.LShift)) and not _small_int(node.right):
            return False
        if isinstance(node.op, ast.Mult) and _repeats_too_often(node.left, node.right):
            return False  # `[0] * 10 ** 9` would fill the worker's memory
        return is_literal(node.left, constants) and is_literal(node.right, constants)
    return False


def _small_int(node: ast.expr) -> bool:
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
        node = node.operand
    return isinstance(node, ast.Constant) and type(node.value) is int and node.value <= HUGE_EXPONENT


def keywords_problem(call: ast.Call, what: str) -> str | None:
    for keyword in call.keywords:
        if keyword.arg is None:
            return f"`**` arguments to {what} are not allowed: write each option out"
        if not is_literal(keyword.value):
            return f"option `{keyword.arg}` of {what} is not a literal"
    return None


def is_none(node: ast.expr) -> bool:
    return isinstance(node, ast.Constant) and node.value is None


def import_try(node: ast.stmt) -> bool:
    """``try: from a import f`` / ``except ImportError: from b import f``, as Liger imports
    libdevice: only imports run, whichever branch is taken."""
    caught = {"ImportError", "ModuleNotFoundError"}
    return (isinstance(node, ast.Try) and not node.orelse and not node.finalbody and node.handlers
            and all(isinstance(s, (ast.Import, ast.ImportFrom)) for s in node.body)
            and all(h.name is None and isinstance(h.type, ast.Name) and h.type.id in caught
                    and all(isinstance(s, (ast.Import, ast.ImportFrom)) for s in h.body) for h in node.handlers))


# ---- data: what a module-level name may hold --------------------------------------------------
TRITON_DTYPES = ("bfloat16", "float16", "float32", "float64", "float8e4b15", "float8e4b8", "float8e4nv", "float8e5",
                 "float8e5b16", "int1", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64")
TORCH_DTYPES = ("bfloat16", "bool", "double", "float", "float16", "float32", "float64", "float8_e4m3fn",
                "float8_e4m3fnuz", "float8_e5m2", "float8_e5m2fnuz", "half", "int", "int8", "int16", "int32",
                "int64", "long", "short", "uint8", "uint16", "uint32", "uint64", "complex64", "complex128")
DATA_ATTRIBUTES = ({f"triton.language.{n}" for n in TRITON_DTYPES} | {f"torch.{n}" for n in TORCH_DTYPES}
                   | {"math.pi", "math.e", "math.tau", "math.inf", "math.nan"})
# calls that build a plain value from plain values, and nothing else
PURE_CALLS = {"math.log", "math.log2", "math.log10", "math.exp", "math.sqrt", "math.ceil", "math.floor",
              "builtins.float", "builtins.int", "builtins.bool", "builtins.min", "builtins.max", "builtins.abs",
              "builtins.round", "triton.next_power_of_2", "triton.cdiv", "torch.finfo", "torch.iinfo",
              "triton.language.constexpr", "builtins.list", "builtins.tuple", "builtins.dict"}
INFO_FIELDS = {"max", "min", "eps", "tiny", "bits", "smallest_normal", "resolution"}  # of torch.finfo(...)
VIEWS = {"items", "keys", "values"}  # a dict's, to loop over in a comprehension
CONFIG = "triton.Config"
CONSTEXPR = "triton.language.constexpr"
MAX_ITEMS = 4096  # what a comprehension may make: evaluating one must not hang the import
WHAT_IS_DATA = ("numbers, strings, lists, tuples, dicts, comprehensions over them, `triton.Config(...)`, "
                "dtypes such as `tl.float16`, and constants defined above")


def data_problem(node: ast.expr | None, bindings, constants: dict, loop: frozenset = frozenset(),
                 small: frozenset = frozenset()) -> str | None:
    """Why ``node`` is not data, or None. ``loop``: the names of enclosing comprehensions; ``small``:
    those of them that loop over small whole numbers, which may be exponents (``2 ** i``)."""
    def inner(child, names=loop):
        return data_problem(child, bindings, constants, names, small)

    def first(children, names=loop):
        return next((p for p in (inner(c, names) for c in children if c is not None) if p), None)

    if node is None or isinstance(node, ast.Constant):
        return None
    if isinstance(node, ast.Name):
        if node.id in constants or node.id in loop:
            return None
        return f"`{node.id}` is not a constant defined above"
    if isinstance(node, ast.Attribute):
        if bindings.origin(node) in DATA_ATTRIBUTES | PURE_CALLS:
            return None  # a dtype, or a function that only computes (`next_power_of_2 = triton.next_power_of_2`)
        held = resolved(node.value, constants)
        if node.attr == "value" and isinstance(held, ast.Call) and bindings.origin(held.func) == CONSTEXPR:
            return None  # Liger's `_CASTING_MODE_LLAMA.value`, of `tl.constexpr(0)`
        if node.attr in INFO_FIELDS and isinstance(node.value, ast.Call) \
                and bindings.origin(node.value.func) in ("torch.finfo", "torch.iinfo"):
            return inner(node.value)
        return (f"`{ast.unparse(node)}` is not a dtype, a constant of `math` or a function that only computes "
                f"(`triton.cdiv`, `math.log2`)")
    if isinstance(node, (ast.Tuple, ast.List, ast.Set)):
        return first(node.elts)
    if isinstance(node, ast.Starred):
        return inner(node.value)
    if isinstance(node, ast.Dict):
        return first([*node.keys, *node.values])  # a None key is `**other`: its value is checked
    if isinstance(node, ast.UnaryOp):
        return inner(node.operand)
    if isinstance(node, ast.BinOp):
        if not isinstance(node.op, ARITHMETIC):
            return f"`{ast.unparse(node)}` is not arithmetic"
        exponent = node.right
        if isinstance(node.op, (ast.Pow, ast.LShift)) and not _small_int(exponent) \
                and not (isinstance(exponent, ast.Name) and exponent.id in small):
            return f"`{ast.unparse(node)}` raises to a power that is not a small whole number"
        if isinstance(node.op, ast.Mult) and _repeats_too_often(node.left, node.right):
            return (f"`{ast.unparse(node)}` repeats a sequence more than {MAX_ITEMS} times, or a number of times "
                    f"not written out")
        return first([node.left, node.right])
    if isinstance(node, ast.BoolOp):
        return first(node.values)
    if isinstance(node, ast.Compare):
        return first([node.left, *node.comparators])
    if isinstance(node, ast.IfExp):
        return first([node.test, node.body, node.orelse])
    if isinstance(node, ast.Subscript):
        return first([node.value, node.slice])
    if isinstance(node, ast.Slice):
        return first([node.lower, node.upper, node.step])
    if isinstance(node, ast.Call):
        return _call_problem(node, bindings, constants, loop, small)
    if isinstance(node, (ast.ListComp, ast.SetComp, ast.DictComp, ast.GeneratorExp)):
        return _comprehension_problem(node, bindings, constants, loop, small)
    return f"`{ast.unparse(node)}` is not data"


def _repeats_too_often(left: ast.expr, right: ast.expr) -> bool:
    """``[0] * n``: a sequence written out, repeated other than a few times written out."""
    def sequence(node):
        return isinstance(node, (ast.List, ast.Tuple, ast.ListComp)) or \
            (isinstance(node, ast.Constant) and isinstance(node.value, (str, bytes)))

    def few(node):
        return isinstance(node, ast.Constant) and type(node.value) is int and node.value <= MAX_ITEMS
    return (sequence(left) and not few(right)) or (sequence(right) and not few(left))


def _call_problem(node: ast.Call, bindings, constants: dict, loop: frozenset, small: frozenset) -> str | None:
    origin = bindings.origin(node.func)
    shown = f"`{ast.unparse(node.func)}(...)`"
    if origin == CONFIG:
        hooks = [k for k in node.keywords if k.arg == "pre_hook" and not is_none(k.value)]
        if hooks:
            return "`triton.Config(pre_hook=...)` would run your code: hooks are not allowed"
    elif origin not in PURE_CALLS:
        return f"{shown} is a call, and only calls that build data run at import (`triton.Config`, `float`, " \
               f"`min`, `math.log2` and the like)"
    if any(k.arg is None for k in node.keywords):
        return f"`**` arguments to {shown} are not data: write each one out"
    for child in [*node.args, *(k.value for k in node.keywords)]:
        problem = data_problem(child, bindings, constants, loop, small)
        if problem:
            return problem
    return None


def length(node: ast.expr | None, bindings, constants: dict, depth: int = 0) -> int | None:
    """How many items ``node`` holds where that is known from the source, else None."""
    if node is None or depth > 16:
        return None
    if isinstance(node, ast.Name):
        return length(constants.get(node.id), bindings, constants, depth + 1)
    if isinstance(node, (ast.List, ast.Tuple, ast.Set)):
        counts = [length(e.value, bindings, constants, depth + 1) if isinstance(e, ast.Starred) else 1
                  for e in node.elts]
        return None if None in counts else sum(counts)
    if isinstance(node, ast.Dict):
        return len(node.keys) if None not in node.keys else None
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add):
        a, b = (length(side, bindings, constants, depth + 1) for side in (node.left, node.right))
        return None if a is None or b is None else a + b
    if isinstance(node, ast.Call) and bindings.origin(node.func) == "builtins.range":
        if node.keywords or not 0 < len(node.args) <= 3 or \
                not all(isinstance(a, ast.Constant) and type(a.value) is int for a in node.args):
            return None
        return len(range(*(a.value for a in node.args)))
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr in VIEWS \
            and not node.args and not node.keywords:
        return length(node.func.value, bindings, constants, depth + 1)
    if isinstance(node, (ast.ListComp, ast.SetComp, ast.DictComp, ast.GeneratorExp)):
        total = 1
        for generator in node.generators:
            count = length(generator.iter, bindings, constants, depth + 1)
            if count is None:
                return None
            total *= count
        return total
    return None


def _comprehension_problem(node, bindings, constants: dict, loop: frozenset, small: frozenset) -> str | None:
    """``[f(a, b) for a in [literals] for b in range(literal)]``: loops over data whose length the
    source says, so that evaluating it stays small."""
    names = set(loop)
    for generator in node.generators:
        targets = generator.target.elts if isinstance(generator.target, ast.Tuple) else [generator.target]
        if generator.is_async or not all(isinstance(t, ast.Name) for t in targets):
            return f"`{ast.unparse(generator.target)}`: a comprehension's loop must bind plain names"
        iterable = generator.iter
        is_range = isinstance(iterable, ast.Call) and bindings.origin(iterable.func) == "builtins.range"
        is_view = isinstance(iterable, ast.Call) and isinstance(iterable.func, ast.Attribute) \
            and iterable.func.attr in VIEWS and not iterable.args and not iterable.keywords
        problem = None if is_range else data_problem(iterable.func.value if is_view else iterable, bindings,
                                                     constants, frozenset(names), small)
        if problem is None and length(iterable, bindings, constants) is None:
            problem = f"`{ast.unparse(iterable)}` is not a list, tuple, dict or `range` of numbers written out"
        if problem:
            return problem
        names |= {t.id for t in targets}
        small -= {t.id for t in targets}  # a name bound again may hold anything
        if is_range and len(targets) == 1 and all(_small_int(a) for a in iterable.args):
            small |= {targets[0].id}
        for condition in generator.ifs:
            problem = data_problem(condition, bindings, constants, frozenset(names), small)
            if problem:
                return problem
    count = length(node, bindings, constants)
    if count is not None and count > MAX_ITEMS:
        return f"the comprehension makes {count} items: keep it to {MAX_ITEMS}"
    parts = [node.key, node.value] if isinstance(node, ast.DictComp) else [node.elt]
    return next((p for p in (data_problem(part, bindings, constants, frozenset(names), small) for part in parts)
                 if p), None)


def resolved(node: ast.expr | None, constants: dict, depth: int = 0) -> ast.expr | None:
    """``node``, or the value a constant's name holds (followed through names)."""
    while isinstance(node, ast.Name) and node.id in constants and depth < 16:
        node, depth = constants[node.id], depth + 1
    return node


def source_of_data(value, depth: int = 0) -> str | None:
    """Source that makes ``value`` again where it is data as :func:`data_problem` reads it (a notebook's
    constant, in the module grader.source.capture writes): numbers, strings, None, lists, tuples and
    dicts of data, torch's and Triton's dtypes, ``triton.Config`` objects without hooks; else None."""
    import torch
    import triton
    import triton.language as tl

    def inner(item):
        return source_of_data(item, depth + 1)
    if depth > 8:
        return None
    if value is None or isinstance(value, (bool, int, str)):
        return repr(value)
    if isinstance(value, float):
        return repr(value) if math.isfinite(value) else f"float({str(value)!r})"
    if isinstance(value, torch.dtype):
        return str(value)  # torch.float16
    if isinstance(value, tl.dtype):
        name = next((n for n in TRITON_DTYPES if getattr(tl, n, None) == value), None)
        return name and f"tl.{name}"
    if isinstance(value, (list, tuple)):
        items = [inner(v) for v in value]
        if None in items:
            return None
        return f"[{', '.join(items)}]" if isinstance(value, list) else f"({''.join(i + ', ' for i in items)})"
    if isinstance(value, dict):
        pairs = [(inner(k), inner(v)) for k, v in value.items()]
        return None if any(None in pair for pair in pairs) else "{" + ", ".join(f"{k}: {v}" for k, v in pairs) + "}"
    if type(value) is triton.Config:
        kwargs = inner(value.kwargs)
        if kwargs is None or value.pre_hook is not None or getattr(value, "ir_override", None) is not None:
            return None
        options = {"num_warps": value.num_warps, "num_stages": value.num_stages, "num_ctas": value.num_ctas,
                   "maxnreg": value.maxnreg}
        said = "".join(f", {k}={v!r}" for k, v in options.items() if v is not None)
        return f"triton.Config({kwargs}{said})"
    return None
