"""The messages only a Helion puzzle sends: one case of a ``@helion.kernel`` run (``HelionRun`` ->
``HelionRan``), with the host work it did, the Triton Helion generated and each launch of it.
Declared as the core's messages are (:mod:`grader.channel.wire`), and registered into the
requests the worker reads.
"""
from __future__ import annotations

import enum
from typing import ClassVar

from grader.channel.wire_format import (
    JSON,
    BufferSpec,
    Failure,
    Message,
    Reply,
    Request,
    TensorInfo,
    Value,
    register_requests,
)


class HelionWarmStep(enum.StrEnum):
    """The kind's warm-up steps, taken once in the zygote (grader.sandbox.warmup), by the names the
    zygote is asked for them."""

    HELION = "helion"  # Helion's import, seconds long


class HostWork(Message):
    """Work a Helion kernel does outside its ``hl.tile`` loops: whole-tensor PyTorch on the host
    (``loops`` False: the kernel has no device loop at all). ``line`` is the learner's; ``ops`` the
    PyTorch operations that ran there on tensor data, on the kernel's parameters ``tensors``, in
    the helper function ``called`` (at its ``called_line``) where the kernel called one."""

    line: int | None
    source: str = ""
    loops: bool = True
    ops: tuple[str, ...] = ()
    tensors: tuple[str, ...] = ()
    called: str = ""
    called_line: int | None = None
    called_source: str = ""


class HelionLaunch(Message):
    """The Triton kernel Helion generated and one launch of it, as the compile check needs it."""

    kernel: str
    signature: dict[str, str]
    constexprs: dict[str, JSON]
    options: dict[str, int]
    grid: tuple[int, ...]


class FixedTile(Message):
    """A tile size a Helion kernel fixes itself (``hl.tile(n, block_size=64)``), over ``extent``."""

    name: str
    extent: int
    size: int


class Changed(Message):
    """An input the kernel wrote into: how many elements changed, and the first."""

    name: str
    count: int
    first: tuple[int, ...]


class HelionRan(Reply):
    """A Helion kernel on one case: what it returned (the blobs are the tensors among them, those
    of Helion's interpreter, then those of the tiled run), or why it could not run. ``triton``:
    the Triton code Helion generated for the case's tile sizes (``config``); ``tiled``: what that
    code returned in Triton's interpreter, tile by tile; ``tiled_failure``: why it could not."""

    seconds: float
    printed: str
    returned: tuple[TensorInfo, ...] = ()
    failure: Failure | None = None
    outside: HostWork | None = None
    modified: tuple[Changed, ...] = ()  # inputs whose values the kernel changed
    triton: str = ""
    config: str = ""
    launches: tuple[HelionLaunch, ...] = ()
    tiled: tuple[TensorInfo, ...] = ()
    tiled_failure: Failure | None = None
    fixed: tuple[FixedTile, ...] = ()  # the tile sizes the kernel fixes, kept (the config says so)
    one_tile_limit: str = ""  # what Helion's interpreter could not run: ``tiled`` alone is judged

    def blobs_expected(self) -> int:
        return sum(r.tensor for r in self.returned) + sum(r.tensor for r in self.tiled)


class HelionRun(Request):
    """Run a Helion kernel on one case's inputs: compiled by Helion (which reads where the work
    is, and lowers it to Triton with the case's tile sizes), then run for its values."""

    REPLY: ClassVar[type] = HelionRan
    file: str
    kernel: str
    buffers: tuple[BufferSpec, ...]  # the inputs, fenced
    values: dict[str, Value] = {}    # the spec's keyword-only parameters, by name
    blocks: tuple[int, ...] = ()     # the case's tile sizes, mapped onto the kernel's own loops
    extents: tuple[int, ...] = ()    # the extent each of them tiles (0: the puzzle does not say)
    names: tuple[str, ...] = ()      # their names (B0...), for the config's note
    tiled: bool = True               # also run the generated Triton, tile by tile, in Triton's interpreter


register_requests(HelionRun)
