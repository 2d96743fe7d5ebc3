"""Running a learner's ``torch.autograd.Function`` (inside the worker).

The forward runs through ``Function.apply``; the backward is called directly on the node it
made (``cls.backward(ctx, grad_output)``), in this thread, so that everything it does is seen.
While both run we record:

* every PyTorch operator outside the Triton kernel launches, and whether it read an input
  (``x``, ``weight``, ``grad_output`` or a copy of one) or a buffer a kernel was handed (a
  wrapper that computes the result with PyTorch instead of its kernels is caught from this
  log, also when it first copies the inputs through a trivial kernel);
* how many Triton kernels each phase launched, and how many Python threads it started;
* what ``ctx`` saved, and whether each saved tensor is one of the inputs (or a view of one).

The log misses what PyTorch's dispatch never sees: NumPy, another thread, a wrapper that
turns the recording off. So :func:`run_poisoned` runs the wrapper once more with every
kernel launch replaced by filling the buffers the kernel was handed with NaN: a result that
comes from the kernels is NaN then, and one still correct was computed some other way. The
grader compares; this side only returns the bytes.

In the interpreter, tensors the wrapper allocates join the bounds check as they appear.
"""
from __future__ import annotations

import contextlib
import threading

import torch
from torch.utils._python_dispatch import TorchDispatchMode

from ..dtypes import dtype_name

# Operators that make a fresh tensor: `x.new_empty(...)` reads x's dtype and device, never its
# values, so its result is not a copy of an input.
ALLOCATING_OPS = {
    "empty", "empty_like", "empty_strided", "empty_permuted", "new_empty", "new_empty_strided", "zeros",
    "zeros_like", "new_zeros", "full", "full_like",
}
# Operators that only allocate, reshape, copy or cast: the host side of any wrapper.
LAYOUT_OPS = ALLOCATING_OPS | {
    "view", "_unsafe_view", "reshape", "flatten", "unflatten", "expand", "t", "transpose", "permute",
    "contiguous", "clone", "copy_", "_to_copy", "to", "fill_", "zero_", "detach",
    "alias", "as_strided", "select", "slice", "squeeze", "unsqueeze", "lift_fresh", "split", "chunk",
    "unbind", "_reshape_alias", "resize_", "set_", "is_same_size", "_local_scalar_dense", "item",
}


