"""The definitions-only import: learner tricks that would run code at import are dropped and
reported; the idioms correct kernels use are kept, as the Triton objects they should be."""
import textwrap

import pytest
import torch
from triton.runtime import Autotuner, Heuristics, JITFunction

from grader.source.capture import definitions_only
from grader.source.definitions import Dropped, definitions

# Defined in the same file as each trick: `evil()` leaves a marker file if anything calls it.
EVIL = '''
import triton
import triton.language as tl


def evil(*args, **kwargs):
    open(MARKER, "w").write("ran")
    return lambda fn: fn


class Evil:
    def __init_subclass__(cls, **kwargs):
        evil()

    def __class_getitem__(cls, item):
        evil()
        return cls


class Meta(type):
    def __new__(mcs, *args):
        evil()
        return super().__new__(mcs, *args)
'''


def load(tmp_path, source):
    """Reduce ``source``, then run what is left as the worker would (Triton reads the file)."""
    result = definitions(textwrap.dedent(source))
    path = tmp_path / "learner.py"
    path.write_text(result.text)
    namespace = {"__name__": "learner", "MARKER": str(tmp_path / "ran")}
    exec(compile(result.text, str(path), "exec"), namespace)
    return result, namespace


def reasons(result, line_text):
    return [d.reason for d in result.dropped if d.text == line_text]


TRICKS = {
    "class base": ("class K(Evil):\n    pass\n", "class K(Evil):", "class base `Evil` is not torch.autograd.Function"),
    "metaclass": ("class K(metaclass=Meta):\n    pass\n", "class K(metaclass=Meta):", "`metaclass=`"),
    "subscript default": ("def f(x=Evil[0]):\n    pass\n", "def f(x=Evil[0]):", "default value of `x` is not a literal"),
    "decorator alias": ("jit = evil\n\n@jit\ndef k(x):\n    pass\n", "@jit", "decorator `jit` is not one of Triton's"),
    "rebound triton": ("@triton.jit\ndef k(x):\n    pass\n\ntriton = 3\n", "@triton.jit", "`triton` is bound again on line 30"),
    "def named jit": ("from triton import jit\n\ndef jit(fn):\n    evil()\n\n@jit\ndef k(x):\n    pass\n", "@jit",
                      "decorator `jit`"),
    "star import": ("from os.path import *\n\n@triton.jit\ndef k(x):\n    pass\n", "@triton.jit", "bound again on line 26"),
    "heuristic min after star import": ('from triton.language import *\n\n@triton.heuristics({"B": lambda args: min(1, 2)})'
                                        '\n@triton.jit\ndef k(x, B: tl.constexpr):\n    pass\n',
                                        '@triton.heuristics({"B": lambda args: min(1, 2)})', "a heuristic may use only"),
    "call": ("evil()\n", "evil()", "a call at module level is not run"),
    "call in a constant": ("X = evil()\n", "X = evil()", "`X` is set by a call"),
    "subscript constant": ("X = Evil[0]\n", "X = Evil[0]", "the value of `X` is not data"),
    "shared line": ("import os; evil()\n", "import os; evil()", "shares its line"),
    "main block": ('if __name__ == "__main__":\n    evil()\n', 'if __name__ == "__main__":', "block is not run"),
    "jit option": ("@triton.jit(debug=evil())\ndef k(x):\n    pass\n", "@triton.jit(debug=evil())", "option `debug`"),
    "autotune hook": ("@triton.autotune(configs=[triton.Config({})], key=[], pre_hook=evil)\n@triton.jit\n"
                      "def k(x):\n    pass\n", "@triton.autotune(configs=[triton.Config({})], key=[], pre_hook=evil)",
                      "`triton.autotune(pre_hook=...)` would run your code"),
    "config hook": ("@triton.autotune(configs=[triton.Config({}, pre_hook=evil)], key=[])\n@triton.jit\n"
                    "def k(x):\n    pass\n", "@triton.autotune(configs=[triton.Config({}, pre_hook=evil)], key=[])",
                    "hooks are not allowed"),
    "heuristic calls": ('@triton.heuristics({"B": lambda args: evil()})\n@triton.jit\ndef k(x, B: tl.constexpr):\n'
                        '    pass\n', '@triton.heuristics({"B": lambda args: evil()})', "a heuristic may use only"),
    "class body call": ("class F(torch.autograd.Function):\n    x = evil()\n", "x = evil()",
                        "a call in a class body is not run"),
    "method named staticmethod": ("class F(torch.autograd.Function):\n    def staticmethod(fn):\n        evil()\n\n"
                                  "    @staticmethod\n    def forward(ctx):\n        pass\n", "@staticmethod",
                                  "decorator `staticmethod`"),
}


