"""A worker: the process that runs learner code, forked for one puzzle by :mod:`.zygote`.

It holds no verdict. It loads a learner's file, calls the kernel on the fenced buffers the
grader sent, and sends the bytes back; the grader decides what they mean. A kernel that
corrupts memory or hangs takes down only this process, and the process ends with its puzzle.

A ``cpu`` worker runs the Triton interpreter (its zygote set ``TRITON_INTERPRET=1`` before
triton was imported). GPU compile checks run in ``compile`` workers of their own: once the
interpreter has run a kernel, it leaves ``triton.language`` patched, and compiling in that
process fails. The answers to ``Run`` and ``Compile`` are the worker's bases, each in a module
of its own (:mod:`.run_request`, :mod:`.compile_request`).
"""
from __future__ import annotations

import functools
import hashlib
import inspect
import os
import sys
import time
import traceback

from grader.channel import wire, wire_measure
from grader.channel.protocol import FROM_GRADER, MAX_MESSAGE, ChannelClosed, MessageTooLarge, Reader, write_message
from grader.course.dtypes import DTYPES
from grader.sandbox import kinds
from grader.sandbox.compile_request import AnswersCompile
from grader.sandbox.learner_code import (
    captured_output,
    compile_error_line,
    exception_chain,
    learner_frame,
    root_cause,
    said,
)
from grader.sandbox.run_request import AnswersRun
from grader.source.wrapped import python_function


def prepare(device: str, warm=()):
    """What every worker of ``device`` needs, done once in the zygote before it forks any: the
    imports (torch after TRITON_INTERPRET is set), and the finder that imports learner files as
    their definitions only, with builtin min/max of their compiled (elementwise) meaning in the
    interpreter; and the ``warm`` steps the grader asked for. Returns the zygote's
    :class:`~grader.sandbox.warmup.Warmth`: what is left to warm."""
    import warnings
    warnings.filterwarnings("ignore", message=r"tl\.make_block_ptr is deprecated")  # the statements say so
    if device != "compile":  # compile checks need triton only, which loads in 0.2 s
        import torch  # noqa: F401
    import triton  # noqa: F401
    import triton.runtime.interpreter  # noqa: F401

    from grader.sandbox.launch import compiled_builtins
    from grader.sandbox.learner_import import install
    if device == "cpu":  # the interpreter computes as an sm_90 GPU does (docs/interpreter-vs-gpu.md),
        # patches triton.language once per launch rather than on every helper call, and runs a
        # launch's programs together (docs/batched-engine.md)
        from grader.sandbox.batched import setup as batched
        from grader.sandbox.interpreter.grid_limits import install_limits
        from grader.sandbox.interpreter.semantics import install as follow_gpu
        from grader.sandbox.interpreter.speed import install as patch_once_per_launch
        follow_gpu()
        patch_once_per_launch()
        install_limits()  # a grid or num_warps a GPU refuses is refused here too
        batched.install()
        install({**compiled_builtins(), **batched.learner_globals()})
    else:
        install(None)
    if device != "compile":  # --bench's clock and watch, captured before any learner code runs
        import grader.sandbox.bench.guard  # noqa: F401
    from grader.sandbox import warmup
    return warmup.prepare(device, warm, kinds.warm_steps())


def _package_versions(puzzle) -> dict:
    """The version of the package the puzzle's kind needs (its spec's: helion), beside torch's and
    triton's, where it needs one."""
    import importlib.metadata

    from grader.course.kinds import SPECS
    package = SPECS[puzzle.kind].package
    try:
        return {package: importlib.metadata.version(package)} if package else {}
    except (importlib.metadata.PackageNotFoundError, ValueError):
        return {}


