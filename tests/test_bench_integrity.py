"""--bench tells the truth and cannot be gamed: the tolerance at the sweep's sizes, the GPU's
physical limits, the watch over the learner's code, and the trick corpus (tests/bench_tricks/,
see its README) benched end to end on the CPU, in Triton's interpreter (the test path of
run_bench), and on a GPU where there is one."""
from __future__ import annotations

import ast
from pathlib import Path

import pytest
import torch

from conftest import COURSE, ROOT
from grader.channel import wire_measure
from grader.judge import failures
from grader.judge.bench.integrity import Peaks, findings, limit_ms
from grader.judge.bench.run import plan_size, run_bench, summarise, yardsticks
from grader.judge.bench.tolerance import MARGIN, compare, measure
from grader.judge.options import Options
from grader.judge.session import Grading
from grader.report.bench import as_json, render_text
from grader.sandbox.bench.loop import draw_sets

TRICKS = ROOT / "tests" / "bench_tricks"
SOLUTIONS = COURSE.root / "solutions"  # as committed (tests/pristine.py): the jail must show the ones benched
CUDA = torch.cuda.is_available()
# Sizes the interpreter runs in a moment; on a GPU, sizes where hidden work is far above the timer's noise.
TINY = {"puzzle13": {"ROWS": 64, "D": 32}, "puzzle15": {"batch": (8,), "D": 16},
        "puzzle29": {"M": 32, "N": 32, "K": 32}}
ON_GPU = {"puzzle13": {"ROWS": 16384, "D": 1024}, "puzzle15": {"batch": (16384,), "D": 1024},
          "puzzle29": {"M": 1024, "N": 1024, "K": 1024}}


def gpu_size(path: Path) -> dict:
    """Where a stream's hidden work is far above a wrapper's host time: a large size."""
    return {"batch": (131072,), "D": 1024} if "stream" in path.name else ON_GPU[path.name[:8]]


def declared(path: Path) -> dict:
    """A corpus file's EXPECT, EXPECT_SAYS and NEEDS, read without importing it."""
    found = {}
    for node in ast.parse(path.read_text()).body:
        if isinstance(node, ast.Assign) and isinstance(node.value, ast.Constant):
            found.update({t.id: node.value.value for t in node.targets if isinstance(t, ast.Name)})
    return found


# ---- the tolerance at the sweep's sizes ---------------------------------------------------------
def _truncated(x: torch.Tensor, bits: int = 19) -> torch.Tensor:
    """fp32 values cut (toward zero) to ``bits`` explicit mantissa bits, as an accumulator that
    does not round as IEEE does."""
    return (x.view(torch.int32) & ~((1 << (23 - bits)) - 1)).view(torch.float32)


def _tensor_core_matmul(a, b, chunk: int, reverse: bool = False, drop: int = 0, scale: float = 1.0):
    """A correct fp16 matmul summed as a GPU's tensor cores may sum it: exact products over a
    chunk of K, added into an accumulator that truncates; ``drop`` chunks left out, a ``scale``."""
    starts = list(range(0, a.shape[1] - drop * chunk, chunk))
    acc = torch.zeros(a.shape[0], b.shape[1])
    for s in reversed(starts) if reverse else starts:
        acc = _truncated(acc + (a[:, s:s + chunk].double() @ b[s:s + chunk].double()).float())
    return (acc * scale).half()


@pytest.fixture(scope="module")
def long_k():
    g = torch.Generator().manual_seed(0)
    a, b = torch.randn(64, 8192, generator=g).half(), torch.randn(8192, 64, generator=g).half()
    spec = (a.float() @ b.float()).half()  # puzzle 28's spec: fp32 sums, rounded once
    return a, b, spec, measure("c", "torch.matmul (cuBLAS)", spec, _tensor_core_matmul(a, b, 32))


def test_a_correct_fp16_matmul_at_a_long_k_passes_where_the_small_cases_tolerance_failed_it(long_k):
    a, b, spec, stick = long_k
    ours = _tensor_core_matmul(a, b, 64, reverse=True)  # another order of the same sums: correct
    small = compare("c", ours, spec, 1e-3, 2e-3)
    assert not small.passed and small.message.startswith("wrong values in `c`: ")  # the bug of issue 23
    assert "tolerance atol=0.001, rtol=0.002)" in small.message
    assert compare("c", ours, spec, 1e-3, 2e-3, stick).passed
    assert 0 < stick.largest == MARGIN * max(stick.errors) < 1


