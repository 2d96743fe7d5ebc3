"""The requests only an autograd puzzle sends, answered in its worker: record the learner's
``torch.autograd.Function`` on tensors without values, then replay what was recorded on the
grader's inputs. The worker lends its services (importing the learner's file, binding buffers,
running learner code, wording a failure, the bounds check); the registry in
:mod:`grader.sandbox.kinds` routes each request here.
"""
from __future__ import annotations

import os

import msgspec

from grader.channel import wire
from grader.channel.kinds import function as function_wire
from grader.course.dtypes import dtype_name, tensor_bytes


def record(worker, msg: function_wire.Record, blobs: list[bytes]):
    """Record the learner's autograd.Function on tensors without values (:mod:`.record`)."""
    from grader.sandbox.kinds.function.record import RecordingFailed
    from grader.sandbox.kinds.function.record import record as record_function
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
    (:mod:`.replay`). The output and the gradients go back to be judged. In the interpreter each
    launch's programs run batched (:mod:`grader.sandbox.batched`), unless the request asks for the
    serial interpreter."""
    import contextlib

    from grader.sandbox.kinds.function.replay import Disagrees
    from grader.sandbox.kinds.function.replay import replay as replay_program
    from grader.sandbox.run_request import launched
    path = os.path.abspath(msg.file)
    worker.use_allocator(msg.allocator)
    module = worker.module(path)
    whole, views = worker.tensors(msg.buffers, blobs)
    checker = None
    if worker.device == "cpu" and msg.check_bounds:
        checker = worker.bounds_checker(msg.buffers, whole, path, False, True)
        checker.install()
    allocated = []

    def allocate(tensor):
        allocated.append(tensor)
        if checker is not None:
            checker.allow(tensor)
    order = contextlib.nullcontext()
    if worker.device == "cpu" and not msg.serial:
        from grader.sandbox.batched.engine import Batched
        order = Batched(readonly=[(w.data_ptr(), w.data_ptr() + w.numel()) for w in whole],  # inputs, grad_output
                        fail_fast=checker is None, names=worker.names(msg.buffers, whole, allocated),
                        lines=worker.learner_line)
    disagrees = []

    def run():
        try:
            return replay_program(msg.program, views, worker.device, module, msg.config, allocate)
        except Disagrees as exc:
            disagrees.append(str(exc))
            return None
    with order as engine:
        result, error, printed, seconds = worker.run_learner(run, checker)
    launches = launched(engine)
    if error is not None:
        return function_wire.Replayed(seconds=seconds, printed=printed, launches=launches,
                                      failure=worker.failure_of(error, path, None)), []
    if disagrees:
        return function_wire.Replayed(seconds=seconds, printed=printed, launches=launches,
                                      disagrees=disagrees[0]), []
    returned, labels = result
    replayed, out = _replayed(worker, returned, labels, seconds, printed)
    return msgspec.structs.replace(replayed, launches=launches), out


def _replayed(worker, returned, labels, seconds: float, printed: str):
    torch = worker.torch
    described = tuple(wire.TensorInfo(tensor=True, shape=tuple(t.shape), dtype=dtype_name(t))
                      if isinstance(t, torch.Tensor) else wire.TensorInfo(tensor=False, type=t.type or "None")
                      for t in returned)
    out = [tensor_bytes(t) for t in returned if isinstance(t, torch.Tensor)]
    return function_wire.Replayed(seconds=seconds, printed=printed, returned=described,
                                  label="; ".join(labels)), out
