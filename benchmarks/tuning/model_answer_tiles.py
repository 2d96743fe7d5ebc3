"""Measures the model answers of puzzles 22, 26, 27, 31, 32 and 33 on a GPU at several tiles and
warps, within --budget (520 s by default): a finished tuning record, which chose the tiles the
solutions use; its figures are in docs/benchmarks.md ("Issue 23: model answers" and after).

Each kernel at several tiles and warps (and a few variants of its source), beside its baseline
and yardsticks, at the headline size of the puzzle's --bench.

    python benchmarks/tuning/model_answer_tiles.py [--old DIR] [--budget SECONDS] [--json OUT]
                                      [--only dropout,histogram,rmsnorm,fwd,bwd,step]

--old DIR: a folder with the solutions before the change (same file names), timed beside the
current ones, for the before -> after figures. Each time is triton.testing.do_bench's median,
the fastest of ROUNDS rounds, as --bench takes it (grader/sandbox/bench/run.py). The yardsticks:

* dropout, histogram: a device-to-device copy of the same bytes (read + written), at that size;
  for dropout also PyTorch's dropout, and two floors of the kernel's own: Philox alone (the
  same random numbers, nothing loaded) and the load/scale/store alone (no random numbers);
* RMS norm: PyTorch autograd through the spec; the step with the host (do_bench) and without
  (do_bench_cudagraph), and the host's time per step at a tiny size where the GPU idles;
* attention: SDPA on the same inputs (forward; backward alone; forward + backward).

The attention variants are the solutions' text with one change (see VARIANTS below).
"""
from __future__ import annotations

import argparse
import importlib.util
import itertools
import json
import statistics
import sys
import tempfile
import time
from pathlib import Path

import torch
import triton
import triton.language as tl
import triton.testing

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "solutions"))

from grader.sandbox.bench.run import device_copy, warm_up  # noqa: E402

ROUNDS = 2
RESULTS: list[dict] = []
DEVICE = "cuda"  # "cpu" with --smoke: the code paths in Triton's interpreter, at tiny sizes, untimed
ARGS = argparse.Namespace()
START = time.time()
_folder = Path(tempfile.mkdtemp())
_names = itertools.count()


def module(path: Path, name: str, replace=()):
    """The file at ``path`` as a module, with each (old, new) of ``replace`` substituted."""
    text = path.read_text()
    for old, new in replace:
        assert old in text, f"{path.name}: {old!r} not found"
        text = text.replace(old, new)
    file = _folder / f"{name}.py"
    file.write_text(text)
    spec = importlib.util.spec_from_file_location(name, file)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def solution(name: str, old: bool = False, replace=()):
    folder = Path(ARGS.old) if old else ROOT / "solutions"
    path = folder / name
    return module(path, ("old_" if old else "new_") + path.stem + str(next(_names)), replace) if path.exists() else None


def sized(real, small):
    return small if ARGS.smoke else real


def ms(fn, rounds=ROUNDS, **kw) -> float:
    if ARGS.smoke:
        fn()
        return 1.0
    return min(triton.testing.do_bench(fn, return_mode="median", **kw) for _ in range(rounds))


