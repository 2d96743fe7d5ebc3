"""A worker: the process that runs learner code, forked for one puzzle by :mod:`.zygote`.

It holds no verdict. It loads a learner's file, calls the kernel on the fenced buffers the
grader sent, and sends the bytes back; the grader decides what they mean. A kernel that
corrupts memory or hangs takes down only this process, and the process ends with its puzzle.

A ``cpu`` worker runs the Triton interpreter (its zygote set ``TRITON_INTERPRET=1`` before
triton was imported). GPU compile checks run in ``compile`` workers of their own: once the
interpreter has run a kernel, it leaves ``triton.language`` patched, and compiling in that
process fails.
"""
from __future__ import annotations

import contextlib
import functools
import hashlib
import inspect
import os
import sys
import time
import traceback

from grader.sandbox import kinds
from grader.source.wrapped import python_function
from grader.sandbox.learner_code import captured_output, compile_error_line, exception_chain, learner_frame, root_cause
from grader.channel import wire
from grader.course.dtypes import DTYPES
from grader.channel.protocol import ChannelClosed, Reader, write_message


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
    install(compiled_builtins() if device == "cpu" else None)
    if device == "cpu":  # the interpreter computes as an sm_90 GPU does (docs/interpreter-vs-gpu.md), and
        # patches triton.language once per launch rather than on every helper call
        from grader.sandbox.interpreter.semantics import install as follow_gpu
        from grader.sandbox.interpreter.speed import install as patch_once_per_launch
        from grader.sandbox.sampling import install_limits
        follow_gpu()
        patch_once_per_launch()
        install_limits()  # a grid or num_warps a GPU refuses is refused here too
    if device != "compile":  # --bench's clock and watch, captured before any learner code runs
        import grader.sandbox.bench.guard  # noqa: F401
    from grader.sandbox import warmup
    return warmup.prepare(device, warm, kinds.warm_steps())


def _track_versions(puzzle) -> dict:
    """The version of a track's own package (helion) beside torch's and triton's, where it has one."""
    import importlib.metadata
    try:
        return {puzzle.track: importlib.metadata.version(puzzle.track)} if puzzle.kind == puzzle.track else {}
    except (importlib.metadata.PackageNotFoundError, ValueError):
        return {}


