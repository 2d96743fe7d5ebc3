"""``--perf``'s run (inside an interpreter worker): the learner's kernel or autograd function
once, at one size, with each launch's programs sampled and counted (:mod:`.record`).

Each launch of a ``@triton.jit`` kernel is caught where the interpreter starts it
(``InterpretedFunction.run``): its arguments name the tensors it reads, its options say its
warps, and its place in the learner's file lets the grader compile it for sm_90. An
autotuned launch runs once per config its pruning keeps, each counted apart: the grader
estimates each and takes the fastest, as the autotuner on a GPU would. An autograd
wrapper's own PyTorch operators (an allocation, a sum of partial results) are counted too.

The inputs are made here from their shapes: a size of ``--bench`` may be gigabytes, which
the channel should not carry, and what the counts depend on is where the kernel reads, not
what it reads (a histogram's values are drawn in their range all the same).
"""
from __future__ import annotations

import inspect
import time

import torch

from grader.channel import wire_measure
from grader.course.dtypes import dtype_name
from grader.sandbox.perf.record import LAUNCH_OPTIONS, Counter, LaunchCounts, Region
from grader.sandbox.perf.sample import Sample

CHUNK = 1 << 20  # elements drawn at random, then repeated: gigabytes of inputs in a second


def make_tensor(spec: wire_measure.NamedTensor, bounds, gen: torch.Generator) -> torch.Tensor:
    dtype = getattr(torch, spec.dtype)
    out = torch.empty(spec.shape, dtype=dtype)
    flat = out.view(-1)
    n = min(CHUNK, flat.numel())
    if n == 0:
        return out
    if dtype == torch.bool:
        chunk = torch.rand(n, generator=gen) < 0.5
    elif dtype.is_floating_point:
        chunk = torch.randn(n, generator=gen).to(dtype)
    else:  # the whole range of the dtype where the puzzle bounds nothing, as grading draws them
        info = torch.iinfo(dtype)
        low, high = bounds if bounds else (info.min, info.max)
        chunk = torch.randint(int(low), int(high), (n,), generator=gen, dtype=torch.int64).to(dtype)
    for start in range(0, flat.numel(), n):
        piece = flat[start:start + n]
        piece.copy_(chunk[:piece.numel()])
    return out


def _argument(value):
    """A launch's argument as the compile check takes it; a TypeError where it cannot say it."""
    import triton.language as tl
    if isinstance(value, torch.Tensor):
        return {"pointer": dtype_name(value)}
    if isinstance(value, tl.dtype):
        return {"tl_dtype": str(value)}
    if value is None or isinstance(value, (bool, int, float, str)):
        return value
    if hasattr(value, "value") and isinstance(value.value, (bool, int, float)):  # tl.constexpr
        return value.value
    raise TypeError(type(value).__name__)


