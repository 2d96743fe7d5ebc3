# Code in every place an import could run it: a class base's __init_subclass__, a metaclass,
# subscripts in a default and in an annotation (__class_getitem__), a decorator alias, a
# module-level call, and a conditional block. Graded with the sandbox off too: the
# definitions-only import alone must keep every marker from being written.
import os

import triton
import triton.language as tl

EXPECT_STATUS = "fail"


def _mark(name):
    os.makedirs("@@MARK@@", exist_ok=True)
    open(os.path.join("@@MARK@@", name), "w").close()
    return 0


class Trap:
    def __init_subclass__(cls, **kwargs):
        _mark("init_subclass")

    def __class_getitem__(cls, item):
        _mark("class_getitem")
        return 0


class Meta(type):
    def __new__(mcs, name, bases, ns):
        _mark("metaclass")
        return super().__new__(mcs, name, bases, ns)


class Child(Trap):
    pass


class WithMeta(metaclass=Meta):
    pass


def sneaky(fn):
    _mark("decorator_alias")
    return triton.jit(fn)


jit = sneaky


def helper(value=Trap[0]) -> Trap[1]:
    return value


@jit
def decorated(x_ptr):
    pass


_mark("module_call")
if True:
    _mark("conditional")
BLOCK = _mark("constant")


# A real kernel, wrong (it multiplies where the puzzle adds), so the verdict is "fail", not "missing".
@triton.jit
def add_vec_kernel(x_ptr, y_ptr, z_ptr, N0, N1, B0: tl.constexpr, B1: tl.constexpr):
    i = tl.arange(0, B0)
    j = tl.arange(0, B1)
    x = tl.load(x_ptr + i)
    y = tl.load(y_ptr + j)
    tl.store(z_ptr + j[:, None] * N0 + i[None, :], y[:, None] * x[None, :])
