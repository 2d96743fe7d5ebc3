"""What a puzzle declares beside its spec and its cases: how ``--bench`` times it (:class:`Bench`),
the wrong turns the course knows, recognised in the learner's file (:class:`Mistake`) or in a
kernel's output (:class:`LookAlike`), and grading by properties where more than one output is
right (:class:`Check`, which sees each :class:`Run`). Each is a plain frozen record an author
fills in; they stand apart from :mod:`grader.course.puzzle` because none of them knows the
puzzle they belong to, and :class:`~grader.course.puzzle.Puzzle` only holds them. Like it, this
module must stay importable without triton.
"""
from __future__ import annotations

import inspect
import re
from dataclasses import dataclass, field
from typing import Callable, Mapping


@dataclass(frozen=True)
class Bench:
    """How ``--bench`` times a puzzle on a GPU.

    ``sizes`` is the sweep, the first being the headline size; ``blocks`` the kernel's tile
    sizes; ``bytes`` the least memory traffic any implementation needs at a size (what
    GB/s is computed from); ``baseline`` the PyTorch way, called with the spec's inputs;
    ``dtypes`` retypes the spec's float tensors as ``Case.dtypes`` does. A
    function puzzle times forward and backward together, against PyTorch autograd.

    ``baseline_prepares``: ``baseline(*inputs)`` does its untimed work once (SDPA's forward,
    where a backward kernel competes with SDPA's backward alone) and returns the function timed.
    ``baseline_outputs`` names the outputs the baseline computes as the spec does, in the
    bench's dtypes (an autograd puzzle's ``grad_<input>``): at each size, PyTorch's own error
    there sets the tolerance (:mod:`grader.judge.bench.tolerance`).
    """

    sizes: tuple[Mapping[str, int], ...]
    bytes: Callable[[Mapping[str, int]], int]
    blocks: Mapping[str, int] = field(default_factory=dict)
    baseline: Callable | None = None
    baseline_name: str = "PyTorch"
    launch: Mapping[str, int] = field(default_factory=dict)  # e.g. {"num_warps": 8}
    dtypes: Mapping[str, str] = field(default_factory=dict)  # as Case.dtypes: {"x": "float16", "z": "float16"}
    # Compute-bound kernels (matmul, attention): the floating-point operations at a size, so that
    # the report gives TFLOP/s beside GB/s. 2*M*N*K for a matmul.
    flops: Callable[[Mapping[str, int]], int] | None = None
    # (atol, rtol) by output dtype at the sweep's sizes, where a sum runs over far more terms
    # than in any graded case (a weight gradient over 262144 rows); the puzzle's own otherwise.
    tolerances: Mapping[str, tuple[float, float]] = field(default_factory=dict)
    compile_baseline: bool = False  # also time torch.compile of the baseline (of the spec, for a function)
    baseline_prepares: bool = False
    baseline_outputs: tuple[str, ...] = ()


@dataclass(frozen=True)
class Mistake:
    """A known wrong turn, recognised in the learner's file by a regular expression. When a
    case fails, its note goes with the verdict: it says what the course expects, and why."""

    pattern: str
    note: str

    def __post_init__(self) -> None:
        re.compile(self.pattern, re.MULTILINE)  # a bad pattern fails when the course loads

    def seen_in(self, source: str) -> bool:
        return re.search(self.pattern, source, re.MULTILINE) is not None


@dataclass(frozen=True)
class LookAlike:
    """A known wrong turn, recognised in the kernel's OUTPUT: ``spec`` is a small alternative
    spec that computes what the wrong kernel would produce. When a case's values are wrong and
    match it (within the puzzle's tolerance), the message says "It looks like <name>: <where>."

    ``spec`` takes the puzzle spec's inputs, in order, and returns what the spec returns (after
    any ``host_reduce``: the same space the spec is compared in). It may also take the
    keyword-only arguments ``sizes`` (the case's sizes, derived sizes and blocks, by name) and
    ``layouts`` (the case's ``layouts``), for mistakes that depend on a block size or on how
    an input is stored; and, as the spec, a keyword-only parameter named after a size, a
    block or one of the puzzle's variants (``*, EPS``) gets its value.
    """

    name: str
    spec: Callable
    where: str
    faster: bool = False  # a correct alternative's note (Check.notes) that names a faster way: --perf leads with it

    def produce(self, inputs, sizes: Mapping[str, int], layouts: Mapping[str, str]) -> tuple:
        """What the wrong kernel would have written, one tensor per output."""
        wanted = inspect.signature(self.spec).parameters
        extra = {k: v for k, v in (("sizes", dict(sizes)), ("layouts", dict(layouts))) if k in wanted}
        extra.update({k: sizes[k] for k, p in wanted.items()
                      if p.kind is p.KEYWORD_ONLY and k not in extra and k in sizes})
        result = self.spec(*[x.clone() for x in inputs], **extra)
        return result if isinstance(result, tuple) else (result,)


@dataclass(frozen=True)
class Run:
    """One run of a kernel, as a :class:`Check` sees it: the sizes and blocks it was given (by
    name), and its inputs and outputs in the spec's order."""

    values: Mapping[str, int]
    inputs: tuple
    outputs: tuple


@dataclass(frozen=True)
class Check:
    """Grading by properties, for a puzzle where more than one output is right (which elements a
    dropout drops is its random generator's choice). The spec stays the statement's reference,
    and its look-alikes still name a mistake; what passes is decided here, for each case:

    * ``expect(run)``: the outputs the run should have written given the choices it made (a
      dropout's kept elements scaled by 1 / (1 - p), the rest 0), compared elementwise with the
      puzzle's tolerance, as a spec's output is;
    * ``reruns(values)``: the values (sizes, blocks) of further runs on the same inputs: the same
      again, another seed, another block size; or on inputs drawn again, where a rerun names
      ``grader.judge.properties.INPUTS`` (a dropout's backward, on another tensor);
    * ``judge(runs)``: the case's run, then its reruns: what they show wrong, in words that say
      what was yours and what was expected, or None.

    ``notes`` are look-alikes of correct outputs in another way than the spec's (another random
    stream): a case that passes and matches one says so in a note, never a fail.
    """

    expect: Callable[[Run], tuple]
    judge: Callable[[tuple[Run, ...]], str | None]
    reruns: Callable[[Mapping[str, int]], tuple[Mapping[str, int], ...]] = lambda values: ()
    notes: tuple[LookAlike, ...] = ()