class Launches:
    """While active, every kernel launch is profiled: its programs sampled and counted."""

    def __init__(self, counter: Counter, sample: Sample, find, names: dict[int, str]) -> None:
        self.counter, self.sample, self.find, self.names = counter, sample, find, names
        self.profiles: list[dict] = []
        self.group = -1
        self.config = ""
        self.tuning = False
        self.inside = False  # in a launch: PyTorch calls are the interpreter's own, not the wrapper's
        self._saved: list = []
        self._threads = 1

    def _regions(self, fn, args, kwargs) -> list[Region]:
        params = list(inspect.signature(fn).parameters)
        named = {**dict(zip(params, args)), **kwargs}
        regions = []
        for param, value in named.items():
            if isinstance(value, torch.Tensor):
                storage = value.untyped_storage()
                name = self.names.get(storage.data_ptr(), param)
                regions.append(Region(name, storage.data_ptr(), storage.nbytes(), value.element_size()))
        return regions

    def run(self, original, interpreted, args, kwargs):
        if kwargs.get("warmup"):
            return original(interpreted, *args, **kwargs)
        if not self.tuning:
            self.group += 1
            self.config = ""
        fn = interpreted.fn
        launch_kwargs = {k: v for k, v in kwargs.items() if k not in ("grid", "warmup")}
        counts = LaunchCounts(int(launch_kwargs.get("num_warps") or 4))
        counts.regions = self._regions(fn, args, {k: v for k, v in launch_kwargs.items() if k not in LAUNCH_OPTIONS})
        try:
            path, hops = self.find(interpreted)
            arguments = [_argument(a) for a in args]
            keywords = {k: _argument(v) for k, v in launch_kwargs.items() if k not in LAUNCH_OPTIONS}
        except TypeError:  # defined where the compile check cannot find it, or an argument it cannot say
            path, hops, arguments, keywords = [], 0, [], {}
        grid: list = []
        builder = self.counter.builder
        set_grid_dim = builder.set_grid_dim

        def chosen_grid(x, y, z):
            grid[:] = [x, y, z]
            set_grid_dim(x, y, z)
            grid.append(self.sample.choose((x, y, z)))
        builder.set_grid_dim = chosen_grid
        self.counter.launch, self.inside, self.sample.counts = counts, True, counts
        started = time.perf_counter()
        try:
            with self.sample, self.sample.kernel_loops(fn.__globals__):
                return original(interpreted, *args, **kwargs)
        finally:
            del builder.set_grid_dim
            self.counter.launch, self.inside, self.sample.counts = None, False, None
            if grid:
                self.profiles.append({
                    "kernel": fn.__name__, "group": self.group, "config": self.config, "grid": grid[:3],
                    "interpreted": max(1, self.sample.interpreted), "planned": grid[3], "num_warps": counts.num_warps,
                    "num_stages": int(launch_kwargs.get("num_stages") or 3), **counts.finish(),
                    "seconds": time.perf_counter() - started, "path": list(path), "hops": hops,
                    "arguments": arguments, "keywords": keywords})

    def tune(self, original, tuner, args, kwargs):
        """An autotuned launch: each config the pruning keeps, launched as the grader's tuning
        launches each (``reset_to_zero`` first, below the autotuner)."""
        from grader.sandbox.launch import describe_config, unwrap
        from grader.sandbox.tuning import kept_configs, launch
        self.group += 1
        layers = unwrap(tuner, "")
        params = list(inspect.signature(layers.base.fn).parameters)
        named = {k: v for k, v in kwargs.items() if k not in ("grid", "warmup")}
        shaped = {k: torch.empty_strided(v.shape, v.stride(), dtype=v.dtype, device="meta")
                  if isinstance(v, torch.Tensor) else v for k, v in {**dict(zip(params, args)), **named}.items()}
        configs = kept_configs(layers, shaped, {k: v for k, v in named.items() if k not in params[:len(args)]})
        self.tuning = True
        try:
            result = None
            for config in configs:
                self.config = describe_config(config)
                result = launch(layers, kwargs["grid"], args, named, config)
            return result
        finally:
            self.tuning, self.config = False, ""

    def __enter__(self):
        from triton.runtime.autotuner import Autotuner
        # one thread: the interpreter's work is small operations, which PyTorch's pool of threads
        # only spins for on a machine whose cores the reference's run (and neighbours) share
        self._threads = torch.get_num_threads()
        torch.set_num_threads(1)
        from triton.runtime.interpreter import InterpretedFunction
        run, tune = InterpretedFunction.run, Autotuner.run
        self._saved = [(InterpretedFunction, "run", run), (Autotuner, "run", tune)]
        InterpretedFunction.run = lambda interpreted, *a, **k: self.run(run, interpreted, a, k)
        Autotuner.run = lambda tuner, *a, **k: self.tune(tune, tuner, a, k)
        self.counter.install()
        return self

    def __exit__(self, *exc) -> None:
        self.counter.uninstall()
        for owner, name, value in self._saved:
            setattr(owner, name, value)
        self._saved = []
        torch.set_num_threads(self._threads)


# Operators that launch no kernel: allocations without a fill, and views. By exact name: a
# substring would take `sqrt` and `cat` for `t`, and `index_select` for `select`.
FREE = frozenset({"empty", "empty_like", "empty_strided", "new_empty", "new_empty_strided", "view", "_unsafe_view",
                  "view_as", "as_strided", "detach", "alias", "transpose", "permute", "expand", "expand_as",
                  "unsqueeze", "squeeze", "select", "slice", "split", "split_with_sizes", "unbind", "set_",
                  "lift_fresh", "t", "_reshape_alias", "unfold", "diagonal"})


