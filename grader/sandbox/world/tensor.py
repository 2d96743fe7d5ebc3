"""Tensors that are on the GPU to every question Python asks, and in CPU memory underneath.

A :class:`GpuTensor` is a wrapper subclass (``torch.Tensor._make_wrapper_subclass``) whose device
is ``cuda:0``: ``is_cuda``, ``.device``, ``device.type``, ``str(x.device)``, ``getattr`` and
``__getattribute__`` all read that one field, so no spelling of the question finds another answer.
The values live in a plain CPU tensor, :attr:`GpuTensor.memory`; every PyTorch call on a
GpuTensor runs on the memory (:func:`route`, at PyTorch's Python API: its bindings would look for a
CUDA runtime first, which a CPU build lacks; ``__torch_dispatch__`` does the same for what reaches
the operators another way) and its results are GpuTensors again, except where the call asks for
the CPU (``x.cpu()``, ``x.to("cpu")``), which gives a plain CPU tensor as on a GPU. Views stay
views: they wrap views of the same memory.

:class:`World` is the rest of the machine: ``torch.empty(..., device="cuda")``, ``torch.tensor(...,
device=x.device)`` and ``t.cuda()`` of a CPU tensor make GpuTensors (a copy, as a transfer is).
Kernel launches take :func:`in_memory` of their arguments: Triton's interpreter reads the memory
itself.
"""
from __future__ import annotations

import torch
from torch.overrides import TorchFunctionMode
from torch.utils import _pytree as pytree

CUDA = torch.device("cuda", 0)
CPU = torch.device("cpu")
REAL_GPU = torch.cuda.is_available()  # asked before the world answers for it

# Operators that may take a CPU tensor beside a GPU one, as CUDA's do: copies between devices, and
# indexing with CPU indices.
CROSSING = frozenset({"copy_", "_to_copy", "index", "index_put", "index_put_", "_index_put_impl_", "set_",
                      "_copy_from", "_copy_from_and_resize", "lift_fresh", "lift_fresh_copy", "__getitem__",
                      "__setitem__", "type_as", "new_tensor", "as_tensor"})
# Calls that name the CUDA device and allocate nothing there: a device, and a GpuTensor's wrapper.
NAMING = (torch.device, torch.Tensor._make_wrapper_subclass)


class GpuTensor(torch.Tensor):
    """A tensor on ``cuda:0`` whose values are the CPU tensor ``memory``."""

    memory: torch.Tensor

    @staticmethod
    def __new__(cls, memory: torch.Tensor):
        self = torch.Tensor._make_wrapper_subclass(
            cls, memory.shape, strides=memory.stride(), storage_offset=memory.storage_offset(), dtype=memory.dtype,
            layout=memory.layout, device=CUDA, requires_grad=memory.requires_grad)
        self.memory = memory
        return self

    @classmethod
    def __torch_function__(cls, func, types, args=(), kwargs=None):
        """Every call on a GpuTensor, in any thread, with or without the world's mode."""
        return route(func, args, kwargs or {})

    @classmethod
    def __torch_dispatch__(cls, func, types, args=(), kwargs=None):
        kwargs = dict(kwargs or {})
        wanted = kwargs.get("device")
        if wanted is not None and torch.device(wanted).type == "cuda":
            kwargs["device"] = CPU
        _same_device(func.overloadpacket.__name__, pytree.tree_leaves((args, kwargs)))
        out = func(*in_memory(args), **in_memory(kwargs))
        if wanted is not None and torch.device(wanted).type == "cpu":
            return out  # `x.cpu()`, `x.to("cpu")`: a plain CPU tensor, as on a GPU
        if func._schema.is_mutable and isinstance(out, torch.Tensor) and args and isinstance(args[0], GpuTensor) \
                and out is args[0].memory:
            return args[0]  # `z.fill_(1)`, `z.copy_(y)`: the tensor itself
        return on_gpu(out)

    def as_subclass(self, cls):
        """An alias of the memory as a ``cls``: a GpuTensor's own alias is a GpuTensor, which cannot
        become another class (a library's marker tensor: Helion's tiles in its interpreter)."""
        return self.memory.as_subclass(cls)

    def __repr__(self, *, tensor_contents=None) -> str:
        head, _, tail = repr(self.memory).rpartition(")")
        # PyTorch names the device first of what follows the values
        at = min((i for i in (head.find(f", {k}=") for k in ("dtype", "requires_grad", "grad_fn")) if i >= 0),
                 default=len(head))
        return f"{head[:at]}, device='cuda:0'{head[at:]}){tail}"

    def __reduce_ex__(self, protocol):
        return (on_gpu, (self.memory,))


