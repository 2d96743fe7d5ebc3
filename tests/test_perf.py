"""--perf without a GPU: the counts a launch's sampled programs give, the H100 model, the
findings it words, and the command line end to end on kernels of tests/perf/."""
import json
import subprocess
import sys
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest

from grader.channel import wire, wire_measure
from grader.judge.perf import estimate as model
from grader.judge.perf.findings import findings
from grader.judge.perf.model import PerfProfile
from grader.judge.perf.run import launch_cost
from grader.sandbox.compile_stats import ptx_counts
from grader.sandbox.perf.record import _weighted_unique, warp_sectors
from grader.sandbox.perf.sample import per_axis, runs, spread, spread_order
from pristine import PRISTINE  # the course as committed, whatever a learner solved

ROOT = Path(__file__).resolve().parent.parent
KERNELS = Path(__file__).resolve().parent / "perf"


def test_a_sample_spreads_over_every_long_axis_and_keeps_the_ends():
    assert spread(10, 4) == [0, 3, 6, 9] and spread(3, 16) == [0, 1, 2] and spread(5, 1) == [0]
    assert per_axis((2048, 1, 1), 16) == (16, 1, 1)
    assert per_axis((64, 32, 1), 16) == (4, 4, 1)  # a causal attention's query blocks and its heads
    assert per_axis((3, 1, 1), 16) == (3, 1, 1)
    three = per_axis((1000, 1000, 1000), 16)
    assert min(three) >= 2 and three[0] * three[1] * three[2] <= 16


def test_programs_run_in_an_order_spread_at_every_prefix_and_long_loops_in_runs():
    assert spread_order(list(range(9))) == [0, 8, 4, 2, 6, 1, 3, 5, 7]
    assert sorted(spread_order(list(range(16)))) == list(range(16))
    assert runs(512) == [*range(16), 254, 255, 256, 257, 508, 509, 510, 511]
    assert runs(25) == [*range(16), 21, 22, 23, 24]  # the middle run falls in the first


def test_a_sector_a_sampled_loop_touched_stands_for_the_iterations_it_skipped():
    outside = (np.array([1, 2, 3]), 1.0)
    inside = (np.array([3, 4]), 40.0)  # a loop of 480 iterations, 12 run: each sector stands for 40
    sectors, weights = _weighted_unique([outside, inside])
    assert sectors.tolist() == [1, 2, 3, 4] and weights.tolist() == [1.0, 1.0, 40.0, 40.0]
    sectors, weights = _weighted_unique([(np.array([5, 5, 6]), 1.0)])
    assert sectors.tolist() == [5, 6] and weights.tolist() == [1.0, 1.0]


PTX = """
.visible .entry k(
    .param .u64 k_param_0
)
{
    .reg .b32 %r<9>;
    ld.param.u64 %rd1, [k_param_0];
    mov.u32 %r1, %tid.x;
    mul.hi.u32 %r2, %r1, -845247145;
    xor.b32 %r3, %r2, %r1;
$L__BB0_1:
    add.s32 %r4, %r3, 1;
    ex2.approx.f32 %f1, %f2;
    @%p1 bra $L__BB0_1;
    st.global.b32 [%rd1], %r4;
    ret;
}
"""


def test_the_compiled_codes_arithmetic_and_loops_are_counted_from_its_ptx():
    assert ptx_counts(PTX) == (4, 1, 1)  # mul.hi, xor, add, ex2 (the SFU's); one backward branch
    assert ptx_counts(PTX.replace("@%p1 bra $L__BB0_1;", "")) == (4, 1, 0)


def test_a_column_walk_waits_once_per_sector_group_not_once_per_column():
    # 1024 columns of 4 rows, 4 sectors a request, 512 distinct sectors: 128 trips, not 1024
    walk = _access(requests=1024, sectors=4096, program_unique=512)
    assert model.rounds([walk]) == 128
    streaming = _access(requests=8, sectors=8 * 128, program_unique=8 * 128)
    assert model.rounds([streaming]) == 8


