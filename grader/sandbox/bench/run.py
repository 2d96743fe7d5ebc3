"""Timing a learner's kernel or autograd function, one size of the sweep per request (runs
inside a worker: on a GPU, or on the CPU in Triton's interpreter, the test path).

The grader plans each size as it plans a graded case (``grader.judge.plan``: the same inputs,
with the puzzle's ``mantissa_bits``), once per input set, and sends the sets; this side makes
the learner's calls and the baselines' into :class:`grader.sandbox.bench.loop.Subject` s, and
:class:`grader.sandbox.bench.loop.Measure` times them and keeps what the checked calls wrote,
for the grader, not this process, to judge.

Each size also times a device-to-device copy moving the same number of bytes, the yardstick
its GB/s are set against. An autograd function is also timed replayed as a CUDA graph, which
leaves out the host's work: the gap between the two figures is the step's host overhead (a
figure for advice only: a graph's replays are not checked).
"""
from __future__ import annotations

import json
import os
import time
from pathlib import Path

import torch

from grader.channel import wire_measure
from grader.channel.binding import Param, bind
from grader.course.dtypes import DTYPES, dtype_name, tensor_bytes
from grader.course.puzzle import Puzzle, with_case_values
from grader.sandbox.bench import guard
from grader.sandbox.bench.loop import METHOD, STATISTIC, Measure, Subject
from grader.sandbox.launch import parameters, unwrap

__all__ = ["METHOD", "STATISTIC", "bench_function", "bench_kernel", "device_copy"]
CACHE = Path(os.environ.get("XDG_CACHE_HOME", Path.home() / ".cache")) / "triton-puzzles" / "copy-bandwidth.json"
_measured: dict = {}  # this process's copy bandwidth, once measured or read


def _nothing(s: int) -> None:
    pass


