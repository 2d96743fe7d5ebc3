"""Reading a recorded autograd wrapper: what it computed with PyTorch, and where its results came from.

The worker records a wrapper as a :class:`grader.channel.Program` and another worker replays it;
this module reads the program here, in the grader, and runs nothing. It follows every storage
from the inputs and from the kernels' buffers through the program's operators:

* an operator that only allocates, views, copies or casts passes on what its operands came from;
* any other operator (PyTorch computing) may not read an input, nor anything copied or viewed
  from one, nor a buffer a kernel was handed, except where the puzzle leaves a reduction to the
  host (``Puzzle.host_reductions``): in the backward, ``partial.sum(0)`` over a kernel's 2-D
  buffer of per-program partial rows, no more rows than the puzzle says, once per gradient it
  names, and returned as that gradient;
* what forward and backward return must be memory a kernel was handed (or a view, copy or sum
  of it): a gradient no kernel wrote is never computed, whatever values it happens to hold.

Both the replay and this reading see the same steps, and the replay checks every tensor the
recording claims a step made: a program that lies about its operators is caught there.
"""
from __future__ import annotations

import json
from dataclasses import dataclass

from grader.channel.kinds.function import Program, Step
from grader.judge.failures import (
    FailureKind,
    HostReduction,
    NeverComputed,
    NoLaunch,
    NotReplayable,
    ReturnsInput,
    TorchOp,
    Unseen,
    fmt_index,
    word,
)

# Operators that make fresh memory: `x.new_empty(...)` reads x's dtype and device, never its values.
ALLOCATING = {
    "empty", "empty_like", "empty_strided", "empty_permuted", "new_empty", "new_empty_strided", "zeros",
    "zeros_like", "new_zeros", "ones", "ones_like", "new_ones", "full", "full_like", "new_full", "scalar_tensor",
    "arange", "lift_fresh", "lift_fresh_copy",
}
# Operators that only view, copy, cast or fill: the host side of any wrapper.
LAYOUT = {
    "view", "_unsafe_view", "reshape", "flatten", "unflatten", "expand", "t", "transpose", "permute",
    "contiguous", "clone", "copy_", "_to_copy", "to", "fill_", "zero_", "detach", "alias", "as_strided",
    "select", "slice", "squeeze", "unsqueeze", "split", "split_with_sizes", "chunk", "unbind", "_reshape_alias",
    "resize_", "view_as", "expand_as", "movedim", "narrow", "diagonal",
}
# What PyTorch may compute on the kernels' buffers: reducing a per-tile partial result.
REDUCTIONS_OF_PARTIALS = {"sum"}

INPUT, KERNEL, SUMMED = 1, 2, 4  # SUMMED: made by a reduction left to the host


@dataclass(frozen=True)
class Finding:
    facts: object  # what the program shows (grader.judge.failures), worded by the catalogue

    @property
    def kind(self) -> FailureKind:
        return self.facts.kind

    @property
    def text(self) -> str:
        return word(self.facts)


def base_name(op: str) -> str:
    """``aten::sum.dim_IntList`` -> ``sum``."""
    return op.partition("::")[2].partition(".")[0]


def refs_in(value) -> list[int]:
    """The refs an argument holds, however deep (lists, dicts, descriptors)."""
    if isinstance(value, dict):
        if isinstance(value.get("ref"), int):
            return [value["ref"]]
        return [r for v in value.values() for r in refs_in(v)]
    if isinstance(value, (list, tuple)):
        return [r for v in value for r in refs_in(v)]
    return []


def _step_refs(step: Step) -> list[int]:
    return refs_in(list(step.args)) + refs_in(step.kwargs)


def allowed_words(host_reductions: dict[str, int]) -> str:
    """What a puzzle leaves to the host, as its statement says it."""
    if not host_reductions:
        return "no reduction: every sum runs in your kernels"
    said = [f"`grad_{name}` as `partial.sum(0)`, the sum over the first dim of a 2-D buffer of per-program partial "
            f"rows your backward's kernel wrote (at most {rows} rows)" for name, rows in host_reductions.items()]
    return "one reduction, in the backward: " + "; ".join(said)