def torch_ops(launches: Launches):
    """PyTorch's operators the learner's wrapper runs outside its launches, with the bytes they
    move: each is a GPU kernel of PyTorch's on a GPU."""
    from torch.utils._python_dispatch import TorchDispatchMode
    counted: dict[str, list[int]] = {}

    def nbytes(values) -> int:
        total = 0
        for value in values if isinstance(values, (list, tuple)) else (values,):
            if isinstance(value, torch.Tensor):
                total += value.numel() * value.element_size()
            elif isinstance(value, (list, tuple)):
                total += nbytes(value)
        return total

    class Ops(TorchDispatchMode):
        def __torch_dispatch__(self, func, types, args=(), kwargs=None):
            out = func(*args, **(kwargs or {}))
            name = str(getattr(func, "__name__", func))
            packet = getattr(getattr(func, "overloadpacket", None), "__name__", name)
            if not launches.inside and packet not in FREE:
                entry = counted.setdefault(name, [0, 0])
                entry[0] += 1
                entry[1] += nbytes(list(args) + list((kwargs or {}).values())) + nbytes(out)
            return out
    return Ops(), counted


class Profiling:
    """One profiled run: the inputs made from their shapes, and the hooks that count."""

    def __init__(self, msg: wire_measure.Profile, filename: str, module) -> None:
        from triton.runtime import interpreter

        from grader.sandbox.recorded_launch import kernel_paths
        gen = torch.Generator().manual_seed(0)
        self.inputs = [make_tensor(spec, msg.ranges.get(spec.name), gen) for spec in msg.inputs]
        self.names = {x.untyped_storage().data_ptr(): spec.name for spec, x in zip(msg.inputs, self.inputs)}
        counter = Counter(interpreter.interpreter_builder, filename)
        self.launches = Launches(counter, Sample(msg.programs, msg.seconds), kernel_paths(module), self.names)
        self.ops: dict[str, list[int]] = {}
        self.started = time.perf_counter()

    def result(self) -> dict:
        return {"launches": self.launches.profiles,
                "torch_ops": [{"name": n, "count": c, "bytes": b} for n, (c, b) in self.ops.items()],
                "seconds": time.perf_counter() - self.started}


def profile_kernel(puzzle, kernel, params: list, msg: wire_measure.Profile, filename: str, module) -> dict:
    """The kernel launched on the puzzle's grid, as ``--bench`` launches it (its Bench's options)."""
    from grader.channel.binding import bind
    from grader.sandbox.launch import parameters, unwrap
    run = Profiling(msg, filename, module)
    outputs = [torch.empty(spec.shape, dtype=getattr(torch, spec.dtype)) for spec in msg.outputs]
    run.names.update({x.untyped_storage().data_ptr(): spec.name for spec, x in zip(msg.outputs, outputs)})
    values = dict(msg.values)
    layers = unwrap(kernel, puzzle.kernel)
    _, defaults = parameters(layers)
    binding = bind(params, [None] * (len(run.inputs) + len(outputs)), values,
                   puzzle.kernel, provided=layers.provided, defaults=defaults)
    grid = tuple(msg.grid) if not layers.provided else \
        (lambda meta: tuple(int(g) for g in puzzle.grid({**values, **meta})))
    options = dict(puzzle.bench.launch) if puzzle.bench else {}
    with run.launches:
        kernel[grid](*run.inputs, *outputs, **binding.named, **options)
    return run.result()


def profile_function(puzzle, cls, msg: wire_measure.Profile, filename: str, module) -> dict:
    """Forward and backward of the autograd Function, as ``--bench`` times them."""
    run = Profiling(msg, filename, module)
    *leaves, grad = run.inputs
    leaves = [x.requires_grad_(x.is_floating_point()) for x in leaves]
    mode, run.ops = torch_ops(run.launches)
    with run.launches, mode:
        cls.apply(*leaves).backward(grad)
    return run.result()
