"""The catalogue of failures: for each :class:`FailureKind`, the facts a check finds, the label
every report prints for it, and the message a learner reads, worded from those facts.

A check (``grader.judge.compare``, ``grader.judge.grade``, ``grader.judge.program``, ...) says what it found as a
frozen dataclass of facts; :func:`word` turns the facts into the message through their kind's
:class:`Entry` in :data:`CATALOGUE`. Adding a failure kind is a member of :class:`FailureKind`
and an entry here, plus the check that finds it: reporters read their labels from here.

Pure data and wording: the standard library and the grader's dtype vocabulary only, no torch,
so that the sandbox side may word failures too.
"""
from __future__ import annotations

import enum
import re
from dataclasses import dataclass, replace
from typing import Any, Callable, ClassVar, Mapping


class StrEnum(str, enum.Enum):
    """``enum.StrEnum`` (Python 3.11), written for 3.10, the oldest Python the course supports: each
    member is a str equal to its value, and prints and formats as that value."""

    __str__ = str.__str__
    __format__ = str.__format__


class FailureKind(StrEnum):
    """Why a case or check failed. Reporters, the wrong-kernel corpus and tests key on these."""

    MISMATCH = "mismatch"              # values differ from the spec
    UNWRITTEN = "unwritten"            # output elements still hold the grader's NaN fill
    NONFINITE = "nonfinite"            # NaN/Inf where the spec is finite
    OUT_OF_BOUNDS = "out_of_bounds"    # a load or store outside its tensor
    INPUT_MODIFIED = "input_modified"  # the kernel wrote into an input
    EXCEPTION = "exception"            # a Python error inside the kernel (or importing the file)
    CRASH = "crash"                    # the process running the kernel died, or broke the channel
    TIMEOUT = "timeout"                # the kernel ran past the time limit
    SIGNATURE = "signature"            # the kernel cannot be called as the puzzle calls it
    COMPILE = "compile"                # it would not compile for a GPU
    NOT_FOUND = "not_found"            # no kernel of that name in the file
    SKIPPED = "skipped"                # not run, because an earlier case crashed or timed out
    SHAPE = "shape"                    # an autograd wrapper returned the wrong shape, dtype or number of values
    TORCH_COMPUTE = "torch_compute"    # an autograd wrapper (a Helion kernel outside its tiles) computed with PyTorch
    SAVED = "saved"                    # an autograd wrapper saved the wrong tensors for backward
    RACE = "race"                      # programs store to one element, or depend on each other's order
    SNIFFING = "sniffing"              # the code tells the interpreter from a GPU
    SYNTAX = "syntax"                  # the file does not parse, so nothing in it can be graded
    INTERPRETER_LIMIT = "interpreter_limit"  # the interpreter cannot run it (not the learner's failure)
    BENCH_REJECTED = "bench_rejected"  # --bench could not trust its timing: the run is refused


# ---- words several kinds share ------------------------------------------------------------

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


@dataclass(frozen=True)
class Worded:
    """A failure its finder words itself, from what the catalogue does not hold: the learner's
    own line (the bounds fix), a course file's load error, intake's problem lines, a reason the
    worker or the binding gave, the sniffing checks' findings."""

    kind: FailureKind
    text: str


def _said(facts: Worded) -> str:
    return facts.text


# ---- wrong values: mismatch, unwritten, nonfinite -----------------------------------------

_REDUCED = " (after the host's reduction of what the kernel wrote)"
_STRAY_LOADS = (" Some values are huge or infinite, as when a load strays past its tensor into the "
                "grader's guard region: run with --device cpu to have every load checked.")


@dataclass(frozen=True)
class Element:
    """One element of an output: where it is, the kernel's value and the spec's."""

    index: tuple[int, ...]
    yours: float
    expected: float


@dataclass(frozen=True)
class Mismatch:
    kind: ClassVar = FailureKind.MISMATCH
    name: str
    wrong: int
    total: int
    max_err: float
    atol: float
    rtol: float
    shown: tuple[Element, ...]
    reduced: bool = False  # compared after the host's reduction of what the kernel wrote
    stray: bool = False    # on a GPU, values that look read from the guard region
    baseline: str = ""     # --bench: the tolerance also allows twice this baseline's own error...
    allowance: float = 0.0  # ... which is at most this...
    strays: int = -1        # ... for at most this many elements whatever their magnitude
    row_zero_only: bool = False  # row 0 right, every later row wrong (3 rows or more)


# Row 0 right and every later row wrong: what a row offset of `row * stride` with a wrong stride gives.
def _stride_signature(f: Mismatch) -> str:
    what = (f"`{f.name}[0]` is right and every later element is wrong" if len(f.shown[0].index) == 1 else
            f"Row 0 of `{f.name}` is right and every later row is wrong")
    return (f" {what}: the signature of a wrong row stride. A row's offset is `row * stride`, and the "
            f"stride is the tensor's row length, not a block size.")


def _mismatch(f: Mismatch) -> str:
    shown = "; ".join(f"{fmt_index(e.index)}: yours {fmt_value(e.yours)}, expected {fmt_value(e.expected)}"
                      for e in f.shown)
    widened = (f" plus twice {f.baseline}'s own error at that magnitude on the same inputs; up to twice its "
               f"largest, {f.allowance:.3g}, for at most {plural(max(f.strays, 0), 'element')}" if f.baseline else "")
    return (f"wrong values in `{f.name}`{_REDUCED if f.reduced else ''}: {f.wrong} of {f.total} elements differ "
            f"(max abs err {f.max_err:.3g}, tolerance atol={f.atol:g}, rtol={f.rtol:g}{widened}). {shown}"
            + ("." + _stride_signature(f) if f.row_zero_only else "") + (_STRAY_LOADS if f.stray else ""))


@dataclass(frozen=True)
class PropertyFailed:
    """Graded by properties (``Puzzle.check``): what the runs of a case show wrong, in the
    puzzle's words, which say what was yours and what was expected."""

    kind: ClassVar = FailureKind.MISMATCH
    name: str
    what: str


def _property_failed(f: PropertyFailed) -> str:
    return f"wrong values in `{f.name}`: {f.what}"


@dataclass(frozen=True)
class Unwritten:
    kind: ClassVar = FailureKind.UNWRITTEN
    name: str
    count: int
    total: int
    first: tuple[tuple[int, ...], ...]  # the first few never written


def _unwritten(f: Unwritten) -> str:
    where = ", ".join(fmt_index(index) for index in f.first)
    what = f"no element of `{f.name}` was written" if f.count == f.total else \
        f"{f.count} of {f.total} elements of `{f.name}` were never written (first at {where})"
    return (f"{what}. Every output element must be stored: check that the grid and your offsets cover "
            f"all of `{f.name}` and that the store's mask is not too strict.")


@dataclass(frozen=True)
class Nonfinite:
    kind: ClassVar = FailureKind.NONFINITE
    name: str
    count: int
    first: Element
    large_inputs: bool = False  # the case's inputs are scaled up: exp() of them overflows
    reduced: bool = False
    stray: bool = False


