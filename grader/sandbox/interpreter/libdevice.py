"""libdevice in the interpreter: CUDA's math library, computed with numpy.

Under TRITON_INTERPRET=1, ``triton.language.extra.libdevice`` is a module of stubs that return
None, and ``triton.language.extra.cuda.libdevice`` needs a code generator to call into; so a
correct kernel that calls ``libdevice.tanh`` fails in the interpreter and compiles for a GPU.
Here each function of the CUDA module is called with the interpreter's semantic (so argument
promotion and the choice of symbol are Triton's own, as compiled), and the symbol it picks
(``__nv_tanhf``) is computed with numpy in the argument's precision. A symbol without a numpy
counterpart raises :class:`InterpreterLimit`, never a wrong value. What numpy lacks (Bessel
functions, ``erfinv``, ``erfcx``, ``normcdfinv``, ``lgamma`` at its poles) SciPy computes, imported
at the first call that needs it.

Rounding-mode variants (``fadd_rz``, ``float2int_ru``...) are computed round-to-nearest except
for float-to-integer conversions: results may differ from the GPU's in the last bit.
"""
from __future__ import annotations

import math
import re

import numpy as np

from grader.sandbox.interpreter.limits import InterpreterLimit

_vec = lambda f: np.vectorize(f, otypes=[np.float64])  # noqa: E731 (math functions numpy lacks)


def _special():
    try:
        import scipy.special  # a dependency; imported only by a kernel that calls such a function
    except ImportError:  # an install without it: the interpreter's limit, never the learner's error
        raise InterpreterLimit("this libdevice function needs SciPy, which is not installed here "
                               "(pip install -c constraints.txt scipy)") from None
    return scipy.special


def _scipy(name: str):
    return lambda *args: getattr(_special(), name)(*args)


def _round_half_away(x):
    return np.copysign(np.floor(np.abs(x) + 0.5), x)


def _ieee_remainder(x, y):
    return _vec(lambda a, b: math.remainder(a, b) if b != 0 and math.isfinite(a) else math.nan)(x, y)


def _rounded(mode: str):
    return {"rn": np.rint, "rz": np.trunc, "rd": np.floor, "ru": np.ceil}[mode]


_UNARY = {
    "tanh": np.tanh, "sinh": np.sinh, "cosh": np.cosh, "asinh": np.arcsinh, "acosh": np.arccosh,
    "atanh": np.arctanh, "sin": np.sin, "cos": np.cos, "tan": np.tan, "asin": np.arcsin, "acos": np.arccos,
    "atan": np.arctan, "exp": np.exp, "exp2": np.exp2, "exp10": lambda x: np.power(10.0, x), "expm1": np.expm1,
    "log": np.log, "log2": np.log2, "log10": np.log10, "log1p": np.log1p, "sqrt": np.sqrt,
    "rsqrt": lambda x: 1.0 / np.sqrt(x), "cbrt": np.cbrt, "rcbrt": lambda x: 1.0 / np.cbrt(x),
    "floor": np.floor, "ceil": np.ceil, "trunc": np.trunc, "round": _round_half_away, "rint": np.rint,
    "nearbyint": np.rint, "fabs": np.abs, "abs": np.abs, "llabs": np.abs, "erf": _vec(math.erf),
    "erfc": _vec(math.erfc), "lgamma": _scipy("gammaln"),
    "tgamma": _vec(lambda v: math.gamma(v) if v > 0 or v != math.floor(v) else math.nan),
    "sinpi": lambda x: np.sin(np.pi * x), "cospi": lambda x: np.cos(np.pi * x),
    "saturate": lambda x: np.clip(x, 0.0, 1.0), "logb": lambda x: np.floor(np.log2(np.abs(x))),
    "normcdf": _vec(lambda v: 0.5 * math.erfc(-v / math.sqrt(2.0))), "rcp": lambda x: 1.0 / x,
    "j0": _scipy("j0"), "j1": _scipy("j1"), "y0": _scipy("y0"), "y1": _scipy("y1"),
    "cyl_bessel_i0": _scipy("i0"), "cyl_bessel_i1": _scipy("i1"), "erfinv": _scipy("erfinv"),
    "erfcinv": _scipy("erfcinv"), "erfcx": _scipy("erfcx"), "normcdfinv": _scipy("ndtri"),
}
_BINARY = {
    "pow": np.power, "powi": np.power, "atan2": np.arctan2, "hypot": np.hypot, "fmod": np.fmod,
    "remainder": _ieee_remainder, "fmax": np.fmax, "fmin": np.fmin, "fdim": lambda x, y: np.maximum(x - y, 0),
    "copysign": np.copysign, "nextafter": np.nextafter, "ldexp": lambda x, e: np.ldexp(x, e.astype(np.int32)),
    "scalbn": lambda x, e: np.ldexp(x, e.astype(np.int32)), "add": np.add, "sub": np.subtract,
    "mul": np.multiply, "div": np.divide, "fdivide": np.divide, "rhypot": lambda x, y: 1.0 / np.hypot(x, y),
    "jn": _scipy("jv"), "yn": _scipy("yn"),  # (n, x): the order first, an int32
}
_PREDICATES = {"isnan": np.isnan, "isinf": np.isinf, "isfinite": np.isfinite, "finite": np.isfinite,
               "signbit": np.signbit}


