"""``--bench`` of a Helion puzzle, one size per request (runs inside a worker).

The learner's ``@helion.kernel`` is compiled by Helion once per size with exactly one config:
the Bench's ``blocks`` on the kernel's own tile loops (:mod:`grader.sandbox.kinds.helion.config`, as a
case's) and its ``launch`` (num_warps, num_stages). Helion's autotuner is
never run (it takes minutes). The compiled kernel is then called as a function, as the learner
calls it, through the same guarded loop as the other kinds (:mod:`grader.sandbox.bench.loop`),
beside the Bench's baseline.

The kernel allocates its own outputs, so they cannot be filled with NaN before each call as a
Triton kernel's buffers are: instead each call's outputs are filled with the grader's NaN once
they have been read, then freed. PyTorch's allocator hands the same block to the next call's
``torch.empty``, so an element that call does not write shows as NaN, not as the value the call
before it left.

On a CPU (the test path) the same compiled host code runs, each launch of the Triton Helion
generated run in Triton's interpreter: figures by the host's clock, never a result.
"""
from __future__ import annotations

import torch

from grader.channel import wire_measure
from grader.course.puzzle import Puzzle, keyword_values, tile_extents
from grader.sandbox.bench.loop import Measure, Subject
from grader.sandbox.bench.run import _baselines, _copy, _nothing, _poison, input_sets, raw
from grader.sandbox.kinds.helion.cpu import interpreted_launch


def compiled(kernel, tensors: list, values: dict, blocks: dict, launch: dict, extents: tuple[int, ...] = ()):
    """The learner's kernel compiled by Helion for these arguments and one config (the Bench's
    tile sizes on the kernel's own loops: :mod:`grader.sandbox.kinds.helion.config`).
    Returns (the compiled function, its arguments, the config)."""
    import helion

    from grader.sandbox.kinds.helion.config import case_config
    from grader.sandbox.kinds.helion.run import _compiler_copy
    compiler = _compiler_copy(kernel)  # Helion's interpreter off, on a CPU too
    args = compiler.normalize_args(*tensors, **values)
    bound = compiler.bind(args)
    config, _, _ = case_config(bound, tuple(int(b) for b in blocks.values()), extents, tuple(blocks))
    config = helion.Config(**{**config.config, **{k: int(v) for k, v in launch.items()}})
    return bound.compile_config(config, allow_print=False), args, config


def _interpreted(kernel, grid, *args, **options) -> None:
    """Helion's host code calls this for each launch on a CPU: Triton's interpreter runs it."""
    interpreted_launch(kernel, grid, args, {k: v for k, v in options.items() if k in ("num_warps", "num_stages")})


def bench_helion(puzzle: Puzzle, kernel, msg: wire_measure.Bench, blobs: list[bytes],
                 device: str = "cuda") -> tuple[dict, list]:
    """One size: the compiled kernel called on the grader's inputs, against the Bench's baseline."""
    sets = input_sets(msg, blobs, device)
    work = [x.clone() for x in sets[0]]
    values = keyword_values(puzzle.spec, dict(msg.values))
    blocks = dict(puzzle.bench.blocks)
    fn, args, _ = compiled(kernel, work, values, blocks, dict(puzzle.bench.launch),
                           tile_extents(puzzle.tiles, blocks, dict(msg.sizes)))
    extra = {"_launcher": _interpreted} if device == "cpu" else {}
    held: list = []  # the last call's outputs, until they have been read and poisoned

    def call():
        got = fn(*args, **extra)
        held[:] = list(got) if isinstance(got, (tuple, list)) else [got]

    def refresh(s: int):
        for into, source in zip(work, sets[s]):
            into.copy_(source)
        for out, info in zip(held, msg.outputs):
            if type(out) is torch.Tensor:
                _poison(out, info.name, ())()  # freed next: the next call's torch.empty gets this block
        held.clear()

    def snapshot():
        # What is not a plain tensor of the planned shape is not read: zeros go back in its place,
        # and the watch names it (the grader's check then fails that output).
        plain, odd = [], []
        for i, info in enumerate(msg.outputs):
            out = held[i] if i < len(held) else None
            if type(out) is torch.Tensor:
                plain.append(out)
            else:
                odd.append(f"output {i} (`{info.name}`), a {type(out).__name__}")
                plain.append(torch.zeros(info.shape, dtype=getattr(torch, info.dtype), device=device))
        return (*raw(plain), odd)

    theirs = [x.clone() for x in sets[0]]

    def subject(baseline, prepares: bool):
        timed = baseline(*theirs) if prepares else (lambda: baseline(*theirs))
        return Subject(timed, _nothing)
    call()  # Triton compiles Helion's kernel at its first launch: before the watch, as Helion's compile was
    measure = Measure(device, len(sets), msg.calls)
    result, out = measure.run(Subject(call, refresh, snapshot), _baselines(puzzle, dict(msg.values), subject))
    return {"sizes": msg.sizes, "blocks": dict(puzzle.bench.blocks), "copy_ms": _copy(measure, msg.traffic, device),
            **result}, out