def _nonfinite_finding(f: Nonfinite) -> str:
    """What went wrong, without the general advice a look-alike's note replaces."""
    return (f"`{f.name}`{_REDUCED if f.reduced else ''} has {f.count} NaN/Inf value(s) where the spec is "
            f"finite, first at {fmt_index(f.first.index)}: yours {fmt_value(f.first.yours)}, "
            f"expected {fmt_value(f.first.expected)}.")


def _nonfinite(f: Nonfinite) -> str:
    hint = ("This case's inputs are large: exp() of them overflows float32, or underflows to 0 so that "
            "a sum of them is 0. Subtract the row's true maximum before exponentiating (exp(x - max) is at "
            "most 1): start it at -inf, not 0, and take it over every chunk." if f.large_inputs else
            "Look for a division by zero, a log of a non-positive value, or exp() overflowing.")
    return f"{_nonfinite_finding(f)} {hint}{_STRAY_LOADS if f.stray else ''}"


@dataclass(frozen=True)
class LooksLike:
    """Wrong values that a look-alike (:class:`grader.course.puzzle.LookAlike`) computes too: the
    value check's own facts (of ``kind``), and the look-alike its message then names."""

    kind: FailureKind
    facts: Any
    look: Any


def _looks_like(f: LooksLike) -> str:
    return look_alike_note(finding(f.facts) or word(f.facts), f.look)


@dataclass(frozen=True)
class GapFill:
    """Output elements holding the fill the grader leaves in the gaps between a strided input's
    rows: the kernel stored what it read there. Elements never stored hold that same fill, so
    these are told apart only by a look-alike that reads the gaps (grader.judge.plan.row_gaps_look_alike)."""

    kind: ClassVar = FailureKind.MISMATCH
    name: str
    count: int
    total: int
    first: tuple[tuple[int, ...], ...]


def _gap_fill(f: GapFill) -> str:
    where = ", ".join(fmt_index(index) for index in f.first)
    return (f"{f.count} of {f.total} elements of `{f.name}` hold the fill the grader leaves between an input's "
            f"rows (first at {where}): your kernel read memory between rows")


@dataclass(frozen=True)
class ReadEarly:
    """An output loaded before anything was stored to it (interpreter only): the cause of the
    wrong values, NaN or unwritten elements ``kind`` says, and their message instead."""

    kind: FailureKind
    tensor: str
    program: tuple[int, ...]
    index: int
    shape: tuple[int, ...]
    line: int | None = None
    source: str = ""


def _read_early(f: ReadEarly) -> str:
    tensor = f.tensor
    return (f"loaded `{tensor}` {READ_EARLY}: program {tuple(f.program)} read "
            f"{tensor}{_element(f.index, f.shape)}{at_line(f.line, f.source)}, "
            f"which no program had stored yet. An output holds garbage until your kernel stores to it (the grader "
            f"fills it with NaN), so the value loaded means nothing. Fix: keep the running value in a variable "
            f"(`acc = tl.zeros([B0], dtype=tl.float32)`), and store `{tensor}` once it is final.")


# ---- memory: out of bounds, inputs written ------------------------------------------------

FOUND_BESIDE = (" (Found by the bounds check that runs each case in the interpreter beside the GPU: on a GPU "
                "this access reads whatever lies past the tensor, or faults, and here its value went unused.)")
READ_BESIDE = (" (Found by the run of each case in the interpreter beside the GPU, on the same sample of programs "
               "the grader's CPU run takes: one verdict on every machine.)")
RAISED_BESIDE = (" (Found by the run of each case in the interpreter beside the GPU, which the grader's CPU run "
                 "fails the same way: one verdict on every machine.)")


@dataclass(frozen=True)
class StrayStore:
    """Stores past an output's or input's end (or before its start), found in its guard region."""

    kind: ClassVar = FailureKind.OUT_OF_BOUNDS
    name: str
    role: str  # "input" or "output"
    shape: tuple[int, ...]
    numel: int
    count: int  # stray elements
    after: tuple[int, int] | None = None   # first and last element written past the end
    before: tuple[int, int] | None = None  # ... and before the start


def _stray_store(f: StrayStore) -> str:
    parts = []
    if f.after is not None:
        first, last = f.after
        parts.append(f"elements {first}..{last} past its end" if last > first else f"element {first} past its end")
    if f.before is not None:
        first, last = f.before
        parts.append(f"elements {first}..{last} before its start" if last > first else f"element {first} before its start")
    what = "output" if f.role == "output" else "input"
    return (f"out-of-bounds store: the kernel wrote {' and '.join(parts)} of {what} `{f.name}` "
            f"(shape {tuple(f.shape)}, {plural(f.numel, 'element')}; {plural(f.count, 'stray element')}). "
            f"Fix: mask the store, e.g. `tl.store({f.name}_ptr + offs, value, mask=offs < N0)`, "
            f"so that lanes past the end are switched off.")


@dataclass(frozen=True)
class InputModified:
    kind: ClassVar = FailureKind.INPUT_MODIFIED
    name: str
    count: int
    first: tuple[int, ...]


def _input_modified(f: InputModified) -> str:
    return (f"the kernel wrote into input `{f.name}`: {f.count} element(s) changed, "
            f"first at {fmt_index(f.first)}. Inputs are read-only: store only to the output pointer.")


# ---- races --------------------------------------------------------------------------------

@dataclass(frozen=True)
class Overlap:
    """Two programs stored different values to one element, without an atomic."""

    kind: ClassVar = FailureKind.RACE
    tensor: str
    programs: tuple[tuple[int, ...], tuple[int, ...]]
    index: int
    shape: tuple[int, ...]
    line: int | None = None
    source: str = ""


def _overlap(f: Overlap) -> str:
    a, b = (tuple(p) for p in f.programs)
    tensor = f.tensor
    return (f"a race: programs {a} and {b} both store to {tensor}{_element(f.index, f.shape)}"
            f"{at_line(f.line, f.source)}, with different values and no atomic. "
            f"The interpreter runs programs one after another, but a GPU runs them at the same time, so which "
            f"value stays (or whether an update is lost) depends on timing. Fix: give every element of `{tensor}` "
            f"to exactly one program, or combine the programs' contributions with `tl.atomic_add`.")


@dataclass(frozen=True)
class OrderDependent:
    """Running the programs in reverse order changed an output."""

    kind: ClassVar = FailureKind.RACE
    tensor: str
    count: int
    shown: tuple[tuple[tuple[int, ...], float, float], ...]  # (index, in order, reversed), the first few


def _order_dependent(f: OrderDependent) -> str:
    shown = "; ".join(f"{fmt_index(index)}: {a:.6g} in order, {b:.6g} reversed" for index, a, b in f.shown)
    return (f"a race: running the programs in reverse order changed {f.count} element(s) of `{f.tensor}` "
            f"({shown}). On a GPU programs run at the same time, in no set order, so a program must not depend "
            f"on what another one stored. Fix: have each program compute its part from the inputs alone, or "
            f"combine the programs' contributions with atomics (`tl.atomic_add`).")


