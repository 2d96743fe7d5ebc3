"""The worker's answer to a ``Run`` request: one case of a kernel run on the fenced buffers the
grader sent, once per autotuning config, and again with the programs in reverse order.

It is apart from :mod:`grader.sandbox.worker` because it is the one request that orders the
interpreter's programs (batched, in order or reversed: :mod:`grader.sandbox.batched`), stands in
for inline assembly and runs again to see whether the outputs depend on it, and writes down what
the bounds check saw for the grader; the worker keeps what every request shares (loading, the
buffers as tensors, the bounds checker, running learner code and wording its failure).
:class:`AnswersRun` is one of the worker's bases and uses those through ``self``.
"""
from __future__ import annotations

import contextlib
import os

from grader.channel import wire


class AnswersRun:
    """The ``Run`` request, answered by the worker (its ``kernel``, ``tensors``,
    ``bounds_checker``, ``run_learner`` and ``failure_of``)."""

    def op_run(self, msg: wire.Run, blobs: list[bytes]):
        """Run one case, possibly several times: once per autotuning config the tuner could pick
        (on every device: see tuning), and in the interpreter once more with the programs in
        reverse order (a race shows as a different result). Each run starts from the bytes the
        grader sent; each run's bytes go back to be judged."""
        from grader.sandbox.launch import apply_heuristics, describe_config, unwrap
        from grader.sandbox.recorded_launch import TensorArgument
        from grader.sandbox.tuning import tuned_configs, tuner_skips
        path = os.path.abspath(msg.file)
        kernel = self.kernel(path, msg.kernel)
        layers = unwrap(kernel, msg.kernel)
        self.use_allocator(msg.allocator)
        grid = self._grid(msg)
        interpreted = self.device == "cpu"
        configs, error, printed, seconds = list(layers.configs), None, "", 0.0
        if getattr(layers.autotuner, "early_config_prune", None) is not None:  # the learner's Python: captured
            configs, error, printed, seconds = self.run_learner(
                lambda: tuned_configs(layers, msg.buffers, dict(msg.named), self.torch), None)
        if error is not None:  # the learner's early_config_prune raised, or kept nothing
            failure = self.failure_of(error, path, kernel)
            if getattr(error, "line", None) and failure.line is None:
                failure = wire.Failure("exception", error=failure.error, line=error.line, source=error.source)
            return wire.Ran(runs=(wire.KernelRun(label="its early_config_prune", reversed=False, seconds=seconds,
                                                 printed=printed, failure=failure),)), []
        plans = [(describe_config(c), c, False) for c in configs] or [("", None, False)]
        reorder = interpreted and msg.reorder and self._programs(msg, layers) > 1
        runs, out = [], []
        for index, (label, config, reverse) in enumerate(plans):
            run, checker, whole, error = self._one_run(msg, blobs, layers, kernel, grid, path, label, config,
                                                       reverse, traced=msg.trace and not out, serial=msg.serial)
            if layers.heuristics and config is None and error is None:  # what they gave, for the report
                tensors = {b.param: TensorArgument(b.dtype) for b in msg.buffers if b.param}  # `args["x"] is None`
                given = apply_heuristics(layers, {**tensors, **msg.values, **dict(msg.named)})
                run["heuristics"] = {k: v for k, v in given.items() if isinstance(v, (int, bool))}
            if error is not None and config is not None and not interpreted and tuner_skips(error) \
                    and (runs or index < len(plans) - 1):  # as the tuner would, unless every config fails so
                continue
            runs.append(wire.KernelRun(**run))
            if run["failure"] is not None:
                break
            out += [w.cpu().numpy().tobytes() for w in whole]
            if reorder and len(runs) == 1:
                # Again in reverse order, where the order can matter: a program read an output
                # or stored over another's element (measured: half the interpreter's time saved).
                if checker is None or checker.log.outputs_read or checker.overlaps:
                    plans.append((plans[0][0], plans[0][1], True))
        return wire.Ran(runs=tuple(runs)), out

    def _one_run(self, msg: wire.Run, blobs, layers, kernel, grid, path: str, label: str, config, reverse: bool,
                 traced: bool, serial: bool):
        """One run of the case on fresh buffers: (the run's fields, its bounds checker, its storages,
        what the learner's code raised)."""
        from grader.sandbox.tuning import launch
        whole, views = self.tensors(msg.buffers, blobs)
        checker = None
        interpreted = self.device == "cpu"
        if interpreted and (msg.check_bounds or msg.trace):
            checker = self.bounds_checker(msg.buffers, whole, path, traced, msg.check_bounds)
            checker.install()
        named = dict(msg.named)
        watch = self._unwritten_watch(msg.buffers, whole) if interpreted and not msg.accesses_only else None
        with self.programs_run(reverse, serial, whole, msg.buffers, traced, checker, msg.accesses_only) as order, \
                self._standing_in(1) as stand:
            try:
                _, error, printed, seconds = self.run_learner(lambda: launch(layers, grid, views, named, config),
                                                              checker)
            finally:
                if watch is not None:
                    watch.uninstall()
        run = {"label": label, "reversed": reverse, "seconds": seconds, "printed": printed,
               "failure": None if error is None else self.failure_of(error, path, kernel),
               "launches": launched(order)}
        if watch is not None:
            run["unwritten_reads"] = wire.convert(watch.reads(), tuple[wire.EarlyRead, ...])
        if stand is not None and stand.used:  # inline PTX, stood in for: graded only if nothing depends on it
            run["failure"] = self._stood_in(stand, run["failure"], whole, path, msg, blobs,
                                            lambda views2: launch(layers, grid, views2, dict(msg.named), config),
                                            reverse, serial)
        if checker is not None:  # the bounds check writes down plain values
            run["overlaps"] = wire.convert(checker.overlaps, tuple[wire.Overlap, ...])
            run["early_reads"] = wire.convert(checker.early_reads, tuple[wire.EarlyRead, ...])
            run["crossings"] = wire.convert(checker.log.crossings, tuple[wire.Crossing, ...])
            run["atomics"] = checker.log.atomics
            if checker.trace is not None:
                run["trace"] = wire.convert(checker.trace.to_json(), wire.Trace)
        return run, checker, whole, error

    def _unwritten_watch(self, buffers: tuple[wire.BufferSpec, ...], whole):
        """The run's outputs watched for a read before any store reached the element, installed over
        the bounds check's hooks where it has them (grader.sandbox.unwritten_reads)."""
        from triton.runtime import interpreter

        from grader.sandbox.unwritten_reads import UnwrittenReads, Watched
        outputs = [Watched(spec.name, storage.data_ptr() + spec.guard, spec.nbytes,
                           self.torch.empty((), dtype=getattr(self.torch, spec.dtype)).element_size(),
                           tuple(spec.shape))
                   for spec, storage in zip(buffers, whole) if spec.role == "output"]
        watch = UnwrittenReads(outputs, interpreter.interpreter_builder, self.learner_line)
        watch.install()
        return watch

    def _standing_in(self, seed: int):
        """In the interpreter, inline assembly stood in for under ``seed`` (interpreter.filling)."""
        if self.device != "cpu":
            return contextlib.nullcontext()
        from grader.sandbox.interpreter.filling import standing_in
        return standing_in(seed)

    def _stood_in(self, stand, failure, whole, path: str, msg: wire.Run, blobs, run, reverse: bool, serial: bool):
        """A run in which inline assembly was stood in for: its failure, unchanged where the case
        runs the same under a second stand-in (every buffer equal, bit for bit: the outputs do not
        depend on the assembly), else the interpreter's limit, naming the assembly and its line."""
        import linecache

        what, stack = stand.used[0]
        line = next((n for f, n in stack if f == path), None)
        source = linecache.getline(path, line).strip() if line else ""
        if failure is None:
            again, views = self.tensors(msg.buffers, blobs)
            checker = None
            if msg.check_bounds:  # the accesses under the second stand-in are checked too
                checker = self.bounds_checker(msg.buffers, again, path, False, True)
                checker.install()
            with self.programs_run(reverse, serial, again, msg.buffers, False), self._standing_in(2):
                _, error, _, _ = self.run_learner(lambda: run(views), checker)
            if error is None and (msg.accesses_only or all(a.cpu().numpy().tobytes() == b.cpu().numpy().tobytes()
                                                           for a, b in zip(whole, again))):
                return None
            why = "and the outputs depend on what it computes" if error is None else \
                f"and with another stand-in for its values the run failed ({self.failure_of(error, path, None).kind})"
        else:
            why = f"and with a stand-in for its values the run failed ({failure.kind}: {failure.error[:200]})"
        return wire.Failure("interpreter_limit", error=f"{what}, {why}", line=line, source=source)

    def programs_run(self, reverse: bool, serial: bool, whole, buffers, traced: bool, checker=None,
                     accesses_only: bool = False):
        """How the interpreter runs a launch's programs: batched, in order or reversed, with the
        case's inputs read-only (:mod:`grader.sandbox.batched`); one after another where the run
        is traced (the pictures record program by program) or ``serial`` asks for the serial
        interpreter. Nothing to order beside a GPU."""
        if self.device != "cpu":
            return contextlib.nullcontext()
        if traced or serial:
            from grader.sandbox.launch import program_order
            return program_order(reverse)
        from grader.sandbox.batched.engine import Batched
        inputs = [(w.data_ptr(), w.data_ptr() + w.numel()) for spec, w in zip(buffers, whole) if spec.role == "input"]
        return Batched(reverse=reverse, readonly=inputs, findings=checker.findings if checker is not None else None,
                       fail_fast=checker is None or accesses_only, names=self.names(buffers, whole),
                       lines=self.learner_line)

    def _grid(self, msg: wire.Run):
        """The launch grid as a function of the launch's values: autotuning and heuristics may
        choose the block sizes it depends on. The function comes from the course's puzzle."""
        from grader.course.loader import load_puzzle
        puzzle = load_puzzle(msg.puzzle_file)
        values = dict(msg.values)

        def grid(meta):
            merged = {**values, **{k: v for k, v in meta.items() if isinstance(v, int)}}
            return tuple(int(g) for g in puzzle.grid(merged))
        return grid

    def _programs(self, msg: wire.Run, layers) -> int:
        import math
        try:
            return math.prod(self._grid(msg)(dict(msg.named)))
        except Exception:  # the grid needs a value only a config gives: assume several
            return 2


def launched(order) -> tuple:
    """What a run's engine says of each launch (nothing for the serial interpreter or a GPU)."""
    return tuple(wire.Launched(grid=launch.grid, programs=launch.programs, runs=launch.runs,
                               serial=launch.serial or "", crossed=launch.crossed)
                 for launch in getattr(order, "launches", ()))