def test_a_warp_moves_the_sectors_its_lanes_touch():
    contiguous = np.arange(0, 4 * 256, 4, dtype=np.uint64)  # 256 fp32 lanes, one after another
    every = np.ones(256, dtype=bool)
    assert warp_sectors(contiguous, every, 4) == 32  # 1 KiB: 32 sectors, each used whole
    strided = np.arange(0, 64 * 256, 64, dtype=np.uint64)  # each lane 64 bytes after the last
    assert warp_sectors(strided, every, 4) == 256
    half = every.copy()
    half[128:] = False
    assert warp_sectors(contiguous, half, 4) == 16  # masked lanes move nothing
    # a tile whose first axis is the contiguous one: Triton makes it the fastest, as here
    tile = (np.arange(32, dtype=np.uint64)[:, None] * 4 + np.arange(8, dtype=np.uint64)[None, :] * 4096)
    assert warp_sectors(tile, np.ones(tile.shape, dtype=bool), 4) == 32


def _access(**fields) -> wire_measure.AccessCount:
    base = {"tensor": "x", "op": "load", "line": 7, "source": "tl.load(x)", "requests": 16, "lanes": 16 * 1024,
            "active": 16 * 1024, "bytes": 16 * 4096, "sectors": 16 * 128, "program_unique": 16 * 128,
            "union": 16 * 128, "tensor_bytes": 65536 * 4096}
    return wire_measure.AccessCount(**(base | fields))


def _launch(accesses, **fields) -> wire_measure.LaunchProfile:
    base = {"kernel": "k", "group": 0, "config": "", "grid": (65536, 1, 1), "interpreted": 16, "num_warps": 4,
            "num_stages": 3, "accesses": tuple(accesses), "dots": (), "alu": 16 * 4096, "sfu": 0, "seconds": 0.1}
    return wire_measure.LaunchProfile(**(base | fields))


STATS = wire.KernelStats(label="", registers=32, spill_bytes=0, shared=0, num_warps=4, num_stages=3, tensor_cores="")


def test_a_streaming_kernel_is_bound_by_memory_at_the_bytes_it_moves():
    c = model.coefficients()
    cost = launch_cost(_launch([_access(), _access(tensor="z", op="store", line=9)]), STATS, "", c)
    assert cost.dram_read == 65536 * 4096 and cost.dram_written == 65536 * 4096
    assert cost.bound == "memory" and cost.reads == (("x", 1.0),)
    assert cost.ms == pytest.approx(model.combine({k: v / 1e3 for k, v in cost.terms.items()}, c)[0] * 1e3)


def test_reading_a_row_three_times_costs_more_and_is_said_with_its_lines():
    c = model.coefficients()
    once = launch_cost(_launch([_access(), _access(tensor="z", op="store", line=9)]), STATS, "", c)
    thrice = launch_cost(_launch([_access(line=n) for n in (7, 11, 15)] + [_access(tensor="z", op="store", line=19)]),
                         STATS, "", c)
    assert thrice.ms > once.ms and dict(thrice.reads)["x"] == pytest.approx(3.0)
    profile = findings(PerfProfile("yours", "k.py", ms=thrice.ms, launches=(thrice,)),
                       PerfProfile("reference", "r.py", ms=once.ms, launches=(once,)), 512 << 20)
    assert profile.findings[0] == ("`k` reads `x` 3.0 times over (lines 7, 11, 15); the reference reads it 1.0 times. "
                                   "Read each element once and keep it in registers, or fuse the passes.")


def test_masked_lanes_spills_and_dots_without_tensor_cores_are_named():
    c = model.coefficients()
    wasteful = launch_cost(_launch([_access(active=16 * 300, bytes=16 * 1200, sectors=16 * 40)],
                                   dots=(wire_measure.DotCount(precision="tf32", calls=16, flops=16 * 2 ** 21,
                                                       shape=(64, 64, 256)),)),
                           wire.KernelStats(label="", registers=255, spill_bytes=96, shared=0, num_warps=4,
                                            num_stages=3, tensor_cores=""), "", c)
    said = " | ".join(findings(PerfProfile("yours", "k.py", ms=wasteful.ms, launches=(wasteful,)), None, 0)
                      .findings)
    assert "71% of the lanes of the load of `x` at line 7 are masked off" in said
    assert "ptxas spills 96 bytes per thread in `k` (255 registers)" in said
    assert "The `tl.dot`s of `k` compile to no tensor-core instruction: they run on the FMA units." in said


