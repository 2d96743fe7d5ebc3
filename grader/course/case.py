"""One configuration a puzzle's kernel is run on, and how a batch's secret varies its sizes.

Importable without torch or triton, as :mod:`grader.course.puzzle` is.
"""
from __future__ import annotations

import zlib
from dataclasses import dataclass, field, replace
from typing import Mapping

Sizes = Mapping[str, int]

LAYOUTS = ("contiguous", "transposed", "row_strided")
# Named ways to reshape a random input's values (implemented in grader/judge/plan.py).
EDGES = ("zeros", "max_last_chunk", "all_negative", "constant_rows", "large_mean", "ignore_index")
# The variant whose value the "ignore_index" edge writes, where a puzzle declares one.
IGNORE_VARIANT = "IGNORE_INDEX"


@dataclass(frozen=True)
class Case:
    """One configuration the kernel is run on.

    ``sizes`` fill the spec's symbolic dims (and any extra size the kernel receives, such as
    ``N1`` of the classic long-sum signature). ``blocks`` are the block sizes and other
    ``tl.constexpr`` parameters. ``scale`` multiplies the standard deviation of float inputs:
    large-magnitude cases use it to make missing max-subtraction overflow. ``layouts`` stores
    a named input as a strided view instead of a contiguous tensor: ``"transposed"`` keeps a
    2-D tensor in column-major order, so only kernels that use the strides they are given pass.

    ``edges`` reshapes a named input's random values so that a kernel relying on friendly
    inputs fails; rows are along the last axis:

    * ``"zeros"``: every third element (in memory order) is exactly 0, so is any product with
      it: a ReLU gate written ``>=`` instead of ``>`` shows.
    * ``"max_last_chunk"``: each row's last element becomes the row's maximum plus
      ``4 * scale``. The last column lies in the last chunk whatever the block size, so a
      softmax that takes its maximum from the first chunk only overflows when ``scale`` makes
      4 * scale exceed about 88.
    * ``"all_negative"``: every value is at most ``-scale``; with a large ``scale`` every
      ``exp(x)`` underflows to 0, so a running maximum initialised to 0 instead of -inf shows.
    * ``"constant_rows"``: every element of a row equals the row's first: ties everywhere, so a
      maximum, an argmax or a variance that assumes distinct values shows.
    * ``"large_mean"``: every value moves up by ``256 * scale``, 256 times the spread: a variance
      taken as E[x²] - E[x]² then cancels in fp32 and keeps about 8 of its 24 bits, while one
      taken around the mean stays exact to fp32.
    * ``"ignore_index"`` (integer inputs): every third element (in memory order, from the
      first) is the puzzle's ``IGNORE_INDEX`` variant where it has one, else -100, the
      ``ignore_index`` of PyTorch's losses.

    ``dtypes`` gives named float tensors of the spec (inputs or outputs) another float dtype in
    this case, e.g. ``{"x": "bfloat16", "z": "bfloat16"}``: one spec then grades the fp32,
    fp16 and bf16 uses of a kernel, each against its own tolerance (``Puzzle.tolerances``).

    ``large`` marks a case that reaches past what a kernel could hard-code (more than 32768
    elements, 17 or more chunks, more rows than one block): in the interpreter it runs without
    the per-access bounds hooks, which cost more than the kernel, and only when its values are
    wrong does it run again with them, so that the message still names a stray access. On a
    GPU it is not run again in the interpreter beside it.

    ``vary`` gives named sizes a range ``(low, high)``, both included, that holds the declared
    size: a batch graded with a secret draws each from the secret, so that a kernel cannot be
    fitted to the public sizes. Without a secret the declared sizes are used.
    """

    name: str
    sizes: Sizes
    blocks: Sizes
    seed: int = 0
    scale: float = 1.0
    layouts: Mapping[str, str] = field(default_factory=dict)  # e.g. {"x": "transposed"}
    edges: Mapping[str, str] = field(default_factory=dict)  # e.g. {"x": "zeros"}
    dtypes: Mapping[str, str] = field(default_factory=dict)  # e.g. {"x": "float16", "z": "float16"}
    large: bool = False  # checked for values without bounds hooks; rerun with them on failure
    vary: Mapping[str, tuple[int, int]] = field(default_factory=dict)  # e.g. {"N0": (40000, 50000)}

    def __post_init__(self) -> None:
        if not isinstance(self.large, bool):
            raise ValueError(f"case {self.name!r}: large must be True or False, not {self.large!r}")
        for name, bounds in self.vary.items():
            self._check_range(name, bounds)
        for name, layout in self.layouts.items():
            if layout not in LAYOUTS:
                raise ValueError(f"case {self.name!r}: layout {layout!r} of {name} is not one of {LAYOUTS}")
        for name, edge in self.edges.items():
            if edge not in EDGES:
                raise ValueError(f"case {self.name!r}: edge {edge!r} of {name} is not one of {EDGES}")
        for key, value in {**self.blocks}.items():
            if key.startswith("B") and (value < 1 or value & (value - 1)):
                raise ValueError(
                    f"case {self.name!r}: block {key}={value} is not a power of two; "
                    "tl.arange lengths must be powers of two, so a correct kernel would fail"
                )

    def _check_range(self, name: str, bounds) -> None:
        size = self.sizes.get(name)
        if not isinstance(size, int):
            ints = ", ".join(k for k, v in self.sizes.items() if isinstance(v, int))
            raise ValueError(f"case {self.name!r}: vary names {name!r}, which is not one of its integer sizes "
                             f"({ints}); give the size a declared value in sizes first")
        if (not isinstance(bounds, tuple) or len(bounds) != 2
                or not all(isinstance(b, int) and not isinstance(b, bool) for b in bounds)):
            raise ValueError(f"case {self.name!r}: vary[{name!r}] must be a pair of ints (low, high), "
                             f"not {bounds!r}")
        low, high = bounds
        if not 1 <= low <= size <= high:
            raise ValueError(f"case {self.name!r}: vary[{name!r}] = ({low}, {high}) must hold the declared "
                             f"size {name}={size}, with 1 <= low <= {size} <= high")

    @property
    def label(self) -> str:
        """Short unique name, e.g. ``tail[seed=1]``."""
        return f"{self.name}[seed={self.seed}]"

    def values(self) -> dict[str, int]:
        """Every named integer the kernel may receive: sizes, then blocks."""
        return {**self.sizes, **self.blocks}


def seeds(case: Case, *more: int) -> tuple[Case, ...]:
    """The same case once per seed: ``seeds(Case(...), 1, 2)`` runs seeds 0, 1 and 2."""
    return (case,) + tuple(replace(case, seed=s) for s in more)


def draw(case: Case, puzzle_id: str, secret: int) -> Case:
    """The case with each ``vary`` size drawn from ``secret`` within its range: the same draw
    for the same puzzle, case and secret, wherever it runs. Secret 0 keeps the declared sizes."""
    if not secret or not case.vary:
        return case
    sizes = dict(case.sizes)
    for name, (low, high) in case.vary.items():
        pick = zlib.crc32(f"{puzzle_id}:{case.label}:{name}:{secret}".encode())
        sizes[name] = low + pick % (high - low + 1)
    return replace(case, sizes=sizes)
