"""The worker's side of an autograd puzzle: the learner's ``torch.autograd.Function`` recorded on
tensors without values (record), then replayed on the grader's inputs, operators and kernels only
(replay)."""
from __future__ import annotations

from grader.channel import wire, wire_measure
from grader.channel.kinds import function as function_wire
from grader.sandbox.kinds.kind import WorkerKind
from grader.sandbox.warmup import WarmStep


def warm() -> None:
    """Fake tensors' lazy imports and first dispatch, which a recording pays (2 s measured), once
    in the zygote (grader.sandbox.warmup)."""
    import torch
    from torch._subclasses.fake_tensor import FakeTensorMode
    with FakeTensorMode():
        x = torch.empty_strided((4, 8), (8, 1))
        (x.reshape(-1).new_empty(3) + 1).sum(0).to(torch.float16)


def _load(worker, cls, name: str):
    # A compile worker has no torch: there, any class loads (only its launches are compiled).
    if worker.device != "compile" and not issubclass(cls, worker.torch.autograd.Function):
        return wire.Failure("signature", error="not_function")
    return wire.Loaded(params=(), line=None)


def _bench(puzzle, cls, msg: wire_measure.Bench, blobs: list[bytes], device: str):
    from grader.sandbox.bench.run import bench_function
    return bench_function(puzzle, cls, msg, blobs, device)


def _profile(puzzle, cls, msg: wire_measure.Profile, filename: str, module):
    from grader.sandbox.perf.run import profile_function
    return profile_function(puzzle, cls, msg, filename, module)


def _record(worker, msg: function_wire.Record, blobs: list[bytes]):
    from grader.sandbox.kinds.function.answers import record
    return record(worker, msg, blobs)


def _replay(worker, msg: function_wire.Replay, blobs: list[bytes]):
    from grader.sandbox.kinds.function.answers import replay
    return replay(worker, msg, blobs)


KIND = WorkerKind("function", owns=lambda obj: isinstance(obj, type), load=_load, ran=lambda cls: None,
                  bench=_bench, profile=_profile,
                  answers={function_wire.Record: _record, function_wire.Replay: _replay},
                  warm=(WarmStep(function_wire.FunctionWarmStep.FAKE_TENSORS, warm, asked=("cpu",), idle=("cpu",)),))
