"""The GPU's launch limits, held at every interpreted launch: a grid of more than 65535 programs on
axis 1 or 2, more than 2**31 - 1 on axis 0, and ``num_warps`` that is not a power of two or above 32
(1024 threads) are refused, as CUDA or Triton refuses them, however the launch's programs then run.
"""
from __future__ import annotations

from grader.course.limits import refusal


class LaunchRefused(Exception):
    """A launch a GPU would refuse; the text names the limit and the fix."""


def check_launch(grid: tuple[int, ...], num_warps=None) -> None:
    """Raise LaunchRefused where a GPU would refuse this launch."""
    why = refusal(grid, None if num_warps is None else int(num_warps))
    if why is not None:
        raise LaunchRefused(why)


def install_limits() -> None:
    """Check every interpreted launch against the GPU's limits, once per process."""
    from triton.runtime import interpreter
    executor = interpreter.GridExecutor
    if getattr(executor.__call__, "checks_limits", False):
        return
    builder = interpreter.interpreter_builder
    original_set, original_call = type(builder).set_grid_dim, executor.__call__

    def set_grid_dim(self, nx, ny, nz):
        check_launch((int(nx), int(ny), int(nz)))
        return original_set(self, nx, ny, nz)

    def call(self, *args, **kwargs):
        check_launch((), kwargs.get("num_warps"))
        return original_call(self, *args, **kwargs)
    call.checks_limits, call.__wrapped__ = True, original_call
    type(builder).set_grid_dim = set_grid_dim
    executor.__call__ = call