# Asked its type's name, a GpuTensor says PyTorch's.
GpuTensor.__name__ = GpuTensor.__qualname__ = "Tensor"
GpuTensor.__module__ = "torch"


def on_gpu(tree):
    """``tree`` (a tensor, or lists, tuples and dicts of them) with every CPU tensor a GpuTensor;
    tensors on a real GPU, and GpuTensors, are left as they are, and so is everything on a machine
    with a GPU (where learner code has its own)."""
    if REAL_GPU:
        return tree
    return pytree.tree_map(lambda t: GpuTensor(t) if _plain(t) and t.device.type == "cpu" else t, tree)


def _plain(value) -> bool:
    """A tensor that is not a GpuTensor (a fake one of a recording is, underneath, plain)."""
    return isinstance(value, torch.Tensor) and not isinstance(value, GpuTensor)


def in_memory(tree):
    """``tree`` with every GpuTensor its CPU memory: what a kernel launch reads and writes."""
    return pytree.tree_map(lambda t: t.memory if isinstance(t, GpuTensor) else t, tree)


def _device(value, keyword: bool = False) -> torch.device | None:
    """The device ``value`` names: a ``torch.device``, or a string passed as ``device=``."""
    if isinstance(value, torch.device):
        return value
    if keyword and isinstance(value, (str, int)):
        return torch.device(value)
    return None


def _named(args, kwargs) -> torch.device | None:
    """The device a call names, if it names one (``device=...``, or a device among its arguments)."""
    if kwargs.get("device") is not None:
        return _device(kwargs["device"], keyword=True)
    return next(filter(None, map(_device, pytree.tree_leaves(args))), None)


def _on_cpu(tree):
    """``tree`` with GpuTensors as their memory and CUDA devices as the CPU: what really runs."""
    def one(value):
        if isinstance(value, GpuTensor):
            return value.memory
        device = _device(value)
        return CPU if device is not None and device.type == "cuda" else value
    return pytree.tree_map(one, tree)


def route(func, args, kwargs: dict):
    """One call of PyTorch's Python API, where a GpuTensor is among its arguments or it names the
    CUDA device: run on CPU memory, and what it makes is on the GPU again, unless the call asks for
    the CPU (``x.cpu()``, ``device="cpu"``). PyTorch's own bindings would look for CUDA's runtime
    first, which a CPU build lacks; here no CUDA tensor ever reaches them. Reads of a tensor's
    attributes (``.device``, ``.is_cuda``) are the GpuTensor's own, and say ``cuda:0``."""
    if getattr(func, "__name__", "") in ("__get__", "__set__", "__hash__") or func in NAMING:
        with torch._C.DisableTorchFunctionSubclass():  # an attribute of the tensor object itself
            return func(*args, **kwargs)
    flat = pytree.tree_leaves((args, kwargs))
    gpu = [v for v in flat if isinstance(v, GpuTensor)]
    named = _named(args, kwargs)
    special = SPECIAL.get(func)
    if special is not None and (gpu or func in MOVES):
        return special(*args, **kwargs)
    if not gpu and (named is None or named.type != "cuda"):
        return func(*args, **kwargs)
    if kwargs.get("device") is not None:
        kwargs = {**kwargs, "device": torch.device(kwargs["device"])}
    if gpu:
        _same_device(getattr(func, "__name__", ""), flat)
    out = func(*_on_cpu(args), **_on_cpu(kwargs))
    if named is not None and named.type == "cpu":
        return out
    mine = {id(t.memory): t for t in gpu}
    if isinstance(out, torch.Tensor) and id(out) in mine:
        return mine[id(out)]  # `z.fill_(1)`, `x.contiguous()` of a contiguous x: the tensor itself
    inputs = {id(v) for v in flat if _plain(v)}
    # a transfer copies: what comes back is never the CPU tensor it was sent from
    return on_gpu(pytree.tree_map(lambda t: t.clone() if id(t) in inputs else t, out))