class Recorder(TorchDispatchMode):
    """Logs PyTorch operators, and counts Triton launches, phase by phase."""

    def __init__(self, watched: set[int], on_allocate=None) -> None:
        super().__init__()
        self.watched = set(watched)  # storages holding the inputs, and layout copies of them
        self.kernel_buffers: set[int] = set()  # storages handed to a kernel that are not inputs
        self.phase = "forward"
        self.ops: list[dict] = []
        self.launches = {"forward": 0, "backward": 0}
        self.threads_started = {"forward": 0, "backward": 0}
        self.in_kernel = 0
        self.on_allocate = on_allocate

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        out = func(*args, **(kwargs or {}))
        if self.in_kernel:
            return out
        name = func.__name__.split(".")[0]
        tensors_in = [a for a in _flat(args) + _flat(list((kwargs or {}).values())) if isinstance(a, torch.Tensor)]
        tensors_out = [o for o in _flat([out]) if isinstance(o, torch.Tensor)]
        layout = name in LAYOUT_OPS
        reads_inputs = any(_storage(t) in self.watched for t in tensors_in)
        reads_kernel_buffers = any(_storage(t) in self.kernel_buffers for t in tensors_in)
        if layout and name not in ALLOCATING_OPS:
            if reads_inputs:
                self.watched.update(_storage(t) for t in tensors_out)
            if reads_kernel_buffers:
                self.kernel_buffers.update(_storage(t) for t in tensors_out)
        self.ops.append({"phase": self.phase, "op": name, "layout": layout, "reads_inputs": reads_inputs,
                         "reads_kernel_buffers": reads_kernel_buffers,
                         "in": [list(t.shape) for t in tensors_in], "out": [list(t.shape) for t in tensors_out]})
        if name in ALLOCATING_OPS:
            for tensor in tensors_out:
                # Fresh memory, perhaps where a freed buffer was: it holds neither an input nor a result.
                self.watched.discard(_storage(tensor))
                self.kernel_buffers.discard(_storage(tensor))
                if self.on_allocate is not None:
                    self.on_allocate(tensor)
        return out

    @contextlib.contextmanager
    def counting_launches(self):
        """Wrap Triton's launch paths, ``kernel[grid](...)`` and a compiled handle's
        ``compiled[grid](...)`` (the fused-softmax tutorial's way): count launches, and keep their
        internals out of the log. ``kernel.warmup(...)`` compiles without launching: not counted."""
        from triton.compiler.compiler import CompiledKernel
        from triton.runtime.interpreter import InterpretedFunction
        from triton.runtime.jit import JITFunction
        recorder = self

        @contextlib.contextmanager
        def launching(counted: bool, args):
            recorder.launches[recorder.phase] += counted
            if counted:  # what the kernel was handed is its result (or its scratch), not an input
                recorder.kernel_buffers.update(_storage(t) for t in _kernel_tensors(args)
                                               if _storage(t) not in recorder.watched)
            recorder.in_kernel += 1
            try:
                yield
            finally:
                recorder.in_kernel -= 1

        def wrap_run(original):
            def run(self, *args, **kwargs):
                with launching(not kwargs.get("warmup"), [*args, *kwargs.values()]):
                    return original(self, *args, **kwargs)
            return run

        def wrap_getitem(original):
            def getitem(self, grid):
                runner = original(self, grid)

                def counted_runner(*args, **kwargs):
                    with launching(True, [*args, *kwargs.values()]):
                        return runner(*args, **kwargs)
                return counted_runner
            return getitem

        def wrap_thread_start(original):
            def start(self):
                if not recorder.in_kernel:  # Triton's own threads, if any, are not the wrapper's
                    recorder.threads_started[recorder.phase] += 1
                return original(self)
            return start

        with _patched([(JITFunction, "run", wrap_run), (InterpretedFunction, "run", wrap_run),
                       (CompiledKernel, "__getitem__", wrap_getitem),
                       (threading.Thread, "start", wrap_thread_start)]):
            yield


@contextlib.contextmanager
def _patched(replacements):
    """Replace ``cls.name`` by ``wrap(original)`` for each (cls, name, wrap), restored after."""
    originals = [getattr(cls, name) for cls, name, _ in replacements]
    for (cls, name, wrap), original in zip(replacements, originals):
        setattr(cls, name, wrap(original))
    try:
        yield
    finally:
        for (cls, name, _), original in zip(replacements, originals):
            setattr(cls, name, original)


def _kernel_tensors(args) -> list[torch.Tensor]:
    """The tensors among a launch's arguments, and those behind host tensor descriptors."""
    found = []
    for arg in _flat(list(args)):
        if isinstance(arg, torch.Tensor):
            found.append(arg)
        elif isinstance(getattr(arg, "base", None), torch.Tensor):  # triton's TensorDescriptor
            found.append(arg.base)
    return found


def _fill_with_nan(tensor: torch.Tensor) -> None:
    """NaN over the whole storage: a kernel may store anywhere its pointer reaches."""
    storage = tensor.untyped_storage()
    count = storage.nbytes() // tensor.element_size()
    whole = torch.empty(0, dtype=tensor.dtype, device=tensor.device)
    whole.set_(storage, 0, (count,), (1,))
    whole.fill_(float("nan"))