@pytest.mark.parametrize("bug, how", [("a dropped K tile", {"drop": 1}), ("a wrong scale", {"scale": 1 + 2 ** -6})])
def test_a_matmul_with_a_real_bug_still_fails_at_a_long_k(long_k, bug, how):
    a, b, spec, stick = long_k
    outcome = compare("c", _tensor_core_matmul(a, b, 64, **how), spec, 1e-3, 2e-3, stick)
    assert not outcome.passed and outcome.kind == "mismatch", bug
    assert ("tolerance atol=0.001, rtol=0.002 plus twice torch.matmul (cuBLAS)'s own error at that magnitude on "
            "the same inputs; up to twice its largest, ") in outcome.message


def test_a_few_elements_may_pass_their_magnitudes_allowance_but_not_the_largest():
    """After a GELU, an output near zero may come from a sum near zero (a sum's whole rounding
    error) or from a very negative one (none), and the second kind fills the lowest bins: up to
    1 in 100,000 elements may pass their magnitude's allowance, none twice PyTorch's largest error."""
    g = torch.Generator().manual_seed(1)
    want = torch.where(torch.rand(400_000, generator=g) < 0.5, torch.zeros(()), torch.randn(400_000, generator=g) * 90)
    want = want.half().double()
    ulp = torch.where(want == 0, torch.zeros(()), 2.0 ** (torch.frexp(want).exponent - 11))
    theirs = want + ulp * torch.randint(-1, 2, want.shape, generator=g)  # PyTorch: within one ulp
    stick = measure("c", "torch.addmm + F.gelu", want, theirs)
    ours = want.clone()
    zeros = torch.nonzero(want == 0)[:, 0]
    ours[zeros[:4]] = 1e-3  # four sums near zero, off by a sum's rounding error: within the cap
    assert compare("c", ours, want, 1e-4, 2e-3, stick).passed
    ours[zeros[:40]] = 1e-3  # forty: more than 1 in 100,000
    failed = compare("c", ours, want, 1e-4, 2e-3, stick)
    assert not failed.passed and failed.message.startswith("wrong values in `c`: 40 of 400000 elements differ")
    assert "for at most 4 elements)." in failed.message
    ours = want.clone()
    ours[zeros[0]] = 1.0  # one, far past twice PyTorch's largest error
    assert "1 of 400000 elements differ" in compare("c", ours, want, 1e-4, 2e-3, stick).message


def test_an_fp16_accumulator_fails_at_a_long_k(long_k):
    a, b, spec, stick = long_k
    acc = torch.zeros(64, 64).half()
    for s in range(0, 8192, 64):
        acc = (acc.float() + a[:, s:s + 64].float() @ b[s:s + 64].float()).half()
    assert not compare("c", acc, spec, 1e-3, 2e-3, stick).passed


def test_a_small_value_keeps_a_small_allowance(long_k):
    """Binned by magnitude: a value near zero is not allowed the error of the largest ones."""
    _, _, spec, stick = long_k
    small, large = spec.float().abs().argmin(), spec.float().abs().argmax()
    allowed = stick.allowance(spec.double().reshape(-1))
    assert allowed[small] < allowed[large]


def test_nan_never_compares_equal():
    """NaN is no wildcard: not where the spec is finite, not where the spec is NaN too."""
    want = torch.tensor([1.0, float("nan"), 3.0])
    assert compare("z", torch.tensor([1.0, float("nan"), 3.0]), want, 1e-5, 1e-5).kind == "nonfinite"
    got = compare("z", torch.tensor([float("nan"), 2.0, 3.0]), torch.tensor([1.0, 2.0, 3.0]), 1e9, 1e9)
    assert not got.passed and got.message.startswith(
        "`z` has 1 NaN/Inf value(s) where the spec is finite, first at (0): yours nan, expected 1.")
    inf = torch.tensor([float("inf"), 1.0])
    assert compare("z", inf, inf.clone(), 1e-5, 1e-5).passed  # an infinity the spec has too is equal


def test_a_puzzles_bench_measures_pytorchs_own_error_on_the_outputs_it_names(course):
    puzzle = course.puzzle("puzzle28")
    assert puzzle.bench.baseline_outputs == ("c",)
    sticks = yardsticks(puzzle, plan_size(puzzle, {"M": 40, "N": 48, "K": 512}), "cpu")
    assert set(sticks) == {"c"} and sticks["c"].baseline == puzzle.bench.baseline_name
    assert yardsticks(course.puzzle("puzzle13"), plan_size(course.puzzle("puzzle13"), TINY["puzzle13"]), "cpu") == {}


# ---- the physical limit and the watch's verdicts ----------------------------------------------
H100 = Peaks("NVIDIA H100 80GB HBM3", 3.35e12, 1.07e15, 50 << 20)


