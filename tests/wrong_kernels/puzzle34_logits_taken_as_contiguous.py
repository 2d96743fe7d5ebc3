# Puzzle 34 without `x.contiguous()`: the fused kernel reads row r at r * V, so a slice of
# wider logits (rows apart in memory) is read across the gaps, whose fill is NaN.
import torch
import triton
import triton.language as tl

from puzzle23_cross_entropy import cross_entropy_kernel

EXPECT_KIND = "nonfinite"
EXPECT_SAYS = "`loss` has"
EXPECT_CASE = "logits_a_slice"

# The fused kernel's chunk and warps, measured fastest on an H100 at fp32 4096 x 32768.
B1, WARPS = 8192, 32
SMALL = 1024   # the one-program kernels' chunk
SCALE = 4096   # elements per program of the backward's scaling


@triton.jit
def mean_weights_kernel(target_ptr, weights_ptr, N, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    # Count the rows that are not ignored; lanes past N load as -100, so they do not count.
    n = 0
    for start in range(0, N, BLOCK):
        t = tl.load(target_ptr + start + offs, mask=start + offs < N, other=-100)
        n += tl.sum((t != -100).to(tl.int32), axis=0)
    # The mean's weight on every row (the fused kernel zeroes the ignored rows itself).
    w = 1.0 / n.to(tl.float32)
    for start in range(0, N, BLOCK):
        tl.store(weights_ptr + start + offs, tl.zeros([BLOCK], tl.float32) + w, mask=start + offs < N)


@triton.jit
def weighted_sum_kernel(loss_ptr, weights_ptr, out_ptr, N, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    acc = tl.zeros([BLOCK], tl.float32)
    for start in range(0, N, BLOCK):
        mask = start + offs < N
        loss = tl.load(loss_ptr + start + offs, mask=mask, other=0.0)
        acc += loss * tl.load(weights_ptr + start + offs, mask=mask, other=0.0)
    tl.store(out_ptr, tl.sum(acc, axis=0))


@triton.jit
def scale_kernel(dx_ptr, grad_output_ptr, grad_x_ptr, NUMEL, BLOCK: tl.constexpr):
    offs = tl.program_id(0).to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < NUMEL
    g = tl.load(grad_output_ptr).to(tl.float32)
    dx = tl.load(dx_ptr + offs, mask=mask, other=0.0).to(tl.float32)
    tl.store(grad_x_ptr + offs, dx * g, mask=mask)


class CrossEntropyFunc(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, target):
        n, v = x.shape
        weights = torch.empty(n, dtype=torch.float32, device=x.device)
        mean_weights_kernel[(1,)](target, weights, n, BLOCK=SMALL)
        # The loss of every row and the gradient of the mean, in one pass over the logits.
        loss_rows = torch.empty(n, dtype=torch.float32, device=x.device)
        dx = torch.empty_like(x)
        block = min(B1, triton.next_power_of_2(v))
        cross_entropy_kernel[(n,)](x, target, weights, loss_rows, dx, n, v, B1=block,
                                   num_warps=max(1, min(WARPS, block // 256)))
        loss = torch.empty((), dtype=torch.float32, device=x.device)
        weighted_sum_kernel[(1,)](loss_rows, weights, loss, n, BLOCK=SMALL)
        # The backward needs only dx: not x, not the probabilities.
        ctx.save_for_backward(dx)
        return loss

    @staticmethod
    def backward(ctx, grad_output):
        (dx,) = ctx.saved_tensors
        grad_x = torch.empty_like(dx)
        numel = dx.numel()
        scale_kernel[(triton.cdiv(numel, SCALE),)](dx, grad_output, grad_x, numel, BLOCK=SCALE)
        return grad_x, None
