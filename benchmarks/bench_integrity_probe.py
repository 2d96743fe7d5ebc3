"""Measures what the bench's guard sees on this GPU with nothing hostile running, in under 30 s
(docs/benchmarks.md, "Bench integrity"): the device's peaks as the driver gives them, the L2
controls, whether honest PyTorch and Triton work changes any watched name, switch or thread,
the clocks' overhead, and the alternatives considered for two baselines. Run on the GPU; prints
one report.

    python benchmarks/bench_integrity_probe.py
"""
import ctypes
import statistics
import sys
import threading
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
import torch  # noqa: E402
import triton  # noqa: E402
import triton.language as tl  # noqa: E402

from grader.judge.bench.integrity import device_peaks, limit_ms  # noqa: E402
from grader.sandbox.bench import guard  # noqa: E402


@triton.jit
def _copy(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(y_ptr + offs, tl.load(x_ptr + offs, mask=offs < n), mask=offs < n)


def timed(fn, prelude=None, n=20):
    clock = guard.Clock("cuda")
    fn()
    pairs = [clock.time(fn, prelude) for _ in range(n)]
    return statistics.median(e for e, _ in pairs), statistics.median(w - e for e, w in pairs)


def main():
    print("torch", torch.__version__, "triton", triton.__version__, torch.cuda.get_device_name())
    peaks = device_peaks()
    print("peaks", peaks, "limit 8192^3 matmul", limit_ms(3 * 2 * 8192 ** 2, 2 * 8192 ** 3, peaks))
    l2 = guard.L2(torch.cuda.current_stream())
    l2.clear()
    print("L2 after clear", l2.state())
    cuda = ctypes.CDLL("libcuda.so.1")
    print("set 1 MiB", cuda.cuCtxSetLimit(ctypes.c_int(6), ctypes.c_size_t(1 << 20)), "->", l2.state())
    l2.clear()
    print("cleared", l2.state())
    names, switches, threads = guard.watched(), guard.switches(), guard.threads()
    x = torch.randn(1 << 24, device="cuda")
    y = torch.empty_like(x)
    _copy[(x.numel() // 1024,)](x, y, x.numel(), BLOCK=1024)
    print("L2 after a Triton launch", l2.state())
    a = torch.randn(4096, 4096, device="cuda", dtype=torch.float16, requires_grad=True)
    (a @ a).sum().backward()
    print("L2 after a matmul and its backward", l2.state())
    q = torch.randn(4, 16, 4096, 128, device="cuda", dtype=torch.float16, requires_grad=True)
    from torch.nn.attention import SDPBackend, sdpa_kernel
    for backend in (None, SDPBackend.FLASH_ATTENTION, SDPBackend.CUDNN_ATTENTION, SDPBackend.EFFICIENT_ATTENTION):
        try:
            if backend is None:
                out = torch.nn.functional.scaled_dot_product_attention(q, q, q)
            else:
                with sdpa_kernel(backend):
                    out = torch.nn.functional.scaled_dot_product_attention(q, q, q)
            torch.autograd.grad(out, q, torch.ones_like(out))
            torch.cuda.synchronize()
            print("L2 after SDPA", backend, "and its backward", l2.state(), "grad_fn", type(out.grad_fn).__name__)
        except RuntimeError as exc:
            print("SDPA", backend, "unavailable:", str(exc).splitlines()[0][:100])
        l2.clear()

    class Step(torch.autograd.Function):  # a wrapper whose backward runs Python on autograd's CUDA thread
        @staticmethod
        def forward(ctx, v):
            return v * 2

        @staticmethod
        def backward(ctx, g):
            threading.current_thread()
            return g * 2
    Step.apply(torch.ones(4, device="cuda", requires_grad=True)).sum().backward()
    print("threads after a Python backward on CUDA:", [type(t).__name__ for t in threading.enumerate()])
    torch.cuda.synchronize()
    print("changed names", guard.changed(names, guard.watched()))
    print("switched", guard.switched(switches, guard.switches()),
          "threads started", guard.started(threads, guard.threads()))
    scratch = torch.empty(256 << 20, dtype=torch.uint8, device="cuda")
    print("empty call after a flush: event ms, gap ms", timed(lambda: None, scratch.zero_))
    print("copy kernel 64 MiB: event ms, gap ms",
          timed(lambda: _copy[(x.numel() // 1024,)](x, y, x.numel(), BLOCK=1024), scratch.zero_))
    side = torch.cuda.Stream()

    def hidden():
        with torch.cuda.stream(side):
            _copy[(x.numel() // 1024,)](x, y, x.numel(), BLOCK=1024)
    print("the same on a side stream: event ms, gap ms", timed(hidden, scratch.zero_))
    m = torch.randn(8192, 8192, device="cuda", dtype=torch.float16)
    bias = torch.randn(8192, device="cuda", dtype=torch.float16)
    spec = torch.nn.functional.gelu(m.float() @ m.float() + bias.float(), approximate="tanh").half()
    eager = lambda: torch.nn.functional.gelu(torch.addmm(bias, m, m), approximate="tanh")  # noqa: E731
    fused = lambda: torch._addmm_activation(bias, m, m, use_gelu=True)  # noqa: E731
    for name, fn in (("addmm + gelu", eager), ("_addmm_activation(use_gelu)", fused)):
        print(name, "ms", timed(fn, scratch.zero_)[0],
              "max err vs spec", float((fn().float() - spec.float()).abs().max()))
    xr = torch.randn(4096, 8192, device="cuda", dtype=torch.float16, requires_grad=True)
    w = torch.randn(8192, device="cuda", dtype=torch.float16, requires_grad=True)
    g = torch.randn_like(xr)
    for name, fn in (("eager rms", lambda: (xr.float() * torch.rsqrt(xr.float().pow(2).mean(-1, keepdim=True) + 1e-6)
                                              * w.float()).half()),
                     ("F.rms_norm", lambda: torch.nn.functional.rms_norm(xr, (8192,), w, 1e-6))):
        print(name, "fwd+bwd ms", timed(lambda: fn().backward(g), scratch.zero_)[0])


if __name__ == "__main__":
    main()