def test_the_estimate_says_why_it_is_uncertain_where_the_calibration_missed_most():
    c = model.coefficients()
    scattered = launch_cost(_launch([_access(sectors=16 * 1024)]), STATS, "", c)  # 12% of each sector used
    profile = findings(PerfProfile("yours", "k.py", ms=scattered.ms, launches=(scattered,)), None, 0)
    assert any("`k`'s loads of `x` use 12% of the sectors they move: how much of the rest the caches catch is not "
               "modelled" in u for u in profile.uncertain)
    plain = launch_cost(_launch([_access(), _access(tensor="z", op="store", line=9)]), STATS, "", c)
    assert findings(PerfProfile("yours", "k.py", ms=plain.ms, launches=(plain,)), None, 0).uncertain == ()


def test_the_text_marks_a_wrong_kernels_figures_and_names_the_bound_the_change_and_the_band():
    from grader.judge.perf.model import PerfResult
    from grader.report.perf import render_text
    c = model.coefficients()
    thrice = launch_cost(_launch([_access(line=n) for n in (7, 11, 15)] + [_access(tensor="z", op="store", line=19)]),
                         STATS, "", c)
    yours = findings(PerfProfile("yours", "k.py", ms=thrice.ms, launches=(thrice,), wrong="case small: wrong values"),
                     None, 512 << 20)
    text = render_text(PerfResult("puzzle18", "Fused softmax", "the bench's headline size", {"N0": 4}, "H100",
                                  512 << 20, None, 0.1, "memory", yours,
                                  model={"fitted": {"median": 0.1, "p90": 0.4, "kernels": 99},
                                         "held_out_by_family": {"median": 0.2, "p90": 0.5, "kernels": 99}}))
    assert 'Your kernel fails grading (case small: wrong values): the figures of "yours" are those of a wrong kernel.' \
        in text and "yours (fails grading)" in text
    assert "Bound by memory (the bytes to and from HBM). The change most likely to help: `k` reads `x` 3.0 times " \
        "over (lines 7, 11, 15)." in text
    assert "half its estimates are within 20% of an H100's time and 90% within 50% (99 kernels, each family held " \
        "out in turn); on those it was fitted on, 10% and 40%." in text


def test_the_references_counts_are_kept_and_read_back(tmp_path, monkeypatch):
    from grader.judge.perf import cache as perf_cache
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    reply = wire_measure.Profiled(launches=(_launch([_access()]),), seconds=1.5)
    perf_cache.store("k", reply, [(STATS, ""), (None, "not compiled")])
    back, stats = perf_cache.load("k")
    assert back == reply and stats == [(STATS, ""), (None, "not compiled")]
    (tmp_path / "triton-puzzles" / "perf" / "k.json").write_text("{not json")
    assert perf_cache.load("k") is None and perf_cache.load("absent") is None


def test_occupancy_follows_registers_warps_and_shared_memory():
    h100 = model.H100
    assert model.resident(h100, 4, 32, 0) == 16       # 64 warps an SM
    assert model.resident(h100, 8, 255, 0) == 1       # 255 registers x 256 threads
    assert model.resident(h100, 4, 64, 150 * 1024) == 1
    assert model.resident(h100, 1, 16, 0) == 32       # at most 32 programs an SM


def _perf(*args: str) -> subprocess.CompletedProcess:
    # the course found from here: as committed, whatever a learner solved
    return subprocess.run([sys.executable, "-m", "grader", *args], cwd=PRISTINE, capture_output=True, text=True,
                          timeout=600)


@pytest.mark.slow
def test_perf_puts_a_second_read_beside_the_reference_that_reads_once():
    done = _perf("puzzle18", "--perf", "--json", "--file", str(KERNELS / "puzzle18_two_reads.py"))
    assert done.returncode == 0, done.stderr
    doc = json.loads(done.stdout)
    yours, reference = doc["yours"], doc["reference"]
    assert doc["case"] == "the bench's headline size" and doc["sizes"] == {"N0": 4096, "T": 8192, "B1": 8192}
    assert reference is not None and reference["file"].endswith("solutions/puzzle18_fused_softmax.py")
    assert yours["ms"] > reference["ms"] > 0
    assert any("reads `x` 2.0 times over (lines 11, 12); the reference reads it 1.0 times" in f
               for f in yours["findings"])
    launch = yours["launches"][0]
    assert launch["grid"] == [4096, 1, 1] and launch["interpreted"] == 16 and launch["registers"] > 0