class Worker(AnswersRun, AnswersCompile):
    def __init__(self, device: str, out_fd: int) -> None:
        self.device = device
        self.out_fd = out_fd
        self.modules: dict[str, object] = {}
        if device != "compile":
            import torch
            self.torch = torch
        import triton
        self.triton = triton
        self._allocator_on = False
        self._compiled: set = set()  # specialisations op_compile has compiled, each once

    def hello(self) -> None:
        write_message(self.out_fd, wire.header(wire.Ready(self.device)))

    # ---- loading ---------------------------------------------------------------------------
    def module(self, path: str):
        path = os.path.abspath(path)
        if path not in self.modules:
            name = "_learner_" + hashlib.sha1(path.encode()).hexdigest()[:12]
            def quietly(execute):
                with captured_output():
                    execute()

            from grader.sandbox.learner_import import import_learner
            module = import_learner(path, name, run=quietly)
            self.modules[path] = module
        return self.modules[path]

    def kernel(self, path: str, name: str):
        module = self.module(path)
        if not hasattr(module, name):
            return None
        return getattr(module, name)

    def is_jit(self, kernel) -> bool:
        from triton.runtime.interpreter import InterpretedFunction
        from triton.runtime.jit import KernelInterface
        return isinstance(kernel, (KernelInterface, InterpretedFunction))

    def op_load(self, msg: wire.Load, blobs: list[bytes]):
        path = os.path.abspath(msg.file)
        kind = kinds.named(msg.kind) if msg.kind else None
        if kind is not None and kind.before_import is not None and path not in self.modules:
            kind.before_import(self.device)
        try:
            kernel = self.kernel(path, msg.kernel)
        except BaseException as exc:
            line, source = learner_frame(exc, path)
            if isinstance(exc, SyntaxError):
                line, source = exc.lineno, (exc.text or "").strip()
            return wire.Failure("exception", error=said(exc), line=line,
                                source=source), []
        if kernel is None:
            module = self.modules[path]
            defined = sorted(n for n, v in vars(module).items() if self.is_jit(v))
            return wire.Failure("not_found", defined=tuple(defined)), []
        return (kind or kinds.for_object(kernel)).load(self, kernel, msg.kernel), []  # else the object says its kind

    def use_allocator(self, wanted: bool) -> None:
        """Kernels that build tensor descriptors on the device need scratch memory from an
        allocator. Set it only for them: with an allocator set, every launch of every kernel
        pays for a call into it (measured: 0.23 ms -> 0.57 ms for puzzle 15's step on an H200)."""
        if self.device != "cuda" or wanted == self._allocator_on or not hasattr(self.triton, "set_allocator"):
            return
        if wanted:
            torch = self.torch
            self.triton.set_allocator(lambda size, alignment, stream: torch.empty(size, dtype=torch.int8,
                                                                                  device="cuda"))
        else:
            from triton.runtime import _allocation
            self.triton.set_allocator(_allocation.NullAllocator())
        self._allocator_on = wanted

    # ---- running ---------------------------------------------------------------------------
    def tensors(self, buffers: tuple[wire.BufferSpec, ...], blobs: list[bytes]):
        torch = self.torch
        if len(blobs) != len(buffers) or any(len(raw) != spec.total for spec, raw in zip(buffers, blobs)):
            raise wire.WireError(f"{len(blobs)} blobs of {[len(b) for b in blobs]} bytes for buffers of "
                                 f"{[spec.total for spec in buffers]}")
        whole, views = [], []
        for spec, raw in zip(buffers, blobs):
            storage = torch.frombuffer(bytearray(raw), dtype=torch.uint8)
            if self.device == "cuda":
                storage = storage.cuda()
            data = storage[spec.guard:spec.guard + spec.nbytes]
            view = data.view(getattr(torch, spec.dtype)).as_strided(spec.shape, spec.strides)
            whole.append(storage)
            views.append(view)
        return whole, views

    def run_learner(self, call, checker):
        """Run learner code with its output captured; the bounds check (if any) is removed after.
        Returns (result, exception or None, printed text, seconds)."""
        start = time.perf_counter()
        printed: list[str] = []
        try:
            with captured_output() as printed:
                try:
                    result = call()
                    if self.device == "cuda":
                        self.torch.cuda.synchronize()
                finally:
                    if checker is not None:
                        checker.uninstall()
        except BaseException as exc:  # the learner's code may raise anything
            return None, exc, printed[0] if printed else "", time.perf_counter() - start
        return result, None, printed[0] if printed else "", time.perf_counter() - start

    def op_bench(self, msg: wire_measure.Bench, blobs: list[bytes]):
        """Time the learner's kernel (or autograd function) at one size of the puzzle's sweep,
        on the inputs the grader planned; what it wrote goes back for the grader to judge. A cpu
        worker times in the interpreter with the host's clock: the test path, never a figure."""
        from grader.course.loader import load_puzzle
        from grader.sandbox.bench.run import METHOD, device_copy
        if self.device == "compile":
            return wire.Failure("error", error="benchmarks need a CUDA device"), []
        puzzle = load_puzzle(msg.puzzle_file)
        if msg.variant:  # the learner's values of its free constants: the baseline's too
            puzzle = puzzle.with_variant(msg.variant)
        path = os.path.abspath(msg.file)
        kind = kinds.named(puzzle.kind)
        if kind.before_import is not None and path not in self.modules:
            kind.before_import(self.device)
        kernel = self.kernel(path, puzzle.kernel)
        self.use_allocator("make_tensor_descriptor" in puzzle.requires)
        try:
            copy = device_copy(self.device)
            result, out = kind.bench(puzzle, kernel, msg, blobs, self.device)
        except BaseException as exc:  # the learner's code may raise anything
            return self.failure_of(exc, path, kinds.for_object(kernel).ran(kernel)), []
        device = self.torch.cuda.get_device_name() if self.device == "cuda" else "CPU (Triton's interpreter)"
        return wire_measure.Benched(device=device,
                            copy=wire_measure.CopyBandwidth(**{k: copy[k] for k in ("gb_per_s", "cached", "bytes", "ms",
                                                                            "statistic") if k in copy}),
                            result=wire.convert(result, wire_measure.BenchTiming), statistic=METHOD,
                            versions={"torch": str(self.torch.__version__),
                                      "triton": str(self.triton.__version__), **_package_versions(puzzle)}), out

    def op_profile(self, msg: wire_measure.Profile, blobs: list[bytes]):
        """``--perf``: run the learner's kernel (or autograd function) once at one size in the
        interpreter, sampling each launch's programs, and send back what they did (perf.run)."""
        from grader.course.loader import load_puzzle
        if self.device != "cpu":
            return wire.Failure("error", error="--perf counts accesses in the interpreter: ask a cpu worker"), []
        puzzle = load_puzzle(msg.puzzle_file)
        path = os.path.abspath(msg.file)
        obj = self.kernel(path, puzzle.kernel)
        if obj is None:
            return wire.Failure("not_found", defined=()), []
        kind = kinds.named(puzzle.kind)
        result, error, printed, seconds = self.run_learner(
            lambda: kind.profile(puzzle, obj, msg, path, self.modules[path]), None)
        if error is not None:
            return wire_measure.Profiled(launches=(), seconds=seconds, printed=printed,
                                 failure=self.failure_of(error, path, kinds.for_object(obj).ran(obj))), []
        return wire.convert({**result, "printed": printed}, wire_measure.Profiled), []

    @staticmethod
    def learner_line(stack) -> tuple[int | None, str]:
        """The innermost line of a learner's file in ``stack`` ((file, line), innermost first)."""
        import linecache

        from grader.sandbox.learner_import import learner_files
        files = learner_files()
        for filename, line in stack:
            if filename in files:
                return line, linecache.getline(filename, line).strip()
        return None, ""

    def names(self, buffers: tuple[wire.BufferSpec, ...], whole, allocated=()):
        """Address -> (tensor, shape, element index), for a race the batched engine words: the
        buffers by their names, the tensors the learner's code allocated by their shapes."""
        known = [(storage.data_ptr() + spec.guard, spec.nbytes, self.torch.empty((), dtype=getattr(
            self.torch, spec.dtype)).element_size(), spec.name, tuple(spec.shape))
                 for spec, storage in zip(buffers, whole)]

        def name(address: int):
            mine = known + [(t.data_ptr(), t.numel() * t.element_size(), t.element_size(),
                             f"a tensor of shape {tuple(t.shape)} your code allocated", tuple(t.shape))
                            for t in allocated]
            for start, size, itemsize, tensor, shape in mine:
                if start <= address < start + size:
                    return tensor, shape, (address - start) // itemsize
            return f"the memory at {address:#x}", (), 0
        return name

    def bounds_checker(self, buffers: tuple[wire.BufferSpec, ...], whole, path, trace: bool, enforce: bool):
        from triton.runtime import interpreter

        from grader.sandbox.bounds import AccessTrace, BoundsChecker, Region
        regions, outputs = [], {}
        for i, (spec, storage) in enumerate(zip(buffers, whole)):
            base = storage.data_ptr()
            dtype = getattr(self.torch, spec.dtype)
            regions.append(Region(spec.name, base + spec.guard, spec.nbytes, base,
                                  base + spec.total, self.torch.empty((), dtype=dtype).element_size(),
                                  tuple(spec.shape), spec.param, spec.role))
            if spec.role == "output":  # which program stored each element: of every output, values where numpy has them
                outputs[i] = storage[spec.guard:spec.guard + spec.nbytes].view(dtype).numpy() \
                    if DTYPES[spec.dtype].numpy_view else None
        return BoundsChecker(regions, path, interpreter.interpreter_builder,
                             AccessTrace(regions) if trace else None, enforce, outputs)

    def failure_of(self, exc: BaseException, path: str, kernel) -> wire.Failure:
        """What the learner's code raised, as the grader is told it. ``kernel`` is the kernel
        that ran, or None for an autograd function (whose kernels are found from the error)."""
        import re

        from grader.sandbox.bounds import OutOfBounds
        cause = root_cause(exc)
        from grader.sandbox.interpreter.limits import find_limit
        limit = find_limit(exc) if self.device == "cpu" else None
        if limit is not None:  # what the interpreter cannot run: not the learner's failure
            line, source = learner_frame(exc, path)
            return wire.Failure("interpreter_limit", error=limit.what, line=line, source=source)
        if isinstance(cause, OutOfBounds):
            return wire.Failure("out_of_bounds", access=wire.convert(cause.info, wire.OutOfBoundsAccess))
        crossed = next((e for e in exception_chain(exc) if type(e).__name__ == "ProgramsCrossed"), None)
        if crossed is not None:  # grader.sandbox.batched.engine: a race the batch found
            return wire.Failure("race", crossing=wire.convert(crossed.crossing, wire.Crossing))
        compile_error = next((e for e in exception_chain(exc) if re.match(r"at \d+:\d+:", str(e))), None)
        if self.device == "cuda" and compile_error is not None:
            fn = python_function(kernel) if kernel is not None else self._compiled_function(compile_error)
            if fn is not None:
                line, source = compile_error_line(compile_error, fn, inspect.getsourcefile(fn) or path)
            else:
                line, source = learner_frame(exc, path)
            from grader.sandbox.compile_errors import describe
            return wire.Failure("compile", error=describe(compile_error, fn, inspect.getsourcefile(fn) or path
                                                          if fn is not None else path),
                                line=line, source=source)
        line, source = learner_frame(exc, path)
        text = said(cause)
        if self.device == "cuda" and ("illegal memory access" in text or "CUDA error" in text
                                      or "misaligned address" in text):
            return wire.Failure("crash", error=text, fatal=True)
        return wire.Failure("exception", error=text, line=line, source=source)

    def _compiled_function(self, compile_error):
        """The plain function of the @triton.jit kernel whose source a compile error quotes:
        an autograd function's kernels may come from any module it imports."""
        src = getattr(compile_error, "src", None)
        if not src:
            return None
        for module in list(sys.modules.values()):
            for value in list(getattr(module, "__dict__", {}).values()):
                try:
                    if getattr(value, "src", None) == src and python_function(value) is not None:
                        return python_function(value)
                except Exception:  # noqa: BLE001 (an object whose attributes raise)
                    continue
        return None

    def serve(self, reader: Reader) -> None:
        handlers = {wire.Load: self.op_load, wire.Run: self.op_run, wire.Compile: self.op_compile,
                    wire_measure.Bench: self.op_bench, wire_measure.Profile: self.op_profile}
        for kind in kinds.KINDS.values():  # each kind's own requests, answered by its wing
            handlers |= {request: functools.partial(answer, self) for request, answer in kind.answers.items()}
        while True:
            try:
                header, blobs = reader.read_message(most=FROM_GRADER)
            except ChannelClosed:
                return
            try:
                msg = wire.parse_request(header)
                if isinstance(msg, wire.Exit):
                    return
                _limit_cpu(wire.cpu_limit(header))
                reply, out = handlers[type(msg)](msg, blobs)
                message = wire.header(reply)  # checked here as the grader will check it
            except BaseException as exc:  # a grader bug: report it, keep serving
                reply, out = wire.Failure("error", error="".join(traceback.format_exception(exc))[-4000:]), []
                message = wire.header(reply)
            try:
                write_message(self.out_fd, message, out, most=wire.reply_bytes(header, MAX_MESSAGE))
            except MessageTooLarge as exc:  # the grader would read it as a corrupt stream, and the worker as dead
                reply = wire.Failure("error", error=f"the worker's reply is too large to send: {exc}")
                write_message(self.out_fd, wire.header(reply), [])
            if _fatal(reply):
                return


