"""Messages speak of what the learner's kernel does, in the words of its puzzle: no chunks for a
kernel that loads its row as one block (puzzle 18), no exp() for a layer norm, no `x` for a
kernel whose tensors are `a` and `b`, no wrong stride for rows that are off by rounding."""
from __future__ import annotations

import textwrap

import torch

from grader.judge import failures
from grader.judge.compare import compare_tensor
from grader.judge.kinds.helion.failures import HostWork
from grader.source.source_lines import kernel_traits

NAN = failures.Element((0, 3), float("nan"), 0.0)

ONE_BLOCK = textwrap.dedent('''\
    @triton.jit
    def softmax_kernel(x_ptr, z_ptr, N0, T, B1: tl.constexpr):
        cols = tl.arange(0, B1)
        x = tl.load(x_ptr + tl.program_id(0) * T + cols, mask=cols < T, other=float("-inf"))
        e = tl.exp(x)
        tl.store(z_ptr + tl.program_id(0) * T + cols, e / tl.sum(e, axis=0), mask=cols < T)
''')
CHUNKED = textwrap.dedent('''\
    def _row_max(x_ptr, T, B1):
        m = 0.0
        for start in range(0, T, B1):
            m = tl.maximum(m, tl.max(tl.load(x_ptr + start + tl.arange(0, B1))))
        return m

    @triton.jit
    def softmax_kernel(x_ptr, z_ptr, N0, T, B1: tl.constexpr):
        m = _row_max(x_ptr, T, B1)
        tl.store(z_ptr, tl.math.exp2(m))
''')
NORM = textwrap.dedent('''\
    @triton.jit
    def layer_norm_fwd(x_ptr, y_ptr, D, BLOCK_D: tl.constexpr):
        x = tl.load(x_ptr + tl.arange(0, BLOCK_D))
        var = tl.sum(x * x, axis=0) / D - (tl.sum(x, axis=0) / D) ** 2
        tl.store(y_ptr + tl.arange(0, BLOCK_D), x / tl.sqrt(var))
''')


def test_what_a_kernel_does_is_read_from_it_and_the_helpers_it_calls():
    assert kernel_traits(ONE_BLOCK, "softmax_kernel") == (False, True)
    assert kernel_traits(CHUNKED, "softmax_kernel") == (True, True)  # the loop and exp2 through a helper
    assert kernel_traits(NORM, "layer_norm_fwd") == (False, False)
    assert kernel_traits("def broken(:\n", "k") == (True, True)  # unread: the general words


def _large(traits) -> str:
    loops, exponentiates = traits
    return failures.word(failures.Nonfinite("z", 71, NAN, failures.LargeInputs(200.0, exponentiates, loops)))


def test_a_one_block_softmax_hears_of_its_row_not_of_chunks():
    said = _large(kernel_traits(ONE_BLOCK, "softmax_kernel"))
    assert "chunk" not in said and "loop" not in said
    assert said.endswith("This case's inputs are large (scaled by 200): exp() of them overflows float32, or "
                         "underflows to 0 so that a sum of them is 0. Subtract the row's maximum before "
                         "exponentiating (exp(x - max) is at most 1): take the maximum over the whole loaded row "
                         "(`tl.max`), its padding loaded as -inf.")


def test_a_chunked_softmax_hears_of_the_running_maximum_over_its_chunks():
    said = _large(kernel_traits(CHUNKED, "softmax_kernel"))
    assert said.endswith("keep a running maximum over every chunk your loop loads, started at -inf, not 0.")


def test_a_kernel_that_never_exponentiates_hears_nothing_of_exp():
    said = _large(kernel_traits(NORM, "layer_norm_fwd"))
    assert "exp" not in said.lower().replace("expected", "")
    assert said.endswith("This case's inputs are large (scaled by 200): look for a value computed from them that "
                         "overflows float32 (a square, a product), or a difference of two large values such as "
                         "E[x²] - mean², which rounding can make negative: centre the values (x - mean) before "
                         "squaring them.")


def test_the_helion_host_work_fix_indexes_the_kernels_own_tensors():
    found = HostWork("helion_matmul", 5, "c = a @ b", ops=("mm",), tensors=("a", "b"), tensor="a")
    said = failures.word(found)
    assert "x[tile]" not in said and "(x)" not in said
    assert said.endswith("Fix: move the computation into the `hl.tile` loop, on the tiles (`a[tile]`); outside the "
                         "loops, only allocate the outputs (`torch.empty_like(a)`, `a.new_zeros(...)`), take views "
                         "and sizes, and return them.")
    none = failures.word(HostWork("helion_causal_attention", 3, "def helion_causal_attention(...)",
                                           loops=False, tensor="q"))
    assert "x[tile] + y[tile]" not in none
    assert none.endswith("Fix: put the work inside `for tile in hl.tile(...)` loops, on the tiles (`q[tile]`), "
                         "storing into the output's tiles.")


def test_rows_off_by_rounding_are_not_called_a_wrong_stride():
    """Puzzle 20's one-pass variance: every row's mean is large, row 0 falls under the tolerance by
    chance, the later rows are off by a fraction of a percent. A wrong stride reads other data."""
    expected = torch.linspace(-3, 3, 800).reshape(4, 200)
    rounded = expected.clone()
    rounded[1:] *= 1.003
    assert "stride" not in compare_tensor("y", rounded, expected, 1e-4, 1e-4, filled=False).message
    strided = expected.clone()
    strided[1:] = expected[0]
    assert "the signature of a wrong row stride" in compare_tensor("y", strided, expected, 1e-4, 1e-4,
                                                                   filled=False).message
