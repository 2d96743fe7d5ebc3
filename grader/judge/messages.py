"""Messages for failures the worker reports: each names what went wrong, where, and the fix."""
from __future__ import annotations

import ast
import re

from grader.channel import wire
from grader.judge.compare import fmt_index, index_of, plural
from grader.judge.results import READ_EARLY
from grader.source.source_lines import access_call


def _at_line(line: int | None, source: str) -> str:
    if line is None:
        return ""
    return f" at line {line}: `{source}`" if source else f" at line {line}"


def _mask_of(call: ast.Call, op: str) -> ast.expr | None:
    for keyword in call.keywords:
        if keyword.arg == "mask":
            return keyword.value
    position = 1 if op == "load" else 2
    return call.args[position] if len(call.args) > position else None


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


FOUND_BESIDE = (" (Found by the bounds check that runs each case in the interpreter beside the GPU: on a GPU "
                "this access reads whatever lies past the tensor, or faults, and here its value went unused.)")


def exception(reply: wire.Failure, raiser: str = "the kernel") -> str:
    text = f"{raiser} raised {reply.error}{_at_line(reply.line, reply.source)}."
    fix = usual_fix(reply.error)
    return text + (f" Fix: {fix}" if fix else "")


def interpreter_limit(reply: wire.Failure, puzzle_id: str, compiled: bool) -> str:
    """A correct-looking kernel the interpreter cannot run: its limit, never the learner's failure."""
    checked = "it compiles for sm_90" if compiled else "the interpreter cannot tell whether it is right"
    return (f"the grader's interpreter cannot run this kernel: {reply.error}"
            f"{_at_line(reply.line, reply.source)}. This is a limit of the interpreter, not a "
            f"mistake of yours, and it is neither a pass nor a fail: {checked}; grade it on a GPU: "
            f"python -m grader {puzzle_id} --device cuda")


def wrapper_raised(phase: str, reply: wire.Failure) -> str:
    """An autograd wrapper's own code raised while the grader recorded it."""
    return exception(reply, f"your {phase}")


def crash(returncode: int | None, stderr_tail: str, device: str, corrupted: bool = False) -> str:
    """The process running the kernel died (``returncode``), reported a crash it cannot survive
    (``returncode`` None: a CUDA error), or broke the grading channel (``corrupted``)."""
    detail = stderr_tail.strip().splitlines()[-1] if stderr_tail.strip() else "no message"
    if corrupted:
        return (f"the process running the kernel wrote garbage into the grader's channel ({detail}). "
                f"Kernels must not write to file descriptors.")
    if returncode is None:
        text = f"the kernel crashed its process ({detail})."
    else:
        how = f"signal {-returncode}" if returncode < 0 else f"exit code {returncode}"
        text = f"the process running the kernel died ({how}: {detail})."
        if returncode == -24:  # SIGXCPU
            text += " It used up its CPU time: the grader gives every worker a CPU-time budget."
    if device == "cuda":
        text += (" On a GPU this is usually an illegal memory access. Run with `--device cpu` to localise it: "
                 "the interpreter reports the tensor, program and line of the bad access.")
    else:
        text += " This is usually an unmasked store far outside a tensor."
    return text


def timeout(seconds: float) -> str:
    return (f"the kernel did not finish within {seconds:g} s. Look for a loop whose bound never "
            f"becomes true (a `while`, or a `range` over a huge or negative count); raise the limit with "
            f"--timeout if the kernel is merely slow.")


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
    (r"Lambda", "lambdas are not supported in kernels: write the expression inline or as a separate @triton.jit function."),
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


def tidy(text: str) -> str:
    """One full stop where two sentences' pieces each brought one ("... the end.." -> "... the end.")."""
    return re.sub(r"(?<=[^\s.])\.\.(?=\s|$)", ".", text)


# Triton's math functions take fp32 and fp64 only (libdevice's convention): given fp16 or bf16,
# they fail to compile for a GPU, where the interpreter computes them anyway.
_REFUSED_DTYPE = re.compile(r"Expected dtype \[(?P<wanted>[^\]]*)\] but got (?P<got>\w+)")
_MATH_CALL = re.compile(r"\btl\.(?:math\.)?(exp2?|log2?|sin|cos|sqrt(?:_rn)?|rsqrt|div_rn|erf|floor|ceil)\(|"
                        r"\.(exp2?|log2?|sin|cos|sqrt|rsqrt|erf|floor|ceil)\(\)")


