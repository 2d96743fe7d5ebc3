# Written for this corpus, after pytorch/helion examples/segment_reduction.py at commit
# ef091f416a50c443b38e4c8bff2980777f5ff225, which gives its kernel `configs=[...]` to choose
# from: an outer product and ReLU with two configs. The grader keeps neither's block sizes but
# grades each case at its own.
import helion
import helion.language as hl
import torch


@helion.kernel(configs=[helion.Config(block_sizes=[32, 32], num_warps=4),
                        helion.Config(block_sizes=[16, 64], num_warps=8)])
def helion_mul_relu(x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
    n0, n1 = x.size(0), y.size(0)
    z = torch.empty([n1, n0], dtype=x.dtype, device=x.device)
    for rows, cols in hl.tile([n1, n0]):
        z[rows, cols] = torch.relu(y[rows][:, None] * x[cols][None, :])
    return z
