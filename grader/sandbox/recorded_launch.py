"""A kernel a recorded wrapper launched, found again, and what its launch compiles.

An autograd wrapper's launches are recorded in one process and replayed, compiled or counted in
another, which imports the learner's file afresh: a kernel is named by the attribute path that
reaches it from the file (through modules it imported and classes it defines) and the ``.fn``
hops below, and a launch by its arguments as plain values. Any worker request that reaches a
recorded launch uses these: the replay, the sm_90 compile check, ``--perf``'s counting.
"""
from __future__ import annotations


class Disagrees(Exception):
    """The replay made a tensor other than the recording said: the recording is not to be believed."""


def kernel_paths(module):
    """A function that finds a kernel object from ``module``: the attribute names that reach it
    (through modules it imported and classes it defines) and the ``.fn`` hops below them.
    The replay follows the same path in its own import of the file."""
    import types

    from triton.runtime.jit import KernelInterface
    found: dict[int, tuple[tuple[str, ...], int]] = {}

    def add(obj, path: tuple[str, ...]) -> None:
        for hops in range(8):
            if not isinstance(obj, KernelInterface):
                return
            found.setdefault(id(obj), (path, hops))
            obj = getattr(obj, "fn", None)

    places = [((), vars(module))]
    for name, value in vars(module).items():
        if isinstance(value, types.ModuleType) and getattr(value, "__file__", None):
            places.append(((name,), vars(value)))
        elif isinstance(value, type):
            places.append(((name,), dict(vars(value))))
    for prefix, namespace in places:
        for name, value in list(namespace.items()):
            add(value, (*prefix, name))

    def find(kernel) -> tuple[list[str], int]:
        if id(kernel) not in found:
            name = getattr(getattr(kernel, "fn", None), "__name__", type(kernel).__name__)
            raise TypeError(f"the wrapper launches `{name}`, which is not defined at the top level of the "
                            f"file or of a module it imports: define kernels at the top level")
        path, hops = found[id(kernel)]
        return list(path), hops
    return find


def find_kernel(module, path, hops: int):
    """The object at ``path`` from ``module`` (through modules and classes), ``hops`` ``.fn`` below."""
    obj = module
    for name in path:
        obj = vars(obj).get(name) if isinstance(obj, type) else getattr(obj, name, None)
        if obj is None:
            raise Disagrees(f"launches `{'.'.join(path)}`, which the file does not define")
    for _ in range(hops):
        obj = getattr(obj, "fn", None)
    return obj


def launch_signature(fn, arguments, keywords: dict, provided: set[str]) -> tuple[dict, dict]:
    """What a GPU launch with these arguments would compile: ``ASTSource``'s signature and
    constexprs, typed as Triton types a launch's values (a tensor ``{"pointer": dtype}``; an int
    of 1 specialised into a constant, as Triton does; a float as fp32)."""
    import inspect

    from grader.course.dtypes import DTYPES
    params = inspect.signature(fn).parameters
    named = dict(zip(params, arguments))
    named.update({k: v for k, v in keywords.items() if k in params})
    signature, constexprs = {}, {}
    for name, param in params.items():
        if name in provided or (name not in named and param.default is inspect.Parameter.empty):
            continue  # an autotuning config or a heuristic gives it (or nothing does: the worker says so)
        value = named.get(name, param.default)
        annotation = param.annotation
        constexpr = annotation is not inspect.Parameter.empty and "constexpr" in (
            annotation if isinstance(annotation, str) else getattr(annotation, "__name__", repr(annotation)))
        if isinstance(value, dict) and "pointer" in value:
            signature[name] = "*" + DTYPES[value["pointer"]].triton
        elif isinstance(value, dict) and "tl_dtype" in value:
            import triton.language as tl
            signature[name], constexprs[name] = "constexpr", tl.dtype(value["tl_dtype"])
        elif constexpr or value is None or isinstance(value, (str, list, dict)) or value == 1 and type(value) is int:
            signature[name], constexprs[name] = "constexpr", value
        elif isinstance(value, bool):
            signature[name] = "i1"
        elif isinstance(value, int):
            signature[name] = "i32" if -2 ** 31 <= value < 2 ** 31 else "i64"
        else:
            signature[name] = "fp32"
    return signature, constexprs


class TensorArgument:
    """A tensor a launch passed, as the compile check's ``@triton.heuristics`` see it: never None
    (``args["X1"] is not None`` holds, as on a GPU), with its dtype's name."""

    def __init__(self, dtype: str) -> None:
        self.dtype = dtype

    def __repr__(self) -> str:
        return f"<a tensor of {self.dtype}>"


def launch_values(fn, arguments, keywords: dict) -> dict:
    """A recorded launch's arguments by the kernel's parameter names, as a launch on a GPU hands
    them to its heuristics: numbers and None as they are, a tensor as a :class:`TensorArgument`."""
    import inspect

    from grader.course.dtypes import DTYPES
    named = dict(zip(inspect.signature(fn).parameters, arguments))
    named.update(keywords)
    values = {}
    for name, value in named.items():
        if isinstance(value, dict) and "pointer" in value:
            values[name] = TensorArgument(DTYPES[value["pointer"]].triton)
        elif isinstance(value, dict) and "tl_dtype" in value:
            import triton.language as tl
            values[name] = tl.dtype(value["tl_dtype"])
        elif not isinstance(value, dict):
            values[name] = value
    return values


def pointer_values(signature: dict) -> dict:
    """A kernel puzzle's tensors, by parameter name, from the compile signature (``*fp32``)."""
    return {name: TensorArgument(kind[1:]) for name, kind in signature.items() if kind.startswith("*")}
