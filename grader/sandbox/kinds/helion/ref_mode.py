"""Helion's interpreter (``HELION_INTERPRET=1``, a Helion puzzle's values on a CPU) and its tunables.

``hl.register_tunable("split_k", PowerOfTwoFragment(1, 256))`` takes its value from the kernel's
config. The interpreter has one only where the kernel names it (``config=``) or tunes nothing
(``autotune_effort="none"``); for ``@helion.kernel()`` its reference asserts that a config exists.
The grader compiles every kernel with its own config, or else Helion's default, where each tunable
takes its fragment's default (:func:`grader.sandbox.kinds.helion.config.case_config`): so the
interpreter takes that default too, and runs what a GPU runs. ``hl.register_block_size`` needs
nothing: its reference gives the whole extent, one block, whatever the config.
"""
from __future__ import annotations


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