def test_the_physical_limit_is_the_slower_of_memory_and_tensor_cores():
    ms, bound = limit_ms(2 * 8192 * 8192 * 3, 2 * 8192 ** 3, H100)
    assert ms == pytest.approx(2 * 8192 ** 3 / 1.07e15 * 1e3) and bound.endswith("at the tensor cores' peak 1070 TFLOP/s")
    ms, bound = limit_ms(1 << 30, None, H100)
    assert ms == pytest.approx(((1 << 30) - (50 << 20)) / 3.35e12 * 1e3)
    assert bound == f"{(1 << 30) - (50 << 20)} bytes beyond the L2 cache's {50 << 20} at the memory's peak 3350 GB/s"
    assert limit_ms(1 << 20, None, H100) == (0.0, "")  # fits in L2: no floor
    assert limit_ms(1 << 30, 1, None) == (0.0, "")     # no GPU: no limit


def _timing(**fields) -> dict:
    return {"ms": 1.0, "wall_ms": 1.05, "gap_ms": 0.02, "overhead_ms": 0.015, "watch": {}} | fields


def test_a_time_below_the_physical_limit_is_rejected_with_the_limit_in_words():
    limit = limit_ms(2 * 8192 * 8192 * 3, 2 * 8192 ** 3, H100)
    (found,) = findings(_timing(ms=0.2), True, limit)
    assert failures.word(found) == (
        f"--bench refuses this run: it measured 0.2 ms, below this GPU's physical limit of {limit[0]:.4g} ms "
        f"({2 * 8192 ** 3} FLOP at the tensor cores' peak 1070 TFLOP/s). No kernel is that fast: the timer did not "
        f"see the work (work on another stream or thread, or after the timer stopped), or the work was not done.")
    assert findings(_timing(ms=1.2), True, limit) == []


def test_work_the_events_did_not_see_is_rejected_on_a_gpu_only():
    hidden = _timing(ms=0.01, wall_ms=1.0, gap_ms=0.99, overhead_ms=0.015)
    (found,) = findings(hidden, True, (0.0, ""))
    assert failures.word(found).startswith(
        "--bench refuses this run: a call took 0.985 ms to finish on the GPU, but the events on its stream saw 0.01 ms "
        "(the timer's own overhead is 0.015 ms): work ran where the timer cannot see it, on another CUDA stream.")
    assert findings(hidden, False, (0.0, "")) == []  # the CPU path has one clock


@pytest.mark.parametrize("watch, says", [
    ({"tampered": ["time.perf_counter"]}, "your code changed `time.perf_counter` while it ran."),
    ({"switched": ["torch.backends.cuda.flash_sdp_enabled()"]},
     "your code changed `torch.backends.cuda.flash_sdp_enabled()` while it ran."),
    ({"stream_changed": True}, "your code changed `torch.cuda.current_stream()` while it ran."),
    ({"audit": [{"event": "gc.get_objects", "file": "/x/k.py", "line": 9}]},
     "your code called `gc.get_objects` at k.py:9 while the bench ran it."),
    ({"threads": 2, "thread_call": 5}, "your code left 2 threads running after timed call 5 returned."),
    ({"not_plain": ["the gradient of input 0"]}, "the gradient of input 0 came back as an object that is not a plain"),
    ({"l2_limit": 1024, "l2_window": 512}, "a carve-out of 1024 bytes, an access policy window of 512 bytes"),
])
def test_what_the_watch_saw_is_rejected_and_said(watch, says):
    found = findings(_timing(watch=watch), True, (0.0, ""))
    assert found and found[0].kind == failures.FailureKind.BENCH_REJECTED
    assert failures.word(found[0]).startswith("--bench refuses this run: ") and says in failures.word(found[0])


def test_a_rejected_size_fails_the_run_and_the_report_says_why(course):
    puzzle = course.puzzle("puzzle13")
    reply = {"device": "NVIDIA H100", "copy": {"gb_per_s": 3000.0, "cached": False}, "statistic": "median",
             "versions": {"torch": "2.11", "triton": "3.6"},
             "results": [{"sizes": {"ROWS": 65536, "D": 1024}, "blocks": {}, "correct": True, "max_abs_err": 0.0,
                          "ms": 0.001, "baseline_ms": 0.07, "rejected": "--bench refuses this run: it measured ...",
                          "limit_ms": 0.06, "checked": [17, 60], "calls": 20, "input_sets": 2}]}
    doc = summarise(puzzle, reply)
    row = doc.rows[0]
    assert row.flag == "REJECTED" and row.fails and doc.fails and row.checked == (17, 60)
    lines = render_text(doc).splitlines()
    assert lines[2].endswith("REJECTED")
    assert "REJECTED at ROWS=65536 D=1024: --bench refuses this run: it measured ..." in lines
    assert lines[-1] == "The sweep stops at a size it rejects: no figure after it can be trusted."
    data = as_json(doc)["rows"][0]
    assert data["flag"] == "REJECTED" and data["fails"] and data["limit_ms"] == 0.06 and data["input_sets"] == 2