@dataclass(frozen=True)
class ReadAcross:
    """In a large case, where only a sample of the programs runs: a program loaded an output
    element it had not stored itself (another program's, or nobody's yet)."""

    kind: ClassVar = FailureKind.RACE
    tensor: str
    program: tuple[int, ...]
    index: int
    shape: tuple[int, ...]
    written: bool  # another program that ran had stored it
    ran: int
    programs: int
    line: int | None = None
    source: str = ""


def _read_across(f: ReadAcross) -> str:
    held = "another program's value" if f.written else "the grader's NaN fill"
    return (f"a race: program {tuple(f.program)} loaded {f.tensor}{_element(f.index, f.shape)}"
            f"{at_line(f.line, f.source)}, an element of the output `{f.tensor}` it had not stored itself. "
            f"This case runs {f.ran} of the launch's {f.programs} programs, so the element held {held}; on a GPU "
            f"programs run at the same time, in no set order, and what another program stores may not be there "
            f"yet. Fix: have each program compute its part from the inputs alone, and store `{f.tensor}` "
            f"without loading it back from another program's part.")


@dataclass(frozen=True)
class ReadAcrossLaunch:
    """In a large case of an autograd puzzle, where only a sample of each launch's programs runs:
    a program loaded what another program of the same launch had stored."""

    kind: ClassVar = FailureKind.RACE
    tensor: str  # which memory: an input by name, or a tensor the wrapper allocated, by its shape
    program: tuple[int, ...]
    index: int  # the element, in that memory
    line: int | None = None
    source: str = ""


def _read_across_launch(f: ReadAcrossLaunch) -> str:
    return (f"a race: program {tuple(f.program)} loaded element {f.index} of {f.tensor}{at_line(f.line, f.source)}, "
            f"which another program of the same launch had stored. On a GPU the programs of a launch run at the "
            f"same time, in no set order, and what another program stores may not be there yet. Fix: have each "
            f"program compute its part from what earlier launches stored, and launch again where a result needs "
            f"every program's part.")


# ---- compile errors and the usual fixes of a compiler's complaint -------------------------

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


@dataclass(frozen=True)
class CompileFailed:
    """Triton's compiler refused the kernel. ``case``, ``inputs`` and ``outputs``: the case
    compiled and its tensors' dtypes by name, for a fix that names them (see :func:`dtype_fix`)."""

    kind: ClassVar = FailureKind.COMPILE
    error: str
    line: int | None
    source: str
    on_gpu: bool = False  # compiled for the GPU at hand, not the check's sm_90
    case: str = ""
    inputs: Mapping[str, str] | None = None
    outputs: Mapping[str, str] | None = None


def _compile_failed(f: CompileFailed) -> str:
    text = f.error.strip()
    # Triton's CompilationError text is "at L:C:\n<source>\n<caret>\n<reason>": keep the reason.
    reason = text.splitlines()[-1] if text else "unknown error"
    fix = dtype_fix(reason, f.source, f.case, f.inputs, f.outputs) or usual_fix(text)
    what = "the kernel does not compile for this GPU" if f.on_gpu else "the kernel does not compile for a GPU (sm_90)"
    message = f"{what}{at_line(f.line, f.source)}: {reason.rstrip('.')}."
    return message + (f" Fix: {fix}" if fix else "")


@dataclass(frozen=True)
class CompileCheck:
    """The GPU compile check of a kernel puzzle failed, for one block configuration (``blocks``)."""

    kind: ClassVar = FailureKind.COMPILE
    blocks: str
    failed: CompileFailed


def _compile_check(f: CompileCheck) -> str:
    return f"GPU compile check ({f.blocks}): {_compile_failed(f.failed)}"


@dataclass(frozen=True)
class LaunchCompile:
    """An autograd wrapper's launch of ``kernel`` does not compile for a GPU."""

    kind: ClassVar = FailureKind.COMPILE
    kernel: str
    line: int | None  # of the launch
    source: str
    config: str       # the autotuning config that failed, or ""
    failed: CompileFailed


def _launch_compile(f: LaunchCompile) -> str:
    where = f" launched at line {f.line}: `{f.source}`" if f.line else ""
    config = f" with {f.config}" if f.config else ""
    return f"GPU compile check of `{f.kernel}`{where}{config}: {_compile_failed(f.failed)}"


@dataclass(frozen=True)
class CheckUnfinished:
    """The GPU compile check itself timed out or died (``cause``), of one launched kernel or of all."""

    kind: ClassVar = FailureKind.COMPILE
    cause: str
    kernel: str = ""


def _check_unfinished(f: CheckUnfinished) -> str:
    of = f" of `{f.kernel}`" if f.kernel else ""
    return f"the GPU compile check{of} did not finish ({f.cause})"


# ---- the kernel raised, crashed, ran too long, or cannot run here -------------------------

@dataclass(frozen=True)
class Raised:
    """A Python error in the kernel, or (``raiser``) in an autograd wrapper's own code."""

    kind: ClassVar = FailureKind.EXCEPTION
    error: str
    line: int | None = None
    source: str = ""
    raiser: str = "the kernel"


def _raised(f: Raised) -> str:
    text = f"{f.raiser} raised {f.error}{at_line(f.line, f.source)}."
    fix = usual_fix(f.error)
    return text + (f" Fix: {fix}" if fix else "")


@dataclass(frozen=True)
class LaunchRefused:
    """A recorded launch that a GPU refuses (a grid axis or num_warps past its limits)."""

    kind: ClassVar = FailureKind.EXCEPTION
    launch: str  # "your forward's launch of `rms_norm_fwd`"
    why: str     # grader.course.limits.refusal's text, the fix included
    line: int | None = None
    source: str = ""


def _launch_refused(f: LaunchRefused) -> str:
    return f"{f.launch}{at_line(f.line, f.source)} is refused on a GPU, and raised here as it would be there: {f.why}"


@dataclass(frozen=True)
class ImportFailed:
    """Importing the learner's file raised."""

    kind: ClassVar = FailureKind.EXCEPTION
    file: str
    error: str
    line: int | None = None
    source: str = ""


def _import_failed(f: ImportFailed) -> str:
    return (f"importing {f.file} failed: {f.error}"
            + (f" (line {f.line}: `{f.source}`)" if f.line else ""))


@dataclass(frozen=True)
class ReplayDisagrees:
    """Replaying an autograd wrapper on the real inputs did not do what recording it did."""

    kind: ClassVar = FailureKind.EXCEPTION
    detail: str


def _replay_disagrees(f: ReplayDisagrees) -> str:
    return (f"replaying your wrapper on the real inputs gave another result than recording it: {f.detail}. "
            f"A wrapper must do the same whatever the values: allocate, reshape, launch and save.")


