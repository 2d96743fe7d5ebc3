"""Reading a class's submissions into sanitised copies, before any grading.

Each entry of the submissions folder is one student. Their ``.py`` and ``.ipynb`` files are
reduced to definitions only (:mod:`grader.source.capture`) and written under the same relative paths
into a folder of their own: the only student code their sandboxed worker can read, where a
puzzle file still imports its neighbours by module name.

Nothing submitted can make intake read outside the submission, hang or fail: symbolic links
are never followed (``O_NOFOLLOW``, each folder opened relative to its parent's descriptor,
so a link swapped in mid-walk is refused too); fifos and devices are refused by file type and
opened non-blocking; sizes, file counts and depth are capped; names that clean alike get
distinct folders, and no copy overwrites another. Each refusal is a line in the student's
``problems`` an instructor can act on, never an exception. The walk that reads a submission is
:mod:`grader.source.submission_walk`; this module decides what it found means.

The one hidden file read is the learner's progress file (``.progress.json`` in the submission's
own folder or one below, as ``notebooks/``): its attempts are listed, never trusted further
(:mod:`grader.source.attempts`).
"""
from __future__ import annotations

import functools
import itertools
import os
import stat
from dataclasses import dataclass, field, replace
from pathlib import Path, PurePosixPath
from typing import Mapping

from grader.source.attempts import Attempts, ProgressError, read_attempts
from grader.source.claims import claim
from grader.source.definitions import Dropped, definitions
from grader.source.submission_walk import SUFFIXES, SubmissionReader, clean_name, clip
from grader.course.loader import PUZZLE_FILE, Course
from grader.course.variant import FALLBACK_FOLDER, student_key
from grader.source.source_lines import defined_names

MAX_PROBLEMS = 40     # lines listed per student from the walk; the rest are counted
FALLBACK_NAME = FALLBACK_FOLDER


@dataclass(frozen=True)
class Student:
    name: str                           # distinct within the class: their row and their folder's name
    source: Path                        # what they submitted
    folder: Path                        # their sanitised copies: the only student files their sandbox sees
    files: dict[str, Path] = field(default_factory=dict)  # puzzle id -> sanitised file to grade
    problems: tuple[str, ...] = ()      # what was not read or not graded, and why
    attempts: tuple[Attempts, ...] = ()  # from the progress file the submission carries, if any
    id: str = ""                        # as submitted (`Zoë Ñúñez`): what their draw is keyed by
    skipped: Mapping[str, str] = field(default_factory=dict)  # puzzle id -> why no file is graded for it

    @property
    def variant_id(self) -> str:
        """The id their constants are drawn for: the one they submitted under, whatever row name
        the class gave them (a ``-2`` suffix is the batch's, not theirs)."""
        return self.id or self.name


def submitted_name(entry: Path) -> str:
    """The student's name as submitted: a file's name without .py/.ipynb, a folder's whole name."""
    try:
        is_folder = stat.S_ISDIR(entry.lstat().st_mode)
    except OSError:
        is_folder = False
    return entry.stem if entry.suffix in SUFFIXES and not is_folder else entry.name


def student_names(entries: list[Path]) -> list[tuple[str, str | None]]:
    """A distinct name per entry, with a note where it is not the name submitted.

    Names that need no cleaning are given first, so nobody loses their exact name to someone
    else's cleaned one; the others follow in order of the entry's name and take their cleaned
    name, else the first free ``-2``, ``-3``... Compared case-blind, since a case-insensitive
    disk would merge ``Bob`` and ``bob`` in the reports' folders.
    """
    raw = [submitted_name(e) for e in entries]
    owners: dict[str, str] = {}  # casefolded name given -> the entry that has it
    given: list[tuple[str, str | None] | None] = [None] * len(entries)
    by_entry = sorted(range(len(entries)), key=lambda i: entries[i].name)
    for i in by_entry:
        if clean_name(raw[i]) == raw[i] and raw[i].casefold() not in owners:
            owners[raw[i].casefold()] = entries[i].name
            given[i] = (raw[i], None)
    for i in by_entry:
        if given[i] is not None:
            continue
        base = name = clean_name(raw[i])
        for n in itertools.count(2):
            if name.casefold() not in owners:
                break
            name = f"{base}-{n}"
        if name != base:
            note = (f"name `{raw[i]}` cleaned to `{name}`: `{base}` was taken by another submission "
                    f"({owners[base.casefold()]})")
        elif base == FALLBACK_NAME and raw[i] != FALLBACK_NAME:
            note = f"name `{raw[i]}` has nothing usable as a folder name: graded as `{name}`"
        else:
            note = None
        owners[name.casefold()] = entries[i].name
        given[i] = (name, note)
    return given  # type: ignore[return-value]


def _preference(copy: PurePosixPath, puzzle_id: str) -> tuple:
    """``puzzles/`` first, then files named after the puzzle, then the rest; shallower first."""
    match = PUZZLE_FILE.match(copy.name)
    return (copy.parent.name != "puzzles", not (match and match.group(1) == puzzle_id), len(copy.parts),
            copy.as_posix())


