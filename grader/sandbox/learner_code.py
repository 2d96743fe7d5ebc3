"""Learner code inside the worker: capturing what it prints, finding its lines in errors."""
from __future__ import annotations

import contextlib
import inspect
import os
import sys
import tempfile
import traceback

from grader.sandbox.error_chain import errors_behind


@contextlib.contextmanager
def captured_output():
    """Send fds 1 and 2 to a temporary file; yields a list that receives the text."""
    sys.stdout.flush()
    sys.stderr.flush()
    saved = os.dup(1), os.dup(2)
    text: list[str] = []
    with tempfile.TemporaryFile() as tmp:
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