def _names(names) -> str:
    """``x``, ``x and w``, ``x, w and b``."""
    names = [f"`{n}`" for n in names]
    return " and ".join(names) if len(names) < 3 else ", ".join(names[:-1]) + f" and {names[-1]}"


def dtype_fix(reason: str, source: str, case: str = "", inputs=None, outputs=None) -> str | None:
    """The fix for a math function refusing a half-precision value, or None for any other
    error. With the compiled ``case`` (its description) and its tensors' dtypes by name
    (``inputs``, ``outputs``), it names the case and the tensors of the refused dtype."""
    found = _REFUSED_DTYPE.search(reason)
    if found is None or "fp32" not in re.findall(r"\w+", found["wanted"]):
        return None  # an integer function (umulhi) wants integers: no upcast helps
    from grader.course.dtypes import DTYPES
    got = found["got"]
    torch_name = next((d.name for d in DTYPES.values() if d.triton == got), got)
    call = _MATH_CALL.search(source or "")
    function = f"`tl.{call[1] or call[2]}`" if call else "this function"
    loaded = [name for name, dtype in (inputs or {}).items() if dtype == torch_name]
    stored = [name for name, dtype in (outputs or {}).items() if dtype == torch_name]
    if case:
        tensors = f": its {_names(loaded + stored)} {'is' if len(loaded + stored) == 1 else 'are'} {torch_name}" \
            if loaded or stored else ""
        given = f"{case} gives it {got}{tensors}"
    else:
        given = f"it is given {got} here"
    where = f" (simplest where you load {_names(loaded)}: `tl.load(...).to(tl.float32)`)" if loaded else ""
    back = (f"cast back when storing {_names(stored)} (`tl.store` converts to {torch_name} itself, or write "
            f"`.to(tl.{torch_name})`)" if stored else "cast back when storing")
    return (f"{function} takes fp32 or fp64 only, and {given}. Upcast with `.to(tl.float32)` before "
            f"{function}{where}, compute in fp32, and {back}.")


def compile_failure(error: str, line: int | None, source: str, on_gpu: bool = False, case: str = "",
                    inputs=None, outputs=None) -> str:
    """``case``, ``inputs`` and ``outputs``: the case compiled and its tensors' dtypes by name, for
    a fix that names them (see :func:`dtype_fix`)."""
    text = error.strip()
    # Triton's CompilationError text is "at L:C:\n<source>\n<caret>\n<reason>": keep the reason.
    reason = text.splitlines()[-1] if text else "unknown error"
    fix = dtype_fix(reason, source, case, inputs, outputs) or usual_fix(text)
    what = "the kernel does not compile for this GPU" if on_gpu else "the kernel does not compile for a GPU (sm_90)"
    message = f"{what}{_at_line(line, source)}: {reason.rstrip('.')}."
    return message + (f" Fix: {fix}" if fix else "")


def _element(index: int, shape) -> str:
    return fmt_index(index_of(index, tuple(shape))) if shape else f"({index})"


def read_before_write(read: wire.EarlyRead) -> str:
    """An output loaded before anything was stored to it (interpreter only)."""
    tensor = read.tensor
    return (f"loaded `{tensor}` {READ_EARLY}: program {read.program} read "
            f"{tensor}{_element(read.index, read.shape)}{_at_line(read.line, read.source)}, "
            f"which no program had stored yet. An output holds garbage until your kernel stores to it (the grader "
            f"fills it with NaN), so the value loaded means nothing. Fix: keep the running value in a variable "
            f"(`acc = tl.zeros([B0], dtype=tl.float32)`), and store `{tensor}` once it is final.")


def overlapping_stores(overlap: wire.Overlap) -> str:
    a, b = overlap.programs
    tensor = overlap.tensor
    return (f"a race: programs {a} and {b} both store to {tensor}{_element(overlap.index, overlap.shape)}"
            f"{_at_line(overlap.line, overlap.source)}, with different values and no atomic. "
            f"The interpreter runs programs one after another, but a GPU runs them at the same time, so which "
            f"value stays (or whether an update is lost) depends on timing. Fix: give every element of `{tensor}` "
            f"to exactly one program, or combine the programs' contributions with `tl.atomic_add`.")


