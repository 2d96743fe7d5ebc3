# Written for this corpus, after pytorch/helion examples/matmul_split_k.py: K split into chunks by a tunable
# (`hl.register_tunable("split_k", PowerOfTwoFragment(1, 256))`), each chunk's product added into an fp32
# output with `hl.atomic_add`. The inner loop's extent (`outer_k.begin` to `outer_k.end`) is known only at run time:
# the grader tiles it with the case's largest tile (Helion's hint of 8192 made a 4096-wide tile that no GPU's
# shared memory holds). Adapted: fp16 inputs, the fp32 sum rounded to fp16 as the puzzle's output is.
import helion
import helion.language as hl
import torch
from helion.autotuner import PowerOfTwoFragment


@helion.kernel(static_shapes=True)
def helion_matmul(a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
    m, k = a.size()
    n = b.size(1)
    c = torch.zeros([m, n], dtype=torch.float32, device=a.device)
    split_k = hl.register_tunable("split_k", PowerOfTwoFragment(1, 256))
    k_block = helion.next_power_of_2(helion.cdiv(k, split_k))
    for tile_m, tile_n, outer_k in hl.tile([m, n, k], block_size=[None, None, k_block]):
        acc = hl.zeros([tile_m, tile_n], dtype=torch.float32)
        for inner_k in hl.tile(outer_k.begin, outer_k.end):
            acc = hl.dot(a[tile_m, inner_k], b[inner_k, tile_n], acc=acc)
        hl.atomic_add(c, [tile_m, tile_n], acc)
    return c.to(torch.float16)