_LIFE: tuple[int, int] | None = None


def _limit_cpu(seconds: float | None) -> None:
    """This request may use ``seconds`` more CPU time: past them the kernel sends SIGXCPU, which
    ends the worker, and the grader reads that death as the request's timeout. CPU time, not the
    wall clock, so that a busy machine does not turn a correct kernel's case into a timeout."""
    import math
    import resource
    global _LIFE
    if _LIFE is None:  # the jail's cap on the worker's whole life (isolation), never raised
        _LIFE = resource.getrlimit(resource.RLIMIT_CPU)
    life, hard = _LIFE
    used = resource.getrusage(resource.RUSAGE_SELF)
    soft = life if seconds is None else math.ceil(used.ru_utime + used.ru_stime + seconds)
    if life != resource.RLIM_INFINITY and (soft == resource.RLIM_INFINITY or soft > life):
        soft = life
    resource.setrlimit(resource.RLIMIT_CPU, (soft, hard))


def _fatal(reply) -> bool:
    """A crash this process cannot go on from (a CUDA error): it exits after replying."""
    failures = [reply] if isinstance(reply, wire.Failure) else \
        [r.failure for r in reply.runs] if isinstance(reply, wire.Ran) else \
        [getattr(reply, "failure", None)]  # a kind's own reply (a replay's, a Helion case's) holds one too
    return any(f is not None and f.fatal for f in failures)