@contextlib.contextmanager
def poisoned_launches(inputs: set[int]):
    """Every Triton launch fills the floating-point buffers it was handed, other than the
    inputs (storages in ``inputs``), with NaN instead of running. ``kernel.warmup(...)``
    still compiles, so a wrapper that launches compiled handles reaches its launch."""
    from triton.compiler.compiler import CompiledKernel
    from triton.runtime.interpreter import InterpretedFunction
    from triton.runtime.jit import JITFunction

    def poison(args) -> None:
        for tensor in _kernel_tensors(args):
            if tensor.is_floating_point() and _storage(tensor) not in inputs:
                _fill_with_nan(tensor)

    def wrap_run(original):
        def run(self, *args, **kwargs):
            if kwargs.get("warmup"):
                return original(self, *args, **kwargs)
            poison([*args, *kwargs.values()])
        return run

    def wrap_getitem(original):
        def getitem(self, grid):
            return lambda *args, **kwargs: poison([*args, *kwargs.values()])
        return getitem

    with _patched([(JITFunction, "run", wrap_run), (InterpretedFunction, "run", wrap_run),
                   (CompiledKernel, "__getitem__", wrap_getitem)]):
        yield


def _storage(t: torch.Tensor) -> int:
    try:
        return t.untyped_storage().data_ptr()
    except RuntimeError:  # tensors without storage (meta, sparse)
        return -1


def _flat(items) -> list:
    out = []
    for item in items:
        if isinstance(item, (list, tuple)):
            out.extend(_flat(item))
        else:
            out.append(item)
    return out


def describe_tensor(t) -> dict:
    if not isinstance(t, torch.Tensor):
        return {"tensor": False, "type": type(t).__name__}
    return {"tensor": True, "shape": list(t.shape), "dtype": dtype_name(t)}


def run_function(cls, inputs: list[torch.Tensor], grad_output: torch.Tensor, on_allocate=None) -> dict:
    """Forward and backward of ``cls`` on ``inputs``; returns the outputs and what was seen."""
    leaves = [x.detach().requires_grad_(x.is_floating_point()) for x in inputs]
    storages = [x.untyped_storage().data_ptr() for x in leaves]
    recorder = Recorder({*storages, _storage(grad_output)}, on_allocate)
    threads_before = set(threading.enumerate())
    with recorder.counting_launches(), recorder:
        output = cls.apply(*leaves)
        node = output.grad_fn if isinstance(output, torch.Tensor) else None
        saved, attributes = [], []
        if node is not None:
            for t in node.saved_tensors:
                ptr = t.untyped_storage().data_ptr()
                saved.append({**describe_tensor(t), "input": storages.index(ptr) if ptr in storages else None})
            for key, value in vars(node).items():
                if isinstance(value, torch.Tensor):
                    attributes.append({"name": key, **describe_tensor(value)})
        recorder.phase = "backward"
        grads = cls.backward(node, grad_output) if node is not None else ()
    grads = grads if isinstance(grads, tuple) else (grads,)
    still_running = [t.name for t in threading.enumerate() if t not in threads_before]
    return {"output": output, "grads": list(grads), "saved": saved, "attributes": attributes,
            "ops": recorder.ops, "launches": recorder.launches, "grad_fn": node is not None,
            "threads": {"started": recorder.threads_started, "still_running": still_running}}


def run_poisoned(cls, inputs: list[torch.Tensor], grad_output: torch.Tensor) -> dict:
    """Forward and backward of ``cls`` with every kernel launch replaced by NaN in the
    buffers it was handed (see :func:`poisoned_launches`); returns the outputs."""
    leaves = [x.detach().requires_grad_(x.is_floating_point()) for x in inputs]
    protected = {_storage(x) for x in leaves} | {_storage(grad_output)}
    with poisoned_launches(protected):
        output = cls.apply(*leaves)
        node = output.grad_fn if isinstance(output, torch.Tensor) else None
        grads = cls.backward(node, grad_output) if node is not None else ()
    grads = grads if isinstance(grads, tuple) else (grads,)
    return {"output": output, "grads": list(grads)}