class Origins:
    """Where each storage's contents came from, step by step: the inputs, a kernel, or neither."""

    def __init__(self, program: Program, host_reductions: dict[str, int] | None = None) -> None:
        self.program = program
        self.host_reductions = dict(host_reductions or {})
        self.summed = 0  # reductions left to the host so far
        self.sums: list[Step] = []  # their steps
        self.from_sums: dict[int, set[int]] = {}  # storage -> the host sums (by number) its contents come from
        self.flags: dict[int, int] = {}
        self.made_by: dict[int, Step] = {}  # storage -> the step that first made it
        self.given = {self.storage(ref) for ref in range(program.inputs + 1)}  # the inputs, then grad_output
        for storage in self.given:
            self.flags[storage] = INPUT

    def storage(self, ref: int) -> int:
        return self.program.metas[ref].storage

    def of(self, refs) -> int:
        flags = 0
        for ref in refs:
            flags |= self.flags.get(self.storage(ref), 0)
        return flags

    def follow(self, step: Step) -> Finding | None:
        """Take one step: a finding if it is PyTorch computing where a kernel should."""
        operands = [r for r in _step_refs(step) if 0 <= r < len(self.program.metas)]
        if step.kernel is not None:  # what it was handed is its result (or its scratch); never the inputs
            fed = next((r for r in operands if self.of([r]) & SUMMED), None)
            if fed is not None:
                made = self.made_by[self.storage(fed)]
                return Finding(HostReduction(
                    made.phase, "sum", tuple(self.program.metas[fed].shape),
                    f"made a tensor that the launch of `{'.'.join(step.kernel.path)}`{_line(step)} reads: the host's "
                    f"sum may only finish a gradient", allowed_words(self.host_reductions), made.line, made.source,
                    made.file))
            for ref in operands:
                if self.storage(ref) not in self.given:
                    self.flags[self.storage(ref)] = self.flags.get(self.storage(ref), 0) | KERNEL
            return None
        name, came, summed = base_name(step.op), self.of(operands), None
        for ref in step.out:
            self.made_by.setdefault(self.storage(ref), step)
        if not step.op.startswith("aten::"):
            return Finding(NotReplayable(
                step.phase, f"calls `{step.op}`{_line(step)}, which is not one of PyTorch's own operators"))
        if name in ALLOCATING:
            for ref in step.out:
                self.flags[self.storage(ref)] = 0
            return None
        shapes = ", ".join(fmt_index(tuple(self.program.metas[r].shape)) for r in operands)
        if name not in LAYOUT:
            if came & INPUT:
                return Finding(TorchOp(step.phase, name, shapes, step.line, step.source, step.file))
            if came & KERNEL and name not in REDUCTIONS_OF_PARTIALS:
                return Finding(TorchOp(step.phase, name, shapes, step.line, step.source, step.file,
                                       on_kernel_buffers=True))
            if came & KERNEL:
                why = self._not_a_partial_sum(step, operands, came)
                if why is not None:
                    shape = tuple(self.program.metas[operands[0]].shape) if operands else ()
                    return Finding(HostReduction(step.phase, name, shape, why, allowed_words(self.host_reductions),
                                                 step.line, step.source, step.file))
                self.summed += 1
                self.sums.append(step)
                summed = len(self.sums) - 1
                came |= SUMMED
        descends = set().union(*(self.from_sums.get(self.storage(r), set()) for r in operands))
        if summed is not None:
            descends.add(summed)
        for ref in step.out:
            self.flags[self.storage(ref)] = self.flags.get(self.storage(ref), 0) | came
            self.from_sums.setdefault(self.storage(ref), set()).update(descends)
        return None

    def _not_a_partial_sum(self, step: Step, operands: list[int], came: int) -> str | None:
        """Why this reduction of a kernel's buffer is not one the puzzle leaves to the host, or None."""
        if not self.host_reductions:
            return "sums on the host"
        if step.phase != "backward":
            return "sums in the forward"
        if came & SUMMED:
            return "sums what the host already summed"
        if self.summed >= len(self.host_reductions):
            return f"is reduction {self.summed + 1} on the host"
        shape = tuple(self.program.metas[operands[0]].shape) if len(operands) == 1 else ()
        dims = step.args[1] if len(step.args) > 1 else step.kwargs.get("dim")
        dims = [dims] if isinstance(dims, int) else dims
        if len(shape) != 2 or not isinstance(dims, list) or dims not in ([0], [-2]):
            over = "every dim" if not dims else f"dim {', '.join(map(str, dims))}"
            return f"sums over {over} of a {len(shape)}-D tensor, not over the first dim of per-program partial rows"
        most = max(self.host_reductions.values())
        if shape[0] > most:
            return (f"sums {shape[0]} rows, more than the {most} per-program partial rows a kernel leaves when each "
                    f"program sums several rows itself")
        return None

    def describe(self, ref: int, names: list[str]) -> str:
        """What a returned tensor is, in the learner's words: an input, or the line that made it."""
        storage = self.storage(ref)
        for index in range(self.program.inputs + 1):
            if self.storage(index) == storage:
                return f"`{names[index]}`" + ("" if index == ref else " (a view of it)")
        step = self.made_by.get(storage)
        if step is None:
            return f"a tensor of shape {fmt_index(tuple(self.program.metas[ref].shape))}"
        return f"the tensor `{base_name(step.op)}` made{_line(step)}"


