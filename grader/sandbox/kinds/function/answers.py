"""The requests only an autograd puzzle sends, answered in its worker: record the learner's
``torch.autograd.Function`` on tensors without values, then replay what was recorded on the
grader's inputs. The worker lends its services (importing the learner's file, binding buffers,
running learner code, wording a failure, the bounds check); the registry in
:mod:`grader.sandbox.kinds` routes each request here.
"""
from __future__ import annotations

import os

from grader.channel import wire
from grader.channel.kinds import function as function_wire
from grader.course.dtypes import dtype_name, tensor_bytes


def record(worker, msg: function_wire.Record, blobs: list[bytes]):
    """Record the learner's autograd.Function on tensors without values (:mod:`.record`)."""
    from grader.sandbox.kinds.function.record import RecordingFailed, record as record_function
    from grader.sandbox.learner_import import learner_files
    path = os.path.abspath(msg.file)
    os.environ.pop("TRITON_INTERPRET", None)  # launches are written down, never run: as on a GPU
    cls = worker.kernel(path, msg.kernel)
    if not (isinstance(cls, type) and issubclass(cls, worker.torch.autograd.Function)):
        return wire.Failure("signature", error="not_function"), []
    device = "cuda" if worker.device == "cuda" else "cpu"
    files = {f: "" if f == path else os.path.basename(f) for f in learner_files()}
    seen, error, printed, seconds = worker.run_learner(
        lambda: record_function(cls, worker.modules[path], files, msg.buffers, device), None)
    if error is None:
        try:
            program = wire.convert(seen, function_wire.Program)
        except wire.WireError as exc:
            error = exc
    if error is not None:
        phase, host = (error.phase, error.host) if isinstance(error, RecordingFailed) else ("forward", None)
        cause = error.__cause__ if isinstance(error, RecordingFailed) else error
        if isinstance(cause, ImportError) and "torch" in str(cause):  # torch's own machinery broke
            return wire.Failure("error", error=f"recording needs torch's fake tensors, which fail to import "
                                f"here ({cause}): run `python -m grader doctor`"), []
        return function_wire.Recorded(seconds=seconds, printed=printed, failure=worker.failure_of(cause, path, None),
                             host=host, phase=phase), []
    return function_wire.Recorded(seconds=seconds, printed=printed, program=program), []


def replay(worker, msg: function_wire.Replay, blobs: list[bytes]):
    """Replay a recorded program on the grader's inputs, operators and kernels only
    (:mod:`.replay`). The output and the gradients go back to be judged. With ``msg.sample``, in
    the interpreter, a sample of each launch's programs runs (:func:`_replay_sampled`)."""
    path = os.path.abspath(msg.file)
    worker.use_allocator(msg.allocator)
    if worker.device == "cpu" and msg.sample is not None:
        return _replay_sampled(worker, msg, blobs, path)
    reply, result = _replay_once(worker, msg, blobs, path)
    if reply is not None:
        return reply, []
    return _replayed(worker, *result)


def _replay_once(worker, msg: function_wire.Replay, blobs: list[bytes], path: str, chain=None, axes=None):
    """(the failed reply, None) or (None, (returned tensors, labels, seconds, printed)). With
    ``chain`` (:mod:`.chain_sampling`), a sample of each launch's programs runs, along ``axes``;
    its launches are counted in ``chain.counted``."""
    import contextlib

    from grader.sandbox.kinds.function.replay import Disagrees, replay as replay_program
    from grader.sandbox.sampling import sampled_grid
    module = worker.module(path)
    whole, views = worker.tensors(msg.buffers, blobs)
    checker = None
    if worker.device == "cpu" and (msg.check_bounds or chain is not None):
        checker = worker.bounds_checker(msg.buffers, whole, path, False, True)
        checker.install()
    allocate = checker.allow if checker else None
    if chain is not None:
        checker.chain, chain.decode = chain, checker._decode
        for spec, tensor in zip(msg.buffers, views):
            chain.add(tensor, True, f"`{spec.name}`")

        def allocate(tensor):
            checker.allow(tensor)
            chain.add(tensor, False, f"a tensor of shape {tuple(tensor.shape)} your code allocated")
    disagrees = []

    def run():
        try:
            return replay_program(msg.program, views, worker.device, module, msg.config, allocate, chain)
        except Disagrees as exc:
            disagrees.append(str(exc))
            return None
    order = contextlib.nullcontext() if chain is None else sampled_grid(msg.sample, axes)
    with order as counted:
        result, error, printed, seconds = worker.run_learner(run, checker)
    if chain is not None:
        chain.counted = counted.launches
    if error is not None:
        return function_wire.Replayed(seconds=seconds, printed=printed,
                                      failure=worker.failure_of(error, path, None)), None
    if disagrees:
        return function_wire.Replayed(seconds=seconds, printed=printed, disagrees=disagrees[0]), None
    return None, (*result, seconds, printed)


def _replay_sampled(worker, msg: function_wire.Replay, blobs: list[bytes], path: str):
    """A replay of a sample of each launch's programs: along every grid axis, else along all but
    axis 0 (FlashAttention's backward reads every query block's rows of the forward's output,
    so only its heads can be sampled); where neither stands, the reply says why, and the
    grader replays every program (:mod:`.chain_sampling`)."""
    import math

    import msgspec

    from grader.sandbox.kinds.function.chain_sampling import ChainLog, SampleFalls
    from grader.sandbox.kinds.function.replay import grid_of
    from grader.sandbox.sampling import planned
    falls, spent, said = [], 0.0, ""
    grids = [grid_of(step, msg.config) for step in msg.program.launches()]
    for axes in (None, frozenset({1, 2})):
        if sum(planned(g, msg.sample, axes) for g in grids) >= sum(math.prod(g) for g in grids):
            continue  # a sample of every program: the grader runs them all, as it does when none stands
        chain = ChainLog()
        reply, result = _replay_once(worker, msg, blobs, path, chain, axes)
        seconds = reply.seconds if reply is not None else result[2]
        if chain.foreign is not None:  # another program's store read: a failure, however the sample ends
            sampled = wire.convert({"foreign_reads": [chain.foreign]}, function_wire.SampledChain)
            return function_wire.Replayed(seconds=spent + seconds, printed=said, sampled=sampled), []
        if reply is not None and chain.fell is None:  # failed for a reason of its own
            return reply, []
        spent += seconds
        try:
            if reply is not None:
                raise SampleFalls(chain.fell)
            returned, labels, _, printed = result
            outcome = chain.outcome(returned, chain.counted)
        except SampleFalls as exc:
            falls.append(str(exc))
            said += reply.printed if reply is not None else result[3]
            continue
        sampled = wire.convert({"axes": sorted(axes or (0, 1, 2)), **outcome}, function_wire.SampledChain)
        replayed, out = _replayed(worker, returned, labels, spent, said + printed)
        return msgspec.structs.replace(replayed, sampled=sampled), out
    return function_wire.Replayed(seconds=spent, printed=said,
                                  sampled=function_wire.SampledChain(falls=tuple(falls))), []


def _replayed(worker, returned, labels, seconds: float, printed: str):
    torch = worker.torch
    described = tuple(wire.TensorInfo(tensor=True, shape=tuple(t.shape), dtype=dtype_name(t))
                      if isinstance(t, torch.Tensor) else wire.TensorInfo(tensor=False, type=t.type or "None")
                      for t in returned)
    out = [tensor_bytes(t) for t in returned if isinstance(t, torch.Tensor)]
    return function_wire.Replayed(seconds=seconds, printed=printed, returned=described,
                                  label="; ".join(labels)), out
