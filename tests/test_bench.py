"""--bench without a GPU: the result model, its table and JSON, and the grader's side of each
size (planning it as grading does, judging what came back as grading does)."""
import json
from dataclasses import replace

import pytest
import torch

from grader.judge.bench.run import BenchResult, Row, check_size, plan_size, summarise
from grader.judge.plan import SpecShapes
from grader.report.bench import as_json, render_json, render_text
from grader.sandbox.bench.run import raw

SMALL = {"ROWS": 64, "D": 32}


def _reply(rows: list[dict]) -> dict:
    return {"ok": True, "device": "NVIDIA H100", "copy": {"gb_per_s": 3000.0, "cached": False},
            "versions": {"torch": "2.11", "triton": "3.6"}, "statistic": "fastest of 3 rounds", "results": rows}


def _row(**fields) -> dict:
    return {"sizes": {"ROWS": 65536, "D": 1024}, "blocks": {}, "correct": True, "max_abs_err": 0.0,
            "ms": 0.1, "baseline_ms": 0.2} | fields


def test_a_row_sets_each_implementation_against_a_copy_of_the_same_bytes(course):
    puzzle = course.puzzle("puzzle13")
    traffic = puzzle.bench.bytes({"ROWS": 65536, "D": 1024})
    doc = summarise(puzzle, _reply([_row(copy_ms=0.08, compiled_ms=0.15)]))
    row = doc.rows[0]
    assert isinstance(doc, BenchResult) and isinstance(row, Row) and row.traffic == traffic
    assert row.copy_gb_per_s == pytest.approx(traffic / 0.08e-3 / 1e9)
    assert row.gb_per_s == pytest.approx(traffic / 0.1e-3 / 1e9)
    assert row.copy_fraction == pytest.approx(0.8) and row.baseline_copy_fraction == pytest.approx(0.4)
    assert row.compiled_copy_fraction == pytest.approx(0.08 / 0.15)
    assert row.speedup == pytest.approx(2.0) and row.compiled_speedup == pytest.approx(1.5)
    assert doc.compiled == f"{puzzle.bench.baseline_name}, compiled" and not doc.fails
    with pytest.raises(AttributeError):  # frozen: the model is read, never edited
        row.ms = 1.0


def test_without_a_copy_at_its_size_a_row_falls_back_to_the_devices_copy(course):
    doc = summarise(course.puzzle("puzzle13"), _reply([_row()]))
    assert doc.rows[0].copy_ms is None and doc.rows[0].copy_gb_per_s == 3000.0
    assert doc.compiled is None and doc.rows[0].compiled_speedup is None


def test_the_table_has_both_baselines_the_copy_and_what_was_wrong(course):
    doc = summarise(course.puzzle("puzzle13"), _reply([
        _row(copy_ms=0.08, compiled_ms=0.15),
        _row(sizes={"ROWS": 4096, "D": 1024}, copy_ms=0.01, compiled_ms=0.02, correct=False, max_abs_err=3.0,
             wrong="wrong values in `z`: 5 of 4096 elements differ")]))
    lines = render_text(doc).splitlines()
    header, first, second = lines[1], lines[2], lines[3]
    assert f"{doc.baseline} ms" in header and f"{doc.baseline}, compiled ms" in header and "copy GB/s" in header
    assert "vs compiled" in header and header.count("of copy") == 3
    assert first.split()[2:4] == ["0.1000", f"{doc.rows[0].gb_per_s:.0f}"]
    assert "80.0%" in first and "40.0%" in first and "53.3%" in first and "2.00x" in first and "1.50x" in first
    assert f"{doc.rows[0].copy_gb_per_s:.0f}" in first.split()
    assert second.endswith("WRONG RESULT") and doc.fails
    assert "timed at each size in this run" in lines[4]
    assert lines[-1] == "WRONG at ROWS=4096 D=1024: wrong values in `z`: 5 of 4096 elements differ"


def test_the_json_holds_every_figure_and_a_failed_run_says_why(course):
    doc = summarise(course.puzzle("puzzle13"), _reply([_row(copy_ms=0.08, compiled_ms=0.15)]))
    data = json.loads(render_json(doc))
    row = data["rows"][0]
    assert data["ok"] and data["compiled"] == f"{data['baseline']}, compiled" and data["baseline"] == doc.baseline
    assert row["copy_fraction"] == pytest.approx(0.8) and row["compiled_speedup"] == pytest.approx(1.5)
    assert row["flag"] == "" and row["fails"] is False and row["sizes"] == {"ROWS": 65536, "D": 1024}
    failed = BenchResult("puzzle13", ok=False, error="the benchmark did not finish: WorkerTimedOut")
    assert as_json(failed) == {"ok": False, "puzzle": "puzzle13", "error": failed.error} and failed.fails
    assert render_text(failed) == "✗ puzzle13 benchmark: the benchmark did not finish: WorkerTimedOut"