def choose_files(course: Course, found: list[tuple[str, PurePosixPath, str]], folder: Path,
                 named: dict[str, dict[str, set[str]]] | None = None) -> tuple[dict[str, Path], list[str], dict[str, str]]:
    """The file graded for each puzzle (the preferred one of those graded for it:
    :func:`grader.source.claims.claim`); a line per puzzle that more than one file claims, or
    whose kernel is in a file that does not say which puzzle it is for; and, per puzzle no file
    is graded for, why a file holding its kernel was not (a shared kernel name)."""
    kernels = {pid: course.kernel_name(pid) for pid in course.ids}
    claims = {copy: claim(kernels, shown, PurePosixPath(shown).name, defined_names(text), (named or {}).get(shown, {}))
              for shown, copy, text in found}
    shown = {copy: path for path, copy, _ in found}
    files, problems, skipped = {}, [], {}
    for puzzle_id in course.ids:
        holders = sorted((c for c in claims if puzzle_id in claims[c].puzzles), key=lambda c: _preference(c, puzzle_id))
        if not holders:
            reasons = [claims[c].skipped[puzzle_id] for c in sorted(claims) if puzzle_id in claims[c].skipped]
            if reasons:
                skipped[puzzle_id] = "; ".join(reasons[:2])
            # a kernel that may be this puzzle's, in a file that does not say: the instructor hears of it
            problems += [f"{puzzle_id}: {claims[c].skipped[puzzle_id]}" for c in sorted(claims)
                         if puzzle_id in claims[c].unsure]
            continue
        files[puzzle_id] = folder / holders[0]
        if len(holders) > 1:
            others = ", ".join(shown[c] for c in holders[1:4]) + (
                f" and {len(holders) - 4} more" if len(holders) > 4 else "")
            problems.append(f"{puzzle_id}: graded {shown[holders[0]]}; also found {others}, not graded")
    return files, problems, skipped


@functools.lru_cache(maxsize=4)
def _course_left_out(root: Path) -> frozenset[tuple[str, str]]:
    """What definitions-only import leaves out of the course's own puzzle files (the spec's
    `Puzzle(...)`, its imports' side lines): a student who kept them is not told about them."""
    found = set()
    for path in sorted((root / "puzzles").glob("puzzle*.py")):
        found.update((d.text, d.reason) for d in definitions(path.read_text(encoding="utf-8")).dropped)
    return frozenset(found)


def _left_out(dropped: list[tuple[str, tuple[Dropped, ...]]], course: Course, shown_per_file: int = 5) -> list[str]:
    """A line per statement definitions-only import left out of a student's file, and why."""
    boilerplate = _course_left_out(Path(course.root).resolve())
    lines = []
    for shown, entries in dropped:
        own = [d for d in entries if (d.text, d.reason) not in boilerplate and not d.reason.startswith("annotation")]
        lines += [f"{shown}:{d.line} `{clip(d.text, 60)}` not kept: {d.reason}" for d in own[:shown_per_file]]
        if len(own) > shown_per_file:
            lines.append(f"{shown}: {len(own) - shown_per_file} more statement(s) not kept")
    return lines


def prepare(entry: Path, course: Course, workdir: Path, name: str | None = None) -> Student:
    """Sanitised copies of one student's files under ``workdir/name``, and which file holds
    which puzzle's kernel. ``name`` must be distinct within the class (see :func:`prepare_class`)."""
    name = name or clean_name(submitted_name(entry))
    folder = workdir / name
    folder.mkdir(parents=True, exist_ok=True)
    reader = SubmissionReader()
    reader.read_entry(entry)
    for _, copy, text in reader.found:
        target = folder / copy
        target.parent.mkdir(parents=True, exist_ok=True)
        with open(target, "x", encoding="utf-8") as out:  # "x": a copy never replaces another
            out.write(text)
    files, duplicates, skipped = choose_files(course, reader.found, folder, reader.named)
    attempts: tuple[Attempts, ...] = ()
    if reader.progress is not None:
        shown, raw = reader.progress
        try:
            attempts = read_attempts(raw, course.ids)
        except ProgressError as exc:
            reader.notes.append(f"{shown} {exc}: attempts not listed")
    reader.problems += reader.notes + _left_out(reader.dropped, course)
    problems = reader.problems[:MAX_PROBLEMS] + duplicates  # a thousand links must not bury the rest
    if len(reader.problems) > MAX_PROBLEMS:
        problems.insert(MAX_PROBLEMS, f"... and {len(reader.problems) - MAX_PROBLEMS} more problems like these")
    if not reader.found and not problems:
        problems.append("no .py or .ipynb file found")
    return Student(name, entry, folder, files, tuple(problems), attempts, submitted_name(entry).strip(), skipped)


def submissions(folder: Path) -> list[Path]:
    """The entries that are students: folders, .py and .ipynb files, and links (reported, never
    followed); hidden entries are not submissions. In order of name."""
    with os.scandir(folder) as scan:
        return sorted((Path(folder) / item.name for item in scan if not item.name.startswith(".") and (
            item.is_symlink() or item.is_dir(follow_symlinks=False) or Path(item.name).suffix in SUFFIXES)),
            key=lambda p: p.name)


def one_id_clashes(entries: list[Path]) -> list[str]:
    """A line per group of submissions whose ids map to one folder, hence one draw of the
    constants (``O'Brien`` and ``O_Brien``, ``Zoë Ñúñez/`` and ``zoë_ñúñez.py``): which student
    is which cannot be told, so a batch with variants refuses them."""
    groups: dict[str, list[str]] = {}
    for entry in entries:
        name = submitted_name(entry)
        if name.strip():
            groups.setdefault(student_key(name), []).append(entry.name)
    return [f"{' and '.join(f'`{n}`' for n in names)} are one student id (folder `{clean_name(names[0].strip())}`, "
            f"the same constants): rename all but one submission to its student's id"
            for names in groups.values() if len(names) > 1]


def prepare_class(folder: Path, course: Course, workdir: Path) -> list[Student]:
    """Every student of the submissions folder, each with a distinct name and folder under ``workdir``."""
    entries = submissions(folder)
    students = []
    for entry, (name, note) in zip(entries, student_names(entries)):
        student = prepare(entry, course, workdir, name)
        students.append(replace(student, problems=(note, *student.problems)) if note else student)
    return students
