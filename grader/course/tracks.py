"""The tracks of the course: the parts a puzzle file names (``Puzzle(track="cs336")``), each with its
place and its notebook's title. The course's own are here; a kind whose puzzles make a track of their
own declares it in its spec (:mod:`grader.course.kinds`), whose ``tracks()`` is the one table the
puzzle's check and the notebooks read.
"""
from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Track:
    name: str        # as a puzzle file writes it: Puzzle(track="cs336")
    order: int       # its place in the course, which numbers its notebook
    title: str       # its notebook's title
    called: str = ""  # how a message names it: "the Helion track"

    @property
    def notebook(self) -> str:
        """Its notebook's name, without the suffix: ``02_cs336``."""
        return f"{self.order:02d}_{self.name}"


COURSE_TRACKS = (
    Track("classic", 1, "Classic puzzles"),
    Track("cs336", 2, "Track two: the CS336 weighted sum"),
    Track("transformer", 3, "Track three: the kernels of a transformer"),
)