def copy_ms(traffic: int) -> float:
    half = max(1, traffic // 2)
    src = torch.empty(half, dtype=torch.uint8, device=DEVICE)
    dst = torch.empty_like(src)
    return ms(lambda: dst.copy_(src), rounds=3)


def left() -> float:
    return ARGS.budget - (time.time() - START)


def report(section: str, name: str, t: float, **extra) -> None:
    row = {"section": section, "name": name, "ms": t, **extra}
    RESULTS.append(row)
    more = "  ".join(f"{k}={v:.4g}" if isinstance(v, float) else f"{k}={v}" for k, v in extra.items())
    print(f"{section:10s} {name:58s} {t:9.4f} ms  {more}", flush=True)
    if ARGS.json:
        Path(ARGS.json).write_text(json.dumps(RESULTS, indent=1))


# ---- puzzle 27: dropout ------------------------------------------------------------------------
@triton.jit
def _philox_only(z_ptr, N0, T, SEED, P_PERCENT, B1: tl.constexpr):
    """Dropout's random numbers and keep-mask, written as 0/1: the Philox cost without x."""
    cols = tl.program_id(1) * B1 + tl.arange(0, B1)
    offsets = tl.program_id(0) * T + cols
    draws = tl.program_id(0) * tl.cdiv(T, 4) + tl.program_id(1) * (B1 // 4) + tl.arange(0, B1 // 4)
    r0, r1, r2, r3 = tl.rand4x(SEED, draws)
    u = tl.reshape(tl.join(tl.join(r0, r2), tl.join(r1, r3)), [B1])
    tl.store(z_ptr + offsets, tl.where(u > P_PERCENT / 100, 1.0, 0.0), mask=cols < T)


@triton.jit
def _scale_only(x_ptr, z_ptr, N0, T, SEED, P_PERCENT, B1: tl.constexpr):
    """Dropout's memory traffic and scaling without its random numbers."""
    cols = tl.program_id(1) * B1 + tl.arange(0, B1)
    offsets = tl.program_id(0) * T + cols
    x = tl.load(x_ptr + offsets, mask=cols < T, other=0.0).to(tl.float32)
    tl.store(z_ptr + offsets, x / (1 - P_PERCENT / 100), mask=cols < T)


def dropout() -> None:
    new, old = solution("puzzle27_dropout.py"), solution("puzzle27_dropout.py", old=True)
    for n0, t in sized(((4096, 8192), (16384, 4096), (4096, 1024)), ((4, 8192), (2, 3000))):
        x = torch.randn(n0, t, device=DEVICE, dtype=torch.float16)
        z = torch.empty_like(x)
        traffic = 2 * 2 * n0 * t
        copy = copy_ms(traffic)
        size = f"{n0}x{t}"
        report("dropout", f"{size} copy of the same bytes", copy)
        t_ms = ms(lambda: torch.nn.functional.dropout(x, 0.1, True))
        report("dropout", f"{size} torch.nn.functional.dropout", t_ms, of_copy=copy / t_ms)
        want = None
        configs = [(1024, 4), (1024, 8), (2048, 4), (2048, 8), (4096, 4), (4096, 8), (8192, 8)]
        if (n0, t) != sized((4096, 8192), (4, 8192)):
            configs = [(1024, 4), (2048, 4), (4096, 8)]
        for label, mod in (("before", old), ("after", new)):
            if mod is None:
                continue
            for b1, warps in (configs if label == "after" else [(1024, 4)]):
                def run(b1=b1, warps=warps):
                    mod.dropout_kernel[(n0, triton.cdiv(t, b1))](x, z, n0, t, 1234, 10, B1=b1, num_warps=warps)
                run()
                if label == "after":  # the solution before issue 23's second session drew another mask
                    if want is None:
                        want = z.clone()
                    assert torch.equal(z, want), f"dropout {label} B1={b1} differs"
                t_ms = ms(run)
                report("dropout", f"{size} {label} B1={b1} warps={warps}", t_ms, of_copy=copy / t_ms)
        for b1, warps in ((1024, 4), (4096, 8)):
            t_ms = ms(lambda: _philox_only[(n0, triton.cdiv(t, b1))](z, n0, t, 1234, 10, B1=b1, num_warps=warps))
            report("dropout", f"{size} floor: Philox + store only B1={b1} warps={warps}", t_ms, of_copy=copy / t_ms)
            t_ms = ms(lambda: _scale_only[(n0, triton.cdiv(t, b1))](x, z, n0, t, 1234, 10, B1=b1, num_warps=warps))
            report("dropout", f"{size} floor: load/scale/store only B1={b1} warps={warps}", t_ms, of_copy=copy / t_ms)


# ---- puzzle 26: histogram ----------------------------------------------------------------------
def histogram() -> None:
    new, old = solution("puzzle26_histogram.py"), solution("puzzle26_histogram.py", old=True)
    for n, nbins in sized(((1 << 24, 256), (1 << 24, 1024), (1 << 26, 256)), ((40000, 256), (40000, 1024))):
        x = torch.randint(-2**31, 2**31 - 1, (n,), dtype=torch.int32, device=DEVICE)
        want = torch.bincount((x & (nbins - 1)).long(), minlength=nbins).to(torch.int32)
        copy = copy_ms(4 * n + 4 * nbins)
        size = f"N={n} NBINS={nbins}"
        report("histogram", f"{size} copy of the same bytes", copy)
        t_ms = ms(lambda: torch.bincount(x & (nbins - 1), minlength=nbins))
        report("histogram", f"{size} torch.bincount", t_ms, of_copy=copy / t_ms)
        configs = [(2048, 4), (4096, 4), (4096, 8), (8192, 8), (8192, 16), (16384, 8), (16384, 16), (32768, 16)]
        if (n, nbins) != sized((1 << 24, 256), (40000, 256)):
            configs = [(4096, 8), (8192, 8), (16384, 16)]
        for label, mod in (("before", old), ("after", new)):
            if mod is None:
                continue
            for b0, warps in (configs if label == "after" else [(4096, 8)]):
                z = torch.zeros(nbins, dtype=torch.int32, device=DEVICE)

                def run(b0=b0, warps=warps, z=z):
                    mod.histogram_kernel[(triton.cdiv(n, b0),)](x, z, n, NBINS=nbins, B0=b0, num_warps=warps)
                run()
                assert torch.equal(z, want), f"histogram {label} B0={b0} wrong"
                t_ms = ms(run)
                report("histogram", f"{size} {label} B0={b0} warps={warps}", t_ms, of_copy=copy / t_ms)


# ---- puzzle 22: RMS norm -----------------------------------------------------------------------
class _Nothing(torch.autograd.Function):
    """Autograd's own host cost for a Python Function: the same allocations, no kernels."""
    @staticmethod
    def forward(ctx, x, w):
        ctx.save_for_backward(x, w)
        return torch.empty_like(x)

    @staticmethod
    def backward(ctx, grad_output):
        x, w = ctx.saved_tensors
        return torch.empty_like(x), torch.empty_like(w)


def _rms_spec(x, w):
    xf = x.float()
    return (xf * torch.rsqrt((xf * xf).mean(dim=-1, keepdim=True) + 1e-6) * w.float()).to(x.dtype)


def host_us(fn, calls=200, rounds=7) -> float:
    sync = torch.cuda.synchronize if DEVICE == "cuda" else (lambda: None)
    calls, rounds = sized((calls, rounds), (2, 1))
    fn()
    times = []
    for _ in range(rounds):
        sync()
        start = time.perf_counter()
        for _ in range(calls):
            fn()
        sync()
        times.append((time.perf_counter() - start) / calls * 1e6)
    return statistics.median(times)


def rmsnorm() -> None:
    new, old = solution("puzzle22_rms_norm.py"), solution("puzzle22_rms_norm.py", old=True)
    variants = {"PyTorch autograd (spec)": _rms_spec}
    if old is not None:
        variants["before"] = old.RMSNormFunc.apply
    variants["after"] = new.RMSNormFunc.apply
    # Host cost per step where the GPU idles, interleaved.
    xs = torch.randn(64, 1024, device=DEVICE, requires_grad=True)
    ws = torch.randn(1024, device=DEVICE, requires_grad=True)
    gs = torch.randn(64, 1024, device=DEVICE)

    def tiny(apply):
        def run():
            apply(xs, ws).backward(gs)
            xs.grad = ws.grad = None
        return run
    host = {name: [] for name in ["autograd.Function, no kernels", *variants]}
    for _ in range(3):
        host["autograd.Function, no kernels"].append(host_us(tiny(_Nothing.apply)))
        for name, apply in variants.items():
            host[name].append(host_us(tiny(apply)))
    for name, us in host.items():
        report("rmsnorm", f"host per step at 64x1024: {name}", min(us) / 1000, us=min(us))
    for rows, d in sized(((4096, 8192), (16384, 4096), (4096, 1024)), ((8, 8192), (3, 100))):
        x = torch.randn(rows, d, device=DEVICE, dtype=torch.float16, requires_grad=True)
        w = torch.randn(d, device=DEVICE, dtype=torch.float16, requires_grad=True)
        g = torch.randn(rows, d, device=DEVICE, dtype=torch.float16)
        traffic = 2 * 5 * rows * d + 2 * 2 * d + 2 * 4 * rows
        copy = copy_ms(traffic)
        report("rmsnorm", f"{rows}x{d} copy of the same bytes", copy)
        grads = {}
        for name, apply in variants.items():
            x.grad = w.grad = None
            apply(x, w).backward(g)
            grads[name] = (x.grad.clone(), w.grad.clone())
            x.grad = w.grad = None
            step = lambda apply=apply: apply(x, w).backward(g)  # noqa: E731
            eager = ms(step, rounds=3, grad_to_none=[x, w])
            graph = 1.0 if ARGS.smoke else min(triton.testing.do_bench_cudagraph(step, grad_to_none=[x, w])
                                               for _ in range(2))
            ref = grads["PyTorch autograd (spec)"]
            err = max(float((a.float() - b.float()).abs().max()) for a, b in zip(grads[name], ref))
            report("rmsnorm", f"{rows}x{d} step: {name}", eager, gpu_only_ms=graph, of_copy_gpu=copy / graph,
                   max_err=err)


_handles = {}


def _handle_launch(kernel, programs, args, config):
    """A launch through a kept compiled handle, as puzzle 15's solution launches (one
    specialisation here: the arguments never change)."""
    compiled = _handles.get(kernel)
    if compiled is None:
        compiled = _handles[kernel] = kernel.warmup(*args, grid=(programs,), **config)
    if compiled is None:  # the interpreter
        kernel[(programs,)](*args, **config)
        return
    compiled[(programs, 1, 1)](*args, *(v for k, v in config.items() if k != "num_warps"))


def rmsnorm_parts() -> None:
    """The solution's step taken apart: each kernel on the GPU beside a copy of its bytes, the
    backward's programs per SM, and the host's cost of each piece where the GPU idles."""
    new = solution("puzzle22_rms_norm.py")
    rows, d = sized((4096, 8192), (8, 8192))
    x = torch.randn(rows, d, device=DEVICE, dtype=torch.float16)
    w = torch.randn(d, device=DEVICE, dtype=torch.float16)
    g = torch.randn(rows, d, device=DEVICE, dtype=torch.float16)
    y, gx = torch.empty_like(x), torch.empty_like(x)
    rstd = torch.empty(rows, device=DEVICE, dtype=torch.float32)
    block, warps = triton.next_power_of_2(d), new._warps(triton.next_power_of_2(d))
    fwd = lambda: new.rms_norm_fwd[(rows,)](x, w, y, rstd, d, 1e-6, BLOCK_D=block, num_warps=warps)  # noqa: E731
    t_ms = ms(fwd, rounds=3)
    copy = copy_ms(2 * 2 * rows * d)
    report("rmsnorm", f"{rows}x{d} forward kernel", t_ms, of_copy=copy / t_ms)
    copy = copy_ms(2 * 3 * rows * d)
    sms = torch.cuda.get_device_properties(0).multi_processor_count if DEVICE == "cuda" else 4
    for per_sm in (1, 2, 4):
        for bwarps in sorted({warps, 8}):
            programs = min(rows, per_sm * sms)
            per_program = triton.cdiv(rows, programs)
            programs = triton.cdiv(rows, per_program)
            partial = torch.empty(programs, d, device=DEVICE, dtype=torch.float32)
            bwd = lambda: new.rms_norm_bwd[(programs,)](x, w, g, rstd, gx, partial, rows, d, per_program,  # noqa: E731
                                                        BLOCK_D=block, num_warps=bwarps)
            t_ms = ms(bwd, rounds=3)
            t_sum = ms(lambda: partial.sum(0).to(torch.float16), rounds=3)
            report("rmsnorm", f"{rows}x{d} backward kernel, {per_sm} programs per SM, warps={bwarps}", t_ms,
                   of_copy=copy / t_ms, partial_sum_ms=t_sum)
    # Host microseconds per call of each piece, at a tiny size.
    xs = torch.randn(64, 1024, device=DEVICE, requires_grad=True)
    ws = torch.randn(1024, device=DEVICE, requires_grad=True)
    gs = torch.randn(64, 1024, device=DEVICE)
    xd, wd = xs.detach(), ws.detach()
    ys, rs = torch.empty_like(xd), torch.empty(64, device=DEVICE)
    part = torch.empty(4, 1024, device=DEVICE)
    config = {"BLOCK_D": 1024, "num_warps": 4}
    pieces = {
        "Triton JIT launch kernel[grid](...)": lambda: new.rms_norm_fwd[(64,)](xd, wd, ys, rs, 1024, 1e-6, **config),
        "compiled-handle launch (warmup once, then handle[grid](...))": lambda: _handle_launch(
            new.rms_norm_fwd, 64, (xd, wd, ys, rs, 1024, 1e-6), config),
        "torch.empty_like": lambda: torch.empty_like(xd),
        "reshape(-1, d).contiguous()": lambda: xd.reshape(-1, 1024).contiguous(),
        "partial.sum(0).to(float16)": lambda: part.sum(0).to(torch.float16),
        "forward only (RMSNormFunc.apply, no grad)": lambda: new.RMSNormFunc.apply(xd, wd),
        "autograd.Function with no kernels, fwd + bwd": lambda: (_Nothing.apply(xs, ws).backward(gs),
                                                                 setattr(xs, "grad", None), setattr(ws, "grad", None)),
        "the solution's step, fwd + bwd": lambda: (new.RMSNormFunc.apply(xs, ws).backward(gs),
                                                   setattr(xs, "grad", None), setattr(ws, "grad", None)),
    }
    for name, fn in pieces.items():
        us = min(host_us(fn) for _ in range(3))
        report("rmsnorm", f"host per call: {name}", us / 1000, us=us)


# ---- puzzles 31, 32, 33: attention -------------------------------------------------------------
FWD_CONFIGS = [(128, 64, 8, 3), (128, 64, 8, 4), (128, 64, 4, 3), (128, 128, 8, 2), (128, 128, 8, 3),
               (64, 64, 4, 3), (64, 128, 4, 3)]
BWD_CONFIGS = [(64, 64, 8, 2), (64, 64, 8, 3), (64, 64, 4, 2), (64, 128, 8, 2), (128, 64, 8, 2), (128, 128, 8, 2)]
# The key program walks the queries, the query program the keys, in steps of half a block: 128
# keys x 64 queries and 128 queries x 64 keys, the shapes of the Triton tutorial's backward.
HALF_CONFIGS = [(128, 128, 8, 2), (128, 128, 8, 3), (128, 64, 8, 2), (64, 128, 8, 2)]
HALF_STEPS = [("qk_scale, D, BQ, MASKED", "qk_scale, D, BQ // 2, MASKED"),
              ("qk_scale, D, BK, MASKED", "qk_scale, D, BK // 2, MASKED")]
# D_i precomputed (by _delta below) and passed where o was: what a split backward saves.
DELTA_LOADED = [("d_i = tl.sum(do.to(tl.float32) * o.to(tl.float32), 1)",
                 "d_i = tl.load(o_ptr + lse_head + rows, mask=row_ok, other=0.0)")]
REVERSED = [("i = tl.program_id(0)\n    bh", "i = tl.num_programs(0) - 1 - tl.program_id(0)\n    bh")]


@triton.jit
def _delta(o_ptr, do_ptr, delta_ptr, NQ, D: tl.constexpr, BQ: tl.constexpr):
    rows = tl.program_id(0) * BQ + tl.arange(0, BQ)
    at = tl.program_id(1) * NQ * D + rows[:, None] * D + tl.arange(0, D)[None, :]
    o = tl.load(o_ptr + at, mask=rows[:, None] < NQ, other=0.0).to(tl.float32)
    do = tl.load(do_ptr + at, mask=rows[:, None] < NQ, other=0.0).to(tl.float32)
    tl.store(delta_ptr + tl.program_id(1) * NQ + rows, tl.sum(o * do, 1), mask=rows < NQ)


def _fwd(mod, q, k, v, o, lse, causal, cfg):
    bq, bk, warps, stages = cfg
    b, h, n, d = q.shape
    mod.attention_fwd_kernel[(triton.cdiv(n, bq), b * h)](q, k, v, o, lse, n, k.shape[2], D=d, BQ=bq, BK=bk,
                                                        CAUSAL=causal, num_warps=warps, num_stages=stages)


def _bwd(mod, q, k, v, o, lse, do, dq, dk, dv, causal, cfg):
    bq, bk, warps, stages = cfg
    b, h, n, d = q.shape
    nk = k.shape[2]
    mod.attention_bwd_kernel[(triton.cdiv(nk, bk) + triton.cdiv(n, bq), b * h)](
        q, k, v, o, lse, do, dq, dk, dv, n, nk, D=d, BQ=bq, BK=bk, CAUSAL=causal, num_warps=warps, num_stages=stages)


def _inputs(b, h, n, d, dtype, seed=0):
    g = torch.Generator(device=DEVICE).manual_seed(seed)
    return [torch.randn(b, h, n, d, device=DEVICE, dtype=dtype, generator=g) for _ in range(4)]


def attention_fwd() -> None:
    new, old = (solution("puzzle31_flash_attention_forward.py"),
                solution("puzzle31_flash_attention_forward.py", old=True))
    rev = solution("puzzle31_flash_attention_forward.py", replace=REVERSED)
    sizes = sized([((2, 16, 8192, 128), torch.bfloat16, 1), ((4, 16, 4096, 128), torch.float16, 0),
                   ((4, 32, 4096, 64), torch.bfloat16, 1), ((8, 16, 2048, 128), torch.bfloat16, 1)],
                  [((1, 1, 256, 128), torch.float16, 1), ((1, 1, 256, 64), torch.float16, 0)])
    for index, ((b, h, n, d), dtype, causal) in enumerate(sizes):
        q, k, v, _ = _inputs(b, h, n, d, dtype)
        o = torch.empty_like(q)
        lse = torch.empty(b, h, n, device=DEVICE, dtype=torch.float32)
        flops = 4 * b * h * n * n * d // (2 if causal else 1)
        size = f"{b}x{h}x{n} d{d} {str(dtype)[6:]} {'causal' if causal else 'full'}"
        want = torch.nn.functional.scaled_dot_product_attention(q, k, v, is_causal=bool(causal))
        sdpa = ms(lambda: torch.nn.functional.scaled_dot_product_attention(q, k, v, is_causal=bool(causal)))
        report("fwd", f"{size} SDPA", sdpa, tflops=flops / sdpa / 1e9)
        runs = [("before", old, [(128, 64, 8, 3)]), ("after", new, FWD_CONFIGS if index < 2 else FWD_CONFIGS[:5])]
        if causal and index == 0:
            runs.append(("after, programs in reverse", rev, [(128, 64, 8, 3), (128, 128, 8, 2), (128, 64, 8, 4)]))
        for label, mod, configs in runs:
            if mod is None:
                continue
            for cfg in configs:
                if left() < 60:
                    print("time budget: skipping", label, cfg, flush=True)
                    continue
                try:
                    _fwd(mod, q, k, v, o, lse, causal, cfg)
                except Exception as exc:  # a config that does not fit
                    print(f"fwd {label} {cfg}: {type(exc).__name__}: {str(exc)[:200]}", flush=True)
                    continue
                err = float((o.float() - want.float()).abs().max())
                t_ms = ms(lambda: _fwd(mod, q, k, v, o, lse, causal, cfg))
                report("fwd", f"{size} {label} {cfg}", t_ms, tflops=flops / t_ms / 1e9, of_sdpa=sdpa / t_ms,
                       max_err=err)


def attention_bwd() -> dict:
    new, old = (solution("puzzle32_flash_attention_backward.py"),
                solution("puzzle32_flash_attention_backward.py", old=True))
    half = solution("puzzle32_flash_attention_backward.py", replace=HALF_STEPS)
    delta = solution("puzzle32_flash_attention_backward.py", replace=DELTA_LOADED)
    half_delta = solution("puzzle32_flash_attention_backward.py", replace=HALF_STEPS + DELTA_LOADED)
    fwd = solution("puzzle31_flash_attention_forward.py")
    best = {}
    sizes = sized([((4, 16, 4096, 128), 0), ((4, 32, 2048, 64), 0), ((4, 16, 4096, 128), 1)],
                  [((1, 1, 256, 64), 0), ((1, 1, 128, 64), 1)])
    for index, ((b, h, n, d), causal) in enumerate(sizes):
        q, k, v, do = _inputs(b, h, n, d, torch.float16, seed=1)
        o = torch.empty_like(q)
        lse = torch.empty(b, h, n, device=DEVICE, dtype=torch.float32)
        _fwd(fwd, q, k, v, o, lse, causal, (128, 64, 8, 3))
        dq, dk, dv = (torch.empty_like(t) for t in (q, k, v))
        flops = 10 * b * h * n * n * d // (2 if causal else 1)
        size = f"{b}x{h}x{n} d{d} fp16 {'causal' if causal else 'full'}"
        leaves = [t.clone().requires_grad_() for t in (q, k, v)]
        ref = torch.nn.functional.scaled_dot_product_attention(*leaves, is_causal=bool(causal))
        want = torch.autograd.grad(ref, leaves, do, retain_graph=True)
        sdpa_bwd = ms(lambda: torch.autograd.grad(ref, leaves, do, retain_graph=True))
        report("bwd", f"{size} SDPA backward alone", sdpa_bwd, tflops=flops / sdpa_bwd / 1e9)
        step = ms(lambda: torch.nn.functional.scaled_dot_product_attention(
            *leaves, is_causal=bool(causal)).backward(do), grad_to_none=leaves)
        report("bwd", f"{size} SDPA forward + backward", step, tflops=(flops * 14 // 10) / step / 1e9)
        deltas = torch.empty_like(lse)
        t_delta = ms(lambda: _delta[(triton.cdiv(n, 128), b * h)](o, do, deltas, n, D=d, BQ=128))
        report("bwd", f"{size} D_i preprocessing kernel alone", t_delta)
        runs = [("before", old, [(64, 64, 8, 2)]), ("after", new, BWD_CONFIGS if index == 0 else BWD_CONFIGS[:4]),
                ("after, half steps", half, HALF_CONFIGS if index == 0 else HALF_CONFIGS[:2])]
        if index == 0:
            runs += [("after, D_i loaded (+ preprocessing)", delta, BWD_CONFIGS[:4]),
                     ("after, half steps, D_i loaded (+ preprocessing)", half_delta, HALF_CONFIGS[:2])]
        for label, mod, configs in runs:
            if mod is None:
                continue
            saved = deltas if "loaded" in label else o
            for cfg in configs:
                if left() < 60:
                    print("time budget: skipping", label, cfg, flush=True)
                    continue
                try:
                    _bwd(mod, q, k, v, saved, lse, do, dq, dk, dv, causal, cfg)
                except Exception as exc:
                    print(f"bwd {label} {cfg}: {type(exc).__name__}: {str(exc)[:200]}", flush=True)
                    continue
                err = max(float((a.float() - w.float()).abs().max()) for a, w in zip((dq, dk, dv), want))
                t_ms = ms(lambda: _bwd(mod, q, k, v, saved, lse, do, dq, dk, dv, causal, cfg))
                if "loaded" in label:
                    t_ms += t_delta
                report("bwd", f"{size} {label} {cfg}", t_ms, tflops=flops / t_ms / 1e9, of_sdpa=sdpa_bwd / t_ms,
                       max_err=err)
                key = (index, label)
                if err < 0.05 and (key not in best or t_ms < best[key][1]):
                    best[key] = (cfg, t_ms)
    return best


def _function(fwd_mod, bwd_mod, fwd_cfg, bwd_cfg):
    """Puzzle 33's wrapper around the given kernels and tiles (what its solution does)."""
    class Attention(torch.autograd.Function):
        @staticmethod
        def forward(ctx, q, k, v):
            o = torch.empty_like(q)
            lse = q.new_empty(q.shape[:-1], dtype=torch.float32)
            _fwd(fwd_mod, q, k, v, o, lse, 0, fwd_cfg)
            ctx.save_for_backward(q, k, v, o, lse)
            return o

        @staticmethod
        def backward(ctx, grad_output):
            q, k, v, o, lse = ctx.saved_tensors
            dq, dk, dv = (torch.empty_like(t) for t in (q, k, v))
            _bwd(bwd_mod, q, k, v, o, lse, grad_output.contiguous(), dq, dk, dv, 0, bwd_cfg)
            return dq, dk, dv
    return Attention.apply


def attention_step(best: dict) -> None:
    """Puzzle 33's step (forward + backward, non-causal fp16) with the tiles found above."""
    new_f, new_b = solution("puzzle31_flash_attention_forward.py"), solution("puzzle32_flash_attention_backward.py")
    half = solution("puzzle32_flash_attention_backward.py", replace=HALF_STEPS)
    old_f = solution("puzzle31_flash_attention_forward.py", old=True)
    old_b = solution("puzzle32_flash_attention_backward.py", old=True)
    variants = []
    if old_f is not None and old_b is not None:
        variants.append(("before", _function(old_f, old_b, (128, 64, 8, 3), (64, 64, 8, 2))))
    prefix = sized("4x16x4096 d128 float16 full after (", "1x1x256 d64 float16 full after (")
    fwd_rows = [r for r in RESULTS if r["section"] == "fwd" and r["name"].startswith(prefix)]
    fwd_cfgs = [tuple(int(x) for x in r["name"].split("(")[1].rstrip(")").split(",")) for r in
                sorted(fwd_rows, key=lambda r: r["ms"])[:2]] or [(128, 64, 8, 3)]
    for label, mod in (("after", new_b), ("after, half steps", half)):
        if (0, label) in best:
            for fcfg in fwd_cfgs:
                variants.append((f"{label} fwd {fcfg} bwd {best[(0, label)][0]}",
                                 _function(new_f, mod, fcfg, best[(0, label)][0])))
    for b, h, n, d in sized(((4, 16, 4096, 128), (8, 16, 1024, 128)), ((1, 1, 256, 64),)):
        q, k, v, do = _inputs(b, h, n, d, torch.float16, seed=2)
        leaves = [t.requires_grad_() for t in (q, k, v)]
        flops = 14 * b * h * n * n * d
        size = f"{b}x{h}x{n} d{d} fp16 full"
        sdpa = ms(lambda: torch.nn.functional.scaled_dot_product_attention(*leaves).backward(do), rounds=3,
                  grad_to_none=leaves)
        report("step", f"{size} SDPA (autograd)", sdpa, tflops=flops / sdpa / 1e9)
        for label, apply in variants:
            if left() < 30:
                continue
            t_ms = ms(lambda: apply(*leaves).backward(do), rounds=3, grad_to_none=leaves)
            report("step", f"{size} {label}", t_ms, tflops=flops / t_ms / 1e9, of_sdpa=sdpa / t_ms)


SWEEP_CONFIGS = [(128, 64, 8, 3), (128, 128, 8, 3), (64, 64, 4, 3), (64, 64, 4, 2), (64, 128, 4, 2), (128, 64, 8, 2)]


def attention_fwd_sweep() -> None:
    """Puzzle 31's forward at each size of its --bench sweep: the candidate tiles and SDPA timed in
    interleaved rounds (SDPA's own time moves by a few % between runs), with the programs in
    launch order and reversed (the longest causal rows first)."""
    new = solution("puzzle31_flash_attention_forward.py")
    rev = solution("puzzle31_flash_attention_forward.py", replace=REVERSED)
    sizes = sized([(2, 16, 8192, 128), (8, 16, 2048, 128), (4, 16, 4096, 128), (4, 32, 4096, 64)], [(1, 1, 256, 64)])
    for index, (b, h, n, d) in enumerate(sizes):
        q, k, v, _ = _inputs(b, h, n, d, torch.bfloat16 if not ARGS.smoke else torch.float16)
        o = torch.empty_like(q)
        lse = torch.empty(b, h, n, device=DEVICE, dtype=torch.float32)
        flops = 2 * b * h * n * n * d
        size = f"{b}x{h}x{n} d{d} causal"
        want = torch.nn.functional.scaled_dot_product_attention(q, k, v, is_causal=True)
        timers = {"SDPA": lambda: torch.nn.functional.scaled_dot_product_attention(q, k, v, is_causal=True)}
        configs = SWEEP_CONFIGS if index == 0 else SWEEP_CONFIGS[:4]
        for label, mod in (("", new), ("reversed ", rev)):
            for cfg in (configs if not label else configs[:3]):
                try:
                    _fwd(mod, q, k, v, o, lse, 1, cfg)
                except Exception as exc:
                    print(f"fwd {label}{cfg}: {type(exc).__name__}: {str(exc)[:200]}", flush=True)
                    continue
                assert float((o.float() - want.float()).abs().max()) < 0.05, (label, cfg)
                timers[f"{label}{cfg}"] = (lambda mod, cfg: lambda: _fwd(mod, q, k, v, o, lse, 1, cfg))(mod, cfg)
        taken = {name: [] for name in timers}
        for _ in range(sized(3, 1)):
            for name, fn in timers.items():
                taken[name].append(ms(fn, rounds=1))
        sdpa = min(taken["SDPA"])
        report("fwd", f"{size} SDPA (interleaved)", sdpa, tflops=flops / sdpa / 1e9)
        for name, values in taken.items():
            if name != "SDPA":
                report("fwd", f"{size} {name} (interleaved)", min(values), tflops=flops / min(values) / 1e9,
                       of_sdpa=sdpa / min(values))


def attention_final() -> None:
    """The solutions as committed: puzzle 32's kernel at a few tiles (its own steps of half a
    block), and puzzle 33's FlashAttentionFunc with the tiles its file sets."""
    bwd = solution("puzzle32_flash_attention_backward.py")
    fwd = solution("puzzle31_flash_attention_forward.py")
    for (b, h, n, d), causal in sized([((4, 16, 4096, 128), 0), ((8, 16, 1024, 128), 0), ((4, 32, 2048, 64), 0),
                                       ((4, 16, 4096, 128), 1)], [((1, 1, 256, 64), 0)]):
        q, k, v, do = _inputs(b, h, n, d, torch.float16, seed=1)
        o = torch.empty_like(q)
        lse = torch.empty(b, h, n, device=DEVICE, dtype=torch.float32)
        _fwd(fwd, q, k, v, o, lse, causal, (128, 64, 8, 3))
        dq, dk, dv = (torch.empty_like(t) for t in (q, k, v))
        flops = 10 * b * h * n * n * d // (2 if causal else 1)
        size = f"{b}x{h}x{n} d{d} fp16 {'causal' if causal else 'full'}"
        leaves = [t.clone().requires_grad_() for t in (q, k, v)]
        ref = torch.nn.functional.scaled_dot_product_attention(*leaves, is_causal=bool(causal))
        want = torch.autograd.grad(ref, leaves, do, retain_graph=True)
        sdpa_bwd = ms(lambda: torch.autograd.grad(ref, leaves, do, retain_graph=True))
        report("bwd", f"{size} SDPA backward alone", sdpa_bwd, tflops=flops / sdpa_bwd / 1e9)
        for cfg in [(128, 128, 8, 3), (128, 128, 8, 2), (128, 128, 8, 4), (64, 64, 4, 2), (64, 64, 4, 3)]:
            if left() < 40:
                continue
            try:
                _bwd(bwd, q, k, v, o, lse, do, dq, dk, dv, causal, cfg)
            except Exception as exc:
                print(f"bwd {cfg}: {type(exc).__name__}: {str(exc)[:200]}", flush=True)
                continue
            err = max(float((a.float() - w.float()).abs().max()) for a, w in zip((dq, dk, dv), want))
            t_ms = ms(lambda: _bwd(bwd, q, k, v, o, lse, do, dq, dk, dv, causal, cfg))
            report("bwd", f"{size} the solution {cfg}", t_ms, tflops=flops / t_ms / 1e9, of_sdpa=sdpa_bwd / t_ms,
                   max_err=err)
    func = solution("puzzle33_flash_attention_autograd.py")
    for b, h, n, d in sized(((4, 16, 4096, 128), (8, 16, 1024, 128)), ((1, 1, 256, 64),)):
        q, k, v, do = _inputs(b, h, n, d, torch.float16, seed=2)
        leaves = [t.requires_grad_() for t in (q, k, v)]
        flops = 14 * b * h * n * n * d
        size = f"{b}x{h}x{n} d{d} fp16 full"
        sdpa = ms(lambda: torch.nn.functional.scaled_dot_product_attention(*leaves).backward(do), rounds=3,
                  grad_to_none=leaves)
        report("step", f"{size} SDPA (autograd)", sdpa, tflops=flops / sdpa / 1e9)
        t_ms = ms(lambda: func.FlashAttentionFunc.apply(*leaves).backward(do), rounds=3, grad_to_none=leaves)
        report("step", f"{size} the solution's FlashAttentionFunc", t_ms, tflops=flops / t_ms / 1e9,
               of_sdpa=sdpa / t_ms)


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--old", default=str(ROOT / "solutions"))
    parser.add_argument("--only", default="dropout,histogram,rmsnorm,fwd,bwd,step",
                        help="also: final (the committed attention solutions), "
                             "sweep (puzzle 31 at its sweep's sizes), parts (RMS norm's step taken apart)")
    parser.add_argument("--budget", type=float, default=520)
    parser.add_argument("--json")
    parser.add_argument("--smoke", action="store_true", help="run on the CPU in the interpreter, tiny sizes")
    parser.parse_args(namespace=ARGS)
    if ARGS.smoke:
        global DEVICE
        DEVICE = "cpu"
    else:
        copy = device_copy("cuda")
        warm_up()
        print(f"{torch.cuda.get_device_name()}, torch {torch.__version__}, triton {triton.__version__}, "
              f"copy {copy['gb_per_s']:.0f} GB/s (1 GiB)", flush=True)
    only = ARGS.only.split(",")
    best = {}
    for name, fn in (("dropout", dropout), ("histogram", histogram), ("rmsnorm", rmsnorm), ("fwd", attention_fwd),
                     ("bwd", attention_bwd), ("final", attention_final), ("sweep", attention_fwd_sweep),
                     ("parts", rmsnorm_parts)):
        if name in only and left() > 60:
            result = fn()
            if name == "bwd":
                best = result
    if "step" in only and left() > 30:
        attention_step(best)
    print(f"done in {time.time() - START:.0f} s", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
