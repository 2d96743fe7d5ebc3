"""What the course and the reading of a learner's text know of a puzzle kind: the :class:`KindSpec`
each kind's wing here declares (``grader/course/kinds/<kind>.py``, its ``SPEC``).

The definition rules, the loader, ``doctor``, the notebooks, the grading context and the worker read
these specs and name no kind themselves (tests/test_kinds.py).
"""
from __future__ import annotations

from dataclasses import dataclass

from grader.course.tracks import Track


@dataclass(frozen=True)
class Decorator:
    """The decorator that makes a kind's kernel, and the options a learner's file may give it:
    keywords of literal values, and the config options written out as calls of the config class
    with literal keywords (a list of them where the option is plural)."""

    name: str                        # as a message writes it: helion.kernel
    origins: frozenset[str]          # its dotted names, as imports resolve them
    family: str                      # whose decorator it is, in the list a refusal gives: Helion's (kernel)
    config_name: str = ""            # the config class, as a message writes it: helion.Config
    config_origins: frozenset[str] = frozenset()
    config_options: tuple[str, ...] = ()    # the options that take config objects
    plural_options: tuple[str, ...] = ()    # of them, those that take a list of them
    config_example: str = ""                # a config written out, for the refusal's fix


@dataclass(frozen=True)
class KindSpec:
    """A puzzle kind as the course and the reading of learner text see it."""

    name: str
    on_grid: bool = False        # the grader launches it on the puzzle's grid (a kernel), else it launches itself
    decorator: Decorator | None = None  # a decorator of its own beyond Triton's
    package: str | None = None   # a package only this kind's puzzle files import
    install: str | None = None   # the command that adds it
    install_note: str = ""       # what else the install brings, where the package fails to import
    # `doctor` times the package's import (these modules) in a process of its own with this
    # environment, as a grading worker imports it, and words what it finds with the rest.
    probe_modules: str = ""
    probe_env: tuple[tuple[str, str], ...] = ()
    env_prefix: str = ""         # of the environment variables the package reads, which reach a worker
    # The modules stood in for while the grader reads a course file for its PUZZLE (the package and
    # what a puzzle file imports of it), so that the grader's own process need not import them.
    stand_ins: tuple[str, ...] = ()
    # The warm-up step (the worker wing's) that a file importing the package asks its workers' zygotes
    # for: the interpreter's takes it as it starts, a compile checker's at a fork that needs it.
    warm: str = ""
    track: Track | None = None   # the track its puzzles make, where they make one of their own
    one_puzzle: str = ""         # a Helion puzzle
    graded_how: str = ""         # how its puzzles are graded where the package imports
    # The set-up cell of a notebook of this kind's puzzles (None: the Triton one), the names it binds,
    # and the import after which a puzzle file's own imports go in.
    notebook_setup: str | None = None
    notebook_binds: tuple[str, ...] = ()
    imports_after: str = ""

    @property
    def track_called(self) -> str:
        """How a message names its puzzles' track: "the Helion track"."""
        return self.track.called if self.track is not None and self.track.called else f"the {self.name} track"
