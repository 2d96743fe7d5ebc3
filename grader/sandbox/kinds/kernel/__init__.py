"""The worker's side of a kernel puzzle: the learner's ``@triton.jit`` kernel, unwrapped from its
autotune and heuristics layers (:mod:`grader.sandbox.launch`), benchmarked and profiled. What no
other kind owns loads as this one: unwrapping says whether it is a kernel."""
from __future__ import annotations

import inspect

from grader.channel import wire, wire_measure
from grader.sandbox.kinds.kind import WorkerKind
from grader.sandbox.launch import NotGenuine, parameters, python_function, unwrap


def kernel_params(fn) -> list:
    """The kernel's parameters, in order, and which are ``tl.constexpr``."""
    from grader.channel.binding import Param
    params = []
    for p in inspect.signature(fn).parameters.values():
        ann = p.annotation
        constexpr = ann is not inspect.Parameter.empty and "constexpr" in (
            ann if isinstance(ann, str) else getattr(ann, "__name__", repr(ann)))
        params.append(Param(p.name, bool(constexpr)))
    return params


def _load(worker, kernel, name: str):
    try:
        layers = unwrap(kernel, name)
    except NotGenuine as exc:
        return wire.Failure("signature", error="not_jit", reason=str(exc))
    fn = layers.base.fn
    params, defaults = parameters(layers)
    return wire.Loaded(params=tuple(wire.KernelParam(n, c) for n, c in params),
                       provided=tuple(sorted(layers.provided)),
                       defaults={k: v for k, v in defaults.items() if isinstance(v, (int, float, bool))},
                       configs=tuple(layers.config_labels()), heuristics=tuple(sorted(layers.heuristics)),
                       line=inspect.getsourcelines(fn)[1] if inspect.getsourcefile(fn) else None)


def _bench(puzzle, kernel, msg: wire_measure.Bench, blobs: list[bytes], device: str):
    from grader.sandbox.bench.run import bench_kernel
    return bench_kernel(puzzle, kernel, kernel_params(python_function(kernel)), msg, blobs, device)


def _profile(puzzle, kernel, msg: wire_measure.Profile, filename: str, module):
    from grader.sandbox.perf.run import profile_kernel
    return profile_kernel(puzzle, kernel, kernel_params(python_function(kernel)), msg, filename, module)


# anything not a class: unwrapping it says whether it is a @triton.jit kernel
KIND = WorkerKind("kernel", owns=None, load=_load, ran=lambda kernel: kernel, bench=_bench, profile=_profile)
