"""The worker's side of a Helion puzzle: the kernel loaded as Helion's object (run), its host code
watched as it runs (host), its generated Triton run tile by tile in the interpreter (tiled, cpu),
the case's tile sizes as a Helion config (config), and its timing (bench)."""


def warm() -> None:
    """Helion's import, seconds long, for a Helion puzzle's workers and, where its Triton calls
    Helion's helpers, its compile checker's (asked for by its grader only: no other track pays
    it). Its interpreter switch is read when a kernel is decorated, later, in the worker
    (run.before_import), so importing it here changes nothing.

    Helion's autotuner imports scikit-learn, and with it SciPy, for a surrogate model it may try
    if installed: 1 s of a 3 s import, for an autotuner the grader never runs. It is kept out of
    this import (Helion falls back as it does where scikit-learn is absent), then let in again
    for whatever asks for it later."""
    import sys
    keep_out = "sklearn" not in sys.modules
    if keep_out:
        sys.modules["sklearn"] = None  # an import of it raises ImportError
    try:
        import helion  # noqa: F401
        import helion.language  # noqa: F401  (with helion: its compiler, torch._dynamo, the dispatch modes)
    finally:
        if keep_out and sys.modules.get("sklearn", 0) is None:
            del sys.modules["sklearn"]
    import grader.sandbox.kinds.helion.run  # noqa: F401  (the worker's side of a case, and what it imports)