def _line(step: Step) -> str:
    return f" at line {step.line}: `{step.source}`" if step.line else ""


def check(program: Program, input_names: list[str], output_name: str, wants_grad: list[bool],
          host_reductions: dict[str, int] | None = None) -> Finding | None:
    """The first way in which the program is not a wrapper around its kernels, or None.
    ``host_reductions``: the puzzle's (input -> most partial rows the host may sum)."""
    if program.unseen is not None:
        u = program.unseen
        return Finding(Unseen(u.phase, u.what, u.shape, u.line, u.source, u.file))
    for phase in ("forward", "backward"):
        if not any(s.kernel is not None and s.phase == phase for s in program.steps):
            return Finding(NoLaunch(phase))
    origins = Origins(program, host_reductions)
    for step in program.steps:
        finding = origins.follow(step)
        if finding is not None:
            return finding
    names = [*input_names, "grad_output"]
    returned_sums: set[int] = set()
    returned = [("forward", output_name, program.output)]
    returned += [("backward", f"grad_{name}", r) for name, r, wanted in zip(input_names, program.grads, wants_grad)
                 if wanted]
    for phase, name, value in returned:
        if value.ref is None:
            continue  # not a tensor: the shape check words it
        flags = origins.of([value.ref])
        if flags & SUMMED and name.removeprefix("grad_") not in origins.host_reductions:
            made = origins.describe(value.ref, names)
            return Finding(HostReduction(phase, "sum", tuple(program.metas[value.ref].shape),
                                         f"made {made}, returned as `{name}`", allowed_words(origins.host_reductions),
                                         None, ""))
        returned_sums |= origins.from_sums.get(origins.storage(value.ref), set())
        if not flags & KERNEL:
            made = origins.describe(value.ref, names)
            return Finding(ReturnsInput(phase, name, made) if flags & INPUT else NeverComputed(phase, name, made))
    for number, step in enumerate(origins.sums):  # a host sum that finishes no gradient computed something else
        if number not in returned_sums:
            shape = tuple(program.metas[_step_refs(step)[0]].shape) if _step_refs(step) else ()
            wanted = " or ".join(f"`grad_{n}`" for n in origins.host_reductions)
            return Finding(HostReduction(step.phase, "sum", shape, f"is not returned as {wanted}",
                                         allowed_words(origins.host_reductions), step.line, step.source, step.file))
    return None


# Operators whose result, of its argument's shape and dtype, holds the argument's values: a
# contiguous copy of a strided input (``q.contiguous()`` is ``clone``) saved is that input saved.
COPIES = {"clone", "contiguous", "_to_copy"}


def saved_inputs(program: Program) -> list[bool]:
    """For each tensor ctx saved: whether it is an input, a view of one, or a copy of one with its
    shape and dtype (the same values, in a layout the kernels can take)."""
    inputs = {program.metas[i].storage for i in range(program.inputs)}
    for step in program.steps:
        if not step.op or base_name(step.op) not in COPIES or not step.args or len(step.out) != 1:
            continue
        source = refs_in(step.args[0])
        if len(source) != 1 or program.metas[source[0]].storage not in inputs:
            continue
        made, copied = program.metas[step.out[0]], program.metas[source[0]]
        if (tuple(made.shape), made.dtype) == (tuple(copied.shape), copied.dtype):
            inputs.add(made.storage)
    return [ref is not None and program.metas[ref].storage in inputs for ref in program.saved]


def typed_argument(value, program: Program):
    """A launch argument as the compile check needs it: a tensor as its pointer's dtype."""
    if isinstance(value, list):
        return [typed_argument(v, program) for v in value]
    if isinstance(value, dict):
        if isinstance(value.get("ref"), int) and 0 <= value["ref"] < len(program.metas):
            return {"pointer": program.metas[value["ref"]].dtype}
        if "constant" in value:
            return {"pointer": value["constant"].get("dtype", "float32")}
        if "dtype" in value:
            return value["dtype"]
        if "tl_dtype" in value:
            return value
        return {"unknown": True}
    return value


def launch_key(step: Step, program: Program) -> str | None:
    """What makes two launches one compile: the kernel, and its arguments' types and values (Triton's
    own cache makes a second compile of one signature cheap). None for a launch the check cannot
    type (a host tensor descriptor)."""
    typed = ([typed_argument(a, program) for a in step.args],
             {k: typed_argument(v, program) for k, v in step.kwargs.items()})
    text = json.dumps([step.kernel.path, step.kernel.hops, step.compiled, typed, step.options], sort_keys=True)
    return None if '"unknown"' in text else text
