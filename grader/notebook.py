"""The learner's API in a notebook: ``from grader.notebook import check, course_panel, hint, show``.

Defined in :mod:`grader.app.notebook`; this name stays so that every notebook, shipped or
already in a learner's hands, keeps importing from here.
"""
from grader.app.notebook import check, check_puzzle_file, course_panel, hint, perf, show

__all__ = ["check", "check_puzzle_file", "course_panel", "hint", "perf", "show"]
