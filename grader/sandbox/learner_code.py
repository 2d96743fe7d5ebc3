"""Learner code inside the worker: capturing what it prints, finding its lines in errors."""
from __future__ import annotations

import contextlib
import inspect
import os
import re
import sys
import tempfile
import traceback
import warnings

from grader.sandbox.error_chain import errors_behind

GRADER = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))  # grader/


def library_of(filename: str) -> str | None:
    """The installed package a file belongs to (``numpy``, ``triton``), ``the grader``, or
    ``Python``; None for the learner's own files (anything else)."""
    if filename.startswith("<"):  # <frozen ...>, <string>
        return "Python"
    path = os.path.abspath(filename)
    parts = path.split(os.sep)
    for marker in ("site-packages", "dist-packages"):
        if marker in parts[:-1]:
            return parts[parts.index(marker) + 1].removesuffix(".py")
    if path.startswith(GRADER + os.sep):
        return "the grader"
    if any(path.startswith(prefix + os.sep) for prefix in {sys.prefix, sys.base_prefix, sys.exec_prefix}):
        return "Python"
    return None


def _said_plainly(message, category, filename, lineno, file=None, line=None) -> None:
    """``warnings.showwarning`` while learner code runs: the warning with the learner's line that led
    to it, and the library that raised it by its name, never a path of this machine (numpy's
    ``RuntimeWarning`` of an overflow used to read as `/home/.../interpreter.py:594: ...`)."""
    import linecache
    frame = sys._getframe(1)
    while frame is not None and library_of(frame.f_code.co_filename) is not None:
        frame = frame.f_back
    where = ""
    if frame is not None:
        code = linecache.getline(frame.f_code.co_filename, frame.f_lineno).strip()
        where = (f", at line {frame.f_lineno} of {os.path.basename(frame.f_code.co_filename)}"
                 + (f": `{code}`" if code else ""))
    origin = library_of(filename)
    raised = f" (raised inside {origin})" if origin is not None else ""
    said = str(message)
    for prefix in sorted({GRADER, sys.prefix, sys.base_prefix, sys.exec_prefix}, key=len, reverse=True):
        said = said.replace(prefix + os.sep, "")
    try:  # to fd 2 itself, which captured_output holds, whatever sys.stderr has become
        sys.stderr.flush()
        os.write(2, f"{category.__name__}: {said}{where}{raised}\n".encode("utf-8", "replace"))
    except (OSError, ValueError):  # stderr closed by the learner's code: the warning is lost, not the run
        pass


@contextlib.contextmanager
def captured_output():
    """Send fds 1 and 2 to a temporary file; yields a list that receives the text. Warnings
    raised meanwhile are written as :func:`_said_plainly` words them."""
    sys.stdout.flush()
    sys.stderr.flush()
    saved = os.dup(1), os.dup(2)
    text: list[str] = []
    with tempfile.TemporaryFile() as tmp, warnings.catch_warnings():
        warnings.showwarning = _said_plainly
        os.dup2(tmp.fileno(), 1)
        os.dup2(tmp.fileno(), 2)
        try:
            yield text
        finally:
            sys.stdout.flush()
            sys.stderr.flush()
            os.dup2(saved[0], 1)
            os.dup2(saved[1], 2)
            os.close(saved[0])
            os.close(saved[1])
            tmp.seek(0)
            text.append(tmp.read(1 << 20).decode("utf-8", "replace"))


def learner_frame(exc: BaseException, filename: str) -> tuple[int | None, str]:
    """The deepest traceback entry in the learner's file, following chained exceptions."""
    found: tuple[int | None, str] = (None, "")
    for link in errors_behind(exc):
        for entry in traceback.extract_tb(link.__traceback__):
            if os.path.abspath(entry.filename) == filename:
                found = (entry.lineno, (entry.line or "").strip())
    return found


def compile_error_line(exc: BaseException, fn, filename: str) -> tuple[int | None, str]:
    """Triton reports compile errors as "at LINE:COL:" counted from the ``def`` line."""
    import linecache
    import re
    match = re.match(r"at (\d+):(\d+):", str(exc))
    if not match:
        return learner_frame(exc, filename)
    lines, first = inspect.getsourcelines(fn)
    def_offset = next((i for i, text in enumerate(lines) if text.lstrip().startswith("def ")), 0)
    line = first + def_offset + int(match.group(1)) - 1
    return line, linecache.getline(filename, line).strip()


# Python's "name 'X' is not defined", Triton's compiler's "X is not defined"
_UNDEFINED = re.compile(r"(?:\bname '(\w+)'|^(\w+)) is not defined")


def said(exc: BaseException) -> str:
    """``exc`` as the learner reads it ("NameError: name 'X' is not defined"), and, where the
    name is one the definitions-only import left out, which line that was and why it was not run."""
    text = f"{type(exc).__name__}: {exc}"
    note = left_out(exc)
    return f"{text} ({note})" if note else text


def left_out(exc: BaseException) -> str:
    """Why a name the learner's code could not find is missing, where a statement binding it was
    left out of the import: "line 12, `X = f()`, was not run: <why>"."""
    from grader.sandbox.learner_import import why_missing
    from grader.source.kept_data import said as statement_said
    for link in errors_behind(exc):
        found = _UNDEFINED.search(str(link)) if isinstance(link, NameError) or "is not defined" in str(link) else None
        name = getattr(link, "name", None) if isinstance(link, NameError) else None
        name = name or (found and (found.group(1) or found.group(2)))
        frames = traceback.extract_tb(link.__traceback__)
        dropped = why_missing(name, frames[-1].filename if frames else None) if name else None  # its file's first
        if dropped is not None:
            return statement_said(dropped)
    return ""


def exception_chain(exc: BaseException):
    seen = set()
    while exc is not None and id(exc) not in seen:
        seen.add(id(exc))
        yield exc
        exc = exc.__cause__


def root_cause(exc: BaseException) -> BaseException:
    """Triton's interpreter wraps errors in InterpreterError; the learner wants the original."""
    seen = set()
    while exc.__cause__ is not None and id(exc) not in seen:
        seen.add(id(exc))
        exc = exc.__cause__
    return exc
