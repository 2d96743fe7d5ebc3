"""What Triton's interpreter cannot run, said as such.

A kernel that compiles for a GPU but uses something the interpreter has no way to execute
(inline PTX, a libdevice function numpy has no counterpart for) is not the learner's mistake.
The interpreter patches raise :class:`InterpreterLimit` there; the worker reports it as its
own kind of failure, and the grader gives the puzzle the ``interpreter_limit`` status, which
names the limit and the way to grade the kernel on a GPU.

This module imports nothing of Triton's so that the worker can recognise the exception
without loading the patches.
"""
from __future__ import annotations


class InterpreterLimit(Exception):
    """The interpreter cannot run this construct; ``what`` names it in the learner's words."""

    def __init__(self, what: str) -> None:
        super().__init__(what)
        self.what = what


class BlockTruth(Exception):
    """``and``/``or``/``not`` (or ``if``) on a block: the learner's mistake, refused in the
    interpreter where it would silently keep one operand (rules.block_truth)."""


def find_limit(exc: BaseException | None) -> InterpreterLimit | None:
    """The InterpreterLimit behind ``exc`` (Triton wraps kernel errors in InterpreterError)."""
    from grader.sandbox.error_chain import errors_behind
    return next((link for link in errors_behind(exc) if isinstance(link, InterpreterLimit)), None)
