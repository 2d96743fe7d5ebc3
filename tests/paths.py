"""Where the repository is, for the tests: one definition, imported by every test file that
needs it (``from paths import ROOT``; pytest puts this folder on ``sys.path``)."""
from __future__ import annotations

from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
