"""Literal Python, as the definitions rules read it: values whose evaluation runs nothing; and
``@triton.autotune(...)`` read the same way: configs written out (or a comprehension over
literals), names of arguments, and a prune function of the file."""
from __future__ import annotations

import ast

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


# ---- @triton.autotune ----------------------------------------------------------------------
# autotune arguments that Triton calls: each would run the learner's code
AUTOTUNE_HOOKS = {"pre_hook", "post_hook", "early_config_prune", "perf_model", "do_bench"}
AUTOTUNE_NAME_LISTS = {"key", "reset_to_zero", "restore_value"}
MAX_CONFIGS = 64  # a comprehension of configs: each is graded on every case


def _names_list(node: ast.expr) -> bool:
    return isinstance(node, (ast.List, ast.Tuple)) and all(
        isinstance(e, ast.Constant) and isinstance(e.value, str) for e in node.elts)


def _config_problem(node: ast.expr, bindings) -> str | None:
    if not (isinstance(node, ast.Call) and bindings.origin(node.func) == "triton.Config"):
        return "each autotune config must be written as `triton.Config({...}, num_warps=...)`"
    if not all(is_literal(a) for a in node.args):
        return "the arguments of `triton.Config` must be literals"
    hooks = [k for k in node.keywords if k.arg == "pre_hook" and not is_none(k.value)]
    return "`triton.Config(pre_hook=...)` would run your code: hooks are not allowed" if hooks \
        else keywords_problem(node, "`triton.Config`")


def _config_comprehension_problem(node: ast.ListComp, bindings) -> str | None:
    """``[triton.Config(...) for a in [literals] for b in range(literal)]``: evaluating it runs
    nothing of the learner's; the Config's arguments may use the loop names."""
    usage = ("a comprehension of configs may loop only over literal lists (or `range` of literals), "
             "with no `if`, e.g. `[triton.Config({\"B\": b}, num_warps=w) for b in [64, 128] for w in [4, 8]]`")
    names, count = frozenset(), 1
    for generator in node.generators:
        loop = generator.iter
        is_range = isinstance(loop, ast.Call) and bindings.origin(loop.func) == "builtins.range" \
            and not loop.keywords and 0 < len(loop.args) <= 3 \
            and all(isinstance(a, ast.Constant) and type(a.value) is int for a in loop.args)
        if generator.ifs or generator.is_async or not isinstance(generator.target, ast.Name) \
                or not (is_range or (isinstance(loop, (ast.List, ast.Tuple)) and is_literal(loop, names))):
            return usage
        count *= len(range(*(a.value for a in loop.args))) if is_range else len(loop.elts)
        names |= {generator.target.id}
    if count > MAX_CONFIGS:
        return f"the comprehension makes {count} configs: the grader grades every config, so keep it to {MAX_CONFIGS}"
    config = node.elt
    if not (isinstance(config, ast.Call) and bindings.origin(config.func) == "triton.Config"):
        return usage
    if not all(is_literal(a, names) for a in config.args) or \
            not all(k.arg is not None and k.arg != "pre_hook" and is_literal(k.value, names) for k in config.keywords):
        return "the arguments of `triton.Config` must be literals or the comprehension's loop names"
    return None


def autotune_problem(call: ast.Call, bindings) -> str | None:
    if len(call.args) > 2 or any(isinstance(a, ast.Starred) for a in call.args):
        return "`triton.autotune` takes `configs=` and `key=`, then options by keyword"
    given = dict(zip(("configs", "key"), call.args)) | {k.arg: k.value for k in call.keywords}
    if None in given:
        return "`**` arguments to `triton.autotune` are not allowed: write each option out"
    configs = given.get("configs")
    if isinstance(configs, ast.ListComp):  # Liger's [triton.Config({"BLOCK_N": bn}) for bn in [1024, 2048]]
        problem = _config_comprehension_problem(configs, bindings)
        if problem:
            return problem
    elif not isinstance(configs, (ast.List, ast.Tuple)):
        return "`triton.autotune(configs=...)` must be a list of `triton.Config(...)` written in place"
    for config in getattr(configs, "elts", ()):
        problem = _config_problem(config, bindings)
        if problem:
            return problem
    for name, value in given.items():
        if name == "prune_configs_by" and not is_none(value):
            problem = _prune_problem(value, bindings)
            if problem:
                return problem
            continue
        if name in AUTOTUNE_HOOKS and not is_none(value):
            return f"`triton.autotune({name}=...)` would run your code: it is not allowed when grading"
        if name in AUTOTUNE_NAME_LISTS and not (_names_list(value) or (name != "key" and is_none(value))):
            return f"`triton.autotune({name}=...)` must be a list of argument names as strings"
        if name != "configs" and not is_literal(value):
            return f"option `{name}` of `triton.autotune` is not a literal"
    return None


def _prune_problem(value: ast.expr, bindings) -> str | None:
    """``prune_configs_by={"early_config_prune": fn}``, ``fn`` a function of this file: the
    worker calls it on tensors without values, after grader.source.host_helpers has read it."""
    usage = ('`prune_configs_by` must be written `{"early_config_prune": fn}`, with `fn` a function '
             'defined above in the same file')
    if not isinstance(value, ast.Dict) or len(value.keys) != 1 or not isinstance(value.keys[0], ast.Constant):
        return usage
    key, fn = value.keys[0].value, value.values[0]
    if key in ("perf_model", "top_k"):
        return "`prune_configs_by`'s `perf_model` would run your code to time configs: it is not allowed when grading"
    if key != "early_config_prune" or not isinstance(fn, ast.Name) or fn.id not in bindings.rebound \
            or fn.id in bindings.origins:
        return usage
    return None
