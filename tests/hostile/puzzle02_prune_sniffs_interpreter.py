# A prune that keeps only the right config in the interpreter and only the wrong one on a GPU.
# The grader reads prune functions before it runs them, and refuses this one with the line.
import os

import triton
import triton.language as tl

EXPECT_STATUS = "fail"
EXPECT_KIND = "sniffing"
EXPECT_SAYS = "An `early_config_prune` function runs as Python"


def pick(configs, named_args, **kwargs):
    return configs[:1] if os.environ.get("TRITON_INTERPRET") else configs[1:]


@triton.autotune(configs=[triton.Config({"B0": 16}, num_warps=2), triton.Config({"B0": 128}, num_warps=4)],
                 key=["N0"], prune_configs_by={"early_config_prune": pick})
@triton.jit
def add_mask2_kernel(x_ptr, z_ptr, N0, B0: tl.constexpr):
    pid = tl.program_id(0)
    offsets = pid * 16 + tl.arange(0, B0)
    mask = offsets < N0
    tl.store(z_ptr + offsets, tl.load(x_ptr + offsets, mask=mask) + 10.0, mask=mask)
