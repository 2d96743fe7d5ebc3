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
