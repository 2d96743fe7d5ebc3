"""Messages for failures the worker reports: each names what went wrong, where, and the fix.

Every failure kind's words are the catalogue's (:mod:`grader.judge.failures`). Here: an access out of
bounds, whose fix is written against the learner's own line; the tidying of a finished message;
and entry points that word a failure from plain values, for callers that have no facts object.
"""
from __future__ import annotations

import ast
import re

from grader.channel import wire
from grader.judge.failures import (
    CompileFailed,
    Crash,
    InterpreterLimit,
    dtype_fix,
    fmt_index,
    index_of,
    plural,
    usual_fix,
    word,
)
from grader.judge.failures import at_line as _at_line
from grader.source.source_lines import access_call

__all__ = ["out_of_bounds", "tidy", "usual_fix", "dtype_fix", "compile_failure", "crash", "interpreter_limit"]


def _mask_of(call: ast.Call, op: str) -> ast.expr | None:
    for keyword in call.keywords:
        if keyword.arg == "mask":
            return keyword.value
    position = 1 if op == "load" else 2
    return call.args[position] if len(call.args) > position else None


def _block_row_stride(pointer: ast.expr | None, dims: tuple[str, ...]) -> tuple[ast.expr, str] | None:
    """In a 2-D access, a row index times a name that is not the tensor's row length: a block size
    (``B1``, ``BLOCK_N``) or another of its sizes. That product and the name, or None. A name the
    kernel was given as a stride (``stride_x``) is never taken for a wrong one."""
    if pointer is None or len(dims) != 2:
        return None
    for node in ast.walk(pointer):
        if not (isinstance(node, ast.BinOp) and isinstance(node.op, ast.Mult)):
            continue
        for rows, factor in ((node.left, node.right), (node.right, node.left)):
            if (isinstance(rows, ast.Subscript) and isinstance(factor, ast.Name) and factor.id != dims[-1]
                    and _is_column(rows.slice) and (re.fullmatch(r"B\d*|BLOCK\w*", factor.id) or factor.id in dims)):
                return node, factor.id
    return None


def _is_column(index: ast.expr) -> bool:
    """``[:, None]``: a block of row indices made a column."""
    return (isinstance(index, ast.Tuple) and len(index.elts) == 2 and isinstance(index.elts[0], ast.Slice)
            and isinstance(index.elts[1], ast.Constant) and index.elts[1].value is None)


def _bounds_fix(access: wire.OutOfBoundsAccess, dims: tuple[str, ...]) -> str:
    """A fix written against the learner's own line where it can be, else a general one."""
    op, tensor = access.op, access.tensor
    if access.via == "block_ptr":
        dims_named = ", ".join(str(i) for i in range(len(dims))) or "0"
        if op == "load":
            return (f"load the block pointer with `boundary_check=({dims_named},), padding_option=\"zero\"` "
                    f"(every dimension whose tile can run past `{tensor}`), so lanes outside read zero.")
        return f"store through the block pointer with `boundary_check=({dims_named},)`, so lanes outside are dropped."
    if access.via == "descriptor":
        return (f"a tensor descriptor clips at the shape it was given, so that shape is larger than `{tensor}`: "
                f"pass the tensor's real sizes to `tl.make_tensor_descriptor`.")
    call = access_call(access.source, op)
    sizes = (f"`{dims[0]}`" if len(dims) == 1 else
             "its size in some dimension (" + ", ".join(f"`{d}`" for d in dims) + ")") if dims else "its size"
    if call is not None:
        stride = _block_row_stride(call.args[0] if call.args else None, dims)
        if stride is not None:
            return (f"the row stride: `{ast.unparse(stride[0])}` steps `{stride[1]}` elements from one row to "
                    f"the next, but a row of `{tensor}` is `{dims[-1]}` elements long. Row 0 is right and every "
                    f"later row lands in the wrong place, and the last rows run past the end. "
                    f"Multiply by `{dims[-1]}`.")
        mask = _mask_of(call, op)
        if mask is not None:
            return (f"the mask `{ast.unparse(mask)}` lets through lanes outside `{tensor}`: it must be "
                    f"False for every lane whose index reaches {sizes}.")
        pointer = ast.unparse(call.args[0])
        names = sorted({n.id for n in ast.walk(call.args[0]) if isinstance(n, ast.Name)
                        and not n.id.endswith("_ptr")})
        if len(dims) == 1 and len(names) == 1:
            value = f", {ast.unparse(call.args[1])}" if op != "load" and len(call.args) > 1 else ""
            other = ", other=0.0" if op == "load" else ""
            return (f"mask the {op}: `tl.{call.func.attr}({pointer}{value}, mask={names[0]} < {dims[0]}{other})`.")
    if len(dims) > 1:
        return (f"mask the {op} in every dimension, e.g. for a 2-D tile "
                f"`mask=(rows[:, None] < {dims[0]}) & (cols[None, :] < {dims[1]})`, so that no lane's "
                f"index reaches {sizes}.")
    return f"mask the {op}, e.g. `mask=offsets < {dims[0] if dims else 'N0'}`."


def out_of_bounds(access: wire.OutOfBoundsAccess, dims: tuple[str, ...] = ()) -> str:
    shape, first, program = access.shape, access.first_index, access.program
    where = "before its start" if first < 0 else "past its end"
    index = fmt_index(index_of(first, shape)) if 0 <= first < access.numel else f"flat index {first}"
    return (f"out-of-bounds {access.op} of `{access.tensor}` in program {program}"
            f"{_at_line(access.line, access.source)}: {access.bad_lanes} of "
            f"{access.lanes} active lanes fall outside `{access.tensor}` (shape {shape}, "
            f"{plural(access.numel, 'element')}); the first is {index}, {where}. "
            f"Fix: {_bounds_fix(access, dims)}")


def interpreter_limit(reply: wire.Failure, puzzle_id: str, compiled: bool) -> str:
    """A correct-looking kernel the interpreter cannot run: its limit, never the learner's failure."""
    return word(InterpreterLimit(reply.error, reply.line, reply.source, puzzle_id, compiled))


def crash(returncode: int | None, stderr_tail: str, device: str, corrupted: bool = False) -> str:
    """The process running the kernel died (``returncode``), reported a crash it cannot survive
    (``returncode`` None: a CUDA error), or broke the grading channel (``corrupted``)."""
    return word(Crash(returncode, stderr_tail, device, corrupted))


def tidy(text: str) -> str:
    """One full stop where two sentences' pieces each brought one ("... the end.." -> "... the end.")."""
    return re.sub(r"(?<=[^\s.])\.\.(?=\s|$)", ".", text)


def compile_failure(error: str, line: int | None, source: str, on_gpu: bool = False, case: str = "",
                    inputs=None, outputs=None) -> str:
    """``case``, ``inputs`` and ``outputs``: the case compiled and its tensors' dtypes by name, for
    a fix that names them (see :func:`dtype_fix`)."""
    return word(CompileFailed(error, line, source, on_gpu, case, inputs, outputs))