def test_the_checked_calls_are_on_set_one_after_a_call_on_set_zero():
    for _ in range(50):
        order = draw_sets(30, 2, 11)
        assert order[10:12] == [0, 1] and order[28:] == [0, 1]
    assert set(draw_sets(30, 2, 11)[:10]) <= {0, 1} and draw_sets(9, 1, 4) == [0] * 9


# ---- end to end: the honest solutions and the trick corpus --------------------------------------
def _grading(device: str) -> Grading:
    return Grading(COURSE, sorted(TRICKS.glob("puzzle*.py")), Options(
        device=device, check_bounds=False, compile_check=False, library=(str(SOLUTIONS),)), now=False)


@pytest.fixture(scope="module")
def cpu_grading():
    with _grading("cpu") as grading:
        yield grading


@pytest.fixture(scope="module")
def gpu_grading():
    if not CUDA:
        pytest.skip("no CUDA device: the GPU's own checks (streams, L2) run where there is one")
    with _grading("cuda") as grading:
        yield grading


def _bench(grading, puzzle: str, path: Path, sizes: dict, calls: int = 2):
    doc = run_bench(grading, puzzle, path, sizes=[sizes], calls=calls)
    assert doc.ok, doc.error
    return doc


# The fast tier keeps one honest solution and one trick end to end; the rest are marked slow.
FAST = ("puzzle15", "puzzle15_patched_timer")


def _tiered(values, key=lambda v: v):
    return [pytest.param(v, id=key(v), marks=() if key(v) in FAST else pytest.mark.slow) for v in values]


@pytest.mark.parametrize("puzzle", _tiered(["puzzle13", "puzzle15", "puzzle29"]))
def test_an_honest_solution_is_benched_checked_and_not_flagged(cpu_grading, puzzle):
    doc = _bench(cpu_grading, puzzle, COURSE.solution_file(puzzle), TINY[puzzle])
    (row,) = doc.rows
    assert row.flag == "" and not doc.fails and row.correct and not row.rejected, (row.wrong, row.rejected)
    assert row.input_sets == 2 and len(row.checked) == 2 and row.checked[-1] == 3 * row.calls
    assert row.ms > 0 and row.wall_ms >= row.ms * 0.5 and row.baseline_ms > 0


def test_a_checked_call_with_the_first_calls_bytes_on_its_inputs_sends_none_and_keeps_its_verdict(
        cpu_grading, monkeypatch):
    """One input set (as a sweep's largest sizes send): the checked calls gave the first call's
    bytes, so only the first call's go back (three copies of puzzle 15's 1 GiB gradient did not fit
    a message and the worker died), and the size is judged as before."""
    from grader.channel.worker_pool import WorkerProcess
    sent = []
    asked = WorkerProcess.request

    def request(self, message, blobs=(), timeout=None, **more):
        reply, raw = asked(self, message, blobs, timeout=timeout, **more)
        sent.append((reply, len(raw)))
        return reply, raw
    monkeypatch.setattr(WorkerProcess, "request", request)
    doc = run_bench(cpu_grading, "puzzle15", COURSE.solution_file("puzzle15"), sizes=[TINY["puzzle15"]], calls=2,
                    sets=1)
    (row,) = doc.rows
    assert doc.ok and row.correct and row.input_sets == 1 and len(row.checked) == 2, (doc.error, row.wrong)
    (reply, blobs), = [(r, n) for r, n in sent if isinstance(r, wire_measure.Benched)]
    assert [c.same_as for c in reply.result.checked] == [0, 0] and blobs == 2  # grad_x and grad_weight, once


def test_a_sizes_reply_may_carry_three_of_each_buffer_as_it_comes_back():
    """Counted from the shapes that come back (a partial buffer is larger than the spec's output),
    at 8 bytes an element where nothing is expected; never below the channel's default."""
    from grader.channel.protocol import MAX_MESSAGE
    from grader.judge.bench.run import reply_bytes
    from grader.judge.kinds.kind import SizePlan
    big = SizePlan({}, [], ("grad_x", "partial", "grad_target"), ((1 << 28,), (1 << 13, 1024), (4096,)),
                   (torch.empty(0), torch.empty(1024), None))
    assert reply_bytes(big) == 3 * ((1 << 28) * 4 + (1 << 23) * 4 + 4096 * 8) + (1 << 20)
    small = SizePlan({}, [], ("y",), ((8, 16),), (torch.empty(8, 16),))
    assert reply_bytes(small) == MAX_MESSAGE


