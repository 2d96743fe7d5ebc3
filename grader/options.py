"""How a grading run is set up. Kept apart so the CLI can read it without importing torch."""
from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Options:
    device: str = "cpu"          # "cpu" runs the Triton interpreter; "cuda" the GPU
    timeout: float = 30.0        # seconds per case
    compile_check: bool = True   # after interpreter runs, compile for sm_90 too
    secret: int = 0              # mixed into input seeds (batch grading)
    check_bounds: bool = True    # interpreter: check every load and store (off only to measure its cost)
    sandbox: str = "auto"        # "auto": bubblewrap where it works; "on": required; "off": rlimits only
    memory_mb: int | None = None  # address-space cap per worker
    library: tuple[str, ...] = ()  # folders learner files may import from (tests: solutions/ for the corpus)

    @property
    def cpu_seconds(self) -> int:
        """CPU time a worker may spend over its whole life: a backstop behind the per-case timeout."""
        return int(max(600, 20 * self.timeout))
