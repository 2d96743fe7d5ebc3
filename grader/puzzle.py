"""The author API, as puzzle files import it: ``from grader.puzzle import Puzzle, Case, ...``.

Defined in :mod:`grader.course.puzzle`; this name stays so that every puzzle file, shipped or
already in a learner's hands, keeps importing from here.
"""
from grader.course.puzzle import Bench, Case, Check, LookAlike, Mistake, Puzzle, Variant, cdiv, seeds, tex

__all__ = ["Bench", "Case", "Check", "LookAlike", "Mistake", "Puzzle", "Variant", "cdiv", "seeds", "tex"]
