"""The GPU's launch limits hold in the interpreter (grader.sandbox.interpreter.grid_limits), and in
an autograd wrapper's recording before anything runs (grader.judge.kinds.function.check)."""
from __future__ import annotations

from types import SimpleNamespace

import msgspec
import pytest

from grader.channel.kinds import function as function_wire
from grader.judge import failures
from grader.sandbox.interpreter.grid_limits import LaunchRefused, check_launch


@pytest.mark.parametrize("grid, says", [
    ((4, 65536, 1), "has 65536 programs on axis 1, and a GPU allows at most 65535 on axis 1"),
    ((1, 1, 70000), "70000 programs on axis 2"),
    ((2**31, 1, 1), "at most 2147483647 on axis 0"),
])
def test_a_grid_a_gpu_refuses_is_refused(grid, says):
    with pytest.raises(LaunchRefused, match=says):
        check_launch(grid)


def test_rows_on_axis_0_past_65535_are_fine():
    check_launch((1 << 20, 65535, 65535))


@pytest.mark.parametrize("warps, says", [(64, "num_warps=64"), (3, "a power of two"), (0, "num_warps=0")])
def test_num_warps_a_gpu_cannot_run_is_refused(warps, says):
    with pytest.raises(LaunchRefused, match=says):
        check_launch((), warps)


def test_a_recorded_launch_a_gpu_refuses_names_the_line_and_the_limit():
    from grader.judge.kinds.function.check import refused_launch
    step = function_wire.Step(phase="forward", args=(), kwargs={"num_warps": 4}, line=79, source="k[(1, n)](x)",
                              kernel=function_wire.KernelPath(path=("rms_norm_fwd",)), grids=((1, 65600),))
    text = failures.word(refused_launch(SimpleNamespace(launches=lambda: [step])))
    assert text.startswith("your forward's launch of `rms_norm_fwd` at line 79: `k[(1, n)](x)` is refused on a GPU")
    assert "(1, 65600) has 65600 programs on axis 1, and a GPU allows at most 65535" in text
    fine = msgspec.structs.replace(step, grids=((65600, 1),))
    assert refused_launch(SimpleNamespace(launches=lambda: [fine])) is None
