"""--perf says when its estimate may be far off: from the compiled loop's shape, and on every
calibration kernel its held-out fit missed by more than ×2 (issue 36)."""
import json
from pathlib import Path

import pytest

from grader.channel import wire, wire_measure
from grader.judge.perf import estimate as model
from grader.judge.perf.findings import findings
from grader.judge.perf.model import PerfProfile
from grader.judge.perf.run import launch_cost
from grader.sandbox.compile_stats import loop_shared

ROOT = Path(__file__).resolve().parent.parent

# A dot loop as Triton writes it for fp32 operands from fp16 tiles: the threads read the tiles
# from shared memory, convert them and store them back for the wgmma, which the loop waits for.
STAGED_LOOP = """
$L__BB0_1:
    cp.async.wait_group 2;
    bar.sync 0;
    ld.shared.b16 %rs1, [%r1];
    cvt.f32.f16 %f1, %rs1;
    st.shared.b32 [%r2], %f1;
    @%p1 st.shared.b32 [%r3], %f1;
    wgmma.mma_async.sync.aligned.m64n256k8.f32.tf32.tf32 {%f2}, %rd1, %rd2, 1, 1, 1, 1;
    wgmma.wait_group.sync.aligned 0;
    cp.async.cg.shared.global [%r4], [%rd3], 16;
    @%p2 bra $L__BB0_1;
    ret;
"""


def test_the_shared_memory_a_loop_moves_is_read_from_its_ptx():
    assert loop_shared(STAGED_LOOP) == 3  # a predicated store counts
    assert loop_shared(STAGED_LOOP.replace("@%p2 bra $L__BB0_1;", "")) == 0  # no loop: no trip repeats them
    assert loop_shared(STAGED_LOOP.replace("ld.shared.b16", "ld.global.b16")) == 2


def test_a_dot_loop_that_stages_its_tiles_in_its_threads_is_said_uncertain():
    dot = wire_measure.DotCount(precision="fp16", calls=16 * 128, flops=16 * 128 * 2 * 128 * 256 * 64, shape=(128, 256, 64))
    launch = wire_measure.LaunchProfile(kernel="matmul_kernel", group=0, config="", grid=(2048, 1, 1), interpreted=16,
                                num_warps=8, num_stages=3, accesses=(), dots=(dot,), alu=0, sfu=0, seconds=1.0)

    def cost(shared: int):
        stats = wire.KernelStats(label="", registers=254, spill_bytes=0, shared=163840, num_warps=8, num_stages=3,
                                 tensor_cores="wgmma", loops=1, loop_shared=shared)
        return launch_cost(launch, stats, "", model.coefficients())

    def said(shared: int) -> tuple[str, ...]:
        return findings(PerfProfile("yours", "k.py", ms=cost(shared).ms, launches=(cost(shared),)), None, 0).uncertain

    # each trip's conversions are waited for: 16 waves x 1 trip x 104 round trips to shared memory
    c = model.coefficients()
    assert cost(104).terms["latency"] - cost(0).terms["latency"] == pytest.approx(16 * 104 * c["stage_s"] * 1e3)

    assert said(104) == ("`matmul_kernel`'s loop moves its tiles through shared memory in its threads (104 "
                         "shared-memory loads and stores per thread and trip: layout conversions for the `tl.dot`s), "
                         "and what their bank conflicts cost is not modelled",)
    assert said(21) == ()  # an attention's few: its estimate is within the band


def test_every_calibration_kernel_held_out_off_by_more_than_twice_is_said_uncertain():
    rows = json.loads((ROOT / "benchmarks" / "perf_calibration.json").read_text())
    far = [r for r in rows if not 0.5 <= r["held_out_ms"] / r["measured_ms"] <= 2.0]
    assert len(far) >= 5  # the held-out misses docs/perf-model.md lists
    assert [r["kernel"] for r in far if not r["uncertain"]] == []
    tf32 = next(r for r in rows if r["kernel"] == "puzzle28_fp32_tf32_dot")
    assert "through shared memory in its threads (104 shared-memory loads and stores" in tf32["uncertain"]
