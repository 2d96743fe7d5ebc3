"""How ``--bench`` judges what a kernel wrote at the sweep's sizes, which are far larger than any
graded case's.

**Why not the puzzle's tolerance.** A puzzle's ``atol``/``rtol`` was set at the graded cases'
sizes: a matmul's cases sum at most 560 products, the bench sums 8192 to 14336. Two correct
fp16 matmuls differ by their order of summation and by how the tensor cores accumulate (a
Hopper's fp16 MMA does not round its fp32 sums as IEEE does), and at K = 8192 that moved
1,229 to 55,962 of 67M elements of the course's own references past the small tolerance on an
H100. A rule derived from the reduction length and the dtype's epsilon would need each
puzzle's reduction axis and the hardware's accumulation, which no datasheet gives.

**The rule: PyTorch's own error is the yardstick.** Where a puzzle's ``Bench`` says its baseline
computes the spec's outputs in the bench's dtypes (``Bench.baseline_outputs``: cuBLAS's fp16
matmul, SDPA), the grader runs the baseline on the same inputs, in its own process, and
measures how far PyTorch's result is from the spec's (the high-precision reference: fp32
sums). That is the error a correct, production implementation makes at this size, in this
dtype, on this GPU. An element of the kernel's may then be off by the puzzle's tolerance plus
``MARGIN`` (2, as FlashAttention's tests allow against PyTorch) times the baseline's largest
error among elements of its magnitude or less: the elements are binned by their power of two,
each bin takes the largest baseline error at or below it (a running maximum, so the allowance
never shrinks as values grow), the bins below hold at least ``MIN_SHARE`` of the elements
between them (a handful of tiny values says little about the error there), and an element is
allowed the allowance of twice its magnitude (the next bin up).

Why this and not a single maximum: one allowance for a whole output (FlashAttention's test
form) lets a value of 0.01 be off by the error of a value of 400. Binned by magnitude, a small
value keeps a small allowance. But an output's magnitude does not always tell its error: after
a GELU epilogue, an output near zero comes from a sum near zero, which carries a sum's full
rounding error, or from a very negative one, which carries none, and the second kind fills the
lowest bins (an H100's correct matmul + GELU failed one element of 67M so at 8192^3). So at
most ``STRAY_SHARE`` of the elements (1 in 100,000) may pass their magnitude's allowance, and
none may pass ``MARGIN`` times the baseline's largest error anywhere (FlashAttention's test,
as a cap). A dropped K tile, a wrong scale, an fp16 accumulator, a missing softmax rescale
are each many times PyTorch's own error on far more elements than that, and still fail.

**NaN is never equal**: a NaN written where anything is expected fails, even where the spec
gives NaN (a comparison that lets NaN through, or counts ``err > tol`` where NaN compares
false, would make NaN a wildcard). Outputs without a yardstick keep the puzzle's tolerance
(or the Bench's ``tolerances``) under the same NaN rule.
"""
from __future__ import annotations

from dataclasses import dataclass

import torch

from grader.judge.compare import SHOW, Comparison
from grader.judge.failures import Element, Mismatch, Nonfinite, Unwritten, index_of
from grader.judge.fence import is_unwritten

MARGIN = 2.0
MIN_SHARE = 1000  # elements the lowest bins hold between them, at least (or all, where fewer)
STRAY_SHARE = 1e-5  # elements that may pass their magnitude's allowance, up to the largest


@dataclass(frozen=True)
class Yardstick:
    """PyTorch's error on one output at one size: per power of two of the expected value (from
    ``low``), the largest error at that magnitude or below (``errors``, a running maximum)."""

    name: str
    baseline: str
    low: int
    errors: tuple[float, ...]

    def allowance(self, expected: torch.Tensor) -> torch.Tensor:
        """The extra error each element may have: ``MARGIN`` times the baseline's at twice its magnitude."""
        table = torch.tensor(self.errors, dtype=torch.float64, device=expected.device)
        bins = (_exponents(expected) - self.low + 1).clamp(0, len(self.errors) - 1)
        return MARGIN * table[bins]

    @property
    def largest(self) -> float:
        return MARGIN * self.errors[-1]


def _exponents(values: torch.Tensor) -> torch.Tensor:
    """Each element's power of two (``frexp``'s exponent); zeros and non-finite values the lowest."""
    magnitude = values.double().abs()
    exponent = torch.frexp(magnitude).exponent.long()
    usable = torch.isfinite(magnitude) & (magnitude > 0)
    low = exponent[usable].min() if bool(usable.any()) else torch.zeros((), dtype=torch.long)
    return torch.where(usable, exponent, low)


