"""Block pointers and tensor descriptors, given the program axis.

A block pointer (``tl.make_block_ptr``, gone from Triton 3.9) and a tensor descriptor hold a
base, shape, strides and offsets as scalars: per lane in a batched run. Their pointers and
masks are made as the interpreter makes them, per lane: the same integer arithmetic in the same
types, with the block's axes after the program axis. An alignment the descriptor asserts is
asserted per lane, the lowest-ranked failing program's assertion raised as the serial run's.
"""
from __future__ import annotations

import inspect

import numpy as np

from grader.sandbox.batched.lanes import current


def _lane(data, ndim: int) -> np.ndarray:
    """A scalar's lanes, shaped to broadcast against a block of ``ndim`` dims after them."""
    return np.asarray(data).reshape((-1,) + (1,) * ndim)


def _pointers(base, offsets, strides, shape, block_shape, itemsize: int, checked):
    """The block's addresses and masks: ``checked`` says per dim whether it is masked to ``shape``."""
    ndim = len(block_shape)
    ptrs = _lane(base.data, ndim)
    masks = np.ones((1,) + tuple(block_shape), dtype=bool)
    for dim in range(ndim):
        bcast = [1] * ndim
        bcast[dim] = block_shape[dim]
        off = _lane(offsets[dim].data, ndim) + np.arange(block_shape[dim]).reshape([1] + bcast)
        ptrs = ptrs + (itemsize * off * _lane(strides[dim].data, ndim)).astype(np.uint64)
        if checked(dim):
            masks = masks & (off < _lane(shape[dim].data, ndim)) & (off >= 0)
    shape = np.broadcast_shapes(ptrs.shape, (1,) + tuple(block_shape))
    return (ptrs if ptrs.shape == shape else np.array(np.broadcast_to(ptrs, shape))), masks


def _aligned(ok: np.ndarray, message: str) -> None:
    """AssertionError, as the serial interpreter's ``assert``, for the lowest-ranked lane where ``ok`` fails."""
    ok = np.asarray(ok).reshape(-1)
    if ok.all():
        return
    group = current()
    failed = AssertionError(message)
    failed.batched_rank = int(group.ranks[np.flatnonzero(~ok)].min()) if ok.size == group.size \
        else int(group.ranks.min())
    raise failed


def install(interpreter, tl) -> None:
    Handle, builder = interpreter.TensorHandle, interpreter.InterpreterBuilder
    block_ptr = getattr(interpreter, "BlockPointerHandle", None)
    if block_ptr is not None:
        serial_block = block_ptr.materialize_pointers

        def block_pointers(self, boundary_check):
            if current() is None:
                return serial_block(self, boundary_check)
            width = self.base.get_element_ty().primitive_bitwidth // 8
            ptrs, masks = _pointers(self.base, self.offsets, self.strides, self.shape, self.block_shape, width,
                                    lambda dim: dim in boundary_check)
            return Handle(ptrs, self.base.dtype.scalar), masks
        block_ptr.materialize_pointers = block_pointers
        serial_advance = builder.create_advance

        def create_advance(self, ptr, offsets):
            if current() is None:
                return serial_advance(self, ptr, offsets)
            if len(ptr.offsets) != len(offsets):
                raise ValueError("len(ptr.offsets) != len(offsets)")
            moved = []
            for old, by in zip(ptr.offsets, offsets):
                data = np.array(np.broadcast_to(old.data, np.broadcast_shapes(np.shape(old.data), np.shape(by.data))))
                data += by.data  # in place, as the interpreter adds: the offset keeps its type
                moved.append(Handle(data, old.dtype))
            return block_ptr(ptr.base, ptr.shape, ptr.strides, moved, ptr.block_shape, ptr.order)
        builder.create_advance = create_advance

    desc = getattr(interpreter, "TensorDescHandle", None)
    if desc is None:
        return
    serial_validate, serial_desc = desc.validate, desc.materialize_pointers
    masks_as_handle = "TensorHandle(masks" in inspect.getsource(serial_desc)

    def validate(self):
        if current() is None:
            return serial_validate(self)
        itemsize = self.base.dtype.element_ty.primitive_bitwidth // 8
        _aligned(np.asarray(self.base.data) % 16 == 0, "base must be 16-byte aligned")
        assert len(self.strides) == self.ndim
        assert len(self.block_shape) == self.ndim
        assert self.ndim >= 1, "descriptor cannot be 0 dimensional"
        for stride in self.strides[:-1]:
            _aligned(np.asarray(stride.data) * itemsize % 16 == 0, "stride must be 16-byte aligned")
        _aligned(np.asarray(self.strides[-1].data) == 1, "last dim must be contiguous")

    def descriptor_pointers(self, offsets):
        if current() is None:
            return serial_desc(self, offsets)
        assert len(offsets) == self.ndim
        itemsize = self.base.dtype.element_ty.primitive_bitwidth // 8
        _aligned(np.asarray(offsets[-1].data) * itemsize % 16 == 0, "block offset start must be 16-byte aligned")
        ptrs, masks = _pointers(self.base, offsets, self.strides, self.shape, self.block_shape, itemsize,
                                lambda dim: True)
        ptrs = Handle(np.asarray(ptrs, dtype=np.uint64), self.base.dtype.scalar)
        return ptrs, (Handle(masks, tl.int1) if masks_as_handle else masks)
    desc.validate, desc.materialize_pointers = validate, descriptor_pointers
