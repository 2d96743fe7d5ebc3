"""What a learner's definition may evaluate at import: the rules :mod:`grader.source.definitions` applies.

Every check reads the syntax tree only. Names are resolved through the file's own imports
(:class:`Bindings`), so ``@jit`` is Triton's only where ``jit`` came from ``triton`` and was
never bound to anything else in the module.
"""
from __future__ import annotations

import ast

from grader.course import kinds
from grader.source.bindings import Bindings, bindings_of, module_targets  # noqa: F401 (the rules' API)
from grader.source.literals import (  # noqa: F401
    ARITHMETIC,
    CONFIG,
    data_problem,
    import_try,
    is_literal,
    is_none,
    keywords_problem,
    length,
    resolved,
)

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
def is_constexpr_call(node: ast.expr, bindings: Bindings, constants: frozenset) -> bool:
    """``tl.constexpr(<literal>)``."""
    return (isinstance(node, ast.Call) and bindings.origin(node.func) in CONSTEXPR
            and len(node.args) == 1 and not node.keywords and is_literal(node.args[0], constants))


def _heuristic_problem(node: ast.expr, bindings: Bindings, constants: dict) -> str | None:
    if not (isinstance(node, ast.Lambda) and len(node.args.args) == 1 and not node.args.defaults
            and not (node.args.posonlyargs or node.args.kwonlyargs or node.args.vararg or node.args.kwarg)):
        return "each heuristic must be `lambda args: ...`"
    if not _heuristic_expression(node.body, node.args.args[0].arg, bindings, constants):
        return ("a heuristic may use only `args[\"name\"]`, numbers, constants defined above, arithmetic, "
                "comparisons, `args[\"name\"] is None` (or `is not None`), `x if c else y`, and "
                "triton.next_power_of_2, triton.cdiv, min, max, int, bool, abs")
    return None


def _heuristic_expression(node: ast.expr, param: str, bindings: Bindings, constants: dict) -> bool:
    def ok(child: ast.expr) -> bool:
        return _heuristic_expression(child, param, bindings, constants)

    if isinstance(node, ast.Constant):
        return isinstance(node.value, (int, float))
    if isinstance(node, ast.Name):  # `min(MAX_FUSED_SIZE, ...)`: a constant the file keeps as data
        return node.id in constants
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
        if any(isinstance(op, (ast.Is, ast.IsNot)) for op in node.ops):
            # `args["X1"] is not None` (mamba): whether an optional tensor was passed, the one test of identity
            return len(node.ops) == 1 and ok(node.left) and is_none(node.comparators[0])
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


def decorator_problem(node: ast.expr, bindings: Bindings, constants: dict | None = None,
                      missing: dict | None = None) -> str | None:
    """Why a decorator may not be evaluated at import, or None if it is Triton's or Python's.
    ``constants``: the data kept above it, by name; ``missing``: why names the file binds are not."""
    target = node.func if isinstance(node, ast.Call) else node
    origin = bindings.origin(target)
    call = node if isinstance(node, ast.Call) else None
    if origin == "triton.jit":
        if call and call.args:
            return "`triton.jit(...)` takes options by keyword only"
        return call and keywords_problem(call, "`triton.jit`")
    if origin == "triton.autotune" and call:
        return autotune_problem(call, bindings, constants or {}, missing or {})
    own = next((d for d in kinds.decorators() if origin in d.origins), None)
    if own is not None:  # a kind's own kernel decorator (Helion's)
        return _kind_decorator_problem(own, call, bindings)
    if origin == "triton.heuristics" and call:
        values = call.args + [k.value for k in call.keywords if k.arg == "values"]
        if len(call.args) + len(call.keywords) != 1 or len(values) != 1 or not isinstance(values[0], ast.Dict):
            return "`triton.heuristics` takes one dict written in place: {\"NAME\": lambda args: ...}"
        if not all(isinstance(k, ast.Constant) and isinstance(k.value, str) for k in values[0].keys):
            return "the keys of `triton.heuristics({...})` must be parameter names as strings"
        return next(filter(None, (_heuristic_problem(v, bindings, constants or {}) for v in values[0].values)), None)
    if origin in PLAIN_DECORATORS and not call:
        return None
    if origin in CONSTEXPR_HELPER:
        return f"`@{ast.unparse(target)}` takes no arguments: write it bare, above `def`" if call else None
    families = "".join(f"{d.family}, " for d in kinds.decorators()).rstrip(", ")
    return (f"decorator `{ast.unparse(target)}` is not one of Triton's (jit, autotune, heuristics, "
            f"constexpr, constexpr_function), {families} or "
            f"Python's (staticmethod, classmethod, once_differentiable){bindings.why_untrusted(target)}")


