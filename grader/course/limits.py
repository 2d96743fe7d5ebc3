"""The launch limits every NVIDIA GPU holds a Triton launch to, said as the refusal a learner
reads: the interpreter (grader.sandbox.sampling) and the recording of an autograd wrapper
(grader.judge.kinds.function.check) refuse what CUDA or Triton would."""
from __future__ import annotations

AXIS_LIMITS = (2**31 - 1, 65535, 65535)  # CUDA's gridDim.x, .y, .z
MAX_WARPS = 32  # 1024 threads per block
# Shared memory one program may use, in bytes (the opt-in maximum per block), by compute capability.
MAX_SHARED = {90: 232448, 100: 232448, 80: 166912, 86: 101376, 89: 101376}


def refusal(grid=(), num_warps=None) -> str | None:
    """Why a GPU refuses a launch of ``grid`` with ``num_warps``, with the fix; None if it does not."""
    for axis, (n, limit) in enumerate(zip(grid, AXIS_LIMITS)):
        if int(n) > limit:
            fix = ("put the dimension that grows (rows, tokens) on axis 0, which allows 2**31 - 1, or loop "
                   "inside a program") if axis else "give each program more of the work"
            return (f"the launch's grid {tuple(int(g) for g in grid)} has {int(n)} programs on axis {axis}, and a "
                    f"GPU allows at most {limit} on axis {axis}: CUDA refuses the launch. Fix: {fix}.")
    if num_warps is not None and not isinstance(num_warps, bool) and isinstance(num_warps, int):
        if num_warps < 1 or num_warps & (num_warps - 1) or num_warps > MAX_WARPS:
            return (f"num_warps={num_warps}: Triton needs a power of two, and a GPU runs at most {MAX_WARPS} "
                    f"warps ({MAX_WARPS * 32} threads) in one program. Fix: num_warps of 1, 2, 4, 8, 16 or 32.")
    return None


def shared_refusal(shared: int, arch: int, config: str = "") -> str | None:
    """Why a GPU of compute capability ``arch`` cannot launch a program needing ``shared`` bytes."""
    limit = MAX_SHARED.get(arch)
    if limit is None or shared <= limit:
        return None
    return (f"{config or 'the kernel'} needs {shared} bytes of shared memory per program, and an sm_{arch} GPU "
            f"gives a program at most {limit} ({limit // 1024} KiB): Triton raises OutOfResources at launch. "
            f"Fix: smaller tiles (BLOCK sizes), or fewer num_stages.")
