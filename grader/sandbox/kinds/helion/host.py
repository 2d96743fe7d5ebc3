"""What a Helion kernel's host code does to tensor data, found by running it.

Helion splits a kernel in two: the bodies of its ``hl.tile``/``hl.grid`` loops become the Triton
kernel, and everything else becomes a plain Python function, the host code, which allocates the
outputs and calls a launcher where each loop stood. Helion's own warning of "a tensor operation
outside the loops" is decided by names, and misses what it does not list (``operator.mul``,
``masked_fill``, a helper function, a lambda) while it flags ``if bias is not None:``.

So the host function Helion generated is run here on copies of the case's inputs, its launcher
a no-op, under a dispatch mode that sees every aten operation PyTorch executes, however it was
reached (an operator, a method, a helper, a lambda). Allocating (``empty``, ``zeros_like``,
``new_empty``, ``full``, a constant), views (``view``, ``reshape`` of a contiguous tensor,
``transpose``...) and shape queries touch no tensor's data and are allowed; filling a tensor
allocated here with a constant too, or moving such a tensor. Anything else that runs on the host (arithmetic, a
reduction, ``copy_``, ``masked_fill``, an in-place op, ``.item()``, a copy out to NumPy) reads
or writes tensor data: the first one is reported with the learner's line. Where nothing ran,
nothing is said.

What no mode sees is judged by where memory came from (provenance, not op names): every tensor the
host code returns or hands its device loops must be an input, a view of one, or memory an
allocation made while the recorder watched (``fresh``), written by nothing but constants and the
device. Memory that appears any other way was computed out of sight, whatever made it (a dispatch
mode switched off, a tensor subclass, PyTorch's C++ internals), and is reported as host work
(``UNSEEN``) at the statement that returned it or handed it to the loops.
"""
from __future__ import annotations

import contextlib
import os
import re
import sys
from dataclasses import dataclass, replace

# Aten operations (by name, their overloads included) that make a tensor without reading any
# tensor's data: the ``_like``/``new_`` forms read only their argument's shape, dtype and device.
ALLOCATIONS = frozenset({
    "empty", "empty_strided", "empty_permuted", "zeros", "ones", "full", "scalar_tensor",
    "empty_like", "zeros_like", "ones_like", "full_like",
    "new_empty", "new_empty_strided", "new_zeros", "new_ones", "new_full",
    "lift_fresh", "lift_fresh_copy",  # a literal: torch.tensor(2.0)
})
# Questions about a tensor's layout, not its values.
METADATA = frozenset({
    "sym_size", "sym_stride", "sym_numel", "sym_storage_offset", "size", "stride", "numel", "dim",
    "storage_offset", "is_contiguous", "is_non_overlapping_and_dense", "is_same_size",
    "result_type", "is_floating_point", "is_complex", "is_signed", "can_cast", "promote_types",
})
# Fills that write a constant: allowed on a tensor the host code itself allocated.
CONSTANT_FILLS = frozenset({"fill_.Scalar", "zero_.default"})
# Ways out of PyTorch to a tensor's bytes, which no aten operation marks.
DATA_ESCAPES = frozenset({"numpy", "tolist", "__array__", "__dlpack__", "untyped_storage", "storage",
                          "_typed_storage", "data_ptr"})

_SRC = re.compile(r"\s*# src\[(?P<file>[^\]:]+):(?P<line>\d+)\]:")


# The op a HostOp names for memory no watched allocation made; the second op says where it went.
UNSEEN = "made unseen"
RETURNED, LAUNCHED = "returned", "handed to the loops"

# What the learner wrote, where PyTorch's name for it is not that.
SPOKEN = {"_local_scalar_dense": ".item()", "_to_copy": ".to()"}


@dataclass(frozen=True)
class HostOp:
    """Operations on tensor data that ran on the host at one statement: ``ops`` as PyTorch
    names them, ``line`` and ``source`` the kernel's statement; ``called`` the helper function
    they ran in (with its own line), where they ran in one; ``tensors`` the kernel's parameters
    among their arguments."""

    ops: tuple[str, ...]
    line: int | None
    source: str
    called: str = ""
    called_line: int | None = None
    called_source: str = ""
    tensors: tuple[str, ...] = ()


def _is_view(func) -> bool:
    """An operation whose every result aliases an argument and that writes nothing: a view."""
    schema = func._schema
    if schema.is_mutable or not schema.returns:
        return False
    return all(r.alias_info is not None and not r.alias_info.is_write for r in schema.returns)


def touches_data(func, args, fresh: set) -> bool:
    """Whether the aten operation ``func`` reads or writes tensor data (``fresh``: the storages
    of tensors the host code allocated, which a constant may fill)."""
    name = func.overloadpacket.__name__
    if name in ALLOCATIONS or name in METADATA or _is_view(func):
        return False
    if args and _storage(args[0]) in fresh and (name == "_to_copy" or f"{name}.{func._overloadname}" in CONSTANT_FILLS):
        return False  # a constant filled in, or moved and converted: still no input's data
    return True