@dataclass(frozen=True)
class Crash:
    """The process running the kernel died (``returncode``), reported a crash it cannot survive
    (``returncode`` None: a CUDA error), or broke the grading channel (``corrupted``)."""

    kind: ClassVar = FailureKind.CRASH
    returncode: int | None
    stderr_tail: str
    device: str
    corrupted: bool = False


def _crash(f: Crash) -> str:
    detail = f.stderr_tail.strip().splitlines()[-1] if f.stderr_tail.strip() else "no message"
    if f.corrupted:
        return (f"the process running the kernel wrote garbage into the grader's channel ({detail}). "
                f"Kernels must not write to file descriptors.")
    if f.returncode is None:
        text = f"the kernel crashed its process ({detail})."
    else:
        how = f"signal {-f.returncode}" if f.returncode < 0 else f"exit code {f.returncode}"
        text = f"the process running the kernel died ({how}: {detail})."
        if f.returncode == -24:  # SIGXCPU
            text += " It used up its CPU time: the grader gives every worker a CPU-time budget."
    if f.device == "cuda":
        text += (" On a GPU this is usually an illegal memory access. Run with `--device cpu` to localise it: "
                 "the interpreter reports the tensor, program and line of the bad access.")
    else:
        text += " This is usually an unmasked store far outside a tensor."
    return text


@dataclass(frozen=True)
class Timeout:
    """Past the limit of ``seconds`` of CPU time, or (``wall``) past the wall-clock backstop for a
    worker that used little CPU: the limit is CPU time, so that a machine's load changes no verdict."""

    kind: ClassVar = FailureKind.TIMEOUT
    seconds: float
    importing: bool = False  # while the worker imported the learner's file, before any case
    wall: float | None = None


def _timeout(f: Timeout) -> str:
    within = f"{f.seconds:g} s of CPU time" if f.wall is None else \
        f"{f.wall:.0f} s of wall-clock time (the limit is {f.seconds:g} s of CPU time, waited for longer on a busy machine)"
    return (f"the kernel did not finish within {within}. Look for a loop whose bound never "
            f"becomes true (a `while`, or a `range` over a huge or negative count); raise the limit with "
            f"--timeout if the kernel is merely slow." + (" (while importing the file)" if f.importing else ""))


@dataclass(frozen=True)
class InterpreterLimit:
    """A correct-looking kernel the interpreter cannot run: its limit, never the learner's failure.
    ``compiled``: it passed the GPU compile check."""

    kind: ClassVar = FailureKind.INTERPRETER_LIMIT
    error: str
    line: int | None
    source: str
    puzzle: str
    compiled: bool


def _interpreter_limit(f: InterpreterLimit) -> str:
    checked = "it compiles for sm_90" if f.compiled else "the interpreter cannot tell whether it is right"
    return (f"the grader's interpreter cannot run this kernel: {f.error}"
            f"{at_line(f.line, f.source)}. This is a limit of the interpreter, not a "
            f"mistake of yours, and it is neither a pass nor a fail: {checked}; grade it on a GPU: "
            f"python -m grader {f.puzzle} --device cuda")


@dataclass(frozen=True)
class BesideUnchecked:
    """On a GPU the case's values passed, but its run in the interpreter beside it, where each
    load and store is checked, could not run (``why``): the check is missing, and says so."""

    kind: ClassVar = FailureKind.INTERPRETER_LIMIT
    why: str
    line: int | None = None
    source: str = ""


def _beside_unchecked(f: BesideUnchecked) -> str:
    return (f"the values are right on the GPU, but the bounds check that runs each case again in Triton's "
            f"interpreter could not run: {f.why}{at_line(f.line, f.source)}. A load out of bounds whose value is "
            f"never used shows on no GPU, so without that check this case is neither a pass nor a fail")


@dataclass(frozen=True)
class Skipped:
    kind: ClassVar = FailureKind.SKIPPED
    abort: str  # why: "<case> crashed", "<case> timed out", ...


def _skipped(f: Skipped) -> str:
    return f"not run: {f.abort}"


# ---- the file: no such kernel, not a kernel -----------------------------------------------

@dataclass(frozen=True)
class NoKernel:
    kind: ClassVar = FailureKind.NOT_FOUND
    name: str
    file: str
    defined: tuple[str, ...]  # the kernels the file does define
    expected: str             # the stub's def line
    decorator: str = "@triton.jit"  # the kind's: a Helion puzzle's is @helion.kernel


def _no_kernel(f: NoKernel) -> str:
    found = ", ".join(f.defined) or "no @triton.jit kernels"
    return (f"no kernel named `{f.name}` in {f.file} (it defines {found}). "
            f"Expected: {f.decorator} def {f.expected}")


@dataclass(frozen=True)
class Dropped:
    """The kernel is in the file, but a line the grader leaves out of the import (``reason``) holds it."""

    kind: ClassVar = FailureKind.NOT_FOUND
    name: str
    file: str
    line: int
    text: str
    reason: str
    expected: str
    decorator: str = "@triton.jit"


def _dropped(f: Dropped) -> str:
    return (f"`{f.name}` in {f.file} was not imported: line {f.line} "
            f"`{f.text}`: {f.reason}. Expected: {f.decorator} def {f.expected}")


@dataclass(frozen=True)
class NotCallable:
    """The name is there, but not what the puzzle calls: the worker's ``reason`` where it gave one,
    else a kernel without @triton.jit; for an autograd puzzle (``function``), not a Function."""

    kind: ClassVar = FailureKind.SIGNATURE
    name: str
    reason: str = ""
    function: bool = False


def _not_callable(f: NotCallable) -> str:
    if f.function:
        return (f"`{f.name}` must be a subclass of torch.autograd.Function "
                "with static forward and backward methods.")
    return f.reason or f"`{f.name}` is not a Triton kernel: decorate it with @triton.jit."


# ---- autograd wrappers: the result must come from the learner's kernels -------------------

_WRAPPER_DOES = ("A wrapper allocates, reshapes, launches your Triton kernels and saves for backward; "
                 "PyTorch may also sum the kernels' partial results.")


def _where(line: int | None, source: str, file: str = "") -> str:
    if line is None:
        return ""
    place = f"line {line}" + (f" of {file}" if file else "")
    return f" ({place}: `{source}`)" if source else f" ({place})"


@dataclass(frozen=True)
class TorchOp:
    """A PyTorch operator computed on an input (or, ``on_kernel_buffers``, on what a kernel was handed)."""

    kind: ClassVar = FailureKind.TORCH_COMPUTE
    phase: str
    op: str
    shapes: str  # the operands' shapes, as written
    line: int | None
    source: str
    file: str = ""
    on_kernel_buffers: bool = False


def _torch_op(f: TorchOp) -> str:
    if f.on_kernel_buffers:
        return (f"the {f.phase} computed with PyTorch on what a Triton kernel was handed: `aten.{f.op}` read a "
                f"kernel's buffer{_where(f.line, f.source, f.file)}, operand shapes {f.shapes}. Copying the inputs "
                f"through a kernel and computing with PyTorch is still PyTorch's result. {_WRAPPER_DOES}")
    return (f"the {f.phase} computed with PyTorch: `aten.{f.op}` read an input{_where(f.line, f.source, f.file)}, "
            f"operand shapes {f.shapes}. The result must come from your Triton kernels. {_WRAPPER_DOES}")