class World(TorchFunctionMode):
    """Calls that name the CUDA device with no GpuTensor in hand (``torch.empty(n, device="cuda")``,
    ``t.cuda()``) make GpuTensors; a GpuTensor's own calls are routed the same way here as by the
    tensor itself (:func:`route`)."""

    def __torch_function__(self, func, types, args=(), kwargs=None):
        return route(func, args, kwargs or {})


def _same_device(name: str, flat: list) -> None:
    """A GPU operator given a CPU tensor with elements raises, as CUDA's does (a 0-d CPU tensor is
    a scalar, which CUDA accepts; copies and indexing cross devices)."""
    if name in CROSSING:
        return
    if any(_plain(t) and t.device.type == "cpu" and t.dim() > 0 for t in flat):
        raise RuntimeError("Expected all tensors to be on the same device, but found at least two devices, "
                           "cuda:0 and cpu!")


def _to(self, *args, **kwargs):
    """``x.to(...)`` in any of its forms (a device, a dtype, another tensor), on memory: a GPU tensor
    comes back for a CUDA device, or where ``x`` is one and no CPU device is named; the tensor
    itself where nothing changes, a copy otherwise, as PyTorch does."""
    other = next((v for v in pytree.tree_leaves((args, kwargs)) if isinstance(v, torch.Tensor)), None)
    named = other.device if other is not None else _named(args, kwargs) if "device" in kwargs else \
        next((torch.device(v) if isinstance(v, str) else v for v in args if isinstance(v, (str, torch.device))), None)
    gpu = named.type == "cuda" if named is not None else isinstance(self, GpuTensor)
    args, kwargs = pytree.tree_map(lambda v: CPU if isinstance(v, (str, torch.device)) else v, _on_cpu((args, kwargs)))
    memory = _on_cpu(self)
    out = memory.to(*args, **kwargs)
    if out is memory:  # nothing to convert: the tensor itself where it stays, a copy where it moves
        return self if gpu == isinstance(self, GpuTensor) else on_gpu(memory.clone()) if gpu else memory.clone()
    return on_gpu(out) if gpu else out


def _numpy(self, *args, **kwargs):
    if type(self.memory) is not torch.Tensor:  # a recording's fake memory: refused as fake tensors refuse it
        return self.memory.numpy(*args, **kwargs)
    raise TypeError("can't convert cuda:0 device type tensor to numpy. Use Tensor.cpu() to copy the tensor to "
                    "host memory first.")


# Methods whose meaning depends on the device, answered as on a GPU.
SPECIAL = {
    torch.Tensor.to: _to,
    torch.Tensor.cuda: lambda self, *a, **k: self if isinstance(self, GpuTensor) else on_gpu(self.clone()),
    torch.Tensor.cpu: lambda self, *a, **k: self.memory.clone() if isinstance(self, GpuTensor) else self,
    torch.Tensor.get_device: lambda self: 0 if isinstance(self, GpuTensor) else -1,
    # the memory's own address and storage: a CUDA pointer is only a number to the host too
    torch.Tensor.data_ptr: lambda self: self.memory.data_ptr(),
    torch.Tensor.untyped_storage: lambda self: self.memory.untyped_storage(),
    torch.Tensor.numpy: _numpy,
    torch.Tensor.__array__: _numpy,
}
MOVES = (torch.Tensor.to, torch.Tensor.cuda)  # what sends a CPU tensor to the GPU