def _integer(name: str, args):
    x = args[0]
    bits = x.dtype.itemsize * 8
    unsigned = x.view(f"uint{bits}")
    if name in ("popc", "popcll"):
        return np.vectorize(lambda v: bin(int(v)).count("1"), otypes=[np.int32])(unsigned)
    if name in ("clz", "clzll"):
        return np.vectorize(lambda v: bits - int(v).bit_length(), otypes=[np.int32])(unsigned)
    if name in ("mulhi", "umulhi", "mul64hi", "umul64hi"):
        product = np.vectorize(lambda a, b: (int(a) * int(b)) >> bits, otypes=[object])(x, args[1])
        return np.array([p & ((1 << bits) - 1) for p in product.ravel()], dtype=f"uint{bits}") \
            .reshape(x.shape).view(x.dtype)
    return None


def _base(symbol: str) -> str:
    """``__nv_tanhf`` -> ``tanh``; ``__nv_fast_expf`` -> ``exp``; ``__nv_fadd_rn`` -> ``add``."""
    name = symbol.removeprefix("__nv_").removeprefix("fast_")
    conversion = re.fullmatch(r"[fd](add|sub|mul|div|rcp|sqrt|rsqrt)_r[nzdu]", name)
    if conversion:
        return conversion.group(1)
    name = re.sub(r"^(fmaf?)_r[nzdu]$", "fma", name)
    if name.endswith("d") and name[:-1] in _PREDICATES:  # isnand, signbitd
        return name[:-1]
    if name in _UNARY or name in _BINARY or name in _PREDICATES or name == "fma":
        return name
    if name.endswith("f") and (name[:-1] in _UNARY or name[:-1] in _BINARY or name[:-1] in _PREDICATES
                               or name[:-1] == "fma"):
        return name[:-1]
    return name


def compute(symbol: str, args: list, out_dtype: np.dtype):
    """The value of libdevice's ``symbol`` on numpy ``args``, as ``out_dtype``."""
    name = _base(symbol)
    work = [a.astype(np.float64) if a.dtype.kind == "f" else a for a in args]
    with np.errstate(all="ignore"):
        if name in _UNARY and len(args) == 1:
            out = _UNARY[name](work[0])
        elif name in _BINARY and len(args) == 2:
            out = _BINARY[name](work[0], work[1])
        elif name == "fma" and len(args) == 3:
            out = work[0] * work[1] + work[2]
        elif name in _PREDICATES:
            out = _PREDICATES[name](work[0])
        elif m := re.fullmatch(r"(float|double)2(int|uint|ll|ull)_(r[nzdu])", name):
            info = np.iinfo(out_dtype)
            rounded = _rounded(m.group(3))(work[0])
            out = np.where(np.isnan(rounded), 0, np.clip(rounded, info.min, info.max))
        elif re.fullmatch(r"(int|uint|ll|ull)2(float|double)_r[nzdu]", name):
            out = args[0]
        elif name in ("float_as_int", "float_as_uint", "int_as_float", "uint_as_float",
                      "double_as_longlong", "longlong_as_double"):
            return args[0].view(out_dtype)
        else:
            out = _integer(name, args)
            if out is None:
                raise InterpreterLimit(f"libdevice's `{symbol.removeprefix('__nv_')}` has no counterpart "
                                       f"in the grader's interpreter")
        return np.asarray(out).astype(out_dtype)


def install(interpreter) -> None:
    """Give the interpreter's builder libdevice, and make both libdevice modules callable in it."""
    import triton.language.extra.cuda.libdevice as cuda
    import triton.language.extra.libdevice as stubs
    from triton.language import core

    def create_extern_elementwise(self, lib_name, lib_path, symbol, arg_list, ret_type, is_pure):
        out_dtype = interpreter._get_np_dtype(ret_type)
        data = compute(symbol, [np.asarray(a.data) for a in arg_list], out_dtype)
        return interpreter.TensorHandle(data, ret_type.scalar)

    interpreter.InterpreterBuilder.create_extern_elementwise = create_extern_elementwise
    semantic = interpreter.interpreter_semantic
    for name, member in vars(cuda).items():
        if not core.is_builtin(member):
            continue

        def call(*args, _member=member, **kwargs):
            kwargs.pop("_semantic", None)
            return _member(*args, **kwargs, _semantic=semantic)
        call.__name__ = name
        setattr(cuda, name, call)
        setattr(stubs, name, call)
