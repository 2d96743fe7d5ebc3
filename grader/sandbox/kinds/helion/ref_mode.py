"""Helion's interpreter (``HELION_INTERPRET=1``, a Helion puzzle's values on a CPU): its tunables,
and what it cannot run.

``hl.register_tunable("split_k", PowerOfTwoFragment(1, 256))`` takes its value from the kernel's
config. The interpreter has one only where the kernel names it (``config=``) or tunes nothing
(``autotune_effort="none"``); for ``@helion.kernel()`` its reference asserts that a config exists.
The grader compiles every kernel with its own config, or else Helion's default, where each tunable
takes its fragment's default (:func:`grader.sandbox.kinds.helion.config.case_config`): so the
interpreter takes that default too, and runs what a GPU runs. ``hl.register_block_size`` needs
nothing: its reference gives the whole extent, one block, whatever the config.

The grader compiles the kernel with Helion's compiler before the interpreter runs it (run.py's
step 1). Whatever then fails inside Helion's own reference code, an assertion or a missing
implementation, is the interpreter's limit (*not graded here*, the tiled run's values judged
alone where there is one), never the learner's error.
"""
from __future__ import annotations

import os
import traceback


def tunables_take_defaults() -> None:
    """Have ``hl.register_tunable``'s reference take its fragment's default where the interpreter
    runs with no config (once per process)."""
    import helion.language as hl
    from helion.runtime.ref_mode import RefModeContext

    original = hl.register_tunable._ref_fn
    if original is None or getattr(original, "takes_defaults", False):
        return

    def reference(name, fragment):
        if RefModeContext.current().config is None:
            value = fragment.default()
            return int(value) if isinstance(value, bool) else value  # as Helion's reference converts it
        return original(name, fragment)

    reference.takes_defaults = True
    hl.register_tunable._ref_fn = reference


def interpreter_limit(exc: BaseException) -> str | None:
    """What Helion's interpreter could not run, from what it raised, or None where the error is the
    learner's: an API of Helion's without a reference implementation, or, in the interpreter, an
    assertion or a missing implementation raised by Helion's own code (its innermost frame)."""
    text = str(exc)
    if "does not have a ref mode implementation" in text or "not supported in ref mode" in text.lower():
        return text.splitlines()[0]
    if os.environ.get("HELION_INTERPRET") != "1" or not isinstance(exc, (AssertionError, NotImplementedError)):
        return None
    frames = traceback.extract_tb(exc.__traceback__)
    package = f"{os.sep}helion{os.sep}"
    if not frames or package not in frames[-1].filename:
        return None
    inside = frames[-1].filename.rsplit(package, 1)[1].replace(os.sep, "/")
    reason = f": {text.splitlines()[0]}" if text.strip() else ""
    return (f"{type(exc).__name__} inside Helion's own reference code (helion/{inside}, line {frames[-1].lineno}: "
            f"`{(frames[-1].line or '').strip()}`){reason}")