def test_a_size_is_planned_as_grading_plans_a_case(course):
    puzzle = course.puzzle("puzzle13")
    planned = plan_size(puzzle, SMALL)
    case_plan = SpecShapes(puzzle).plan(replace(puzzle.cases[0], name="bench", sizes=SMALL, seed=0, scale=1.0,
                                                blocks=dict(puzzle.bench.blocks), layouts={}, edges={}))
    header = planned.header
    assert header["sizes"] == SMALL and header["traffic"] == puzzle.bench.bytes(SMALL)
    assert header["grid"] == list(case_plan.grid) and header["values"]["ROWS"] == 64
    assert [i["shape"] for i in header["inputs"]] == [list(x.shape) for x in case_plan.inputs]
    assert [o["name"] for o in header["outputs"]] == list(puzzle.outputs)
    sent = [torch.frombuffer(bytearray(b), dtype=torch.float32) for b in planned.blobs]
    assert all(torch.equal(s, x.reshape(-1)) for s, x in zip(sent, case_plan.inputs))
    assert torch.equal(planned.expected[0], case_plan.expected[0])


def test_a_size_uses_the_puzzles_mantissa_bits(course):
    puzzle = replace(course.puzzle("puzzle13"), mantissa_bits={"x": 3})
    x = torch.frombuffer(bytearray(plan_size(puzzle, SMALL).blobs[0]), dtype=torch.float32)
    assert bool((x.view(torch.int32) & ((1 << 20) - 1) == 0).all())  # 23 - 3 bits dropped


def test_what_came_back_is_judged_with_the_puzzles_tolerance(course):
    puzzle = course.puzzle("puzzle13")
    planned = plan_size(puzzle, SMALL)
    right = planned.expected[0].clone()
    assert check_size(puzzle, planned, *raw([right])).passed
    close = right + puzzle.atol / 2
    assert check_size(puzzle, planned, *raw([close])).passed
    off = right.clone()
    off[3] += 1.0
    wrong = check_size(puzzle, planned, *raw([off]))
    assert not wrong.passed and wrong.kind == "mismatch" and "1 of 64 elements differ" in wrong.message
    assert f"atol={puzzle.atol:g}" in wrong.message
    unwritten = right.clone()
    unwritten[5] = float("nan")
    assert check_size(puzzle, planned, *raw([unwritten])).kind == "nonfinite"
    assert check_size(puzzle, planned, *raw([right[:10]])).kind == "mismatch"  # not the planned buffer
    described, blobs = raw([right])
    assert not check_size(puzzle, planned, [described[0] | {"dtype": "__class__"}], blobs).passed


def test_a_partial_buffer_is_reduced_on_the_host_before_it_is_judged(course):
    puzzle = course.puzzle("puzzle14")
    planned = plan_size(puzzle, SMALL)
    assert planned.names == ("grad_x", "partial_grad_weight")
    partial = torch.zeros(planned.shapes[1])
    partial[0] = planned.expected[1]  # one tile holding the whole sum: reduced, it is the sum
    assert check_size(puzzle, planned, *raw([planned.expected[0], partial])).passed
    assert not check_size(puzzle, planned, *raw([planned.expected[0], torch.zeros(planned.shapes[1])])).passed


def test_an_autograd_size_is_judged_on_the_gradients_its_inputs_get(course):
    puzzle = course.puzzle("puzzle15")
    sizes = {"batch": (8, 4), "D": 16}
    planned = plan_size(puzzle, sizes)
    assert planned.names == ("grad_x", "grad_weight") and "outputs" not in planned.header
    *inputs, grad_output = [torch.frombuffer(bytearray(b), dtype=torch.float32).reshape(i["shape"])
                            for b, i in zip(planned.blobs, planned.header["inputs"])]
    leaves = [x.clone().requires_grad_() for x in inputs]
    puzzle.spec(*leaves).backward(grad_output)
    assert all(torch.equal(x.grad, want) for x, want in zip(leaves, planned.expected))
    assert check_size(puzzle, planned, *raw([x.grad for x in leaves])).passed
    assert not check_size(puzzle, planned, *raw([leaves[0].grad * 2, leaves[1].grad])).passed