@pytest.mark.parametrize("trick", TRICKS)
def test_tricks_run_nothing_and_are_reported(tmp_path, trick):
    code, line_text, reason = TRICKS[trick]
    result, _ = load(tmp_path, EVIL + "import torch\n\n" + code)
    assert not (tmp_path / "ran").exists(), result.text
    assert any(reason in r for r in reasons(result, line_text)), result.dropped


def test_annotations_are_removed_not_evaluated(tmp_path):
    result, namespace = load(tmp_path, EVIL + textwrap.dedent('''
        def f(x: Evil[1], n: int = 3, *rest: Evil[2], **more: "str") -> Evil[
                3]:
            return x + n
        N: Evil[4] = 5
        '''))
    assert not (tmp_path / "ran").exists()
    assert namespace["f"](1) == 4 and namespace["N"] == 5
    assert namespace["f"].__annotations__ == {"more": "str"}
    notes = [d.reason for d in result.dropped if d.line > EVIL.count("\n")]  # EVIL's Meta(type) is dropped
    assert all(r.startswith("annotation") for r in notes) and len(notes) == 5, notes


GOOD = '''
"""A learner's file using every idiom the grader must keep."""
import torch
import triton
import triton as tr
import triton.language as tl
from torch.autograd.function import once_differentiable
from triton import jit

FPINT = tl.constexpr(32 // 4)
GROUP: tl.constexpr = 16
WIDTH = 4
BLOCKS = (WIDTH, 2 * WIDTH, -1)
FWD = {"ROWS": 4, "num_warps": 8}
LAUNCH_OPTIONS = ("num_warps", "num_stages")


@triton.jit(do_not_specialize=["N"])
def with_options(x_ptr, N, B0: tl.constexpr):
    pass


@triton.jit(debug=False)
def debug_off(x_ptr, N, B0: "tl.constexpr" = 8):
    pass


@triton.autotune(configs=[triton.Config({"B0": 32}, num_warps=4), triton.Config({"B0": 64}, num_stages=2)],
                 key=["N"], reset_to_zero=["z_ptr"])
@triton.jit
def autotuned(z_ptr, N, B0: tl.constexpr):
    pass


@triton.heuristics({"BLOCK": lambda args: triton.next_power_of_2(args["N"]),
                    "EVEN": lambda args: args["N"] % 16 == 0 and min(args["N"], 4) > 1 if args["N"] else False})
@triton.jit
def heuristic(x_ptr, N, BLOCK: tl.constexpr, EVEN: tl.constexpr):
    pass


@jit
def from_import(x_ptr, B0: tl.constexpr = FPINT):
    pass


@tr.jit
def aliased(x_ptr):
    pass


def helper(x, n=3, *, scale=-1.5, names=("a", "b")):
    return x * n * scale


class Func(torch.autograd.Function):
    """Forward and backward."""
    SCALE = 2

    @staticmethod
    @once_differentiable
    def forward(ctx, x):
        return x * 2

    @classmethod
    def name(cls):
        return "func"
'''


def test_correct_idioms_are_kept_as_their_triton_types(tmp_path):
    result, namespace = load(tmp_path, GOOD)
    assert result.dropped == ()
    assert result.text == GOOD
    for name in ("with_options", "debug_off", "from_import", "aliased"):
        assert isinstance(namespace[name], JITFunction), name
    assert isinstance(namespace["autotuned"], Autotuner) and len(namespace["autotuned"].configs) == 2
    assert isinstance(namespace["heuristic"], Heuristics)
    assert namespace["heuristic"].values["BLOCK"]({"N": 100}) == 128
    assert namespace["FPINT"].value == 8 and namespace["GROUP"] == 16 and namespace["BLOCKS"] == (4, 8, -1)
    assert namespace["helper"](1) == -4.5 and namespace["helper"].__kwdefaults__["names"] == ("a", "b")
    assert issubclass(namespace["Func"], torch.autograd.Function) and namespace["Func"].name() == "func"


def test_line_numbers_are_the_learners(tmp_path):
    source = EVIL + "evil()\nX = evil()\n\n\n@triton.jit\ndef kernel(x_ptr, y: Evil[0]):\n    pass\n"
    result, namespace = load(tmp_path, source)
    assert len(result.text.splitlines()) == len(source.splitlines())
    assert namespace["kernel"].fn.__code__.co_firstlineno == source.splitlines().index("@triton.jit") + 1
    assert Dropped(source.splitlines().index("evil()") + 1, "evil()", "a call at module level is not run: only "
                   "definitions are kept; call it inside the function that needs it") in result.dropped


def test_a_class_with_nothing_kept_still_parses(tmp_path):
    result, namespace = load(tmp_path, EVIL + "import torch\n\nclass F(torch.autograd.Function):\n    x = evil()\n")
    assert issubclass(namespace["F"], torch.autograd.Function) and not hasattr(namespace["F"], "x")
    assert not (tmp_path / "ran").exists()


def test_definitions_only_is_the_text():
    assert definitions_only(GOOD) == definitions(GOOD).text
