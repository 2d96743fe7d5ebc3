"""Running a learner's ``torch.autograd.Function`` (inside the worker).

The forward runs through ``Function.apply``; the backward is called directly on the node it
made (``cls.backward(ctx, grad_output)``), in this thread, so that everything it does is seen.
While both run we record:

* every PyTorch operator outside the Triton kernel launches (a wrapper that computes the
  result with PyTorch instead of its kernels is caught from this log);
* how many Triton kernels each phase launched;
* what ``ctx`` saved, and whether each saved tensor is one of the inputs (or a view of one).

In the interpreter, tensors the wrapper allocates join the bounds check as they appear.
"""
from __future__ import annotations

import contextlib

import torch
from torch.utils._python_dispatch import TorchDispatchMode

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
        self.phase = "forward"
        self.ops: list[dict] = []
        self.launches = {"forward": 0, "backward": 0}
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
        if layout and reads_inputs and name not in ALLOCATING_OPS:
            self.watched.update(_storage(t) for t in tensors_out)
        self.ops.append({"phase": self.phase, "op": name, "layout": layout, "reads_inputs": reads_inputs,
                         "in": [list(t.shape) for t in tensors_in], "out": [list(t.shape) for t in tensors_out]})
        if self.on_allocate is not None and name in ALLOCATING_OPS:
            for tensor in tensors_out:
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
        def launching(counted: bool):
            recorder.launches[recorder.phase] += counted
            recorder.in_kernel += 1
            try:
                yield
            finally:
                recorder.in_kernel -= 1

        def wrap_run(original):
            def run(self, *args, **kwargs):
                with launching(not kwargs.get("warmup")):
                    return original(self, *args, **kwargs)
            return run

        def wrap_getitem(original):
            def getitem(self, grid):
                runner = original(self, grid)

                def counted_runner(*args, **kwargs):
                    with launching(True):
                        return runner(*args, **kwargs)
                return counted_runner
            return getitem

        saved = [(JITFunction, "run", wrap_run), (InterpretedFunction, "run", wrap_run),
                 (CompiledKernel, "__getitem__", wrap_getitem)]
        originals = [getattr(cls, name) for cls, name, _ in saved]
        for (cls, name, wrap), original in zip(saved, originals):
            setattr(cls, name, wrap(original))
        try:
            yield
        finally:
            for (cls, name, _), original in zip(saved, originals):
                setattr(cls, name, original)


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
    return {"tensor": True, "shape": list(t.shape), "dtype": str(t.dtype).replace("torch.", "")}


def run_function(cls, inputs: list[torch.Tensor], grad_output: torch.Tensor, on_allocate=None) -> dict:
    """Forward and backward of ``cls`` on ``inputs``; returns the outputs and what was seen."""
    leaves = [x.detach().requires_grad_(x.is_floating_point()) for x in inputs]
    storages = [x.untyped_storage().data_ptr() for x in leaves]
    recorder = Recorder(set(storages), on_allocate)
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
    return {"output": output, "grads": list(grads), "saved": saved, "attributes": attributes,
            "ops": recorder.ops, "launches": recorder.launches, "grad_fn": node is not None}