def _storage(value):
    import torch

    from grader.sandbox.world import in_memory
    value = in_memory(value)  # a GPU tensor of the host code's world: its memory's storage
    if not isinstance(value, torch.Tensor):
        return None
    try:
        return value.untyped_storage().data_ptr() or None
    except (RuntimeError, NotImplementedError):  # a tensor without storage: no data to share
        return None


def _source_line(generated: list[str], index: int, path: str) -> int | None:
    """The learner's line of the generated host code's line ``index`` (0-based): Helion writes
    the learner's statement as ``# src[file:line]:`` comments above each statement it emits;
    the first comment of the block right above is the statement's own first line. Lines with
    no such block are Helion's own code."""
    first = None
    while index > 0 and (match := _SRC.match(generated[index - 1])):
        index, first = index - 1, match
    if first is None or first["file"] != os.path.basename(path):
        return None
    return int(first["line"])


class _Recorder:
    """The first statement of the host code to touch tensor data, with every op it runs there.
    ``host_code`` is the host function's code; ``line_of`` gives a frame of it the learner's
    line, or None where the frame is in a device loop or in Helion's own code; what runs inside
    ``launcher`` (the function the host code launches through) is the device's."""

    def __init__(self, host_code, line_of, path: str, names: dict, launcher=None) -> None:
        self.host_code, self.line_of, self.path, self.names = host_code, line_of, path, names
        self.launcher_code = (launcher or _no_launch).__code__
        self.fresh: set = set()
        self.found: HostOp | None = None

    def place(self):
        """(the host function's frame, the innermost frame in the learner's file), or None when
        the operation runs outside the host function or inside its launcher."""
        frame, inner = sys._getframe(2), None
        while frame is not None:
            code = frame.f_code
            if code is self.host_code:
                return frame, inner
            if code is self.launcher_code:
                return None
            if inner is None and os.path.abspath(code.co_filename) == self.path:
                inner = frame
            frame = frame.f_back
        return None

    def unseen(self, values, how: str, host_frame) -> None:
        """Reports the first tensor of ``values`` (returned, or handed to the device loops, at
        ``host_frame``'s statement) whose memory is no input's and no watched allocation's."""
        if self.found is not None:
            return
        for value in _flat((values,)):
            storage = _storage(value)
            if storage is None or storage in self.names or storage in self.fresh:
                continue
            import linecache
            line = self.line_of(host_frame) if host_frame is not None else None
            local = host_frame.f_locals.items() if host_frame is not None else ()
            named = tuple(name for name, v in local if v is value and not name.startswith("_"))[:1]
            self.found = HostOp((UNSEEN, how), line, linecache.getline(self.path, line).strip() if line else "",
                                tensors=named)
            return

    def saw(self, op: str, args) -> None:
        """Writes down ``op``: the first statement to touch data, and every op it runs."""
        where = self.place()
        if where is None:
            return
        import linecache
        host, inner = where
        line = self.line_of(host)
        if line is None:
            return
        called = (inner.f_code.co_name, inner.f_lineno) if inner is not None else ("", None)
        if self.found is not None and (self.found.line, self.found.called, self.found.called_line) != (line, *called):
            return
        op = SPOKEN.get(op, op)
        tensors = tuple(self.names[s] for s in map(_storage, _flat(args)) if s in self.names)
        if self.found is not None:
            self.found = replace(self.found, ops=tuple(dict.fromkeys(self.found.ops + (op,))),
                                 tensors=tuple(dict.fromkeys(self.found.tensors + tensors)))
            return
        self.found = HostOp((op,), line, linecache.getline(self.path, line).strip() if line else "", *called,
                            linecache.getline(self.path, called[1]).strip() if called[1] else "",
                            tuple(dict.fromkeys(tensors)))


def _flat(args):
    for a in args:
        if isinstance(a, (list, tuple)):
            yield from _flat(a)
        else:
            yield a


def _modes(recorder: _Recorder):
    from torch.overrides import TorchFunctionMode
    from torch.utils._python_dispatch import TorchDispatchMode

    class Data(TorchDispatchMode):
        def __torch_dispatch__(self, func, types, args=(), kwargs=None):
            out = func(*args, **(kwargs or {}))
            if touches_data(func, args, recorder.fresh):
                recorder.saw(func.overloadpacket.__name__, (args, tuple((kwargs or {}).values())))
            elif func.overloadpacket.__name__ in ALLOCATIONS or func.overloadpacket.__name__ == "_to_copy":
                recorder.fresh.update(filter(None, map(_storage, _flat((out,)))))
            return out

    class Escapes(TorchFunctionMode):
        def __torch_function__(self, func, types, args=(), kwargs=None):
            name = getattr(func, "__name__", "")
            if name in DATA_ESCAPES:
                recorder.saw(name, args)
            return func(*args, **(kwargs or {}))

    return Escapes(), Data()


def _no_launch(*args, **options) -> None:
    """The launcher the host code calls where a device loop stood: nothing is launched."""


def _judging_launches(recorder: _Recorder, launch):
    """``launch``, after the tensors it is handed are judged by where their memory came from."""
    def launcher(*args, **options):
        recorder.unseen(args, LAUNCHED, sys._getframe(1))
        return launch(*args, **options)
    recorder.launcher_code = launcher.__code__
    return launcher


