"""The worker's side of a Helion puzzle: the kernel loaded as Helion's object (run), its host code
watched as it runs (host), its generated Triton run tile by tile in the interpreter (tiled, cpu),
the case's tile sizes as a Helion config (config), and its timing (bench)."""
from __future__ import annotations

from grader.channel import wire_measure
from grader.channel.kinds import helion as helion_wire
from grader.sandbox.kinds.kind import WorkerKind
from grader.sandbox.warmup import WarmStep


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


def _run(worker, msg: helion_wire.HelionRun, blobs: list[bytes]):
    """One case of a Helion puzzle: compiled by Helion, then run (run); on a CPU in Helion's
    interpreter, its tunables at their defaults (ref_mode)."""
    from grader.sandbox.kinds.helion.run import run
    if worker.device == "cpu":
        from grader.sandbox.kinds.helion.ref_mode import tunables_take_defaults
        tunables_take_defaults()
    return run(worker, msg, blobs)


def _load(worker, kernel, name: str):
    from grader.sandbox.kinds.helion.run import load
    return load(worker, kernel, name)


def _before_import(device: str) -> None:
    from grader.sandbox.kinds.helion.run import before_import
    before_import(device)


def _owns(obj) -> bool:
    from grader.sandbox.kinds.helion.run import is_helion_kernel  # reads the class: helion is not imported
    return is_helion_kernel(obj)


def _bench(puzzle, kernel, msg: wire_measure.Bench, blobs: list[bytes], device: str):
    from grader.sandbox.kinds.helion.bench import bench_helion
    return bench_helion(puzzle, kernel, msg, blobs, device)


def _profile(puzzle, kernel, msg: wire_measure.Profile, filename: str, module):
    raise NotImplementedError("--perf counts a Triton kernel's accesses in Triton's interpreter; a Helion "
                              "kernel's are not counted yet: run --verbose to see the Triton it becomes")


KIND = WorkerKind("helion", owns=_owns, load=_load, ran=lambda kernel: None, bench=_bench, profile=_profile,
                  before_import=_before_import, answers={helion_wire.HelionRun: _run},
                  warm=(WarmStep(helion_wire.HelionWarmStep.HELION, warm, asked=("cpu", "compile")),))