@dataclass(frozen=True)
class HostReduction:
    """A PyTorch reduction on a kernel's buffer that the puzzle's statement does not leave to the host."""

    kind: ClassVar = FailureKind.TORCH_COMPUTE
    phase: str
    op: str
    shape: tuple[int, ...]   # the reduced tensor's
    why: str                 # what about it the statement does not allow
    allowed: str             # what the statement allows the host, in its words
    line: int | None
    source: str
    file: str = ""


def _host_reduction(f: HostReduction) -> str:
    return (f"the {f.phase} reduced a kernel's buffer of shape {fmt_shape(f.shape)} with PyTorch: `aten.{f.op}`"
            f"{_where(f.line, f.source, f.file)} {f.why}. The statement leaves the host {f.allowed}. Do the "
            f"reduction in your Triton kernel (`tl.sum` over the block, a loop over the rows a program owns).")


@dataclass(frozen=True)
class NoLaunch:
    kind: ClassVar = FailureKind.TORCH_COMPUTE
    phase: str


def _no_launch(f: NoLaunch) -> str:
    return f"the {f.phase} launched no Triton kernel: compute it with your kernels from the previous puzzles."


@dataclass(frozen=True)
class Unseen:
    """A tensor passed on that no recorded operator made."""

    kind: ClassVar = FailureKind.TORCH_COMPUTE
    phase: str
    what: str
    shape: tuple[int, ...]
    line: int | None
    source: str
    file: str = ""


def _unseen(f: Unseen) -> str:
    return (f"the {f.phase} passed on a tensor (shape {fmt_index(tuple(f.shape))}) that no PyTorch operator the "
            f"grader recorded made, as {f.what}{_where(f.line, f.source, f.file)}: it was computed where the grader "
            f"cannot see (another thread, PyTorch's dispatch turned off, NumPy) or kept from an earlier call. The "
            f"result must come from your Triton kernels. {_WRAPPER_DOES}")


@dataclass(frozen=True)
class HostValues:
    """The wrapper asked for values on the host (``op``), or (``escaped``) computed with PyTorch's
    dispatch turned off and failed there (``op``: the error)."""

    kind: ClassVar = FailureKind.TORCH_COMPUTE
    phase: str
    op: str
    line: int | None
    source: str
    file: str = ""
    escaped: bool = False


def _host_values(f: HostValues) -> str:
    if f.escaped:
        return (f"the {f.phase} computed with PyTorch's dispatch turned off{_where(f.line, f.source, f.file)}, "
                f"where the grader cannot see it, and it failed there ({f.op}). The result must come from your "
                f"Triton kernels. {_WRAPPER_DOES}")
    return (f"the {f.phase} reads {f.op} on the host{_where(f.line, f.source, f.file)}. The grader "
            f"records your wrapper on tensors that have shapes and dtypes but no values, then replays what it "
            f"recorded on the real ones, so the wrapper never sees data: compute with values in a Triton kernel, "
            f"and pass sizes from `.shape`. {_WRAPPER_DOES}")


@dataclass(frozen=True)
class ReturnsInput:
    """A returned tensor is an input, or a view or copy of one."""

    kind: ClassVar = FailureKind.TORCH_COMPUTE
    phase: str
    name: str
    made: str  # what it is, in the learner's words


def _returns_input(f: ReturnsInput) -> str:
    return (f"the {f.phase} returns {f.made} as `{f.name}`, which no Triton kernel wrote: an input (or a view or "
            f"copy of one) is not a result. Compute `{f.name}` with your Triton kernels. {_WRAPPER_DOES}")


@dataclass(frozen=True)
class NeverComputed:
    """A returned tensor no kernel wrote, nor was it computed from the inputs."""

    kind: ClassVar = FailureKind.UNWRITTEN
    phase: str
    name: str
    made: str


def _never_computed(f: NeverComputed) -> str:
    return (f"`{f.name}` is never written: the {f.phase} returns {f.made}, which no Triton kernel wrote. Every "
            f"output element must be stored by one of your kernels: launch the kernel that computes `{f.name}` "
            f"and return the tensor it wrote.")


@dataclass(frozen=True)
class NotReplayable:
    kind: ClassVar = FailureKind.TORCH_COMPUTE
    phase: str
    what: str  # what the wrapper does that a replay cannot


def _not_replayable(f: NotReplayable) -> str:
    return (f"the {f.phase} {f.what}. The grader replays what your wrapper recorded, operator by operator and "
            f"launch by launch, so a wrapper may only use PyTorch's own operators and your Triton kernels. "
            f"{_WRAPPER_DOES}")


@dataclass(frozen=True)
class NotATensor:
    """The forward returned something else than a tensor."""

    kind: ClassVar = FailureKind.SHAPE
    returned: str  # its type
    shape: tuple[int, ...]  # the output's
    dtype: str


def _not_a_tensor(f: NotATensor) -> str:
    return (f"forward returned a {f.returned}, not a tensor: return the output "
            f"tensor, of shape {fmt_shape(f.shape)} {f.dtype}.")


@dataclass(frozen=True)
class WrongOutput:
    """The forward's output has another shape or dtype than the spec's."""

    kind: ClassVar = FailureKind.SHAPE
    shape: tuple[int, ...]
    dtype: str
    expected_shape: tuple[int, ...]
    expected_dtype: str


def _wrong_output(f: WrongOutput) -> str:
    return (f"forward returned {fmt_shape(f.shape)} {f.dtype}, expected {fmt_shape(f.expected_shape)} "
            f"{f.expected_dtype}: reshape the kernel's output back to the input's leading dims "
            f"(x.shape[:-1]) and keep {f.expected_dtype}.")


@dataclass(frozen=True)
class GradCount:
    kind: ClassVar = FailureKind.SHAPE
    count: int
    inputs: tuple[str, ...]


def _grad_count(f: GradCount) -> str:
    return (f"backward returned {f.count} value(s); it must return one gradient per forward "
            f"input ({', '.join(f.inputs)}).")


@dataclass(frozen=True)
class GradNotTensor:
    kind: ClassVar = FailureKind.SHAPE
    returned: str  # its type
    label: str     # grad_<input>
    shape: tuple[int, ...]


def _grad_not_tensor(f: GradNotTensor) -> str:
    return f"backward returned {f.returned} for {f.label}; return a tensor of shape {fmt_shape(f.shape)}."


@dataclass(frozen=True)
class GradShape:
    kind: ClassVar = FailureKind.SHAPE
    label: str
    shape: tuple[int, ...]
    expected: tuple[int, ...]


def _grad_shape(f: GradShape) -> str:
    return (f"backward returned {f.label} of shape {fmt_shape(f.shape)}, expected "
            f"{fmt_shape(f.expected)}: a gradient has its input's shape.")


