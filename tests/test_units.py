"""Unit tests of the grader's parts that need no worker process."""
import pytest
import torch
from jaxtyping import Float32, Int32
from torch import Tensor

from grader.course.annotations import AnnotationError, TensorSpec, read_spec
from grader.channel.binding import BindingError, Param, bind
from grader.course.loader import CourseError, normalise_id
from grader.judge.fence import Buffer, is_unwritten, pack, unpack
from grader.judge.plan import EDGE_VALUES, make_inputs, round_mantissa
from grader.course.puzzle import EDGES, Case, Puzzle


def spec(scale: Float32[Tensor, "N0 G"], words: Int32[Tensor, "N0 4"]) -> Float32[Tensor, "N0 N1"]:
    return torch.zeros(scale.shape[0], 3)


def test_read_spec_gives_names_dtypes_and_symbolic_dims():
    inputs, output = read_spec(spec, "z")
    assert inputs == (TensorSpec("scale", "float32", ("N0", "G")), TensorSpec("words", "int32", ("N0", "4")))
    assert output == (TensorSpec("z", "float32", ("N0", "N1")),)
    assert inputs[1].shape({"N0": 5}) == (5, 4)


def test_missing_size_and_bad_annotation_are_explained():
    with pytest.raises(AnnotationError, match=r"scale: dim 'G' has no size in this case \(sizes: N0\)"):
        read_spec(spec, "z")[0][0].shape({"N0": 2})

    def unannotated(x) -> Float32[Tensor, "N0"]:
        return x
    with pytest.raises(AnnotationError, match=r'x: annotate it like Float32\[Tensor, "N0"\]'):
        read_spec(unannotated, "z")


def _puzzle(**kw):
    return Puzzle(id="puzzle99", title="t", statement="", spec=spec, kernel="k", grid=lambda s: (1,),
                  cases=(Case("classic", {"N0": 64, "G": 8, "N1": 3}, {"B0": 16}),), **kw)


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


def test_case_rejects_a_block_that_is_not_a_power_of_two():
    with pytest.raises(ValueError, match="block B0=200 is not a power of two"):
        Case("classic", {"N0": 200}, {"B0": 200})


def test_case_rejects_an_unknown_edge_and_an_edge_of_no_input():
    with pytest.raises(ValueError, match=r"case 'classic': edge 'zero' of scale is not one of \('zeros'"):
        Case("classic", {"N0": 64}, {"B0": 16}, edges={"scale": "zero"})
    assert set(EDGE_VALUES) == set(EDGES)
    puzzle = _puzzle()
    specs = read_spec(spec, "z")[0]
    typo = Case("classic", {"N0": 64, "G": 8, "N1": 3}, {"B0": 16}, edges={"x": "zeros"})
    with pytest.raises(ValueError, match=r"edges name \['x'\], which are not inputs of the spec \(scale, words\)"):
        make_inputs(puzzle, specs, typo)
    ints = Case("classic", {"N0": 64, "G": 8, "N1": 3}, {"B0": 16}, edges={"words": "all_negative"})
    with pytest.raises(ValueError, match="edge 'all_negative' needs a float input, but words is int32"):
        make_inputs(puzzle, specs, ints)


def _edged(edge: str, scale: float = 1.0, on: str = "scale") -> tuple[torch.Tensor, torch.Tensor]:
    """The inputs of one case with an edge on `on`, and of the same case without it."""
    puzzle = _puzzle()
    specs = read_spec(spec, "z")[0]
    plain = Case("classic", {"N0": 64, "G": 8, "N1": 3}, {"B0": 16}, scale=scale)
    edged = Case("classic", plain.sizes, plain.blocks, scale=scale, edges={on: edge})
    index = 0 if on == "scale" else 1
    return make_inputs(puzzle, specs, edged)[index], make_inputs(puzzle, specs, plain)[index]


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


def test_binding_by_name_and_its_errors():
    params = [Param("x_ptr", False), Param("z_ptr", False), Param("N0", False), Param("B0", True)]
    binding = bind(params, ["x", "z"], {"N0": 200, "B0": 32, "B1": 8}, "add(x_ptr, z_ptr, N0, B0)")
    assert binding.named == {"N0": 200, "B0": 32}, "only declared parameters are passed"
    signature, constexprs = binding.compile_signature(params, ["float32", "float32"])
    assert signature == {"x_ptr": "*fp32", "z_ptr": "*fp32", "N0": "i32", "B0": "constexpr"}
    assert constexprs == {"B0": 32}

    with pytest.raises(BindingError, match="kernel parameter 'N' is not something this puzzle passes"):
        bind(params[:2] + [Param("N", False)], ["x", "z"], {"N0": 1}, "sig")
    with pytest.raises(BindingError, match="parameter 'N0' stands where a pointer belongs"):
        bind([Param("x_ptr", False), Param("N0", False)], ["x", "z"], {"N0": 1}, "sig")
    with pytest.raises(BindingError, match="the kernel takes 1 parameters, but this puzzle passes 2 pointers"):
        bind(params[:1], ["x", "z"], {}, "sig")


@pytest.mark.parametrize("text", ["7", "07", "puzzle7", "puzzle07", "PUZZLE07"])
def test_puzzle_ids_normalise(text):
    assert normalise_id(text) == "puzzle07"


def test_bad_puzzle_id():
    with pytest.raises(CourseError, match="'seven' is not a puzzle id"):
        normalise_id("seven")


