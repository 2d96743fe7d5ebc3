"""Unit tests of planning and judging: random inputs and their edges, fences, crash messages (no worker
process)."""
import pytest
import torch
from jaxtyping import Float32, Int32
from torch import Tensor

from grader.course.annotations import read_spec
from grader.course.puzzle import Case, Puzzle
from grader.judge.fence import Buffer, is_unwritten, pack, unpack
from grader.judge.plan import make_inputs, round_mantissa


def spec(scale: Float32[Tensor, "N0 G"], words: Int32[Tensor, "N0 4"]) -> Float32[Tensor, "N0 N1"]:
    return torch.zeros(scale.shape[0], 3)


def _puzzle(**kw):
    return Puzzle(id="puzzle99", title="t", statement="", spec=spec, kernel="k", grid=lambda s: (1,),
                  cases=(Case("classic", {"N0": 64, "G": 8, "N1": 3}, {"B0": 16}),), **kw)


def _edged(edge: str, scale: float = 1.0, on: str = "scale") -> tuple[torch.Tensor, torch.Tensor]:
    """The inputs of one case with an edge on `on`, and of the same case without it."""
    puzzle = _puzzle()
    specs = read_spec(spec, "z")[0]
    plain = Case("classic", {"N0": 64, "G": 8, "N1": 3}, {"B0": 16}, scale=scale)
    edged = Case("classic", plain.sizes, plain.blocks, scale=scale, edges={on: edge})
    index = 0 if on == "scale" else 1
    return make_inputs(puzzle, specs, edged)[index], make_inputs(puzzle, specs, plain)[index]


def test_inputs_are_centred_floats_and_full_range_int32():
    puzzle = _puzzle()
    scale, words = make_inputs(puzzle, read_spec(spec, "z")[0], puzzle.cases[0])
    assert scale.dtype == torch.float32 and words.dtype == torch.int32
    assert (scale < 0).any() and (scale > 0).any()
    assert (words < -2**30).any() and (words > 2**30).any(), "int32 inputs must use the full range"


def test_ranges_bound_integer_inputs_and_ignore_index_marks_every_third():
    puzzle = _puzzle(ranges={"words": lambda s: (0, s["G"])})
    specs = read_spec(spec, "z")[0]
    case = puzzle.cases[0]
    words = make_inputs(puzzle, specs, case)[1]
    assert words.dtype == torch.int32 and words.min() >= 0 and words.max() < 8 and words.unique().numel() == 8
    ignored = make_inputs(puzzle, specs, Case("classic", case.sizes, case.blocks, edges={"words": "ignore_index"}))[1]
    flat = ignored.reshape(-1)
    assert (flat[::3] == -100).all() and torch.equal(flat[1::3], words.reshape(-1)[1::3])


def test_inputs_depend_on_seed_and_secret_only():
    puzzle = _puzzle()
    specs = read_spec(spec, "z")[0]
    case = puzzle.cases[0]
    a, b = make_inputs(puzzle, specs, case)[0], make_inputs(puzzle, specs, case)[0]
    assert torch.equal(a, b)
    assert not torch.equal(a, make_inputs(puzzle, specs, case, secret=7)[0])
    other_seed = Case("classic", case.sizes, case.blocks, seed=1)
    assert not torch.equal(a, make_inputs(puzzle, specs, other_seed)[0])


def test_round_mantissa_keeps_only_the_asked_bits():
    x = torch.randn(1000)
    r = round_mantissa(x, 10)
    assert ((r.view(torch.int32) & ((1 << 13) - 1)) == 0).all()
    assert torch.allclose(r, x, rtol=2 ** -10, atol=0)


def test_edge_zeros_sets_every_third_element_to_exactly_zero_floats_and_ints():
    x, plain = _edged("zeros")
    flat = x.reshape(-1)
    assert (flat[::3] == 0).all() and (flat[1::3] != 0).all()
    assert torch.equal(flat[1::3], plain.reshape(-1)[1::3]), "the other values stay as drawn"
    assert ((x * torch.randn(x.shape)).reshape(-1)[::3] == 0).all(), "a product with a zero is exactly zero"
    words, _ = _edged("zeros", on="words")
    assert (words.reshape(-1)[::3] == 0).all() and words.dtype == torch.int32