def test_a_checked_call_that_repeats_an_earlier_one_is_that_ones_verdict_and_others_are_judged(course):
    from grader.judge.bench.run import _checked
    puzzle = course.puzzle("puzzle13")
    planned = plan_size(puzzle, TINY["puzzle13"])
    outputs = [{"dtype": "float32", "shape": list(planned.expected[0].shape)}]
    right = planned.expected[0].contiguous().numpy().tobytes()
    wrong = (planned.expected[0] + 1).contiguous().numpy().tobytes()

    def result(*checks):
        return {"outputs": outputs, "checked": [{"call": c, "calls": 8, "input_set": 0, "outputs": outputs,
                                                 "same_as": same} for c, same in checks]}
    repeated = _checked(puzzle, [planned], result((3, 0), (8, 0)), [right], {})
    assert repeated["correct"] and repeated["checked"] == [3, 8]
    changed = _checked(puzzle, [planned], result((3, 0), (8, None)), [right, wrong], {})
    assert not changed["correct"] and "timed call 8 of 8" in changed["wrong"], changed["wrong"]
    # a repeat of a call on another input set cannot be: nothing of it was judged
    elsewhere = result((3, None), (8, 3))
    elsewhere["checked"][0]["input_set"] = 1
    claimed = _checked(puzzle, [planned, planned], elsewhere, [right, right], {})
    assert not claimed["correct"] and claimed["wrong"] == (
        "timed call 8 of 8 was said to repeat call 3, which was not on its inputs: its results were not sent")


CORPUS = sorted(TRICKS.glob("puzzle*.py"))


@pytest.mark.parametrize("path", _tiered(CORPUS, lambda p: p.stem))
def test_each_trick_is_caught_on_the_cpu(cpu_grading, path):
    expect = declared(path)
    if expect.get("NEEDS") == "cuda":
        pytest.skip("a GPU's trick: see test_each_trick_is_caught_on_a_gpu")
    puzzle = path.name[:8]
    doc = _bench(cpu_grading, puzzle, path, TINY[puzzle])
    row = doc.rows[0]
    assert row.flag == expect["EXPECT"] and doc.fails, (row.flag, row.wrong, row.rejected)
    said = row.rejected if expect["EXPECT"] == "REJECTED" else row.wrong
    assert expect["EXPECT_SAYS"] in said, said
    assert row.ms > 0 and row.wall_ms > 0  # the grader's clock, whatever the trick did to time.perf_counter


@pytest.mark.parametrize("puzzle", ["puzzle13", "puzzle15", "puzzle29"])
def test_an_honest_solution_is_not_flagged_on_a_gpu(gpu_grading, puzzle):
    doc = _bench(gpu_grading, puzzle, COURSE.solution_file(puzzle), ON_GPU[puzzle], calls=0)
    (row,) = doc.rows
    assert not doc.fails and row.correct and not row.rejected, (row.flag, row.wrong, row.rejected)
    assert row.limit_ms > 0 and row.ms > row.limit_ms


@pytest.mark.parametrize("path", CORPUS, ids=[p.stem for p in CORPUS])
def test_each_trick_is_caught_on_a_gpu(gpu_grading, path):
    """Caught, though not always as on the CPU: a result kept from an earlier call is also far
    faster than the work it skips, and a GPU's physical limit may refuse it first."""
    expect = declared(path)
    puzzle = path.name[:8]
    doc = _bench(gpu_grading, puzzle, path, gpu_size(path), calls=0)
    row = doc.rows[0]
    assert row.fails, (row.flag, row.wrong, row.rejected)
    if expect["EXPECT"] == "REJECTED":
        assert row.rejected and (expect.get("NEEDS") != "cuda" or expect["EXPECT_SAYS"] in row.rejected), row.rejected
    else:
        assert row.rejected or expect["EXPECT_SAYS"] in row.wrong, row.wrong


def test_the_l2_is_cleared_and_read_back_on_a_gpu():
    if not CUDA:
        pytest.skip("no CUDA device")
    from grader.sandbox.bench.guard import L2
    l2 = L2(torch.cuda.current_stream())
    l2.clear()
    assert l2.state() in ((0, 0), (None, None))
