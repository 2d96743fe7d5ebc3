"""``ast.parse`` for a process with threads.

CPython 3.11 keeps the AST constructor's recursion depth in state that every thread shares
(python/cpython#106905), so two threads parsing at once can fail with ``SystemError: AST
constructor recursion depth mismatch``. The grader parses learner and course files from several
grading threads and their compile checks at once: every parse of the grader's goes through this
one lock (``tests/test_layout.py`` holds it to that)."""
from __future__ import annotations

import ast
import threading

_LOCK = threading.Lock()


def parse(source: str | bytes, filename: str = "<unknown>", mode: str = "exec", **kwargs) -> ast.AST:
    """:func:`ast.parse`, one thread at a time."""
    with _LOCK:
        return ast.parse(source, filename, mode, **kwargs)
