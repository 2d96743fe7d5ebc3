"""Binomial tests with stated false-fail bounds, for outputs whose randomness is part of the answer.

A correct dropout keeps each element with probability q = 1 - p, independently of every other
element and of every other seed's mask: its generator (Philox) is taken as ideal. Every
statistic here counts ``k`` successes in ``n`` independent trials whose probabilities, for a
correct kernel, lie in ``[pi_lo, pi_hi]``; it fails when ``k`` leaves the interval whose tails
the Chernoff bound ``P(K >= k) <= exp(-n KL(k/n || pi))`` puts below ``alpha / 2`` each (all of
``alpha`` on the upper tail for a one-sided test). A family of ``m`` statistics gives each
``alpha / m`` (Bonferroni), so a family fails a correct kernel with probability at most ``alpha``.

The interval allows for the generator's float conversion: ``tl.rand``'s numbers keep an element
with probability 1 - p - 9e-8 at p = 1/2 (:data:`EPSILON` bounds any such rounding).

One exception to exact independence: the agreements of a mask with itself at a lag (``lag_counts``)
are independent when each element is a fair coin (along a chain e, e + d, e + 2d, ... the XORs of
fair bits are fair and independent). With coins within ``EPSILON`` of fair, no event over ``N``
bits is more likely than ``(1 + 2 EPSILON) ** N`` times its fair probability; :func:`lag_factor`
is that factor, which a caller divides the family's alpha by.
"""
from __future__ import annotations

import math
from dataclasses import dataclass

import torch
from torch import Tensor

EPSILON = 2.0 ** -20  # how far a correct generator's keep probability may stray from 1 - p


def kl(a: Tensor, b: float) -> Tensor:
    """KL(Bernoulli(a) || Bernoulli(b)), elementwise, with 0 log 0 = 0 (0 < b < 1)."""
    a = a.double()
    return torch.xlogy(a, a) + torch.xlogy(1 - a, 1 - a) - a * math.log(b) - (1 - a) * math.log1p(-b)


def bounds(n: Tensor, pi: tuple[float, float], alpha: float, upper_only: bool = False) -> tuple[Tensor, Tensor]:
    """(lo, hi): the counts a correct kernel's ``Binomial(n, pi)`` statistic stays within, except
    with probability at most ``alpha`` (Chernoff). Where no count is that unlikely, the side is
    open: lo = 0, hi = n."""
    n = n.double()
    target = math.log((1 if upper_only else 2) / alpha)
    pi_lo, pi_hi = pi
    hi = n.clone()
    if pi_hi < 1:
        # the least x >= pi_hi with n KL(x || pi_hi) >= target, by bisection; a count k >= n x fails
        low, high = torch.full_like(n, pi_hi), torch.ones_like(n)
        for _ in range(60):
            mid = (low + high) / 2
            far = n * kl(mid, pi_hi) >= target
            high, low = torch.where(far, mid, high), torch.where(far, low, mid)
        reachable = n * kl(torch.ones_like(n), pi_hi) >= target
        hi = torch.where(reachable, torch.ceil(n * high - 1e-9) - 1, n)
    lo = torch.zeros_like(n)
    if not upper_only and pi_lo > 0:
        low, high = torch.zeros_like(n), torch.full_like(n, pi_lo)
        for _ in range(60):
            mid = (low + high) / 2
            far = n * kl(mid, pi_lo) >= target
            low, high = torch.where(far, mid, low), torch.where(far, high, mid)
        reachable = n * kl(torch.zeros_like(n), pi_lo) >= target
        lo = torch.where(reachable, torch.floor(n * low + 1e-9) + 1, 0.0)
    return lo.long(), hi.long()


def keep(q: float) -> tuple[float, float]:
    """The keep probability of a correct kernel's element."""
    return max(q - EPSILON, 0.0), min(q + EPSILON, 1.0)


def agree(q: float) -> tuple[float, float]:
    """The probability that two independent elements, each kept with probability q, agree."""
    corners = [a * b + (1 - a) * (1 - b) for a in keep(q) for b in keep(q)]
    return min(corners), max(corners)


def constant(q: float, runs: int) -> tuple[float, float]:
    """The probability that an element is kept in all ``runs`` independent draws or in none."""
    lo, hi = keep(q)
    return 0.0, min(1.0, hi ** runs + (1 - lo) ** runs)


def lag_factor(bits: int) -> float:
    """How much more likely a correct kernel's event over ``bits`` near-fair coins may be than over
    fair ones (the lag tests' false-fail bound is stated for fair coins)."""
    return math.exp(bits * math.log1p(2 * EPSILON))


@dataclass(frozen=True)
class Family:
    """Statistics of one kind: counts ``k`` of ``n`` (tensors of one shape), each ``Binomial(n, pi)``
    with ``pi`` in the interval for a correct kernel. ``what`` names the family to its caller."""

    what: str
    k: Tensor
    n: Tensor
    pi: tuple[float, float]
    upper_only: bool = False

    @property
    def size(self) -> int:
        return self.k.numel()


