"""Autotuned, with a program start written for the 16-wide config only: under B0=128 each
program starts 16 elements after the last and most of the output is never stored. A GPU's
tuner may never pick that config at these sizes; the grader runs every config everywhere,
and the prune keeps it, so it must be right too."""
import triton
import triton.language as tl

EXPECT_KIND = "unwritten"
EXPECT_SAYS = "with config {B0=128, num_warps=4}"


def keep_all_that_fit(configs, named_args, **kwargs):
    return [c for c in configs if c.kwargs["B0"] <= 4 * max(32, named_args["N0"])]


@triton.autotune(configs=[triton.Config({"B0": 16}, num_warps=2), triton.Config({"B0": 128}, num_warps=4)],
                 key=["N0"], prune_configs_by={"early_config_prune": keep_all_that_fit})
@triton.jit
def add_mask2_kernel(x_ptr, z_ptr, N0, B0: tl.constexpr):
    pid = tl.program_id(0)
    offsets = pid * 16 + tl.arange(0, B0)
    mask = offsets < N0
    tl.store(z_ptr + offsets, tl.load(x_ptr + offsets, mask=mask) + 10.0, mask=mask)
