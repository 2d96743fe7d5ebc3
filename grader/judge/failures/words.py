"""Words several kinds of failure share: indices, shapes, values, a line of code, a look-alike's note."""
from __future__ import annotations

import re

# Words only the messages that name a mistake hold: a look-alike's note (look_alike_note) and an
# output read before anything was stored to it (ReadEarly). results.telling_rank looks for them.
LOOKS_LIKE = "It looks like"


READ_EARLY = "before storing to it"


def index_of(flat: int, shape) -> tuple[int, ...]:
    index = []
    for size in reversed(shape):
        index.append(flat % size if size else 0)
        flat //= max(size, 1)
    return tuple(reversed(index))


def fmt_index(index: tuple[int, ...]) -> str:
    return "(" + ", ".join(map(str, index)) + ")" if len(index) != 1 else f"({index[0]})"


def ended(returncode: int) -> str:
    """How a process ended, as a message says it: ``signal 9``, ``exit code 1``."""
    return f"signal {-returncode}" if returncode < 0 else f"exit code {returncode}"


def last_line(text: str, empty: str) -> str:
    """The last line of a process's stderr, or ``empty`` where it wrote nothing."""
    return text.strip().splitlines()[-1] if text.strip() else empty


def plural(count: int, noun: str) -> str:
    """``1 element``, ``2 elements``."""
    return f"{count} {noun}" if count == 1 else f"{count} {noun}s"


def fmt_value(value: float) -> str:
    return f"{value:.6g}"


def fmt_shape(shape) -> str:
    """A shape as Python writes it: ``(4, 8)``, ``(8,)``."""
    return fmt_index(tuple(shape)) if len(shape) != 1 else f"({shape[0]},)"


def at_line(line: int | None, source: str) -> str:
    if line is None:
        return ""
    return f" at line {line}: `{source}`" if source else f" at line {line}"


def _element(index: int, shape) -> str:
    return fmt_index(index_of(index, tuple(shape))) if shape else f"({index})"


def look_alike_note(message: str, look) -> str:
    """The message with a look-alike's sentence added, after a full stop. ``look``: a
    :class:`grader.course.puzzle.LookAlike` (its ``name`` and ``where``)."""
    message = message.rstrip()
    return f"{message}{'' if message.endswith('.') else '.'} {LOOKS_LIKE} {look.name}: {look.where.rstrip('.')}."


# Usual reasons a kernel runs in the interpreter but not on a GPU, and the one-line fix.
_COMPILE_FIXES = [
    (r"arange's arguments must be of type tl.constexpr",
     "tl.arange bounds must be compile-time constants: use a `tl.constexpr` block size, e.g. "
     "`tl.arange(0, B0)`, and add the runtime start afterwards (`start + tl.arange(0, B0)`). If B0 is "
     "a parameter, declare it `B0: tl.constexpr`."),
    (r"arange's range must be a power of 2",
     "tl.arange lengths must be powers of two: round the block up (e.g. 256 for 200) and mask the extra lanes."),
    (r"Loop-carried variable",
     "a variable updated in a loop must keep its shape and dtype: initialise it as a block of the "
     "final shape, e.g. `acc = tl.zeros([B0], dtype=tl.float32)`, not `acc = 0.0`."),
    (r"incompatible dimensions|Cannot broadcast",
     "two blocks in one expression have different shapes: build offsets, masks and values from the same "
     "tl.arange lengths, and broadcast a column against a row with `[:, None]` and `[None, :]`."),
    (r"_semantic. argument must be provided",
     "a call inside the kernel got a value it cannot take at compile time; with "
     "`tl.make_tensor_descriptor` this is usually the strides: the last one must be the literal `1` "
     "(the innermost dimension contiguous), e.g. `strides=[x_stride_row, 1]`."),
    (r"Block pointers have been removed",
     "this Triton no longer has block pointers (triton 3.9 removed them; 3.8 is the last with them): "
     "use your tensor-descriptor kernels from puzzles 16 and 17 instead, which take the same arguments."),
    (r"gives no value for `(?P<name>\w+)`",
     "set `{name}` in every `triton.Config` of the autotuner (e.g. `{{'{name}': 8}}` beside the block sizes), "
     "or give the parameter a default (`{name}: tl.constexpr = 8`)."),
    (r"Lambda",
     "lambdas are not supported in kernels: write the expression inline or as a separate @triton.jit function."),
    (r"StopIteration|nested function|FunctionDef",
     "nested `def`s are not supported in kernels: move the helper to module level and decorate it with @triton.jit."),
    (r"is not string",
     "`print` of a tensor does not compile for a GPU: use `tl.device_print(\"x\", x)` (or "
     "`tl.static_print` for compile-time values), or remove the print before submitting."),
    (r"Cannot access global variable (?P<name>\w+)",
     "kernels can read module-level constants only when they are `tl.constexpr` objects: write "
     "`{name} = tl.constexpr(...)` where the module says `{name} = ...` (e.g. `FPINT = tl.constexpr(8)`, "
     "not `FPINT = 8`)."),
    (r"Unsupported function referenced: <function (?P<name>\w+)",
     "a kernel may call only Triton functions: decorate `{name}` with `@triton.jit` if it computes on "
     "blocks, or `@triton.constexpr_function` if it computes a compile-time value from constexprs."),
    (r"'constexpr' object has no attribute",
     "a `@tl.constexpr` helper is given `tl.constexpr` objects when compiled (plain values in the "
     "interpreter): decorate it `@triton.constexpr_function` instead, which hands it plain values in both."),
    (r"ptxas, NVIDIA's assembler, rejected",
     "this is Triton's code generation failing, not Triton language: simplify the line it names, "
     "and grade on a GPU to see whether your Triton version compiles it."),
    (r"must be a constexpr|is not a constexpr|constexpr expected",
     "a value used as a shape or block size must be a `tl.constexpr` parameter: declare it `B0: tl.constexpr`."),
]


def usual_fix(error: str) -> str | None:
    """The one-line fix for a well-known compiler complaint, matched on its reason only."""
    lines = error.strip().splitlines()
    reason = lines[-1] if lines else ""
    for pattern, fix in _COMPILE_FIXES:
        found = re.search(pattern, reason)
        if found:
            names = found.groupdict()
            return fix.format(**names) if names else fix
    return None


def _where(line: int | None, source: str, file: str = "") -> str:
    if line is None:
        return ""
    place = f"line {line}" + (f" of {file}" if file else "")
    return f" ({place}: `{source}`)" if source else f" ({place})"
