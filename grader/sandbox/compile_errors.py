"""Why a kernel did not compile, as one text whose last line is the reason (inside the worker).

Triton's errors do not always carry their reason on the outer exception:

* a failing ``@triton.jit`` helper is reported at the kernel's call as "at L:C: <source> ^"
  with no reason; the reason is on the helper's own CompilationError, a cause further down;
* a ``@tl.constexpr`` helper's Python error is the cause of the call's error;
* ptxas's complaint sits in the middle of a PTXASError, before a "Repro command" line.

:func:`describe` walks the chain and puts the real reason, and where a helper failed, on the
last line, which is what :func:`grader.judge.messages.compile_failure` shows and matches fixes on.
"""
from __future__ import annotations

import os
import re
import traceback

from grader.sandbox.error_chain import errors_behind
from grader.sandbox.learner_code import compile_error_line, left_out

_AT = re.compile(r"at (\d+):(\d+):")


def _reason(exc: BaseException) -> str:
    """The reason an exception gives, or "" where it is only a location and a caret."""
    text = re.sub(r"(<function \w+) at 0x[0-9a-f]+>", r"\1>", str(exc).strip())  # no address: same every run
    if "`ptxas` stderr:" in text:
        complaints = [line.split(":", 1)[-1].strip() for line in text.splitlines()
                      if line.startswith("ptxas") and ("fatal" in line or "error" in line)]
        first = complaints[0] if complaints else text.splitlines()[0]
        return f"ptxas, NVIDIA's assembler, rejected the kernel: {first}"
    if _AT.match(text):
        last = text.splitlines()[-1].strip()
        return "" if not last or set(last) <= {"^", " "} or len(text.splitlines()) < 3 else last
    return f"{type(exc).__name__}: {text}" if text else type(exc).__name__


def _helper(exc: BaseException, kernel_fn):
    """The learner function a CompilationError's source belongs to (a helper of the kernel)."""
    src = getattr(exc, "src", None)
    name = re.search(r"def\s+(\w+)", src or "")
    if name is None or kernel_fn is None:
        return None
    from grader.source.wrapped import python_function
    found = getattr(kernel_fn, "__globals__", {}).get(name.group(1))
    found = getattr(found, "value", found)  # a @tl.constexpr helper is a constexpr holding it
    return python_function(found)


def _learner_frame(exc: BaseException, filename: str):
    """The deepest frame of ``exc``'s own traceback in the learner's file (a helper's line)."""
    entries = [e for e in traceback.extract_tb(exc.__traceback__) if os.path.abspath(e.filename) == filename]
    return entries[-1] if entries else None


def _call_site(kernel_fn, name: str) -> str:
    """Where the kernel's source first calls ``name``, as "at line N: `source`"."""
    import inspect
    try:
        lines, first = inspect.getsourcelines(kernel_fn)
    except (OSError, TypeError):
        return ""
    for number, text in enumerate(lines, first):
        if re.search(rf"\b{re.escape(name)}\s*\(", text) and not text.lstrip().startswith("def "):
            return f"`{name}` is called at line {number}: `{text.strip()}`"
    return ""


def describe(exc: BaseException, kernel_fn, filename: str) -> str:
    """``exc`` as "<Type>: <text>", its last line the reason, prefixed by the helper that failed
    (name and line) when that is not the kernel itself."""
    chain = list(errors_behind(exc))
    head = f"{type(exc).__name__}: {exc}".rstrip()
    reason, where = "", ""
    for link in chain:  # the outermost reason (Triton's own words), the innermost helper
        reason = reason or _reason(link)
        fn = _helper(link, kernel_fn) if _AT.match(str(link).strip()) else None
        if fn is not None and fn is not kernel_fn and getattr(fn, "__name__", "") != getattr(kernel_fn, "__name__", ""):
            line, source = compile_error_line(link, fn, filename)
            where = f"in `{fn.__name__}`" + (f" at line {line}: `{source}`" if line else "")
    if chain and not _AT.match(str(chain[-1]).strip()) and "`ptxas` stderr:" not in str(chain[-1]):
        # a plain Python error at the bottom: a @tl.constexpr helper's own line, if it is the learner's
        frame = _learner_frame(chain[-1], filename)
        if frame is not None and not where:
            where = f"in `{frame.name}` at line {frame.lineno}: `{(frame.line or '').strip()}`"
    if not reason:
        reason = "Triton gave no reason"
    unsupported = re.search(r"Unsupported function referenced: <function (\w+)", reason)
    if unsupported and not where:  # raised before code generation, so with no line: find the call
        where = _call_site(kernel_fn, unsupported.group(1))
    last = f"{where}: {reason}" if where else reason
    note = left_out(exc)  # a name the definitions-only import left out: which line, and why
    last = f"{last} ({note})" if note else last
    return head if head.splitlines()[-1].strip() == last else f"{head}\n{last}"