def _copy(measure: Measure, nbytes: int, device: str) -> float:
    """The median time of a copy moving ``nbytes`` (half read, half written), timed as a baseline is."""
    half = max(1, nbytes // 2)
    src = torch.empty(half, dtype=torch.uint8, device=device)
    dst = torch.empty_like(src)
    return measure.time_alone(Subject(lambda: dst.copy_(src), _nothing))


def device_copy(device: str) -> dict:
    """The device's own copy bandwidth (bytes read + written per second) over 1 GiB (16 MiB on
    the CPU), measured once per worker; a GPU's is cached across runs, by its name."""
    if _measured:
        return dict(_measured)
    name = torch.cuda.get_device_name() if device == "cuda" else "cpu"
    cached = {}
    if device == "cuda":
        try:
            cached = json.loads(CACHE.read_text())
        except (OSError, ValueError):
            cached = {}
    if cached.get(name, {}).get("statistic") == STATISTIC:
        _measured.update(cached[name] | {"cached": True})
        warm_up()
        return dict(_measured)
    nbytes = 2 * (4 << 28) if device == "cuda" else 16 << 20
    ms = _copy(Measure(device, 1), nbytes, device)
    entry = {"gb_per_s": nbytes / (ms * 1e-3) / 1e9, "bytes": nbytes, "ms": ms, "statistic": STATISTIC,
             "measured": time.strftime("%Y-%m-%d %H:%M")}
    if device == "cuda":
        try:
            CACHE.parent.mkdir(parents=True, exist_ok=True)
            CACHE.write_text(json.dumps(cached | {name: entry}, indent=1))
        except OSError:
            pass
    _measured.update(entry | {"cached": False})
    return dict(_measured)


def warm_up(seconds: float = 0.5) -> None:
    """Keep the GPU copying for a moment, so that the first size is not timed on a GPU that
    has just woken from idle clocks (the sizes after it, and PyTorch after yours, would be)."""
    src = torch.empty(1 << 26, device="cuda")  # 256 MiB
    dst = torch.empty_like(src)
    start = guard.perf()
    while guard.perf() - start < seconds:
        for _ in range(20):
            dst.copy_(src)
        torch.cuda.synchronize()


def input_sets(msg: wire_measure.Bench, blobs: list[bytes], device: str) -> list[list[torch.Tensor]]:
    """The grader's input sets (``msg.sets`` of them, one after another in the blobs), on ``device``."""
    count = len(msg.inputs)
    sets = []
    for s in range(max(1, msg.sets)):
        tensors = []
        for info, blob in zip(msg.inputs, blobs[s * count:(s + 1) * count]):
            dtype = getattr(torch, info.dtype)
            flat = torch.frombuffer(bytearray(blob), dtype=dtype) if blob else torch.empty(0, dtype=dtype)
            tensors.append(flat.reshape(info.shape).to(device))
        sets.append(tensors)
    return sets


def _poison(out: torch.Tensor, name: str, zeroed):
    """What re-fills an output before each call: the grader's NaN (its own payload, which
    arithmetic does not make) where floats can hold it, so that an element never written shows;
    zeros for the outputs the puzzle starts as zeros (``Puzzle.zeroed``: atomics accumulate)."""
    known = DTYPES.get(dtype_name(out))
    if name in zeroed or known is None or known.nan_view is None:
        return out.zero_
    bits, view = known.nan_bits, out.view(getattr(torch, known.nan_view))
    return lambda: view.fill_(bits)


def _host_timed(kernel_call, quantiles=None):
    """An autotuner's benchmark in the interpreter (the test path): one call, by the host's clock."""
    start = guard.perf()
    kernel_call()
    ms = (guard.perf() - start) * 1e3
    return [ms] * len(quantiles) if quantiles else ms


def raw(values: list[torch.Tensor]) -> tuple[list[dict], list[bytes]]:
    """What goes back to the grader: each tensor's dtype and shape, and its bytes."""
    described, blobs = [], []
    for value in values:
        described.append({"dtype": dtype_name(value), "shape": list(value.shape)})
        blobs.append(tensor_bytes(value))
    return described, blobs


def _baselines(puzzle: Puzzle, values: dict, subject) -> dict:
    """The baseline as a Subject (the Bench's baseline, else the spec; one that ``prepares``
    returns what is timed), and ``torch.compile`` of it where the puzzle's Bench asks for one
    (on a GPU). ``subject(fn)``: the Subject timing ``fn`` on the baselines' own inputs."""
    bench = puzzle.bench
    chosen = bench.baseline or puzzle.spec

    def baseline(*xs):  # keyword-only parameters (a mode such as CAUSAL, a variant's EPS) get their values
        return with_case_values(chosen, xs, {**puzzle.variant_values, **values})
    subjects = {"baseline_ms": subject(baseline, bench.baseline_prepares)}
    if bench.compile_baseline and torch.cuda.is_available():
        subjects["compiled_ms"] = subject(torch.compile(baseline), False)
    return subjects


def bench_kernel(puzzle: Puzzle, kernel, params: list[Param], msg: wire_measure.Bench, blobs: list[bytes],
                 device: str = "cuda") -> tuple[dict, list]:
    """One size: the kernel on the grader's inputs, its output buffers re-filled before each call."""
    sets = input_sets(msg, blobs, device)
    work = [x.clone() for x in sets[0]]
    outputs = [torch.empty(o.shape, dtype=getattr(torch, o.dtype), device=device) for o in msg.outputs]
    poisons = [_poison(o, info.name, puzzle.zeroed) for o, info in zip(outputs, msg.outputs)]
    values = dict(msg.values)
    layers = unwrap(kernel, puzzle.kernel)
    provided = layers.provided  # an autotuner's configs give some constexprs, and the grid follows them
    _, defaults = parameters(layers)  # a defaulted parameter (``eps: tl.constexpr = 1e-5``) keeps it, as in grading
    binding = bind(params, [None] * (len(work) + len(outputs)), values, puzzle.kernel, provided=provided,
                   defaults=defaults)
    grid = tuple(msg.grid) if not provided else (lambda meta: tuple(int(g) for g in puzzle.grid(
        {**values, **{k: v for k, v in meta.items() if isinstance(v, int)}})))  # the interpreter wraps the rest
    if device == "cpu" and layers.autotuner is not None:  # the interpreter has no driver to time configs with
        layers.autotuner.__dict__["do_bench"] = _host_timed

    def call():
        kernel[grid](*work, *outputs, **binding.named, **puzzle.bench.launch)

    def refresh(s: int):
        for into, source in zip(work, sets[s]):
            into.copy_(source)
        for poison in poisons:
            poison()

    def snapshot():
        return (*raw(outputs), [])

    theirs = [x.clone() for x in sets[0]]

    def subject(fn, prepares: bool):
        timed = fn(*theirs) if prepares else (lambda: fn(*theirs))
        return Subject(timed, _nothing)
    measure = Measure(device, len(sets), msg.calls)
    result, out = measure.run(Subject(call, refresh, snapshot), _baselines(puzzle, values, subject))
    return {"sizes": msg.sizes, "blocks": dict(puzzle.bench.blocks), "copy_ms": _copy(measure, msg.traffic, device),
            **result}, out


def bench_function(puzzle: Puzzle, cls, msg: wire_measure.Bench, blobs: list[bytes],
                   device: str = "cuda") -> tuple[dict, list]:
    """One size of forward + backward of ``cls`` against autograd through the Bench's baseline (else
    the spec): the gradients ``cls`` gave go back; ``gpu_ms`` is the same step replayed as a CUDA
    graph (``msg.graphs`` false skips that, after a capture has failed at an earlier size)."""
    sets = input_sets(msg, blobs, device)
    leaves = [x.clone().requires_grad_(x.is_floating_point()) for x in sets[0][:-1]]
    grad = sets[0][-1].clone()

    def ours():
        cls.apply(*leaves).backward(grad)

    def refresh(s: int):
        with torch.no_grad():
            for leaf, source in zip(leaves, sets[s]):
                leaf.copy_(source)
            grad.copy_(sets[s][-1])
        for leaf in leaves:
            leaf.grad = None

    def snapshot():
        # A gradient that is not a plain tensor (a subclass could compute when read, after the
        # timer) is not read: zeros go back in its place, and the watch names it.
        grads = [x.grad for x in leaves]
        odd = [f"the gradient of input {i}" for i, g in enumerate(grads)
               if g is not None and type(g) is not torch.Tensor]
        plain = [g if g is not None and type(g) is torch.Tensor else torch.zeros_like(x) for g, x in zip(grads, leaves)]
        return (*raw(plain), odd)

    their_leaves = [x.clone().requires_grad_(x.is_floating_point()) for x in sets[0][:-1]]
    their_grad = sets[0][-1].clone()

    def none_grads(s: int):
        for leaf in their_leaves:
            leaf.grad = None

    def subject(fn, prepares: bool):
        return Subject(lambda: fn(*their_leaves).backward(their_grad), none_grads)
    baselines = _baselines(puzzle, dict(msg.values), subject)
    graphs = {"ms": (ours, leaves), "baseline_ms": (baselines["baseline_ms"].call, their_leaves)}
    measure = Measure(device, len(sets), msg.calls)
    result, out = measure.run(Subject(ours, refresh, snapshot), baselines,
                              after=(lambda: _graphs(msg, graphs, measure)) if device == "cuda" else None)
    return {"sizes": msg.sizes, "blocks": {}, "copy_ms": _copy(measure, msg.traffic, device), **result}, out


def _graphs(msg: wire_measure.Bench, steps: dict, measure: Measure) -> dict:
    """The step and autograd's replayed as CUDA graphs: the GPU's work without the host's.
    ``steps``: "ms" (the learner's) and "baseline_ms", each (the step, its leaves)."""
    gpu = {"gpu_ms": None, "baseline_gpu_ms": None,
           "gpu_note": "" if msg.graphs else "not timed as a CUDA graph: the capture failed at an earlier size"}
    if not msg.graphs:
        return gpu
    try:
        for name, (step, leaves) in steps.items():
            gpu[name.replace("ms", "gpu_ms")] = measure.graph_ms(step, [x for x in leaves if x.requires_grad])
    except Exception as exc:  # a wrapper that synchronises or reads values cannot be captured
        gpu["gpu_ms"] = gpu["baseline_gpu_ms"] = None
        gpu["gpu_note"] = f"not timed as a CUDA graph: {type(exc).__name__}: {str(exc).splitlines()[0][:160]}"
    return gpu