@dataclass(frozen=True)
class Finding:
    """A statistic outside its bounds: family ``what``, position ``index`` in the family's tensor,
    its count ``k`` of ``n`` (about ``expected`` for a correct kernel), and ``alpha``, the chance that
    a correct kernel's count leaves the bounds ``lo``..``hi``."""

    what: str
    index: tuple[int, ...]
    k: int
    n: int
    pi: tuple[float, float]
    upper_only: bool
    alpha: float

    @property
    def expected(self) -> float:
        return self.n * (self.pi[0] + self.pi[1]) / 2

    @property
    def fraction(self) -> float:
        return self.k / self.n if self.n else 0.0

    @property
    def extremeness(self) -> float:
        """How far towards its extreme the count went: 0 at the expected count, 1 at 0 or at n."""
        return float(extremeness(torch.tensor([self.k]), torch.tensor([self.n]), self.pi)[0])

    @property
    def lo(self) -> int:
        return int(bounds(torch.tensor([self.n]), self.pi, self.alpha, self.upper_only)[0][0])

    @property
    def hi(self) -> int:
        return int(bounds(torch.tensor([self.n]), self.pi, self.alpha, self.upper_only)[1][0])


def extremeness(k: Tensor, n: Tensor, pi: tuple[float, float]) -> Tensor:
    """How far towards its extreme each count went: 0 at the expected count, 1 at 0 or at n."""
    k, n = k.double(), n.double()
    expected = n * (pi[0] + pi[1]) / 2
    return torch.where(k >= expected, (k - expected) / (n - expected).clamp_min(1e-300),
                       (expected - k) / expected.clamp_min(1e-300))


def failing(k: Tensor, n: Tensor, pi: tuple[float, float], alpha: float, upper_only: bool = False) -> Tensor:
    """Where ``k`` of ``n`` is outside the bounds of :func:`bounds` (the same test, read from the
    count's own Chernoff bound rather than by solving for the bounds)."""
    k, n = k.double(), n.double()
    target = math.log((1 if upper_only else 2) / alpha)
    x = k / n.clamp_min(1)
    high = (x > pi[1]) & (n * kl(x, pi[1]) >= target) if pi[1] < 1 else torch.zeros_like(x, dtype=torch.bool)
    if upper_only or pi[0] <= 0:
        return high
    return high | ((x < pi[0]) & (n * kl(x, pi[0]) >= target))


def testable(n: Tensor, pi: tuple[float, float], alpha: float, upper_only: bool = False) -> Tensor:
    """Where some count of ``n`` trials could fail at ``alpha``: n KL(1 || pi_hi), or n KL(0 || pi_lo),
    reaches the target."""
    target = math.log((1 if upper_only else 2) / alpha)
    rates = [-math.log(pi[1])] if pi[1] < 1 else []
    rates += [-math.log1p(-pi[0])] if not upper_only and pi[0] > 0 else []
    return n.double() * max(rates, default=0.0) >= target


def judge(families: list[Family], alpha: float) -> list[Finding]:
    """The most extreme statistic outside its bounds of each family that has one (of equals, the
    largest group, then the first), where the families together fail a correct kernel with
    probability at most ``alpha``. A statistic that no count could fail at ``alpha / m`` (``m``
    statistics in all: an element over too few seeds) is left out before the rest share ``alpha``:
    which are left out depends on the sizes only, never on the counts."""
    total = sum(f.size for f in families)
    if not total:
        return []
    tested = [testable(f.n.reshape(-1), f.pi, alpha / total, f.upper_only) & (f.n.reshape(-1) > 0) for f in families]
    each = alpha / max(1, sum(int(t.sum()) for t in tested))
    found = []
    for f, test in zip(families, tested):
        n, k = f.n.reshape(-1), f.k.reshape(-1)
        fails = test & failing(k, n, f.pi, each, f.upper_only)
        if not bool(fails.any()):
            continue
        score = torch.where(fails, extremeness(k, n, f.pi), -1.0)
        top = fails & (score == score.max())
        j = int(torch.where(top, n, -1).argmax())  # argmax gives the first of equals
        found.append(Finding(f.what, tuple(int(i) for i in torch.unravel_index(torch.tensor(j), f.k.shape)),
                             int(k[j]), int(n[j]), f.pi, f.upper_only, each))
    return found


def lag_counts(signs: Tensor, counted: Tensor, dim: int) -> tuple[Tensor, Tensor]:
    """(agreements, pairs) of elements ``d`` apart along ``dim``, for every lag d = 1 .. size - 1,
    summed over the other dims, by FFT. ``signs`` is +1 for kept and -1 for dropped (0 where
    uncounted); ``counted`` marks the elements whose mask is known."""
    size = signs.shape[dim]
    length = 1 << (2 * size - 1).bit_length()

    def correlation(a: Tensor) -> Tensor:
        spectrum = torch.fft.rfft(a.double(), n=length, dim=dim)
        power = (spectrum * spectrum.conj()).real
        others = [d for d in range(a.dim()) if d != dim % a.dim()]
        summed = power.sum(dim=others) if others else power
        return torch.fft.irfft(summed, n=length)[1:size].round().long()

    pairs = correlation(counted.to(torch.float64))
    signed = correlation(signs)
    return (pairs + signed) // 2, pairs