def order_dependent(tensor: str, in_order, reversed_order) -> str:
    import torch
    differ = ~((in_order == reversed_order) | (torch.isnan(in_order) & torch.isnan(reversed_order))) \
        if in_order.is_floating_point() else in_order != reversed_order
    positions = torch.nonzero(differ.reshape(-1)).flatten()[:3].tolist()
    shown = "; ".join(f"{fmt_index(index_of(p, tuple(in_order.shape)))}: {in_order.reshape(-1)[p].item():.6g} in "
                      f"order, {reversed_order.reshape(-1)[p].item():.6g} reversed" for p in positions)
    return (f"a race: running the programs in reverse order changed {int(differ.sum())} element(s) of `{tensor}` "
            f"({shown}). On a GPU programs run at the same time, in no set order, so a program must not depend "
            f"on what another one stored. Fix: have each program compute its part from the inputs alone, or "
            f"combine the programs' contributions with atomics (`tl.atomic_add`).")


# ---- autograd wrappers: the result must come from the learner's kernels ------------------------

_WRAPPER_DOES = ("A wrapper allocates, reshapes, launches your Triton kernels and saves for backward; "
                 "PyTorch may also sum the kernels' partial results.")


def _where(line: int | None, source: str, file: str = "") -> str:
    if line is None:
        return ""
    place = f"line {line}" + (f" of {file}" if file else "")
    return f" ({place}: `{source}`)" if source else f" ({place})"


def computed_on_inputs(phase: str, op: str, shapes: str, line: int | None, source: str, file: str = "") -> str:
    return (f"the {phase} computed with PyTorch: `aten.{op}` read an input{_where(line, source, file)}, "
            f"operand shapes {shapes}. The result must come from your Triton kernels. {_WRAPPER_DOES}")


def computed_on_kernel_buffers(phase: str, op: str, shapes: str, line: int | None, source: str,
                               file: str = "") -> str:
    return (f"the {phase} computed with PyTorch on what a Triton kernel was handed: `aten.{op}` read a kernel's "
            f"buffer{_where(line, source, file)}, operand shapes {shapes}. Copying the inputs through a kernel "
            f"and computing with PyTorch is still PyTorch's result. {_WRAPPER_DOES}")


def no_launch(phase: str) -> str:
    return f"the {phase} launched no Triton kernel: compute it with your kernels from the previous puzzles."


def unseen(phase: str, what: str, shape, line: int | None, source: str, file: str = "") -> str:
    return (f"the {phase} passed on a tensor (shape {fmt_index(tuple(shape))}) that no PyTorch operator the grader "
            f"recorded made, as {what}{_where(line, source, file)}: it was computed where the grader cannot see "
            f"(another thread, PyTorch's dispatch turned off, NumPy) or kept from an earlier call. The result must come from your Triton "
            f"kernels. {_WRAPPER_DOES}")


def host_values(phase: str, op: str, line: int | None, source: str, file: str = "") -> str:
    return (f"the {phase} reads {op} on the host{_where(line, source, file)}. The grader "
            f"records your wrapper on tensors that have shapes and dtypes but no values, then replays what it "
            f"recorded on the real ones, so the wrapper never sees data: compute with values in a Triton kernel, "
            f"and pass sizes from `.shape`. {_WRAPPER_DOES}")


def escaped(phase: str, error: str, line: int | None, source: str, file: str = "") -> str:
    return (f"the {phase} computed with PyTorch's dispatch turned off{_where(line, source, file)}, where the "
            f"grader cannot see it, and it failed there ({error}). The result must come from your Triton "
            f"kernels. {_WRAPPER_DOES}")


def never_computed(phase: str, name: str, made: str) -> str:
    return (f"`{name}` is never written: the {phase} returns {made}, which no Triton kernel wrote. Every output "
            f"element must be stored by one of your kernels: launch the kernel that computes `{name}` and return "
            f"the tensor it wrote.")


def returns_input(phase: str, name: str, made: str) -> str:
    return (f"the {phase} returns {made} as `{name}`, which no Triton kernel wrote: an input (or a view or copy of "
            f"one) is not a result. Compute `{name}` with your Triton kernels. {_WRAPPER_DOES}")


def not_replayable(phase: str, what: str) -> str:
    return (f"the {phase} {what}. The grader replays what your wrapper recorded, operator by operator and "
            f"launch by launch, so a wrapper may only use PyTorch's own operators and your Triton kernels. "
            f"{_WRAPPER_DOES}")


def replay_disagrees(detail: str) -> str:
    return (f"replaying your wrapper on the real inputs gave another result than recording it: {detail}. "
            f"A wrapper must do the same whatever the values: allocate, reshape, launch and save.")
