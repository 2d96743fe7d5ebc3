"""A result must not depend on what its outputs held before the kernel wrote them (issue 45): the
second fill (grader.judge.fence.Fill, CasePlan.refill), which reads call for it
(grader.judge.early_reads), how two runs' outputs are compared, and the words of the failure."""
from __future__ import annotations

import pytest
import torch

from conftest import COURSE
from grader.channel import wire
from grader.course.puzzle import Case
from grader.judge import failures
from grader.judge.early_reads import early_reads, first_change, refilled_blobs
from grader.judge.failures import FailureKind
from grader.judge.fence import UNWRITTEN, Buffer, Fill, is_unwritten, pack, stale_fill, unpack
from grader.judge.plan import SpecShapes

FLOATS = (torch.float32, torch.float16, torch.bfloat16, torch.float64)
INTS = (torch.int64, torch.int32, torch.int16, torch.int8, torch.uint8)


@pytest.mark.parametrize("dtype", FLOATS + INTS + (torch.bool,), ids=str)
def test_stale_values_are_plausible_never_the_marker_and_the_seeds_own(dtype):
    stale = stale_fill(dtype, (64, 33), seed=5)
    assert stale.dtype == dtype and stale.shape == (64, 33)
    assert not bool(is_unwritten(stale).any())  # every element an early read sees differs from the first run's
    assert torch.equal(stale, stale_fill(dtype, (64, 33), seed=5))
    if dtype == torch.bool:
        assert bool(stale.all())  # the marker is False
        return
    assert not torch.equal(stale, stale_fill(dtype, (64, 33), seed=6))
    assert stale.unique().numel() > 30  # a value per element, not a pattern
    assert 0.15 < float((stale == 0).float().mean()) < 0.35  # fresh memory is zeros
    if dtype.is_floating_point:
        magnitude = stale.double().abs()
        assert bool(torch.isfinite(stale).all())
        assert float(((magnitude > 0) & (magnitude < 40)).double().mean()) > 0.5  # a freed tensor's numbers...
        assert float((magnitude >= torch.finfo(dtype).max ** 0.5).double().mean()) > 0.05  # ...and large ones


def test_pack_fills_an_output_with_the_fill_it_is_given_and_the_marker_by_default():
    buffer = Buffer.plan("z", "output", "float32", (3, 5), index=1, layout="row_strided")
    marked, _ = unpack(buffer, pack(buffer, None))
    assert bool(is_unwritten(marked).all())
    assert pack(buffer, None, UNWRITTEN) == pack(buffer, None)
    stale, damage = unpack(buffer, pack(buffer, None, Fill(9)))
    assert damage is None and torch.equal(stale, stale_fill(torch.float32, (3, 5), 9))


def test_a_plan_draws_its_refill_from_the_case_seed_and_the_secret():
    puzzle = COURSE.puzzle("puzzle02")
    shapes = SpecShapes(puzzle)
    case = puzzle.cases[0]
    again = Case(case.name, sizes=dict(case.sizes), blocks=dict(case.blocks), seed=case.seed + 100)
    first = shapes.plan(case).refill
    assert first.seed is not None and first == shapes.plan(case).refill
    assert first != shapes.plan(again).refill and first != shapes.plan(case, secret=7).refill


def _run(reads, reversed_=False):
    return wire.KernelRun(label="", reversed=reversed_, seconds=0.0, printed="", unwritten_reads=reads)


def _read(tensor, index=3, source="old = tl.load(z_ptr + offs)"):
    return wire.EarlyRead(tensor=tensor, index=index, program=(1, 0, 0), shape=(8,), line=12, source=source)


def test_reads_of_zeroed_outputs_are_excused_and_an_unwatched_run_calls_for_the_second_fill():
    assert early_reads(wire.Ran(runs=(_run(()),)), ()) == ()
    assert early_reads(wire.Ran(runs=(_run((_read("counts"),)),)), ("counts",)) == ()
    found = early_reads(wire.Ran(runs=(_run((_read("z"),)), _run((_read("z", 5), _read("w"))))), ())
    assert [(r.tensor, r.index) for r in found] == [("z", 3), ("w", 3)]
    assert early_reads(wire.Ran(runs=(_run(None),)), ()) is None  # a GPU's run: nothing watched