def test_importing_a_file_leaves_no_neighbour_modules_behind():
    """The course's puzzle15 imports its folder's puzzle13 (a stub); a solutions file imported
    afterwards must get the solutions' puzzle13, not the cached stub."""
    import sys
    from pathlib import Path

    from grader.course.loader import load_puzzle
    from grader.course.imports import import_file
    root = Path(__file__).resolve().parent.parent
    load_puzzle(str(root / "puzzles" / "puzzle15_weighted_sum_autograd.py"))
    assert "puzzle13_weighted_sum_forward" not in sys.modules
    solution = import_file(str(root / "solutions" / "puzzle15_weighted_sum_autograd.py"), "_test_solution15")
    kernel_file = solution.weighted_sum_fwd.fn.__code__.co_filename
    assert kernel_file == str(root / "solutions" / "puzzle13_weighted_sum_forward.py")


def test_crash_messages_tell_death_gpu_crash_and_a_broken_channel_apart():
    from grader.judge.messages import crash
    assert crash(-6, "", "cpu").startswith("the process running the kernel died (signal 6: no message).")
    gpu = crash(None, "AcceleratorError: CUDA error: an illegal memory access was encountered", "cuda")
    assert gpu.startswith("the kernel crashed its process (AcceleratorError: CUDA error: an illegal memory access")
    assert "Run with `--device cpu` to localise it" in gpu
    broken = crash(None, "frame of 123 bytes: the stream is corrupt", "cpu", corrupted=True)
    assert broken.startswith("the process running the kernel wrote garbage into the grader's channel")


def _bench_reply(results: list[dict]) -> dict:
    return {"ok": True, "device": "NVIDIA H200", "copy": {"gb_per_s": 4000.0, "cached": True},
            "versions": {"torch": "2.11", "triton": "3.6"},
            "statistic": "fastest of 3 rounds, each the median of do_bench's repeats", "results": results}


def test_bench_report_shows_gpu_only_time_and_flags_a_host_bound_step(course):
    from grader.judge.bench import summarise
    from grader.report.bench import render_text
    row = {"sizes": {"batch": [65536], "D": 1024}, "blocks": {}, "correct": True, "max_abs_err": 1e-6,
           "baseline_ms": 0.317}
    host_bound = row | {"ms": 0.35, "gpu_ms": 0.21, "baseline_gpu_ms": 0.31}
    gpu_bound = row | {"ms": 0.22, "gpu_ms": 0.21, "baseline_gpu_ms": 0.31}
    doc = summarise(course.puzzle("puzzle15"), _bench_reply([host_bound, gpu_bound]))
    text = render_text(doc)
    assert "fastest of 3 rounds, each the median of do_bench's repeats" in text
    assert "GPU-only ms" in text and "PyTorch autograd ms" in text
    first, second = [line for line in text.splitlines() if line.startswith("batch=")]
    assert first.split()[2:4] == ["0.3500", "2303"] and "0.2100" in first and "0.3100" in first
    assert first.endswith("host-bound: the GPU works 0.2100 ms of it")
    assert "host-bound" not in second and doc.rows[1].speedup == pytest.approx(0.317 / 0.22)
    assert "the step is host-bound: fewer launches" in text


def test_bench_report_of_a_kernel_has_no_gpu_only_column_and_flags_impossible_speed(course):
    from grader.judge.bench import summarise
    from grader.report.bench import render_text
    fast = {"sizes": {"ROWS": 65536, "D": 1024}, "blocks": {}, "correct": True, "max_abs_err": 0.0,
            "ms": 0.02, "baseline_ms": 0.075}
    doc = summarise(course.puzzle("puzzle13"), _bench_reply([fast]))
    text = render_text(doc)
    assert "GPU-only" not in text
    assert "IMPOSSIBLE: far above copy bandwidth" in text and doc.rows[0].fails
    failed = summarise(course.puzzle("puzzle15"), _bench_reply([
        {"sizes": {"batch": [4096], "D": 1024}, "blocks": {}, "correct": True, "max_abs_err": 0.0,
         "ms": 0.3, "baseline_ms": 0.1, "gpu_ms": None, "baseline_gpu_ms": None,
         "gpu_note": "not timed as a CUDA graph: RuntimeError: operation not permitted when stream is capturing"}]))
    text = render_text(failed)
    assert "GPU-only" not in text
    assert text.splitlines()[2].endswith("0.33x not timed as a CUDA graph: RuntimeError: operation not permitted "
                                         "when stream is capturing")


def test_a_worker_cannot_make_the_grader_read_a_huge_message():
    """The channel is untrusted: a claimed frame or blob count past the caps ends the read at
    once, before any of it is buffered."""
    import json
    import os
    import struct

    from grader.channel.protocol import MAX_FRAME, ChannelClosed, Reader
    header = json.dumps({"blobs": 10 ** 9}).encode()
    for payload in (struct.pack(">Q", MAX_FRAME + 1), struct.pack(">Q", len(header)) + header):
        read, write = os.pipe()
        os.write(write, payload)
        with pytest.raises(ChannelClosed, match="the stream is corrupt"):
            Reader(read).read_message(timeout=5)
        os.close(read)
        os.close(write)


def test_grades_csv_cells_never_start_a_formula():
    from grader.judge.results import StudentResult
    from grader.report.batch_files import grades_csv
    text = grades_csv([StudentResult("-mallory", (), ("=HYPERLINK(\"http://x\")",), 0.0)], ["puzzle01"])
    assert "'-mallory" in text and "'=HYPERLINK" in text


def test_a_worker_of_a_plain_user_gets_a_task_cap(monkeypatch):
    """RLIMIT_NPROC stops a fork bomb for a plain user (it counts every thread the user runs,
    so the cap is what they run now plus room); root is exempt from it in the kernel."""
    from grader.channel import isolation
    monkeypatch.setattr(isolation.os, "getuid", lambda: 0)
    assert isolation._task_cap() is None
    monkeypatch.setattr(isolation.os, "getuid", lambda: 4_000_000)  # a user with no tasks here
    assert isolation._task_cap() == isolation.TASKS_SPARE