# ---- @triton.autotune: configs written out, as a comprehension over literals, or named by a
# constant of the file (mamba's `configs=configs_autotune`); names of arguments; a prune function
# autotune arguments that Triton calls: each would run the learner's code
AUTOTUNE_HOOKS = {"pre_hook", "post_hook", "early_config_prune", "perf_model", "do_bench"}
AUTOTUNE_NAME_LISTS = {"key", "reset_to_zero", "restore_value"}
MAX_CONFIGS = 64  # a comprehension of configs: each is graded on every case
LOOPS = ("a comprehension of configs may loop only over literal lists (or `range` of literals), e.g. "
         "`[triton.Config({\"B\": b}, num_warps=w) for b in [64, 128] for w in [4, 8]]`")


def _names_list(node: ast.expr) -> bool:
    return isinstance(node, (ast.List, ast.Tuple)) and all(
        isinstance(e, ast.Constant) and isinstance(e.value, str) for e in node.elts)


def _config_problem(node: ast.expr, bindings, constants: dict) -> str | None:
    if not (isinstance(node, ast.Call) and bindings.origin(node.func) == CONFIG):
        return "each autotune config must be written as `triton.Config({...}, num_warps=...)`"
    problem = data_problem(node, bindings, constants)
    if problem is None or "hooks" in problem:
        return problem
    return f"the arguments of `triton.Config` must be data: {problem}"


def _comprehension_problem(node: ast.ListComp, bindings, constants: dict) -> str | None:
    """``[triton.Config(...) for a in [literals] for b in range(literal)]``; the Config's
    arguments may use the loop names."""
    if not (isinstance(node.elt, ast.Call) and bindings.origin(node.elt.func) == CONFIG):
        return LOOPS
    loops = ast.ListComp(elt=ast.Constant(0), generators=node.generators)
    problem = data_problem(loops, bindings, constants)
    if problem:
        return f"{LOOPS}: {problem}"
    count = length(node, bindings, constants)
    if count is not None and count > MAX_CONFIGS:
        return f"the comprehension makes {count} configs: the grader grades every config, so keep it to {MAX_CONFIGS}"
    problem = data_problem(node, bindings, constants)
    if problem and "hooks" in problem:
        return problem
    return problem and f"the arguments of `triton.Config` must be literals or the comprehension's loop names: {problem}"


def configs_problem(node: ast.expr, bindings, constants: dict, depth: int = 0) -> str | None:
    """A list of configs: written out, a comprehension, a constant naming one, or such lists added."""
    node = resolved(node, constants)
    if depth > 16:
        return "the configs are named through too many constants"
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add):
        return configs_problem(node.left, bindings, constants, depth + 1) or \
            configs_problem(node.right, bindings, constants, depth + 1)
    if isinstance(node, ast.ListComp):
        return _comprehension_problem(node, bindings, constants)
    if isinstance(node, ast.Call):  # `configs=get_configs()`: the learner's code, at import
        return (f"`configs={ast.unparse(node)}` is a call, and a call is not run at import: write the list of "
                f"`triton.Config(...)` out (a comprehension over literals will do), and to choose among them give "
                f"`prune_configs_by={{\"early_config_prune\": fn}}` a function of this file (it runs at launch)")
    if not isinstance(node, (ast.List, ast.Tuple)):
        return ("`triton.autotune(configs=...)` must be a list of `triton.Config(...)`, written in place or "
                "as a constant defined above")
    for config in node.elts:
        problem = configs_problem(config.value, bindings, constants, depth + 1) if isinstance(config, ast.Starred) \
            else _config_problem(resolved(config, constants), bindings, constants)
        if problem:
            return problem
    return None


def autotune_problem(call: ast.Call, bindings, constants: dict, missing: dict) -> str | None:
    """Why ``@triton.autotune(...)`` may not be evaluated at import. ``missing``: why a name
    the file binds is not among the constants (the statement that was left out)."""
    if len(call.args) > 2 or any(isinstance(a, ast.Starred) for a in call.args):
        return "`triton.autotune` takes `configs=` and `key=`, then options by keyword"
    given = dict(zip(("configs", "key"), call.args)) | {k.arg: k.value for k in call.keywords}
    if None in given:
        return "`**` arguments to `triton.autotune` are not allowed: write each option out"
    for name, value in given.items():
        if isinstance(value, ast.Name) and value.id not in constants and value.id in missing:
            fix = " (to prune configs, give `prune_configs_by={\"early_config_prune\": fn}` a function of " \
                  "this file: it runs at launch)" if name == "configs" else ""
            return f"`{name}={value.id}` names a value that is not kept{fix}: {missing[value.id]}"
    problem = configs_problem(given.get("configs"), bindings, constants)
    if problem:
        return problem
    for name, value in given.items():
        value = resolved(value, constants)
        if name == "prune_configs_by" and not is_none(value):
            problem = _prune_problem(value, bindings)
            if problem:
                return problem
            continue
        if name in AUTOTUNE_HOOKS and not is_none(value):
            return f"`triton.autotune({name}=...)` would run your code: it is not allowed when grading"
        if name in AUTOTUNE_NAME_LISTS and not (_names_list(value) or (name != "key" and is_none(value))):
            return f"`triton.autotune({name}=...)` must be a list of argument names as strings"
        if name != "configs" and data_problem(value, bindings, constants):
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