def test_edge_max_last_chunk_makes_each_rows_last_element_its_maximum_by_4_scales():
    x, plain = _edged("max_last_chunk", scale=100.0)
    second = x[:, :-1].amax(dim=1)
    assert torch.equal(x[:, :-1], plain[:, :-1])
    assert torch.allclose(x[:, -1], plain.amax(dim=1) + 400.0)
    assert (x[:, -1] - second >= 400.0 - 1e-3).all()


def test_edge_all_negative_keeps_every_value_at_most_minus_scale():
    x, plain = _edged("all_negative", scale=200.0)
    assert (x <= -200.0).all()
    assert torch.equal(x, -(plain.abs() + 200.0))
    again, _ = _edged("all_negative", scale=200.0)
    assert torch.equal(x, again), "edges keep the inputs deterministic"


def test_fence_sees_stores_past_either_end_and_unwritten_elements():
    buf = Buffer.plan("z", "output", "float32", (10,))
    raw = pack(buf, None)
    data, damage = unpack(buf, bytes(raw))
    assert damage is None and is_unwritten(data).all()

    written = bytearray(raw)
    written[buf.guard + 4 * 10: buf.guard + 4 * 12] = bytes(8)   # elements 10 and 11
    written[buf.guard - 4: buf.guard] = bytes(4)                 # element -1
    _, damage = unpack(buf, bytes(written))
    assert damage.after == (10, 11) and damage.before == (-1, -1) and damage.count == 3


def test_crash_messages_tell_death_gpu_crash_and_a_broken_channel_apart():
    from grader.judge.messages import crash
    assert crash(-6, "", "cpu").startswith("the process running the kernel died (signal 6: no message).")
    gpu = crash(None, "AcceleratorError: CUDA error: an illegal memory access was encountered", "cuda")
    assert gpu.startswith("the kernel crashed its process (AcceleratorError: CUDA error: an illegal memory access")
    assert "Run with `--device cpu` to localise it" in gpu
    broken = crash(None, "frame of 123 bytes: the stream is corrupt", "cpu", corrupted=True)
    assert broken.startswith("the process running the kernel wrote garbage into the grader's channel")


def _thread_spec(x: Float32[Tensor, "N0"]) -> Float32[Tensor, "N0"]:
    import threading
    _thread_spec.ran_on.append(threading.current_thread().name)
    if _thread_spec.wrong:
        return x[:-1]
    return x * 2


def _planned(large: bool, wrong: bool = False):
    from grader.judge.plan import SpecShapes
    _thread_spec.ran_on, _thread_spec.wrong = [], wrong
    puzzle = Puzzle(id="puzzle99", title="t", statement="", spec=_thread_spec, kernel="k", grid=lambda s: (1,),
                    cases=(Case("big", {"N0": 70000}, {"B0": 1024}, large=large),))
    return SpecShapes(puzzle).plan(puzzle.cases[0])


def test_a_large_case_s_spec_runs_beside_the_kernel_and_a_small_one_s_at_once():
    import threading
    small = _planned(large=False)
    assert _thread_spec.ran_on == [threading.current_thread().name] and small.spec_result.done()
    large = _planned(large=True)
    assert torch.equal(large.expected[0], large.inputs[0] * 2)
    assert _thread_spec.ran_on == ["spec beside the kernel"]
    # the output buffers come from the annotations, not from the spec's result
    assert [b.shape for b in large.output_buffers] == [(70000,)]


def test_a_spec_that_breaks_its_annotation_is_said_where_its_result_is_read():
    with pytest.raises(ValueError, match=r"puzzle99 spec returned \(69999,\) torch.float32 for z, but its "
                                         r"annotation says"):
        _planned(large=False, wrong=True)
    large = _planned(large=True, wrong=True)  # planned: the kernel may run before the spec is done
    with pytest.raises(ValueError, match=r"spec returned \(69999,\)"):
        large.expected
