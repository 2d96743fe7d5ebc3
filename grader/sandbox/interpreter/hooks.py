"""How the sandbox hooks Triton's interpreter, and lets go: the one way each hook is put on and
taken off, for the checks and counts that ride on a run (races, sampling, bounds, ``--perf``).
"""
from __future__ import annotations


class RangePatch:
    """The one way the sandbox steers the interpreter's grid loop (reversed, sampled): while
    active, ``range`` in the interpreter's module is a function of the subclass's, which tells
    the loop's calls from the others by their frame. ``range`` there is the builtin, so the
    patch is a module global, and deleting it lets the builtin show through again."""

    module = None

    def _patch(self, interpreter, grid_range) -> None:
        self.module = interpreter
        interpreter.range = grid_range

    def __exit__(self, *exc) -> None:
        if self.module is not None:
            del self.module.range
            self.module = None


def restore(builder, saved) -> None:
    """Undo a patch of the interpreter's builder: the patches are instance attributes over its
    class's methods (``saved`` names them), so deleting them lets the class's show through."""
    for name in saved:
        try:
            delattr(builder, name)
        except AttributeError:
            pass


def grid_loop(interpreter):
    """The code of the interpreter's grid loop (``GridExecutor.__call__``), below any wrapper."""
    call = interpreter.GridExecutor.__call__
    return getattr(call, "__wrapped__", call).__code__
