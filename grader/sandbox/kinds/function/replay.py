"""Replaying a recorded autograd wrapper on real data (inside a worker that never ran it).

The program (:class:`grader.channel.kinds.function.Program`, made by :mod:`.record`) is run step by
step: PyTorch operators are looked up in ``torch.ops.aten`` by name and called, kernels are
found from the learner's module by the path the recording gave and launched, with the grid
the recording worked out. No other learner Python runs here: not the wrapper, not its grid
functions. Every tensor a step makes is checked against the recording (shape, strides,
dtype, which storage it views), so a recording that lied about what its operators made is
caught, not believed.

In the interpreter, every tensor a step allocates joins the bounds check as it appears, named
by the wrapper's line that made it.
"""
from __future__ import annotations

import torch

from grader.course.dtypes import dtype_name
from grader.sandbox.kinds.function.tape import flat
from grader.sandbox.recorded_launch import Disagrees, find_kernel

# Operators that read or write files: a recorded program never gets them.
REFUSED = {"from_file", "_local_scalar_dense", "save", "load"}


def operator(name: str):
    """``aten::sum.dim_IntList`` as the operator it names (aten only)."""
    namespace, _, rest = name.partition("::")
    base, _, overload = rest.partition(".")
    if namespace != "aten" or base in REFUSED:
        raise Disagrees(f"`{name}` is not an operator the grader replays")
    packet = getattr(torch.ops.aten, base, None)
    op = getattr(packet, overload or "default", None) if packet is not None else None
    if op is None:
        raise Disagrees(f"`{name}` is not an operator of this PyTorch")
    return op


