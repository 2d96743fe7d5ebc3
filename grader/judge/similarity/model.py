"""What the similarity pass found (:mod:`grader.judge.similarity.find`): plain frozen dataclasses,
written as ``similarity.json`` and shown in ``report.html``."""
from __future__ import annotations

from dataclasses import dataclass

import msgspec


@dataclass(frozen=True)
class Fragment:
    """Lines of one student's file that hold fingerprints the other student's file holds too."""
    file: str          # as submitted, under the student's name: alice/puzzles/puzzle07_long_sum.py
    first_line: int
    last_line: int
    text: str


@dataclass(frozen=True)
class SimilarPair:
    puzzle: str
    students: tuple[str, str]
    shared: int        # fingerprints both hold that the course's stub and reference do not
    score: float       # their weight (rarer weighs more) over the weight of the smaller one's own
    fragments: tuple[Fragment, Fragment]  # the largest shared stretch, in each student's file
    # which signals flagged the pair: "compiled kernel" (their TTIR), "source" (their code's text)
    signals: tuple[str, ...] = ("source",)
    compiled_score: float | None = None  # the compiled kernels' share of label weight; None: not compiled


def flagged_by(pair: SimilarPair) -> str:
    """Which signal flagged the pair and how strongly each spoke, in words for the reports:
    "flagged by the compiled kernel (score 1.00); source: 3 fingerprints shared, score 0.20"."""
    said = {"compiled kernel": None if pair.compiled_score is None else f"score {pair.compiled_score:.2f}",
            "source": f"{pair.shared} fingerprints shared, score {pair.score:.2f}"}
    flagged = " and the ".join(f"{name} ({said[name]})" for name in pair.signals)
    others = "; ".join(f"{name}: {words}, below its threshold" for name, words in said.items()
                       if words and name not in pair.signals)
    return f"flagged by the {flagged}" + (f"; {others}" if others else "")


@dataclass(frozen=True)
class PuzzleThreshold:
    """How one puzzle was compared: how long its reference is, and what a pair must share."""
    puzzle: str
    reference_fingerprints: int  # the puzzle's length, in fingerprints of its reference solution
    min_shared: int
    min_score: float
    compared: int                # students with code for the puzzle
    compiled: int = 0            # of them, those whose compiled kernel (TTIR) was compared
    min_compiled_score: float = 0.0


@dataclass(frozen=True)
class SimilarityReport:
    pairs: tuple[SimilarPair, ...]
    puzzles: tuple[PuzzleThreshold, ...]
    method: str
    seconds: float = 0.0
    error: str = ""  # the pass itself broke (a grader bug): the grades stand, the pairs are unknown

    def to_json(self) -> bytes:
        return msgspec.json.format(msgspec.json.encode(self), indent=1)

    @staticmethod
    def from_json(data: bytes) -> "SimilarityReport":
        return msgspec.json.decode(data, type=SimilarityReport)
