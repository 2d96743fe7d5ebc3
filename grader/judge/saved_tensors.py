"""What ``ctx`` of a learner's autograd Function kept for the backward (grader.judge.grade_function):
the inputs, and the results a puzzle lets it save, each with memory of its own."""
from __future__ import annotations

import math

from grader.channel import wire
from grader.course.annotations import TensorSpec
from grader.course.dtypes import DTYPES
from grader.course.puzzle import Case, Puzzle
from grader.judge import failures, program as programs


def check(program: wire.Program, puzzle: Puzzle, case: Case, names: tuple[str, ...]):
    """The first thing ctx kept that the puzzle does not allow (an attribute, a tensor of another
    shape, a view keeping more memory than it shows), or None. ``names``: the inputs'."""
    for attribute in program.attributes:
        return failures.CtxAttribute(attribute)
    # Besides the inputs, a puzzle may let ctx keep a few results (say a row's mean and
    # rstd): each by its shape, each shape as many times as the puzzle names it.
    dims = {**puzzle.sizes(case), **case.blocks}
    allowed = [TensorSpec(name, "float32", tuple(spec.split())).shape(dims)
               for name, spec in puzzle.saves.items()]
    kept: dict[int, list[int]] = {}  # storage -> the saved refs that view it, each of an allowed shape
    for ref, is_input in zip(program.saved, programs.saved_inputs(program)):
        if ref is None or is_input:
            continue
        shape = tuple(program.metas[ref].shape)
        if shape in allowed:
            allowed.remove(shape)
            kept.setdefault(program.metas[ref].storage, []).append(ref)
            continue
        return failures.SavedExtra(shape, tuple(puzzle.saves), tuple(names))
    return _storage_kept(program, kept, tuple(puzzle.saves))


def _storage_kept(program: wire.Program, kept: dict[int, list[int]], saves: tuple[str, ...]):
    """Saving a tensor keeps its whole storage alive, and the backward may read all of it: each
    storage ctx keeps may hold no more bytes than the allowed tensors saved from it take. A storage's
    bytes are the furthest any tensor of the program reaches into it (the replay has checked every
    one's layout against real tensors)."""
    for storage, refs in kept.items():
        reach = max(_reach(meta) for meta in program.metas if meta.storage == storage)
        allowed = sum(math.prod(program.metas[r].shape) * DTYPES[program.metas[r].dtype].itemsize for r in refs)
        if reach > allowed:
            meta = program.metas[refs[0]]
            return failures.SavedStorage(tuple(meta.shape), meta.dtype, reach, allowed, _made_by(program, storage),
                                         saves, len(refs))
    return None


def _reach(meta: wire.TensorMeta) -> int:
    """Bytes from the start of its storage to the end of the last element ``meta`` addresses."""
    if not meta.shape or 0 not in meta.shape:
        last = meta.offset + sum((size - 1) * abs(stride) for size, stride in zip(meta.shape, meta.strides))
        return (last + 1) * DTYPES[meta.dtype].itemsize if meta.dtype in DTYPES else 0
    return 0


def _made_by(program: wire.Program, storage: int) -> str:
    step = next((s for s in program.steps if s.op and any(program.metas[r].storage == storage for r in s.out)), None)
    if step is None:
        return ""
    where = f" at line {step.line}: `{step.source}`" if step.line else ""
    return f"`{programs.base_name(step.op)}`{where}"