def test_every_bench_plans_and_accepts_its_own_expected_results(course):
    """Each puzzle with a Bench, at its first case's (small) sizes: planned as grading plans it,
    and what the spec gives judged right, so no sweep trips on its own planning."""
    benched = [p for p in course.ids if course.puzzle(p).bench is not None]
    assert benched
    for puzzle_id in benched:
        puzzle = course.puzzle(puzzle_id)
        planned = plan_size(puzzle, puzzle.cases[0].sizes)
        assert len(planned.blobs) == len(planned.header["inputs"]), puzzle_id
        back = [torch.zeros(shape, dtype=want.dtype) if want is not None else torch.zeros(shape)
                for shape, want in zip(planned.shapes, planned.expected)]
        for i, (shape, want) in enumerate(zip(planned.shapes, planned.expected)):
            if want is not None and tuple(shape) == tuple(want.shape):
                back[i] = want
        reduced = [n for n in planned.names if n in puzzle.host_reduce]
        if not reduced:
            assert check_size(puzzle, planned, *raw(back)).passed, puzzle_id


# What each puzzle is timed against, as the report names it: the fastest PyTorch way, named truthfully.
BASELINES = {
    "puzzle13": "torch.tensordot", "puzzle14": "torch.outer + grad_output @ x", "puzzle15": "PyTorch autograd",
    "puzzle16": "torch.tensordot", "puzzle17": "torch.outer + grad_output @ x", "puzzle18": "torch.softmax",
    "puzzle19": "torch.softmax", "puzzle20": "torch.nn.functional.layer_norm",
    "puzzle21": "aten.native_layer_norm_backward", "puzzle22": "F.rms_norm (autograd)",
    "puzzle23": "F.cross_entropy + autograd", "puzzle24": "torch.cumsum", "puzzle25": "cumsum, cummax and gather (eager)",
    "puzzle26": "x & (NBINS - 1), then torch.bincount", "puzzle27": "torch.nn.functional.dropout",
    "puzzle28": "torch.matmul (cuBLAS)", "puzzle29": "torch.matmul (cuBLAS)",
    "puzzle30": "torch.addmm + F.gelu (cuBLAS, then eager)", "puzzle31": "SDPA", "puzzle32": "SDPA's backward",
    "puzzle33": "SDPA (autograd)", "puzzle34": "F.cross_entropy (autograd)", "puzzle35": "torch.add",
    # Track four: each Helion puzzle against the PyTorch of the Triton puzzle it re-solves.
    "puzzle37": "torch.softmax", "puzzle38": "torch.softmax", "puzzle39": "torch.nn.functional.layer_norm",
    "puzzle40": "torch.matmul (cuBLAS)", "puzzle41": "torch.addmm + F.gelu (cuBLAS, then eager)", "puzzle42": "SDPA",
}


def test_each_puzzle_is_timed_against_its_named_baseline(course):
    benched = {p: course.puzzle(p) for p in course.ids if course.puzzle(p).bench is not None}
    assert set(benched) == set(BASELINES)
    for puzzle_id, puzzle in benched.items():
        reply = _reply([{"sizes": dict(puzzle.bench.sizes[0]), "blocks": {}, "correct": True, "max_abs_err": 0.0,
                         "ms": 0.1, "baseline_ms": 0.2}])
        assert summarise(puzzle, reply).baseline == BASELINES[puzzle_id], puzzle_id


def test_puzzle32_is_timed_against_sdpas_backward_alone(course):
    """SDPA's forward runs once, untimed; the timed function is its backward, which gives the
    spec's gradients."""
    puzzle = course.puzzle("puzzle32")
    planned = plan_size(puzzle, puzzle.cases[0].sizes)
    assert puzzle.bench.baseline_prepares and puzzle.bench.baseline_outputs == ("dq", "dk", "dv")
    timed = puzzle.bench.baseline(*planned.inputs, CAUSAL=0)
    assert callable(timed)
    for got, want in zip(timed(), planned.expected):
        assert torch.allclose(got.float(), want.float(), atol=2e-2, rtol=2e-2)


def test_every_baseline_that_names_outputs_gives_them_at_a_graded_size(course):
    """The yardstick of the bench's tolerance (grader/judge/bench/tolerance.py) is measured on each
    output a Bench's baseline names: on the CPU here, on the GPU at the sweep's sizes."""
    from grader.judge.bench.run import yardsticks
    named = [p for p in course.ids if course.puzzle(p).bench is not None and course.puzzle(p).bench.baseline_outputs]
    assert {"puzzle28", "puzzle29", "puzzle30", "puzzle31", "puzzle32", "puzzle33"} <= set(named)
    for puzzle_id in named:
        puzzle = course.puzzle(puzzle_id)
        planned = plan_size(puzzle, puzzle.cases[0].sizes)
        sticks = yardsticks(puzzle, planned, "cpu")
        assert set(sticks) == set(puzzle.bench.baseline_outputs), puzzle_id
        assert all(0 <= e < 1 for stick in sticks.values() for e in stick.errors), puzzle_id