@dataclass(frozen=True)
class CtxAttribute:
    """A tensor kept as an attribute of ctx, not saved for backward."""

    kind: ClassVar = FailureKind.SAVED
    attribute: str


def _ctx_attribute(f: CtxAttribute) -> str:
    return (f"ctx.{f.attribute} holds a tensor: pass tensors to ctx.save_for_backward, "
            f"which autograd tracks and frees, not as attributes of ctx.")


@dataclass(frozen=True)
class SavedExtra:
    """ctx saved a tensor that is neither an input nor one of the results the puzzle lets it keep."""

    kind: ClassVar = FailureKind.SAVED
    shape: tuple[int, ...]
    saves: tuple[str, ...]   # the results the puzzle lets ctx keep
    inputs: tuple[str, ...]


def _saved_extra(f: SavedExtra) -> str:
    needed = ", ".join([*f.inputs, *f.saves])
    return (f"ctx saved a tensor of shape {fmt_shape(f.shape)} that is not an input"
            f"{' nor one of ' + ', '.join(f.saves) if f.saves else ''}: "
            f"save only what the backward needs ({needed}), and recompute the rest.")


@dataclass(frozen=True)
class SavedStorage:
    """ctx saved a tensor of an allowed shape whose storage (what saving it keeps alive) is larger
    than what the puzzle lets ctx keep: a view into a buffer that holds more."""

    kind: ClassVar = FailureKind.SAVED
    shape: tuple[int, ...]
    dtype: str
    kept: int        # bytes of the storage the saved tensor views
    allowed: int     # bytes of what the puzzle lets ctx keep in that storage
    made: str = ""   # where the storage was made: "`empty` at line 12: `buf = ...`"
    saves: tuple[str, ...] = ()
    count: int = 1   # the saved tensors that view it


def _saved_storage(f: SavedStorage) -> str:
    made = f" (made by {f.made})" if f.made else ""
    itself = "the tensor itself takes" if f.count == 1 else f"the {f.count} tensors saved from it take"
    lets = f" The puzzle lets ctx keep {' and '.join(f.saves)} besides the inputs." if f.saves else ""
    return (f"ctx saved a tensor of shape {fmt_shape(f.shape)} {f.dtype} that keeps alive a storage of "
            f"{f.kept:,} bytes{made}, where {itself} {f.allowed:,} bytes: saving a view keeps its whole storage, "
            f"and the backward can read all of it.{lets} Save tensors with memory of their own (allocate each by "
            f"itself, or `.clone()` the view), and recompute the rest in the backward.")


# ---- --bench: a later call wrong, and a timing that cannot be trusted -------------------

@dataclass(frozen=True)
class TimedCall:
    """A timed call of ``--bench`` whose result was wrong, though the first call's was right:
    ``facts`` (a Mismatch, Unwritten or Nonfinite) say how."""

    kind: FailureKind
    call: int
    calls: int
    facts: Any


def _timed_call(f: TimedCall) -> str:
    return (f"timed call {f.call} of {f.calls}, on inputs other than the call before it: {word(f.facts)} The first "
            f"call was right. Every call must do the whole work on the inputs it is given: a result kept from an "
            f"earlier call, looked up by the inputs' addresses, or skipped once the first calls were checked, is "
            f"wrong here.")


_REFUSED = "--bench refuses this run: "


@dataclass(frozen=True)
class BelowLimit:
    """A time no kernel could reach on this GPU: its traffic at the memory's peak, or its
    floating-point operations at the tensor cores' peak, take longer."""

    kind: ClassVar = FailureKind.BENCH_REJECTED
    ms: float
    limit_ms: float
    bound: str  # what sets the limit, in words: "67108864 bytes at 3352 GB/s"


def _below_limit(f: BelowLimit) -> str:
    return (f"{_REFUSED}it measured {f.ms:.4g} ms, below this GPU's physical limit of {f.limit_ms:.4g} ms "
            f"({f.bound}). No kernel is that fast: the timer did not see the work (work on another stream or "
            f"thread, or after the timer stopped), or the work was not done.")


@dataclass(frozen=True)
class Tampered:
    """Names the learner's code rebound, or switches it threw, while it ran."""

    kind: ClassVar = FailureKind.BENCH_REJECTED
    names: tuple[str, ...]


def _tampered(f: Tampered) -> str:
    names = ", ".join(f"`{n}`" for n in f.names[:6]) + (f" and {len(f.names) - 6} more" if len(f.names) > 6 else "")
    return (f"{_REFUSED}your code changed {names} while it ran. The timer, PyTorch's functions and its settings "
            f"belong to the grader (a patched timer lies; a slowed baseline flatters): a kernel or wrapper may "
            f"only compute, and must leave the process as it found it.")


@dataclass(frozen=True)
class HiddenWork:
    """The host's clock, to a device-wide synchronise, well above the events on the learner's stream."""

    kind: ClassVar = FailureKind.BENCH_REJECTED
    event_ms: float
    wall_ms: float
    overhead_ms: float


def _hidden_work(f: HiddenWork) -> str:
    return (f"{_REFUSED}a call took {f.wall_ms:.4g} ms to finish on the GPU, but the events on its stream saw "
            f"{f.event_ms:.4g} ms (the timer's own overhead is {f.overhead_ms:.3g} ms): work ran where the timer "
            f"cannot see it, on another CUDA stream. Launch every kernel on the current stream.")


@dataclass(frozen=True)
class ThreadsStarted:
    kind: ClassVar = FailureKind.BENCH_REJECTED
    count: int
    call: int  # after which call a thread was first seen (0: the first, untimed one)


def _threads_started(f: ThreadsStarted) -> str:
    when = "the first call" if f.call <= 0 else f"timed call {f.call}"
    return (f"{_REFUSED}your code left {plural(f.count, 'thread')} running after {when} returned. Work a thread "
            f"does after the call returns is not timed; a call must finish its work before it returns.")


@dataclass(frozen=True)
class Reached:
    """An audit event the learner's code raised while it ran (the garbage collector, frames, ctypes, hooks)."""

    kind: ClassVar = FailureKind.BENCH_REJECTED
    event: str
    file: str = ""
    line: int = 0


def _reached(f: Reached) -> str:
    where = f" at {f.file.rsplit('/', 1)[-1]}:{f.line}" if f.file else ""
    return (f"{_REFUSED}your code called `{f.event}`{where} while the bench ran it. That reaches past its own "
            f"tensors (to the grader's objects, frames, memory or hooks), which a kernel or wrapper has no need of.")


@dataclass(frozen=True)
class NotPlain:
    """Results that were not plain tensors (a subclass can compute when read, after the timer)."""

    kind: ClassVar = FailureKind.BENCH_REJECTED
    names: tuple[str, ...]


def _not_plain(f: NotPlain) -> str:
    return (f"{_REFUSED}{', '.join(f.names)} came back as an object that is not a plain torch.Tensor. A tensor "
            f"subclass can do its work when it is read, after the timer stopped: return plain tensors.")