class Replayer:
    def __init__(self, program, tensors: list[torch.Tensor], device: str, module, config: int,
                 on_allocate=None) -> None:
        self.program, self.device, self.module, self.config = program, device, module, config
        self.refs: list[torch.Tensor | None] = [None] * len(program.metas)
        self.storages: dict[int, tuple[int, int]] = {}  # recorded storage -> (address, offset shift)
        self.on_allocate = on_allocate
        self.labels: list[str] = []
        for ref, tensor in enumerate(tensors):
            self._assign(ref, tensor)

    # ---- values ------------------------------------------------------------------------------
    def decode(self, value):
        if isinstance(value, list):
            return [self.decode(v) for v in value]
        if not isinstance(value, dict):
            return value
        if "ref" in value:
            tensor = self.refs[value["ref"]] if isinstance(value["ref"], int) and 0 <= value["ref"] < len(self.refs) \
                else None
            if tensor is None:
                raise Disagrees(f"ref {value['ref']} is used before any step made it")
            return tensor
        if "constant" in value:
            const = value["constant"]
            return torch.tensor(const["values"], dtype=getattr(torch, const["dtype"])).reshape(const["shape"]) \
                .to(self.device)
        if "dtype" in value:
            return getattr(torch, value["dtype"])
        if "tl_dtype" in value:
            import triton.language as tl
            return tl.dtype(value["tl_dtype"])
        if "device" in value:
            return torch.device(self.device)
        if "layout" in value:
            return getattr(torch, value["layout"])
        if "memory_format" in value:
            return getattr(torch, value["memory_format"])
        if "dict" in value:
            return {k: self.decode(v) for k, v in value["dict"].items()}
        if "descriptor" in value:
            from triton.tools.tensor_descriptor import TensorDescriptor
            parts = {k: self.decode(v) for k, v in value["descriptor"].items()}
            return TensorDescriptor(parts["base"], parts["shape"], parts["strides"], parts["block_shape"],
                                    padding=parts.get("padding", "zero"))
        raise Disagrees(f"an argument {str(value)[:80]} the grader does not replay")

    def _assign(self, ref: int, tensor: torch.Tensor) -> None:
        """``tensor`` is what the step made for ``ref``: it must be what the recording says, in
        layout and in which memory it views. Offsets are compared within each storage (the
        grader's inputs sit past a guard region; the recording's at 0)."""
        meta = self.program.metas[ref]
        actual = (tuple(tensor.shape), tuple(tensor.stride()), dtype_name(tensor))
        if actual[0] != meta.shape or actual[2] != meta.dtype or not same_strides(meta.shape, actual[1], meta.strides):
            raise Disagrees(f"made a tensor of shape {actual[0]}, strides {actual[1]}, {actual[2]}, where the "
                            f"recording has shape {meta.shape}, strides {meta.strides}, {meta.dtype}")
        storage = tensor.untyped_storage()
        address, shift = storage.data_ptr(), tensor.storage_offset() - meta.offset
        known = self.storages.get(meta.storage)
        if storage.nbytes() and known is None and address in (a for a, _ in self.storages.values()):
            raise Disagrees("views the memory of another tensor, where the recording has memory of its own")
        if storage.nbytes() and known is not None and known != (address, shift):
            raise Disagrees("has memory of its own, where the recording has a view of another tensor"
                            if known[0] != address else
                            f"starts {shift - known[1]} elements away from where the recording has it")
        if known is None:
            self.storages[meta.storage] = (address, shift)
            if self.on_allocate is not None and ref > self.program.inputs:
                self.on_allocate(tensor)
        self.refs[ref] = tensor

    # ---- steps -------------------------------------------------------------------------------
    def run(self, phase: str) -> None:
        for step in self.program.steps:
            if step.phase != phase:
                continue
            try:
                if step.op:
                    self._operator(step)
                else:
                    self._launch(step)
            except Disagrees as exc:
                where = f" (line {step.line}: `{step.source}`)" if step.line else ""
                raise Disagrees(f"the {phase}'s `{step.op or '.'.join(step.kernel.path)}`{where} {exc}") from None

    def _operator(self, step) -> None:
        op = operator(step.op)
        args, kwargs = self.decode(list(step.args)), {k: self.decode(v) for k, v in step.kwargs.items()}
        out = op(*args, **kwargs)
        made = [t for t in flat([out]) if isinstance(t, torch.Tensor)]
        if len(made) != len(step.out):
            raise Disagrees(f"made {len(made)} tensors, where the recording has {len(step.out)}")
        for ref, tensor in zip(step.out, made):
            self._assign(ref, tensor)

    def kernel(self, step):
        return find_kernel(self.module, step.kernel.path, step.kernel.hops)

    def _launch(self, step) -> None:
        from grader.sandbox.launch import NotGenuine, describe_config, unwrap
        from grader.sandbox.tuning import launch
        name = ".".join(step.kernel.path)
        try:
            layers = unwrap(self.kernel(step), name)
        except NotGenuine as exc:
            raise Disagrees(str(exc)) from None
        args = self.decode(list(step.args))
        kwargs = {k: self.decode(v) for k, v in step.kwargs.items()}
        if step.compiled:  # the handle takes every parameter in order; what warmup compiled wins
            import inspect
            kwargs = dict(zip(inspect.signature(layers.base.fn).parameters, args))
            kwargs.update({k: self.decode(v) for k, v in step.options.items()})
            args = []
        if layers.autotuner is not None and layers.configs:
            kept = self._kept(layers, args, kwargs)
            config = kept[min(self.config, len(kept) - 1)]
            # the recording evaluated the grid once per config of the tuner, in its order
            grid = tuple(step.grids[min(layers.configs.index(config), len(step.grids) - 1)])
            self.labels.append(f"`{name}` with {describe_config(config)}")
            launch(layers, grid, args, kwargs, config)  # below the tuner, as a kernel puzzle's configs are
        else:
            layers.outer[grid_of(step, self.config)](*args, **kwargs)

    def _kept(self, layers, args, kwargs) -> list:
        """The configs the tuner could pick for this launch: those its early_config_prune keeps,
        asked with tensors that have this launch's shapes and no values, as for a kernel puzzle."""
        import inspect

        from grader.sandbox.tuning import kept_configs
        meta = {k: torch.empty_strided(v.shape, v.stride(), dtype=v.dtype, device="meta")
                if isinstance(v, torch.Tensor) else v
                for k, v in {**dict(zip(inspect.signature(layers.base.fn).parameters, args)), **kwargs}.items()}
        return kept_configs(layers, meta, kwargs)


def same_strides(shape, strides, recorded) -> bool:
    """Whether two layouts of ``shape`` address the same elements: the stride of a dimension of
    size 1 is never used. Fake tensors give such a dimension other strides than real ones
    (``torch.empty_like`` of ``q.transpose(1, 2).contiguous()`` with H == 1), which is no
    difference the wrapper made."""
    return len(strides) == len(recorded) == len(shape) and all(
        size <= 1 or a == b for size, a, b in zip(shape, strides, recorded))


def grid_of(step, config: int) -> tuple:
    return tuple(step.grids[min(config, len(step.grids) - 1)])


def replay(program, tensors: list[torch.Tensor], device: str, module, config: int = 0, on_allocate=None):
    """Forward, then backward: the output and the gradients as returned, and the configs used."""
    replayer = Replayer(program, tensors, device, module, config, on_allocate)
    replayer.run("forward")
    replayer.run("backward")
    take = lambda returned: replayer.refs[returned.ref] if returned.ref is not None else returned  # noqa: E731
    return [take(program.output), *map(take, program.grads)], replayer.labels