@pytest.mark.slow
def test_perf_names_the_line_whose_lanes_scatter():
    done = _perf("puzzle03", "--perf", "--file", str(KERNELS / "puzzle03_scattered.py"))
    assert done.returncode == 0, done.stderr
    assert "The stores of `z` at line 14 use 12% of each 32-byte sector they move" in done.stdout
    assert "case past_16_bit_offsets (N0=256, N1=256)" in done.stdout


@pytest.mark.slow
def test_an_autotuned_launch_is_estimated_under_each_config_and_the_fastest_kept():
    done = _perf("puzzle02", "--perf", "--json", "--file", str(KERNELS / "puzzle02_autotuned.py"))
    launch = json.loads(done.stdout)["yours"]["launches"][0]
    labels = [label for label, _ in launch["alternatives"]]
    assert labels == ["config {B0=64, num_warps=1}", "config {B0=1024, num_warps=4}"]
    assert launch["ms"] == min(ms for _, ms in launch["alternatives"])


@pytest.mark.slow
def test_a_kernel_that_raises_gets_no_estimate_and_says_where():
    done = _perf("puzzle02", "--perf", "--file", str(KERNELS / "puzzle02_raises.py"))
    assert done.returncode == 1
    assert "yours: no estimate: ValueError: Cannot make_shape_compatible" in done.stdout
    assert "(line 10: tl.store(z_ptr + offsets, x + tl.arange(0, 2 * B0), mask=offsets < N0))" in done.stdout


@pytest.mark.slow
def test_an_autograd_function_counts_its_launches_and_its_wrappers_operators():
    done = _perf("puzzle15", "--perf", "--json", "--solutions")
    yours = json.loads(done.stdout)["yours"]
    assert done.returncode == 0 and len(yours["launches"]) >= 2
    assert yours["ms"] == pytest.approx(sum(l["ms"] for l in yours["launches"]) + yours["torch_ms"])


@pytest.mark.slow
def test_a_16x16_tile_matmul_gets_an_estimate_from_sampled_loops():
    """Its profile ran every one of 512 K steps of 16 programs and hit the 900 s limit (issue 36)."""
    done = _perf("puzzle28", "--perf", "--json", "--file", str(ROOT / "benchmarks" / "perf_kernels" /
                                                                 "puzzle28_tiles_16x16.py"))
    assert done.returncode == 0, done.stderr
    yours = json.loads(done.stdout)["yours"]
    launch = yours["launches"][0]
    assert yours["ms"] > 0 and launch["grid"] == [262144, 1, 1] and launch["loops_sampled"] >= 1
    assert yours["seconds"] < 120


@pytest.mark.slow
def test_a_kernel_that_fails_grading_has_its_figures_marked():
    done = _perf("puzzle02", "--perf", "--file", str(KERNELS / "puzzle02_wrong_constant.py"))
    assert "Your kernel fails grading (case classic[seed=0] (N0=200, B0=32): wrong values in `z`: 200 of 200 " \
        "elements differ" in done.stdout
    assert "yours (fails grading)" in done.stdout


def test_perf_estimates_one_puzzle_and_not_beside_bench():
    assert _perf("puzzle01", "puzzle02", "--perf").returncode == 2
    done = _perf("puzzle01", "--perf", "--bench")
    assert done.returncode == 2 and "ask for one of them" in done.stdout + done.stderr