class _Plan:
    def __init__(self, outputs):
        self.inputs = (torch.zeros(4),)
        self.buffers = (Buffer.plan("x", "input", "float32", (4,)),) + tuple(
            Buffer.plan(name, "output", dtype, (2, 3), index=i + 1) for i, (name, dtype) in enumerate(outputs))
        self.refill = Fill(3)

    @property
    def output_buffers(self):
        return self.buffers[1:]


def _blobs(plan, *outputs):
    return [pack(plan.buffers[0], plan.inputs[0])] + [pack(b, x) for b, x in zip(plan.output_buffers, outputs)]


def test_the_first_output_element_that_changed_is_named_bit_for_bit_or_beyond_the_tolerance():
    plan = _Plan([("z", "float32"), ("n", "int32")])
    z, n = torch.arange(6.0).reshape(2, 3), torch.arange(6, dtype=torch.int32).reshape(2, 3)
    z2 = z.clone()
    z2[1, 1] += 1e-6
    assert first_change(plan, [_blobs(plan, z, n)], [_blobs(plan, z.clone(), n.clone())]) is None
    run, changed = first_change(plan, [_blobs(plan, z, n), _blobs(plan, z, n)], [_blobs(plan, z, n), _blobs(plan, z2, n)])
    assert run == 1 and (changed.tensor, changed.index, changed.shape, changed.before) == ("z", 4, (2, 3), 4.0)
    assert first_change(plan, [_blobs(plan, z, n)], [_blobs(plan, z2, n)], lambda dtype: (1e-5, 1e-5)) is None
    n2 = n.clone()
    n2[0, 2] = 9
    assert first_change(plan, [_blobs(plan, z, n)], [_blobs(plan, z, n2)], lambda dtype: (1e-5, 1e-5))[1].tensor == "n"
    nan = torch.full((2, 3), float("nan"))
    assert first_change(plan, [_blobs(plan, nan, n)], [_blobs(plan, nan.clone(), n)]) is None  # NaN where NaN


def test_only_unzeroed_outputs_are_refilled():
    plan = _Plan([("z", "float32"), ("counts", "int32")])
    blobs = [pack(b, None) for b in plan.buffers]
    again = refilled_blobs(plan, blobs, ("counts",))
    assert again[0] is blobs[0] and again[2] is blobs[2]
    assert torch.equal(unpack(plan.buffers[1], again[1])[0], stale_fill(torch.float32, (2, 3), 3))


def _words(**read) -> str:
    facts = dict(kind=FailureKind.MISMATCH, tensor="z", program=(1, 0, 0), index=3, shape=(8,), line=12,
                 source="old = tl.load(z_ptr + offs)",
                 changed=failures.FillChanged("z", 5, (8,), before=2.5, after=-1.25))
    return failures.word(failures.ReadEarly(**{**facts, **read}))


def test_a_result_that_changed_with_the_fill_names_the_read_the_change_and_the_fix():
    text = _words()
    assert text == (
        "you read `z` before storing to it, and the result depends on what it held: program (1, 0, 0) loaded "
        "z(3) at line 12: `old = tl.load(z_ptr + offs)`, which no program had stored yet. When the grader ran "
        "this case again with other values in the memory no program had stored yet, z(5) came out -1.25 instead "
        "of 2.5. On a GPU an output starts with whatever its memory last held (old values, neither zeros nor NaN), "
        "so this result would be garbage there. Fix: store every element before reading it, or start from "
        "`tl.zeros` in a variable (`acc = tl.zeros([B0], dtype=tl.float32)`) and store `z` once it is final.")
    assert failures.READ_EARLY in text  # what a report's most telling failure looks for


def test_an_atomic_read_a_failed_second_run_and_a_gpu_run_are_each_said_so():
    atomic = _words(source="seen = tl.atomic_add(z_ptr + offs, 0.0)")
    assert ("program (1, 0, 0) updated z(3) atomically at line 12: `seen = tl.atomic_add(z_ptr + offs, 0.0)`, "
            "and an atomic reads the element it updates, which no program had stored yet.") in atomic
    failed = _words(changed=failures.FillChanged("z", -1, (), failed="out_of_bounds"))
    assert "no program had stored yet, the run failed (out_of_bounds). On a GPU" in failed
    unseen = _words(program=(), index=-1, line=None, source="")
    assert unseen.startswith("you read `z` before storing to it, and the result depends on what it held: your "
                             "kernel read memory of it that no program had stored yet. When the grader ran")
