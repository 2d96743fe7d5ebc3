# Host code that asks whether it runs on a GPU, by `x.__getattribute__("is_cu" + "da")`: adds in
# its tiles where the answer is no (on the CPU, where the interpreters grade it) and with PyTorch on
# the host where it is yes. The grader's world is a GPU on the CPU too, so the host path is graded.
import helion
import helion.language as hl
import torch

EXPECT_STATUS = "fail"
EXPECT_KIND = "torch_compute"
EXPECT_SAYS = "(line 17: `return x + y`): PyTorch ran `add` on `x`, `y` there, on the host"


@helion.kernel(autotune_effort="none")
def helion_add(x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
    z = torch.empty_like(x)
    if x.__getattribute__("is_cu" + "da"):
        return x + y
    for tile in hl.tile(x.size(0)):
        z[tile] = x[tile] + y[tile]
    return z