@dataclass(frozen=True)
class PersistingL2:
    kind: ClassVar = FailureKind.BENCH_REJECTED
    limit: int   # bytes of L2 set aside for persisting lines
    window: int  # bytes of the stream's access policy window


def _persisting_l2(f: PersistingL2) -> str:
    return (f"{_REFUSED}your code set aside L2 cache for persisting lines (a carve-out of {f.limit} bytes, "
            f"an access policy window of {f.window} bytes). The bench flushes L2 before each call so that every "
            f"call reads its inputs from memory, as in a model where the tensors do not stay in cache.")


# ---- the catalogue ------------------------------------------------------------------------

# ---- Helion kernels: the work must be in the tiles -----------------------------------------

@dataclass(frozen=True)
class HostWork:
    """A Helion kernel computed outside its ``hl.tile`` loops (``loops`` False: it has none):
    ``ops`` the PyTorch operations its host code ran on tensor data, on its parameters ``tensors``,
    inside the helper function ``called`` (its line ``called_line``) where it called one."""

    kind: ClassVar = FailureKind.TORCH_COMPUTE
    name: str
    line: int | None
    source: str
    loops: bool = True
    ops: tuple[str, ...] = ()
    tensors: tuple[str, ...] = ()
    called: str = ""
    called_line: int | None = None
    called_source: str = ""


def _host_work(f: HostWork) -> str:
    if not f.loops:
        return (f"`{f.name}` has no `hl.tile` loop, so Helion generates no Triton kernel from it: all it does is "
                f"computed with PyTorch on the host{_where(f.line, f.source)}. Fix: put the work inside "
                f"`for tile in hl.tile(n):`, on the tiles (`z[tile] = x[tile] + y[tile]`).")
    what = ""
    if f.ops:
        on = f" on {', '.join(f'`{t}`' for t in f.tensors)}" if f.tensors else ""
        what = f": PyTorch ran {', '.join(f'`{o}`' for o in f.ops)}{on} there, on the host"
        if f.called:
            what += f", inside `{f.called}`{_where(f.called_line, f.called_source)}"
    return (f"`{f.name}` computed with PyTorch outside its `hl.tile` loops{_where(f.line, f.source)}{what}. Helion "
            f"runs code outside the loops on the host as whole-tensor PyTorch, so that is PyTorch's result, not "
            f"the Triton kernel Helion generates. Fix: move the computation into the `hl.tile` loop, on the "
            f"tiles (`x[tile]`); outside the loops, only allocate the outputs (`torch.empty_like(x)`, "
            f"`x.new_zeros(...)`), take views and sizes, and return them.")


_HELION_FIXES = [
    # Two sizes Helion only knows symbolically (u0, u1: tiles, reductions) do not line up: most
    # often a reduction that dropped its dimension meets the tile it was taken over.
    (r"size of tensor a \(u\d+\) must match the size of tensor b \(u\d+\)",
     "two values of different shapes meet on this line (one's dimension is another tile's or reduction's). "
     "Most often a reduction dropped its dimension: `torch.amax(row, dim=1)` is one value per row, shape "
     "[rows], and lines up with `row` ([rows, cols]) only as a column: `torch.amax(row, dim=1, keepdim=True)`, "
     "or `m[:, None]`."),
    (r"must match the size of tensor|size of tensor a .* must match|broadcast",
     "a tile's values (`x[tile]`) and a whole tensor (`x`) do not broadcast: index every tensor inside the "
     "loop with the tiles, e.g. `x[tile] + y[tile]`."),
    (r"NoDeviceLoops|no device loops", "put the work inside `for tile in hl.tile(n):`."),
    (r"[Nn]ot supported|[Uu]nsupported",
     "this line uses something Helion cannot lower to Triton: write it with PyTorch operations on the tiles "
     "(`torch.exp`, `torch.sum(v, dim=-1)`, `+`, `*`...), or `hl.*` functions."),
]


@dataclass(frozen=True)
class HelionRejected:
    """Helion's compiler refused a learner's kernel, at their line."""

    kind: ClassVar = FailureKind.COMPILE
    error: str
    line: int | None
    source: str


def _helion_rejected(f: HelionRejected) -> str:
    reason = f.error.strip().removeprefix("Helion's compiler: ").strip() or "unknown error"
    fix = next((fix for pattern, fix in _HELION_FIXES if re.search(pattern, reason)),
               "make the line valid in a Helion kernel: tensors indexed with tiles inside `hl.tile` loops, "
               "outputs allocated before the loops.")
    return (f"the kernel does not compile for a GPU (sm_90): Helion's compiler rejects it{at_line(f.line, f.source)}: "
            f"{reason.rstrip('.')}. Fix: {fix}")


@dataclass(frozen=True)
class LoweringDisagrees:
    """The Triton Helion generated, run tile by tile, disagrees with Helion's interpreter (each
    ``hl.tile`` loop one tile), which gives the spec's values: the kernel depends on its tiles,
    or Helion lowered it wrongly. ``found``: the tiled run's mismatch, worded; ``elements``:
    (index, the tiled run's value, the interpreter's) where they differ."""

    kind: ClassVar = FailureKind.MISMATCH
    output: str
    found: str
    elements: tuple[tuple[tuple[int, ...], float, float], ...]


def _lowering_disagrees(f: LoweringDisagrees) -> str:
    both = "; ".join(f"{fmt_index(i)}: tiled {tiled:.6g}, interpreter {one:.6g}" for i, tiled, one in f.elements)
    return (f"{f.found.rstrip('.')}. Helion's interpreter, which runs each hl.tile loop as one tile, gives the "
            f"spec's values from the same kernel, and the two disagree in `{f.output}` ({both}). Either the "
            f"kernel's result depends on its tile sizes (a tile's offset, one chunk's statistics taken for the "
            f"row's), or Helion's compiler lowered it to Triton wrongly: if your code does not depend on its "
            f"tiles, the compiler may be at fault; compare the Triton it generated (--verbose) with your code.")


@dataclass(frozen=True)
class GeneratedCompile:
    """The Triton code Helion generated from a learner's kernel does not compile for sm_90."""

    kind: ClassVar = FailureKind.COMPILE
    kernel: str
    case: str
    failed: CompileFailed


def _generated_compile(f: GeneratedCompile) -> str:
    return (f"GPU compile check of `{f.kernel}`, the Triton Helion generated for {f.case}: "
            f"{_compile_failed(f.failed)}")


@dataclass(frozen=True)
class ReturnCount:
    """A Helion kernel returned another number of values than the spec."""

    kind: ClassVar = FailureKind.SHAPE
    name: str
    got: int
    outputs: tuple[str, ...]


def _return_count(f: ReturnCount) -> str:
    names = ", ".join(f.outputs)
    return (f"`{f.name}` returned {plural(f.got, 'value')}; expected {len(f.outputs)} ({names}). Fix: "
            f"`return {names}`, the tensors the kernel allocated and filled.")


