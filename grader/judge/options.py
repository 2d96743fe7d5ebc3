"""How a grading run is set up, and every default the commands start from. Kept apart so the
CLI can read it without importing torch.

The fields are one run's settings. The class constants are what a command asks for when it
is not told: every parser (``cli``, ``commands``) and every front-end function
(``notebook.check``, ``pictures.traced``, ``classroom.grade_class``) reads its defaults here,
so a default is changed in one place.
"""
from __future__ import annotations

import os
from dataclasses import dataclass, replace
from typing import ClassVar


@dataclass(frozen=True)
class Options:
    device: str = "cpu"          # "cpu" runs the Triton interpreter; "cuda" the GPU
    timeout: float = 30.0        # CPU seconds per case (the wall clock waits longer: worker_pool.backstop)
    compile_check: bool = True   # after interpreter runs, compile for sm_90 too
    secret: int = 0              # mixed into input seeds (batch grading)
    variants: bool = False       # batch: each student graded with their own values of the puzzles' variants
    student: str = ""            # with a secret: whose values of the puzzles' variants grade (set per student)
    seeded_for: str = ""         # with a secret: whose inputs and drawn sizes these are (set per student of a batch)
    check_bounds: bool = True    # interpreter: check every load and store (off only to measure its cost)
    serial_interpreter: bool = False  # interpreter: one program after another, never batched (to check the engine)
    sandbox: str = "auto"        # "auto": bubblewrap where it works; "on": required; "off": rlimits only
    memory_mb: int | None = None  # address-space cap per worker
    library: tuple[str, ...] = ()  # folders learner files may import from (tests: solutions/ for the corpus)

    # The learner's commands (a puzzle, --all, check() in a notebook): the GPU where there is one.
    ASKED_DEVICE: ClassVar[str] = "auto"
    # A class (batch): the interpreter, where every load and store is checked and the GPU
    # compile check runs too; tests/test_batch.py holds that check's verdict.
    BATCH_DEVICE: ClassVar[str] = "cpu"
    BATCH_MEMORY_MB: ClassVar[int] = 6144     # address-space cap per batch worker
    JOBS: ClassVar[int] = min(2, os.cpu_count() or 1)  # worker processes grading at once
    SELFTEST_TIMEOUT: ClassVar[float] = 20.0  # the course's own kernels: a hang shows sooner
    BENCH_TIMEOUT: ClassVar[float] = 600.0    # --bench: the whole size sweep, in one request

    @property
    def cpu_seconds(self) -> int:
        """CPU time a worker may spend over its whole life: a backstop behind the per-case timeout."""
        return int(max(600, 20 * self.timeout))

    def on_device(self) -> Options:
        """These options with ``device="auto"`` made concrete: cuda where torch sees a GPU, else cpu."""
        if self.device != "auto":
            return self
        return replace(self, device="cuda" if has_cuda() else "cpu")


def has_cuda() -> bool:
    """Ask torch only where an NVIDIA driver is present: importing torch costs about a second."""
    if not (os.path.exists("/dev/nvidiactl") or os.environ.get("CUDA_VISIBLE_DEVICES")):
        return False
    import torch
    return torch.cuda.is_available()