@pytest.mark.slow
def test_a_notebook_estimates_a_kernel_it_defines(tmp_path, monkeypatch):
    import importlib.util

    from grader.app import notebook
    spec = importlib.util.spec_from_file_location("two_reads", KERNELS / "puzzle18_two_reads.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    monkeypatch.chdir(PRISTINE)  # the course found from here: as committed, whatever a learner solved
    shown = notebook.perf(module.softmax_kernel, "puzzle18")
    assert shown.result.yours.ok and shown.result.reference is not None
    assert "estimated time" in repr(shown) and shown._repr_html_().startswith("<pre>")


def test_a_wrappers_operators_are_counted_unless_they_launch_nothing():
    import torch

    from grader.sandbox.perf.run import torch_ops

    class Outside:
        inside = False
    mode, counted = torch_ops(Outside())
    x = torch.ones(4, 8)
    with mode:
        y = torch.sqrt(x).t()          # sqrt runs a kernel; t is a view
        torch.cat([y, y]).view(-1)     # cat runs one; view does not
        torch.empty(16)
        x.index_select(0, torch.tensor([0, 1]))
    names = {name.split(".")[0] for name in counted}
    assert names >= {"sqrt", "cat", "index_select"}
    assert not names & {"t", "view", "empty"}


def test_an_fp16_dot_is_computed_in_fp32_as_the_interpreter_computes_it():
    """numpy multiplies fp16 matrices element by element: a FlashAttention's sample spent nine
    tenths of its time there. The products are exact in fp32; only the sums' order differs."""
    import triton.language as tl
    from triton.runtime.interpreter import TensorHandle, interpreter_builder

    from grader.sandbox.perf.record import _half_dot
    rng = np.random.default_rng(0)
    a = TensorHandle(rng.standard_normal((64, 32)).astype(np.float16), tl.float16)
    b = TensorHandle(rng.standard_normal((32, 16)).astype(np.float16), tl.float16)
    d = TensorHandle(rng.standard_normal((64, 16)).astype(np.float32), tl.float32)
    fast = _half_dot(a, b, d)
    slow = type(interpreter_builder).create_dot(interpreter_builder, a, b, d, "tf32", 0)
    assert fast.data.dtype == np.float32 and fast.dtype == tl.float32
    np.testing.assert_allclose(fast.data, slow.data, rtol=1e-5, atol=1e-5)


# ---- the change most likely to help: a grade's note of a faster way, in the grade's own words ----
def test_the_grades_note_of_a_faster_way_is_the_change_perf_names_first():
    """Puzzle 27's note beside a correct dropout that draws once per element names `tl.rand4x`:
    --perf leads with that note, word for word as the grade says it (one function words both)."""
    from conftest import COURSE
    from grader.judge.perf.model import PerfResult
    from grader.judge.perf.run import faster_notes
    from grader.judge.properties import said
    from grader.report.perf import render_text
    puzzle = COURSE.puzzle("puzzle27")
    once, not_divided, overlap = puzzle.check.notes
    assert once.faster and not_divided.faster and not overlap.faster  # a mask shared by two rows is no speed-up
    graded = f"all 9 cases pass\n{said(once)}"  # the grade's message, as grade.py writes a pass's notes
    notes = faster_notes(puzzle, graded)
    assert notes == (said(once),) and "`tl.rand4x(SEED, i * cdiv(T, 4) + j // 4)`" in notes[0]
    assert faster_notes(puzzle, f"all 9 cases pass\n{said(overlap)}") == ()
    c = model.coefficients()
    launch = launch_cost(_launch([_access(), _access(tensor="z", op="store", line=9)]), STATS, "", c)
    yours = replace(findings(PerfProfile("yours", "k.py", ms=launch.ms, launches=(launch,)), None, 0), notes=notes)
    text = render_text(PerfResult("puzzle27", "Dropout", "the bench's headline size", {"N0": 4}, "H100", 1 << 20,
                                  None, 0.1, "memory", yours))
    assert ("The change most likely to help: (grading's note) your output looks like one Philox draw per element, "
            "its first word (`tl.rand(SEED, i * T + j)`): four times as many draws as needed: "
            "`tl.rand4x(SEED, i * cdiv(T, 4) + j // 4)` gives four columns their words at once.") in text


@pytest.mark.slow  # grades and profiles a dropout in the interpreter (20 s)
def test_perf_of_a_dropout_drawing_once_per_element_names_rand4x():
    done = _perf("puzzle27", "--perf", "--file", str(ROOT / "tests" / "hostile" / "puzzle27_one_draw_per_element.py"))
    assert done.returncode == 0, done.stdout + done.stderr
    assert "The change most likely to help: (grading's note) your output looks like one Philox draw per element" \
        in done.stdout and "`tl.rand4x(SEED, i * cdiv(T, 4) + j // 4)`" in done.stdout