def measure(name: str, baseline: str, expected: torch.Tensor, theirs: torch.Tensor) -> Yardstick | None:
    """The yardstick of ``theirs`` (PyTorch's result) against ``expected`` (the spec's); None
    where they share no finite element."""
    want = expected.double()
    got = theirs.to(want.device).double().reshape(want.shape)
    finite = torch.isfinite(want) & torch.isfinite(got)
    if not bool(finite.any()):
        return None
    exponent = _exponents(want)[finite]
    low = int(exponent.min())
    bins = exponent - low
    count = int(bins.max()) + 1
    error = (got - want).abs()[finite]
    worst = torch.zeros(count, dtype=torch.float64, device=want.device).scatter_reduce(0, bins, error, "amax")
    running = torch.cummax(worst, 0).values
    held = torch.cumsum(torch.bincount(bins, minlength=count), 0)
    enough = min(MIN_SHARE, int(held[-1]))
    first = int(torch.nonzero(held >= enough)[0])  # the bins up to here share their largest error
    running[:first] = running[first]
    return Yardstick(name, baseline, low, tuple(float(e) for e in running.cpu()))


def compare(name: str, got: torch.Tensor, want: torch.Tensor, atol: float, rtol: float,
            yardstick: Yardstick | None = None, reduce=None, filled: bool = False) -> Comparison:
    """``got`` against ``want`` as the bench judges it (see the module's docstring). ``filled``:
    the grader filled ``got`` with its NaN before the call (an element never written shows)."""
    if filled:
        unwritten = is_unwritten(got)
        if bool(unwritten.any()):
            first = tuple(index_of(int(p), got.shape) for p in torch.nonzero(unwritten.reshape(-1))[:SHOW, 0])
            return Comparison.failed(Unwritten(name, int(unwritten.sum()), got.numel(), first))
    reduced = reduce is not None
    if reduced:
        got = reduce(got)
    g, w = got.double(), want.double()
    nan = torch.isnan(g) | (~torch.isfinite(g) & torch.isfinite(w))
    if bool(nan.any()):
        flat = int(torch.nonzero(nan.reshape(-1))[0])
        return Comparison.failed(Nonfinite(name, int(nan.sum()), _element(flat, g, w), reduced=reduced))
    error = (g - w).abs()
    base = atol + rtol * w.abs()
    same = (g == w)  # an infinity the spec also has
    finite = torch.isfinite(error)
    max_err = float(error[finite].max()) if bool(finite.any()) else 0.0
    # NaN compares false: never within
    within = same | (error <= (base if yardstick is None else base + yardstick.allowance(w)))
    if yardstick is None:
        wrong, strays = ~within, -1
    else:
        capped = same | (error <= base + yardstick.largest)
        strays = stray_limit(g.numel())
        wrong = ~capped if not bool(capped.all()) or int((~within).sum()) <= strays else ~within
    if not bool(wrong.any()):
        return Comparison(True, max_abs_err=max_err)
    shown = tuple(_element(int(p), g, w) for p in torch.nonzero(wrong.reshape(-1))[:SHOW, 0])
    return Comparison.failed(Mismatch(name, int(wrong.sum()), g.numel(), max_err, atol, rtol, shown, reduced,
                                   baseline=yardstick.baseline if yardstick else "",
                                   allowance=yardstick.largest if yardstick else 0.0, strays=strays),
                          max_abs_err=max_err)


def stray_limit(numel: int) -> int:
    """How many elements may pass their magnitude's allowance (but never the largest)."""
    return int(numel * STRAY_SHARE)


def _element(flat: int, actual: torch.Tensor, expected: torch.Tensor) -> Element:
    return Element(index_of(flat, tuple(actual.shape)), actual.reshape(-1)[flat].item(),
                   expected.reshape(-1)[flat].item())


def headroom(got: torch.Tensor, want: torch.Tensor, atol: float, rtol: float, yardstick: Yardstick | None) -> float:
    """The largest share of its allowance any element used (1.0: at the limit): how close a
    passing result came to failing."""
    g, w = got.double(), want.double()
    limit = atol + rtol * w.abs() + (yardstick.allowance(w) if yardstick is not None else 0.0)
    share = (g - w).abs() / limit.clamp_min(1e-300)
    share = share[torch.isfinite(share)]
    return float(share.max()) if share.numel() else 0.0
