"""The worker's side of each kind of puzzle: how a learner's object is loaded and benchmarked,
and which kernel a failure's compile error is read from. The grader's side is
:mod:`grader.judge.kinds`, which this registry must not import (it names the graders).

A Load names the file and the object, not the puzzle's kind: the object says which kind's it
is (a class is an autograd Function's). A Bench names the puzzle file, whose kind is looked up.
A kind whose cases need requests of their own (an autograd puzzle's record and replay, a Helion
case) answers them in its wing, ``kinds/<kind>/``: the worker routes them by ``answers``.
"""
from __future__ import annotations

import inspect
from dataclasses import dataclass, field
from typing import Callable

from grader.channel import wire
from grader.channel import wire_measure
from grader.channel.kinds import function as function_wire
from grader.channel.kinds import helion as helion_wire
from grader.sandbox.launch import NotGenuine, parameters, python_function, unwrap
from grader.sandbox.warmup import WarmStep


@dataclass(frozen=True)
class WorkerKind:
    name: str  # as grader.course.puzzle.KINDS names it
    owns: Callable[[object], bool] | None  # whether a learner's object is this kind's; None: what no other kind owns
    load: Callable  # (the worker, the object, its name) -> wire.Loaded, or a wire.Failure that says why not
    ran: Callable[[object], object]  # the object -> the kernel a compile error is read from; None: found from the error
    bench: Callable  # (puzzle, the object, the wire_measure.Bench request, blobs, device) -> (result, blobs)
    profile: Callable  # (puzzle, the object, the wire_measure.Profile request, its file, its module) -> counts (--perf)
    # (the worker's device) -> None: what must be set before the learner's file is first imported
    # (a Load that names the kind); None: nothing
    before_import: Callable[[str], None] | None = None
    # the requests only this kind sends: request type -> (the worker, the request, blobs) -> (reply, blobs)
    answers: dict[type[wire.Request], Callable] = field(default_factory=dict)
    warm: tuple[WarmStep, ...] = ()


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


def _load_kernel(worker, kernel, name: str):
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


def _bench_kernel(puzzle, kernel, msg: wire_measure.Bench, blobs: list[bytes], device: str):
    from grader.sandbox.bench.run import bench_kernel
    return bench_kernel(puzzle, kernel, kernel_params(python_function(kernel)), msg, blobs, device)


def _profile_kernel(puzzle, kernel, msg: wire_measure.Profile, filename: str, module):
    from grader.sandbox.perf.run import profile_kernel
    return profile_kernel(puzzle, kernel, kernel_params(python_function(kernel)), msg, filename, module)


def _profile_function(puzzle, cls, msg: wire_measure.Profile, filename: str, module):
    from grader.sandbox.perf.run import profile_function
    return profile_function(puzzle, cls, msg, filename, module)


def _load_function(worker, cls, name: str):
    # A compile worker has no torch: there, any class loads (only its launches are compiled).
    if worker.device != "compile" and not issubclass(cls, worker.torch.autograd.Function):
        return wire.Failure("signature", error="not_function")
    return wire.Loaded(params=(), line=None)


def _bench_function(puzzle, cls, msg: wire_measure.Bench, blobs: list[bytes], device: str):
    from grader.sandbox.bench.run import bench_function
    return bench_function(puzzle, cls, msg, blobs, device)


def _record_function(worker, msg: function_wire.Record, blobs: list[bytes]):
    from grader.sandbox.kinds.function.answers import record
    return record(worker, msg, blobs)


def _replay_function(worker, msg: function_wire.Replay, blobs: list[bytes]):
    from grader.sandbox.kinds.function.answers import replay
    return replay(worker, msg, blobs)


def _run_helion(worker, msg: helion_wire.HelionRun, blobs: list[bytes]):
    """One case of a Helion puzzle: compiled by Helion, then run (kinds.helion.run); on a CPU in
    Helion's interpreter, its tunables at their defaults (kinds.helion.ref_mode)."""
    from grader.sandbox.kinds.helion.run import run
    if worker.device == "cpu":
        from grader.sandbox.kinds.helion.ref_mode import tunables_take_defaults
        tunables_take_defaults()
    return run(worker, msg, blobs)


def _warm_fake_tensors() -> None:
    from grader.sandbox.kinds.function import warm
    warm()


def _warm_helion() -> None:
    from grader.sandbox.kinds.helion import warm
    warm()


def _load_helion(worker, kernel, name: str):
    from grader.sandbox.kinds.helion.run import load
    return load(worker, kernel, name)


def _helion_before_import(device: str) -> None:
    from grader.sandbox.kinds.helion.run import before_import
    before_import(device)


def _owns_helion(obj) -> bool:
    from grader.sandbox.kinds.helion.run import is_helion_kernel  # reads the class: helion is not imported
    return is_helion_kernel(obj)


def _bench_helion(puzzle, kernel, msg: wire_measure.Bench, blobs: list[bytes], device: str):
    from grader.sandbox.kinds.helion.bench import bench_helion
    return bench_helion(puzzle, kernel, msg, blobs, device)


def _profile_helion(puzzle, kernel, msg: wire_measure.Profile, filename: str, module):
    raise NotImplementedError("--perf counts a Triton kernel's accesses in Triton's interpreter; a Helion "
                              "kernel's are not counted yet: run --verbose to see the Triton it becomes")


KINDS: dict[str, WorkerKind] = {kind.name: kind for kind in (
    # anything not a class: unwrapping it says whether it is a @triton.jit kernel
    WorkerKind("kernel", owns=None, load=_load_kernel, ran=lambda kernel: kernel, bench=_bench_kernel,
               profile=_profile_kernel),
    WorkerKind("function", owns=lambda obj: isinstance(obj, type), load=_load_function, ran=lambda cls: None,
               bench=_bench_function, profile=_profile_function,
               answers={function_wire.Record: _record_function, function_wire.Replay: _replay_function},
               warm=(WarmStep("fake_tensors", _warm_fake_tensors, asked=("cpu",), idle=("cpu",)),)),
    WorkerKind("helion", owns=_owns_helion, load=_load_helion, ran=lambda kernel: None, bench=_bench_helion,
               profile=_profile_helion, before_import=_helion_before_import, answers={helion_wire.HelionRun: _run_helion},
               warm=(WarmStep("helion", _warm_helion, asked=("cpu", "compile")),)),
)}


def warm_steps() -> tuple[WarmStep, ...]:
    """Every kind's warm-up steps (grader.sandbox.warmup runs them in the zygote)."""
    return tuple(step for kind in KINDS.values() for step in kind.warm)


def for_object(obj) -> WorkerKind:
    """The kind whose object ``obj`` is (a learner's ``kernel`` as its file defines it)."""
    return next((kind for kind in KINDS.values() if kind.owns is not None and kind.owns(obj)),
                next(kind for kind in KINDS.values() if kind.owns is None))


def named(name: str) -> WorkerKind:
    """The kind a puzzle file names; a clear error where the worker knows none of that name."""
    try:
        return KINDS[name]
    except (KeyError, TypeError):
        raise ValueError(f"the worker knows no puzzle kind {name!r}: it knows {', '.join(map(repr, KINDS))}") \
            from None
