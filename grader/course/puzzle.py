"""How a puzzle is defined.

Each file in ``puzzles/`` builds one :class:`Puzzle` named ``PUZZLE``. The file is the single
source of truth for the statement, the spec, the stub kernel, the cases, the tolerances and
the hints; the grader, the tests and the notebooks all read it from there.

This module must stay importable without triton: the grader's own process reads puzzle
definitions, and only the worker process imports triton in interpreter mode.
"""
from __future__ import annotations

import inspect
import math
from dataclasses import dataclass, field, replace
from typing import Callable, Mapping

from grader.course import kinds
from grader.course.case import EDGES, LAYOUTS, Case, seeds  # noqa: F401 (what puzzle files import)
from grader.course.dtypes import FLOATS, dtype_named
from grader.course.puzzle_parts import Bench, Check, LookAlike, Mistake, Run  # noqa: F401 (Run: what a Check's callables see)
from grader.course.variant import Variant, restate, shown, tex  # noqa: F401 (tex: what puzzle files import)

Sizes = Mapping[str, int]
# What a puzzle's author uses; everything else here is the grader's.
__all__ = ["Bench", "Case", "Check", "LookAlike", "Mistake", "Puzzle", "Run", "Variant", "cdiv", "seeds", "tex"]

def cdiv(a: int, b: int) -> int:
    """Ceiling division, as ``triton.cdiv``; kept here so puzzle grids need no triton."""
    return -(-a // b)


# The parts of the course, in order (grader.course.kinds.tracks: the table grader/app/notebook_build.py
# also reads, to give each its notebook).
TRACKS = tuple(track.name for track in kinds.tracks())

# What a puzzle's ``kind`` may be (grader.course.kinds; a puzzle is checked against the registry
# itself), and those the grader launches on the puzzle's ``grid`` (an autograd Function launches its
# own kernels). How each is graded is its wing in grader.judge.kinds (and, in the worker,
# grader.sandbox.kinds): tests/test_kinds.py holds all three to these names.
KINDS = tuple(kinds.SPECS)


@dataclass(frozen=True)
class Puzzle:
    """A puzzle: the statement, the PyTorch spec, the kernel's name, how it is launched and graded.

    * ``spec`` is plain PyTorch whose jaxtyping annotations give every input's and the
      output's dtype and symbolic shape. Keyword-only parameters are not tensors: they get
      the case's size or block of the same name (a mode such as ``CAUSAL``).
    * ``grid`` maps a case's sizes and blocks to the launch grid.
    * ``output`` is the name of the output argument (``z`` in most puzzles): the kernel's
      pointers are the spec's arguments in order, then the output.
    * ``derive`` adds sizes that follow from the case's sizes and blocks (for example the
      number of packed int32 words per row, or the number of row tiles).
    * ``output`` may name several outputs (the spec then returns a tuple). ``allocate`` gives
      an output buffer other dims than the spec's result, and ``host_reduce`` maps what the
      kernel wrote to what the spec returns: a partial-sum buffer of shape (tiles, D) is
      summed over its first axis on the host, as the learner's wrapper would.
    * ``strides`` names the kernel parameters that receive each tensor's strides, in
      elements: ``{"x": ("x_stride_row", "x_stride_dim")}``.
    * ``mistakes`` are recognised in the learner's source; ``look_alikes`` in the values a
      failing case wrote (see :class:`LookAlike`).
    * ``tolerances`` overrides ``atol`` and ``rtol`` for outputs of a given dtype:
      ``{"float16": (1e-3, 1e-2)}``. An output is compared with its own dtype's tolerance.
    * ``prepare`` takes the case's random inputs, in the spec's order, and returns them with some
      recomputed from the others (keyword-only parameters get case values, as the spec's): a
      backward puzzle's saved statistics (a row's mean and rstd, attention's output and
      logsumexp) must be those of its other inputs, not random.
    * ``saves`` (function puzzles) names the tensors besides the inputs that ``ctx`` may keep,
      with their dims: ``{"mean": "N", "rstd": "N"}``. Anything else saved fails, and so does a
      saved tensor whose storage holds more than the tensor itself.
    * ``check`` grades by properties instead of against the spec (:class:`Check`): kernel
      puzzles whose right answer is one of many, a random mask.
    * ``host_reductions`` (function puzzles) names the inputs whose gradient the host may finish
      as ``partial.sum(0)``: in the backward, over the first dim of a 2-D buffer of per-program
      partial rows a kernel wrote, with at most the given number of rows: ``{"w": 1024}``. Every
      other PyTorch reduction of a kernel's buffer fails. The statement says the same.
    * ``ranges`` draws named integer inputs uniformly from ``[low, high)``, a function of the
      case's sizes and blocks: ``{"target": lambda s: (0, s["V"])}`` for class indices. Other
      integer inputs cover their dtype's whole range.
    * ``zeroed`` names outputs that start as zeros instead of the grader's "unwritten" fill, as
      a wrapper allocating them with ``torch.zeros`` would: kernels that accumulate into them
      with atomics (a histogram). An element no program touched then reads 0.
    * ``mantissa_bits`` rounds named float inputs to that many explicit mantissa bits. Dot
      puzzles use it so that TF32 ``tl.dot`` on a GPU is exact: a correct kernel then matches
      an fp32 reference tightly and a wrong one still fails.
    * ``track`` is the part of the course the puzzle belongs to, one of :data:`TRACKS`: it
      picks the notebook the puzzle appears in.
    * ``variants`` are the puzzle's free constants (:class:`grader.course.variant.Variant`):
      ``chosen`` holds the values in force (a student's; the defaults where it is empty). The
      spec, ``prepare`` and the look-alikes read a value as a keyword-only parameter of its
      name; the statement says it where the variant's ``stated`` fragments are; ``rebuild``
      maps the values to the other fields that follow from them (cases sized for a group size,
      hints that say the number), for values other than the defaults, with which the fields
      are declared. :meth:`with_variant` gives
      the puzzle for other values. ``statement_template`` is the statement as declared (as the
      defaults read): leave it unset.
    """

    id: str
    title: str
    statement: str
    spec: Callable
    kernel: str
    grid: Callable[[Sizes], tuple[int, ...]] | None
    cases: tuple[Case, ...]
    atol: float = 1e-5
    rtol: float = 1e-5
    hints: tuple[str, ...] = ()
    mistakes: tuple[Mistake, ...] = ()
    look_alikes: tuple[LookAlike, ...] = ()
    output: str | tuple[str, ...] = "z"
    derive: Callable[[Sizes], Sizes] | None = None
    mantissa_bits: Mapping[str, int] = field(default_factory=dict)
    strides: Mapping[str, tuple[str, ...]] = field(default_factory=dict)
    allocate: Mapping[str, str] = field(default_factory=dict)
    host_reduce: Mapping[str, Callable] = field(default_factory=dict)
    # one of KINDS; "function": the learner writes a torch.autograd.Function named `kernel`;
    # "helion": a @helion.kernel named `kernel` that takes the spec's inputs and returns its outputs
    kind: str = kinds.default()
    requires: tuple[str, ...] = ()  # triton.language APIs the puzzle needs, e.g. ("make_block_ptr",)
    instead: str | None = None      # the puzzle to do where those APIs are gone, e.g. "puzzle16"
    bench: Bench | None = None
    tolerances: Mapping[str, tuple[float, float]] = field(default_factory=dict)  # dtype -> (atol, rtol)
    saves: Mapping[str, str] = field(default_factory=dict)  # function puzzles: non-inputs ctx may keep
    host_reductions: Mapping[str, int] = field(default_factory=dict)  # function puzzles: input -> most partial rows
    check: Check | None = None  # graded by properties, not against the spec (a random mask)
    prepare: Callable | None = None  # the random inputs -> the inputs, some recomputed from others
    ranges: Mapping[str, Callable[[Sizes], tuple[int, int]]] = field(default_factory=dict)  # integer inputs
    zeroed: tuple[str, ...] = ()  # outputs that start as zeros (atomics accumulate into them)
    # Helion puzzles: the extent each of a case's tile sizes tiles, as a product of sizes
    # ({"BH": "B*H", "BQ": "NQ"}): how the case's sizes reach a kernel's own tile loops
    tiles: Mapping[str, str] = field(default_factory=dict)
    track: str = "classic"  # one of TRACKS; every puzzle file names its own
    variants: tuple[Variant, ...] = ()
    chosen: Mapping[str, object] = field(default_factory=dict)  # a student's values; the defaults if empty
    rebuild: Callable[[Mapping[str, object]], Mapping[str, object]] | None = None
    statement_template: str | None = None  # set from `statement` on creation: what {{NAME}} is rendered from

    def __post_init__(self) -> None:
        self._check_variants()
        if self.statement_template is None:
            object.__setattr__(self, "statement_template", self.statement)
        object.__setattr__(self, "statement", restate(self.statement_template, self.variants, self.variant_values,
                                                      self.id))
        if not (self.id.startswith("puzzle") and self.id[6:].isdigit()):
            raise ValueError(f"puzzle id {self.id!r} must look like 'puzzle07'")
        tracks = [track.name for track in kinds.tracks()]
        if self.track not in tracks:
            raise ValueError(f"{self.id}: track must be one of {', '.join(map(repr, tracks))}, "
                             f"not {self.track!r}")
        labels = [c.label for c in self.cases]
        if len(set(labels)) != len(labels):
            raise ValueError(f"{self.id}: two cases share a name and seed: {labels}")
        if not self.cases:
            raise ValueError(f"{self.id}: a puzzle needs at least one case")
        if self.kind not in kinds.SPECS:
            raise ValueError(f"{self.id}: kind must be {' or '.join(map(repr, kinds.SPECS))}, not {self.kind!r}")
        if kinds.SPECS[self.kind].on_grid and self.grid is None:
            raise ValueError(f"{self.id}: a {self.kind} puzzle needs a grid")
        for dtype, pair in self.tolerances.items():
            dtype_named(dtype)
            if len(pair) != 2 or min(pair) < 0:
                raise ValueError(f"{self.id}: tolerance for {dtype} must be (atol, rtol) >= 0, not {pair!r}")
        names = [look.name for look in self.look_alikes]
        if len(set(names)) != len(names):
            raise ValueError(f"{self.id}: two look-alikes share a name: {names}")
        for case in self.cases:  # checked here, where dtypes are known, so that a Case needs no dtype table
            for name, dtype in case.dtypes.items():
                if dtype_named(dtype).name not in FLOATS:
                    raise ValueError(f"case {case.name!r}: dtype {dtype!r} of {name} is not a float dtype; "
                                     f"a case may only retype float tensors ({', '.join(FLOATS)})")
        for case in self.cases:  # a size drawn anywhere in its range must still give a grid
            for end in (0, 1):
                self.launch_grid(replace(case, sizes={**case.sizes, **{k: r[end] for k, r in case.vary.items()}}))

    def _check_variants(self) -> None:
        names = [v.name for v in self.variants]
        if len(set(names)) != len(names):
            raise ValueError(f"{self.id}: two variants share a name: {names}")
        for name, value in self.chosen.items():
            variant = next((v for v in self.variants if v.name == name), None)
            if variant is None:
                raise ValueError(f"{self.id} has no variant {name!r} (its variants: {', '.join(names) or 'none'})")
            if value not in variant.choices:
                raise ValueError(f"{self.id}: {value!r} is not one of the choices of {name} "
                                 f"({', '.join(map(shown, variant.choices))})")

    @property
    def variant_values(self) -> dict[str, object]:
        """Each variant's value in force: the chosen one, else its default."""
        return {v.name: self.chosen.get(v.name, v.default) for v in self.variants}

    @property
    def is_default(self) -> bool:
        return all(self.variant_values[v.name] == v.default for v in self.variants)

    def with_variant(self, values: Mapping[str, object]) -> "Puzzle":
        """The puzzle for these values of its variants (by name; a variant not named keeps its
        default): the statement rendered, and ``rebuild``'s fields where a value is not the default."""
        chosen = {**{v.name: v.default for v in self.variants}, **values}
        puzzle = replace(self, chosen=chosen)
        if self.rebuild is not None and not puzzle.is_default:
            puzzle = replace(puzzle, **self.rebuild(puzzle.variant_values))
        return puzzle

    def variant_look_alikes(self) -> tuple[LookAlike, ...]:
        """One look-alike per other choice of each variant: the spec with that value, what a file
        written for another student computes. Its note names the constant and the student's value.
        None where no student's values were chosen: the course's own defaults are no one's."""
        if not self.chosen:
            return ()
        looks = []
        for variant in self.variants:
            mine = self.variant_values[variant.name]
            for other in variant.choices:
                if other == mine:
                    continue
                values = {**self.variant_values, variant.name: other}
                looks.append(LookAlike(
                    f"the values computed with {variant.said(other)}",
                    lambda *inputs, sizes, _values=values: self.run_spec(inputs, {**sizes, **_values}),
                    f"{variant.what} is {shown(mine)} for you, as your statement says; "
                    f"use {shown(mine)}{_where_written(variant)}"))
        return tuple(looks)

    @property
    def number(self) -> int:
        return int(self.id[6:])

    def run_spec(self, inputs, values: Mapping[str, int]):
        """The spec on ``inputs``; its keyword-only parameters (say ``CAUSAL``) get the case's
        size or block of that name, as the kernel's do, or the value of the variant of that name."""
        return with_case_values(self.spec, inputs, {**self.variant_values, **values})

    def tolerance(self, dtype: str) -> tuple[float, float]:
        """(atol, rtol) for an output of this dtype name."""
        return tuple(self.tolerances.get(dtype, (self.atol, self.rtol)))

    @property
    def outputs(self) -> tuple[str, ...]:
        return (self.output,) if isinstance(self.output, str) else tuple(self.output)

    def sizes(self, case: Case) -> dict[str, int]:
        """The case's sizes plus derived ones."""
        sizes = dict(case.sizes)
        if self.derive is not None:
            sizes.update(self.derive({**sizes, **case.blocks}))
        return sizes

    def launch_grid(self, case: Case) -> tuple[int, ...]:
        if self.grid is None:  # a function puzzle launches its own kernels
            return ()
        grid = tuple(int(g) for g in self.grid({**self.sizes(case), **case.blocks}))
        if not grid or any(g < 1 for g in grid) or len(grid) > 3:
            raise ValueError(f"{self.id}: grid {grid} for case {case.label} is not 1 to 3 positive ints")
        return grid


def _where_written(variant: Variant) -> str:
    """Where the course's stub holds the constant, as a message names it."""
    if variant.code is None:
        return ""
    if "." in variant.code:
        function, parameter = variant.code.split(".")
        return f" as the default of `{parameter}` in `{function}`"
    return f" as the value of `{variant.code}`"


def keyword_values(fn: Callable, values: Mapping[str, int]) -> dict:
    """The entries of ``values`` that ``fn`` takes as keyword-only parameters, by name."""
    wanted = [p.name for p in inspect.signature(fn).parameters.values() if p.kind is p.KEYWORD_ONLY]
    return {name: values[name] for name in wanted if name in values}


def tile_extents(tiles: Mapping[str, str], names, sizes: Mapping[str, int]) -> tuple[int, ...]:
    """The extent each named tile size tiles (a Helion puzzle's ``tiles``: a product of sizes,
    "B*H"), 0 where the puzzle does not say."""
    said = [tiles.get(name, "") for name in names]
    return tuple(math.prod(int(sizes[n.strip()]) for n in expr.split("*")) if expr else 0 for expr in said)


def with_case_values(fn: Callable, args, values: Mapping[str, int]):
    """``fn(*args)``, its keyword-only parameters filled from ``values`` by name."""
    return fn(*args, **keyword_values(fn, values))


def programs(grid: tuple[int, ...]) -> int:
    return math.prod(grid)