@dataclass(frozen=True)
class HelionWrongOutput:
    """A Helion kernel returned an output of another shape or dtype than the spec's."""

    kind: ClassVar = FailureKind.SHAPE
    kernel: str
    output: str
    shape: tuple[int, ...]
    dtype: str
    expected_shape: tuple[int, ...]
    expected_dtype: str


def _helion_wrong_output(f: HelionWrongOutput) -> str:
    got, want = f"{fmt_shape(f.shape)} {f.dtype}", f"{fmt_shape(f.expected_shape)} {f.expected_dtype}"
    fixes = []
    if tuple(f.shape) != tuple(f.expected_shape):
        fixes.append(f"allocate it with the spec's shape, {fmt_shape(f.expected_shape)}")
    if f.dtype != f.expected_dtype:
        fixes.append(f"allocate it as {f.expected_dtype} (`torch.empty_like(x)` takes x's dtype; "
                     f"`torch.empty([...], dtype=torch.{f.expected_dtype}, device=x.device)` names it): Helion "
                     f"rounds what a tile stores to the output's dtype")
    return f"`{f.kernel}` returned `{f.output}` as {got}, expected {want}. Fix: {'; '.join(fixes)}."


@dataclass(frozen=True)
class Entry:
    """One kind of failure: how reports label it, and how its message reads from each kind of
    facts it is found with."""

    label: str  # a report's short name for it (the HTML table's failure column)
    words: Mapping[type, Callable[[Any], str]]  # facts type -> the message
    stops: str | None = None  # after it the remaining cases are not run: "<case> <stops>" says why
    points: bool = False  # its message points at the line, access or element at fault: shown first

    def message(self, facts) -> str:
        return self.words[type(facts)](facts)


_VALUES = {ReadEarly: _read_early, TimedCall: _timed_call, LooksLike: _looks_like}  # a value check's failure that carries its own kind

CATALOGUE: dict[FailureKind, Entry] = {
    FailureKind.MISMATCH: Entry("wrong values", {Mismatch: _mismatch, LoweringDisagrees: _lowering_disagrees, GapFill: _gap_fill,
                                                 PropertyFailed: _property_failed, **_VALUES}),
    FailureKind.UNWRITTEN: Entry("not written", {Unwritten: _unwritten, NeverComputed: _never_computed, **_VALUES}),
    FailureKind.NONFINITE: Entry("NaN/Inf", {Nonfinite: _nonfinite, **_VALUES}),
    FailureKind.OUT_OF_BOUNDS: Entry("out of bounds", {StrayStore: _stray_store, Worded: _said}, points=True),
    FailureKind.INPUT_MODIFIED: Entry("wrote an input", {InputModified: _input_modified}, points=True),
    FailureKind.EXCEPTION: Entry("exception", {Raised: _raised, LaunchRefused: _launch_refused,
                                               ImportFailed: _import_failed,
                                               ReplayDisagrees: _replay_disagrees, Worded: _said}, points=True),
    FailureKind.CRASH: Entry("crash", {Crash: _crash}, stops="crashed"),
    FailureKind.TIMEOUT: Entry("timeout", {Timeout: _timeout}, stops="timed out"),
    FailureKind.SIGNATURE: Entry("signature", {NotCallable: _not_callable, Worded: _said}, points=True),
    FailureKind.COMPILE: Entry("compile", {CompileFailed: _compile_failed, CompileCheck: _compile_check,
                                           LaunchCompile: _launch_compile, CheckUnfinished: _check_unfinished,
                                           HelionRejected: _helion_rejected, GeneratedCompile: _generated_compile},
                               points=True),
    FailureKind.NOT_FOUND: Entry("not found", {NoKernel: _no_kernel, Dropped: _dropped, Worded: _said}, points=True),
    FailureKind.SKIPPED: Entry("skipped", {Skipped: _skipped}),
    FailureKind.SHAPE: Entry("shape", {NotATensor: _not_a_tensor, WrongOutput: _wrong_output, GradCount: _grad_count,
                                       GradNotTensor: _grad_not_tensor, GradShape: _grad_shape,
                                       ReturnCount: _return_count, HelionWrongOutput: _helion_wrong_output},
                               points=True),
    FailureKind.TORCH_COMPUTE: Entry("computed with PyTorch", {
        TorchOp: _torch_op, NoLaunch: _no_launch, Unseen: _unseen, HostValues: _host_values,
        ReturnsInput: _returns_input, NotReplayable: _not_replayable, HostWork: _host_work,
        HostReduction: _host_reduction}, points=True),
    FailureKind.SAVED: Entry("saved", {CtxAttribute: _ctx_attribute, SavedExtra: _saved_extra,
                                                SavedStorage: _saved_storage}, points=True),
    FailureKind.RACE: Entry("race", {Overlap: _overlap, OrderDependent: _order_dependent, ReadAcross: _read_across,
                                     ReadAcrossLaunch: _read_across_launch, Worded: _said}, points=True),
    FailureKind.SNIFFING: Entry("sniffing", {Worded: _said}, points=True),
    FailureKind.SYNTAX: Entry("syntax", {Worded: _said}, points=True),
    FailureKind.INTERPRETER_LIMIT: Entry("interpreter limit", {InterpreterLimit: _interpreter_limit,
                                                               BesideUnchecked: _beside_unchecked},
                                         stops="needs a GPU"),
    FailureKind.BENCH_REJECTED: Entry("bench rejected", {
        BelowLimit: _below_limit, Tampered: _tampered, HiddenWork: _hidden_work, ThreadsStarted: _threads_started,
        Reached: _reached, NotPlain: _not_plain, PersistingL2: _persisting_l2}),
}

UNKINDED = "failed"  # the label of a failure that has no kind


def label(kind: FailureKind | str | None) -> str:
    """What a report prints for a failure of ``kind``."""
    return CATALOGUE[FailureKind(kind)].label if kind else UNKINDED


def word(facts) -> str:
    """The message a learner reads for ``facts``, from its kind's entry."""
    return CATALOGUE[facts.kind].message(facts)


def finding(facts) -> str:
    """The message without its general advice ("Look for a division by zero, ..."): what a
    look-alike's note replaces, since it names the cause itself. "" where there is none."""
    if isinstance(facts, Mismatch) and facts.row_zero_only:  # a look-alike names the cause better than a signature
        return _mismatch(replace(facts, row_zero_only=False))
    return _nonfinite_finding(facts) if isinstance(facts, Nonfinite) else ""


def points(kind: FailureKind | None) -> bool:
    """Whether a failure of ``kind`` names the line, access or element at fault (see
    :func:`grader.judge.results.most_telling`)."""
    return kind is not None and CATALOGUE[kind].points


def stops(kind: FailureKind) -> str | None:
    """Why the cases after one that failed so are not run, or None where they are."""
    return CATALOGUE[kind].stops


def reported(name: str) -> FailureKind | None:
    """The kind a worker's failure of this name (``wire.Failure.kind``) is; None for the
    worker's own breakage ("error"), a grader bug."""
    try:
        return FailureKind(name)
    except ValueError:
        return None
