"""Compile errors, and the usual fix of a compiler's complaint."""
from __future__ import annotations

import re
from dataclasses import dataclass
from typing import ClassVar, Mapping

from grader.judge.failures.catalogue import FailureKind, register
from grader.judge.failures.words import at_line, usual_fix

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


register(FailureKind.COMPILE, {CompileFailed: _compile_failed, CompileCheck: _compile_check,
                               LaunchCompile: _launch_compile, CheckUnfinished: _check_unfinished})