class Worker:
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
            return wire.Failure("exception", error=f"{type(exc).__name__}: {exc}", line=line,
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

    def op_run(self, msg: wire.Run, blobs: list[bytes]):
        """Run one case, possibly several times: once per autotuning config the tuner could pick
        (on every device: see tuning), and in the interpreter once more with the programs in
        reverse order (a race shows as a different result). Each run starts from the bytes the
        grader sent; each run's bytes go back to be judged."""
        from grader.sandbox.launch import apply_heuristics, describe_config, unwrap
        from grader.sandbox.tuning import launch, tuned_configs, tuner_skips
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
        sampling = interpreted and msg.sample is not None  # a large case: some programs of each launch
        reorder = interpreted and msg.reorder and not sampling and self._programs(msg, layers) > 1
        runs, out = [], []
        for index, (label, config, reverse) in enumerate(plans):
            whole, views = self.tensors(msg.buffers, blobs)
            checker = recorder = None
            if interpreted and (msg.check_bounds or msg.trace or sampling):
                checker = self.bounds_checker(msg.buffers, whole, path, msg.trace and not out,
                                               msg.check_bounds or sampling)
                if sampling:  # every store written down: the grader compares what the programs that ran stored
                    from grader.sandbox.sampling import StoreRecorder
                    checker.log.sampled, checker.log.on_store = True, (recorder := StoreRecorder())
                checker.install()
            named = dict(msg.named)
            with self._order(reverse, msg.sample if sampling else None) as order, self._standing_in(1) as stand:
                _, error, printed, seconds = self.run_learner(
                    lambda: launch(layers, grid, views, named, config), checker)
            run = {"label": label, "reversed": reverse, "seconds": seconds, "printed": printed,
                   "failure": None if error is None else self.failure_of(error, path, kernel)}
            if stand is not None and stand.used:  # inline PTX, stood in for: graded only if nothing depends on it
                run["failure"] = self._stood_in(stand, run["failure"], whole, path, msg, blobs,
                                                lambda views2: launch(layers, grid, views2, dict(msg.named), config),
                                                reverse, msg.sample if sampling else None)
            if recorder is not None:
                last = order.launches[-1] if len(order.launches) == 1 else {}  # one launch: its grid is told
                run["sampled"] = wire.convert({"programs": order.programs, "ran": order.ran,
                                               "writes": recorder.writes(checker.log.decode),
                                               "foreign_reads": checker.log.foreign_reads,
                                               "grid": last.get("grid", ()), "along": last.get("along", ())},
                                              wire.SampledRun)
            if checker is not None:  # the bounds check writes down plain values
                run["overlaps"] = wire.convert(checker.overlaps, tuple[wire.Overlap, ...])
                run["early_reads"] = wire.convert(checker.early_reads, tuple[wire.EarlyRead, ...])
                if checker.trace is not None:
                    run["trace"] = wire.convert(checker.trace.to_json(), wire.Trace)
            if layers.heuristics and config is None and error is None:
                run["heuristics"] = {k: v for k, v in apply_heuristics(layers, {**msg.values, **named}).items()
                                     if isinstance(v, (int, bool))}
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

    def _standing_in(self, seed: int):
        """In the interpreter, inline assembly stood in for under ``seed`` (interpreter.filling)."""
        if self.device != "cpu":
            return contextlib.nullcontext()
        from grader.sandbox.interpreter.filling import standing_in
        return standing_in(seed)

    def _stood_in(self, stand, failure, whole, path: str, msg: wire.Run, blobs, run, reverse: bool,
                  sample: int | None):
        """A run in which inline assembly was stood in for: its failure, unchanged where the case
        runs the same under a second stand-in (every buffer equal, bit for bit: the outputs do not
        depend on the assembly), else the interpreter's limit, naming the assembly and its line. The
        second run takes the same programs as the first (``sample``: a large case's sample)."""
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
            with self._order(reverse, sample), self._standing_in(2):
                _, error, _, _ = self.run_learner(lambda: run(views), checker)
            if error is None and (msg.accesses_only or all(a.cpu().numpy().tobytes() == b.cpu().numpy().tobytes()
                                                           for a, b in zip(whole, again))):
                return None
            why = "and the outputs depend on what it computes" if error is None else \
                f"and with another stand-in for its values the run failed ({self.failure_of(error, path, None).kind})"
        else:
            why = f"and with a stand-in for its values the run failed ({failure.kind}: {failure.error[:200]})"
        return wire.Failure("interpreter_limit", error=f"{what}, {why}", line=line, source=source)

    @staticmethod
    def _order(reverse: bool, sample: int | None):
        """The grid loop as a run wants it: in order, reversed, or over a sample of the programs."""
        from grader.sandbox.launch import program_order
        if sample is None:
            return program_order(reverse)
        from grader.sandbox.sampling import sampled_grid
        return sampled_grid(sample)

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

    def op_bench(self, msg: wire.Bench, blobs: list[bytes]):
        """Time the learner's kernel (or autograd function) at one size of the puzzle's sweep,
        on the inputs the grader planned; what it wrote goes back for the grader to judge. A cpu
        worker times in the interpreter with the host's clock: the test path, never a figure."""
        from grader.sandbox.bench.run import METHOD, device_copy
        from grader.course.loader import load_puzzle
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
        return wire.Benched(device=device,
                            copy=wire.CopyBandwidth(**{k: copy[k] for k in ("gb_per_s", "cached", "bytes", "ms",
                                                                            "statistic") if k in copy}),
                            result=wire.convert(result, wire.BenchTiming), statistic=METHOD,
                            versions={"torch": str(self.torch.__version__),
                                      "triton": str(self.triton.__version__), **_track_versions(puzzle)}), out

    def op_profile(self, msg: wire.Profile, blobs: list[bytes]):
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
            return wire.Profiled(launches=(), seconds=seconds, printed=printed,
                                 failure=self.failure_of(error, path, kinds.for_object(obj).ran(obj))), []
        return wire.convert({**result, "printed": printed}, wire.Profiled), []

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
        text = f"{type(cause).__name__}: {cause}"
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

    # ---- GPU compile check -------------------------------------------------------------------
    def op_compile(self, msg: wire.Compile, blobs: list[bytes]):
        """Compile for a GPU target as a launch would: once per autotuning config, with the
        values heuristics give, for the signature and constexprs the grader bound."""
        from triton.backends.compiler import GPUTarget
        from triton.compiler import ASTSource
        from triton.runtime.jit import JITFunction

        from grader.sandbox.launch import apply_heuristics, describe_config, unwrap
        path = os.path.abspath(msg.file) if not msg.source else self._written(msg.source)
        if msg.path:  # a kernel an autograd wrapper launched, found as its replay finds it
            from grader.sandbox.recorded_launch import find_kernel
            layers = unwrap(find_kernel(self.module(path), msg.path, msg.hops), msg.kernel)
        else:
            layers = unwrap(self.kernel(path, msg.kernel), msg.kernel)
        fn = layers.base.fn
        base_signature, base_constexprs = dict(msg.signature), dict(msg.constexprs)
        if msg.path:
            from grader.sandbox.recorded_launch import launch_signature
            base_signature, base_constexprs = launch_signature(fn, msg.arguments, msg.keywords, set(layers.provided))
        variants = [(describe_config(c), c.kwargs, {"num_warps": c.num_warps, "num_stages": c.num_stages})
                    for c in layers.configs] or [("", {}, dict(msg.options))]
        stats, too_large = [], []  # too_large: the configs whose shared memory no program gets
        for label, meta, options in variants:
            # each config from the launch's own values: one config's meta-parameters never fill another's
            signature, constexprs = dict(base_signature), {**base_constexprs, **meta}
            try:
                constexprs.update(apply_heuristics(layers, {**msg.values, **constexprs}))
            except Exception as exc:  # noqa: BLE001 (a heuristic of the learner's raised)
                return wire.Failure("compile", error=f"a @triton.heuristics rule raised {type(exc).__name__}: {exc}",
                                    config=label), []
            for name in constexprs:
                signature[name] = "constexpr"
            unset = [n for n, p in inspect.signature(fn).parameters.items()
                     if n not in signature and p.default is inspect.Parameter.empty]
            if unset:  # a config that leaves out a constexpr the others give (nothing passes it)
                names = ", ".join(f"`{n}`" for n in unset)
                return wire.Failure("compile", error=f"{label or 'the launch'} gives no value for {names}, and the "
                                    f"puzzle does not pass it", config=label), []
            # One compile per specialisation: launches that differ only in runtime ints (each case's
            # sizes) compile alike, and this worker serves one puzzle's compile checks only.
            key = (id(fn), tuple(sorted(signature.items())), tuple(sorted((k, repr(v)) for k, v in constexprs.items())),
                   tuple(sorted(options.items())), msg.stage, msg.arch)
            if key in self._compiled and not msg.stats:
                continue
            try:
                kernel = None
                with captured_output() as printed, _stages_up_to(msg.stage) as reached, _ptxas_log(msg.stats):
                    attrs = _aligned(fn, signature, msg) if msg.stats else None
                    source = ASTSource(fn=JITFunction(fn), signature=signature, constexprs=constexprs, attrs=attrs)
                    kernel = self.triton.compile(source, target=GPUTarget("cuda", msg.arch, 32), options=options)
                from grader.course.limits import shared_refusal
                shared = getattr(kernel.metadata, "shared", 0) if kernel is not None else reached.get("shared", 0)
                refused = shared_refusal(int(shared or 0), msg.arch, label)
                if refused is not None:  # compiled again whenever asked: each time refused
                    too_large.append(wire.Failure("compile", error=refused, config=label))
                else:
                    self._compiled.add(key)
                if msg.stats:
                    from grader.sandbox.compile_stats import kernel_stats
                    stats.append(kernel_stats(kernel, label, printed[0] if printed else "", options))
            except BaseException as exc:
                from grader.sandbox.compile_errors import describe
                filename = inspect.getsourcefile(fn) or path
                line, src = compile_error_line(exc, fn, filename)
                return wire.Failure("compile", error=describe(exc, fn, filename), line=line, source=src,
                                    config=label), []
        # On a GPU the autotuner passes over a config it cannot launch, and fails only when none can.
        if too_large and (not layers.configs or len(too_large) == len(variants)):
            return too_large[0], []
        return wire.Compiled(variants=len(variants), stats=tuple(stats)), []

    def _written(self, source: str) -> str:
        """Code sent to be compiled (Helion's Triton), as a file of this worker's own: imported as
        a learner's file is, its definitions only."""
        import tempfile
        folder = os.path.join(tempfile.gettempdir(), f"generated-{os.getpid()}")
        os.makedirs(folder, exist_ok=True)
        path = os.path.join(folder, "k" + hashlib.sha1(source.encode()).hexdigest()[:16] + ".py")
        if not os.path.exists(path):
            with open(path, "w", encoding="utf-8") as f:
                f.write(source)
        return path

    def serve(self, reader: Reader) -> None:
        handlers = {wire.Load: self.op_load, wire.Run: self.op_run, wire.Compile: self.op_compile,
                    wire.Bench: self.op_bench, wire.Profile: self.op_profile}
        for kind in kinds.KINDS.values():  # each kind's own requests, answered by its wing
            handlers |= {request: functools.partial(answer, self) for request, answer in kind.answers.items()}
        while True:
            try:
                header, blobs = reader.read_message()
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
            write_message(self.out_fd, message, out)
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


def _aligned(fn, signature: dict, msg: wire.Compile) -> dict:
    """The divisibility a launch on a GPU would tell the compiler (Triton specialises every
    pointer aligned to 16 bytes and every int divisible by 16): vector loads, and the registers
    ptxas reports, depend on it. Only for a launch whose arguments are known (``--perf``)."""
    params = list(inspect.signature(fn).parameters)
    named = {**dict(zip(params, msg.arguments)), **msg.keywords}
    attrs = {}
    for index, name in enumerate(params):
        value = named.get(name)
        if signature.get(name, "constexpr") == "constexpr":
            continue
        if (isinstance(value, dict) and "pointer" in value) or \
                (isinstance(value, int) and not isinstance(value, bool) and value % 16 == 0):
            attrs[(index,)] = [["tt.divisibility", 16]]
    return attrs


@contextlib.contextmanager
def _ptxas_log(wanted: bool):
    """Have Triton print ptxas's report (registers, spills), which it otherwise throws away."""
    if not wanted:
        yield
        return
    import triton
    knobs = triton.knobs.nvidia
    before = knobs.dump_ptxas_log
    knobs.dump_ptxas_log = True
    try:
        yield
    finally:
        knobs.dump_ptxas_log = before


class _StagesDone(Exception):
    """Raised in place of the first stage past the last one asked for: the compile got that far."""


@contextlib.contextmanager
def _stages_up_to(last: str):
    """Compile only up to ``last`` of Triton's stages (ttir, ttgir, llir, ptx, cubin), where its
    knobs allow: an autograd wrapper's launches are checked through the front end, which is
    where Python that is not Triton fails, without paying for LLVM and ptxas per launch."""
    from triton import knobs
    runtime = getattr(knobs, "runtime", None)
    reached: dict = {}  # the metadata of the last stage run (its shared memory, from llir on)
    if last == "cubin" or not hasattr(runtime, "add_stages_inspection_hook"):
        yield reached
        return

    def stop(src, metadata):
        reached.update(metadata)
        raise _StagesDone()

    def hook(backend=None, stages=None, options=None, language=None, capability=None):
        if stages is None:  # asked for its cache key: kept apart from full compiles
            return f"up-to-{last}", f"up-to-{last}"
        names = list(stages)
        for name in names[names.index(last) + 1:] if last in names else ():
            stages[name] = stop
    saved = runtime.add_stages_inspection_hook
    runtime.add_stages_inspection_hook = hook
    try:
        yield reached
    except _StagesDone:
        pass
    finally:
        runtime.add_stages_inspection_hook = saved


def _fatal(reply) -> bool:
    """A crash this process cannot go on from (a CUDA error): it exits after replying."""
    failures = [reply] if isinstance(reply, wire.Failure) else \
        [r.failure for r in reply.runs] if isinstance(reply, wire.Ran) else \
        [getattr(reply, "failure", None)]  # a kind's own reply (a replay's, a Helion case's) holds one too
    return any(f is not None and f.fatal for f in failures)