@contextlib.contextmanager
def _returning(recorder: _Recorder):
    """Keeps the host function's frame as it returns, for the line of its ``return``."""
    frames: list = []

    def profile(frame, event, arg):
        if event == "return" and frame.f_code is recorder.host_code:
            frames.append(frame)
    previous = sys.getprofile()
    sys.setprofile(profile)
    try:
        yield frames
    finally:
        sys.setprofile(previous)


def _recorded(call, recorder: _Recorder) -> HostOp | None:
    """Runs ``call`` under the recorder's modes, in the world the case's runs give host code (a
    GPU, grader.sandbox.world); what it prints is dropped (the case's runs print it), and what it
    raises is the case's runs' to report."""
    from grader.sandbox.learner_code import captured_output
    from grader.sandbox.world import gpu_world
    escapes, data = _modes(recorder)
    with captured_output():
        try:
            with gpu_world(), escapes, data:
                call()
        except Exception:  # noqa: BLE001 (the learner's host code, on a launcher that ran nothing)
            pass
    return recorder.found


def _names(fn, args: tuple) -> dict:
    """The arguments' storages, each by the name of ``fn``'s parameter it was passed as."""
    import inspect
    params = list(inspect.signature(fn).parameters)
    return {_storage(a): p for p, a in zip(params, args) if _storage(a) is not None}


def _copies(fn, args: tuple) -> tuple[tuple, dict]:
    """Copies of the arguments (the host code may write into them), and their storages' names."""
    import torch

    from grader.sandbox.world import on_gpu
    copies = on_gpu(tuple(a.clone() if isinstance(a, torch.Tensor) else a for a in args))
    return copies, _names(fn, copies)


def _host_recorder(host, fn, args: tuple, path: str, launch=None) -> _Recorder:
    """A recorder of the host function ``host`` (Helion's, for one config) run on ``args``, the
    learner's lines read from the ``# src[...]`` comments of the code Helion generated."""
    import linecache
    generated = linecache.getlines(host.__code__.co_filename)
    return _Recorder(host.__code__, lambda frame: _source_line(generated, frame.f_lineno - 1, path), path,
                     _names(fn, args), launch)


def host_work(bound, config, args: tuple, path: str) -> HostOp | None:
    """The first statement of the host code Helion generated for ``config`` that touches tensor
    data when run on ``args`` (the kernel's normalised arguments), or returns or hands its loops
    memory that no watched allocation made; or None."""
    host = bound.compile_config(config, allow_print=False)
    copies, _ = _copies(bound.kernel.fn, args)
    recorder = _host_recorder(host, bound.kernel.fn, copies, path)
    launcher = _judging_launches(recorder, _no_launch)

    def call():
        with _returning(recorder) as returned:
            result = host(*copies, _launcher=launcher)
        recorder.unseen(result, RETURNED, returned[-1] if returned else None)
    return _recorded(call, recorder)


@contextlib.contextmanager
def watching(host, fn, args: tuple, path: str, launch):
    """Records host work while a judged run's host code runs: ``host`` (Helion's host function for
    one config) called on ``args`` (``fn``'s, normalised), launching through ``launch``, whose own
    work is the device's. host_work looks at the host code in a run of its own; a kernel whose
    host code computes only on some calls, or only while no mode records it, is caught here, in
    the run whose values are judged. Yields the recorder: its ``found`` after the run."""
    recorder = _host_recorder(host, fn, args, path, launch)
    escapes, data = _modes(recorder)
    with escapes, data:
        yield recorder


def device_loop_lines(fn, loops=("tile", "grid")) -> list[range]:
    """The lines of ``fn``'s ``hl.tile``/``hl.grid`` loops, in its file."""
    import ast
    import inspect
    import textwrap

    from grader.course.syntax import parse
    lines, first = inspect.getsourcelines(fn)
    found = []
    for node in ast.walk(parse(textwrap.dedent("".join(lines)))):
        call = getattr(node, "iter", None) if isinstance(node, ast.For) else None
        func = getattr(call, "func", None)
        if (getattr(func, "attr", None) or getattr(func, "id", None)) in loops:
            found.append(range(node.lineno + first - 1, node.end_lineno + first))
    return found


def host_work_eager(kernel, args: tuple, path: str) -> HostOp | None:
    """The same for a kernel Helion generates no code for (its loops do nothing, e.g. ``pass``):
    the kernel runs in Helion's reference mode, whole, as PyTorch, and only what runs at its
    lines outside the device loops counts."""
    import copy

    import helion
    from helion.runtime.ref_mode import RefMode
    settings = copy.copy(kernel.settings)
    settings.ref_mode = RefMode.EAGER
    eager = helion.Kernel(kernel.fn, settings=settings, configs=list(kernel.configs))
    loops = device_loop_lines(kernel.fn)
    copies, names = _copies(kernel.fn, args)

    def line_of(frame):
        return None if any(frame.f_lineno in loop for loop in loops) else frame.f_lineno
    return _recorded(lambda: eager(*copies), _Recorder(kernel.fn.__code__, line_of, path, names))
