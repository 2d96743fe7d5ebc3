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
``problems`` an instructor can act on, never an exception.

Every entry of the submissions folder is a row: a student graded, or an entry refused with its
reason and what to do (a link, a file that is neither .py nor .ipynb, an empty folder, a file
that cannot be read, a second submission of one id). Ids map to folders one to one: ids that
would meet once cleaned (``a b`` and ``a_b``, ``Ana`` and ``ana``, two ids that differ by an
emoji) are told apart by a short hash of the id in the folder's name, never refused. The walk that reads a submission is
:mod:`grader.source.submission_walk`; this module decides what it found means.

The one hidden file read is the learner's progress file (``.progress.json`` in the submission's
own folder or one below, as ``notebooks/``): its attempts are listed, never trusted further
(:mod:`grader.source.attempts`).
"""
from __future__ import annotations

import enum
import functools
import hashlib
import os
import stat
import unicodedata
from dataclasses import dataclass, field, replace
from pathlib import Path, PurePosixPath
from typing import Mapping

from grader.course.loader import PUZZLE_FILE, Course
from grader.course.variant import FALLBACK_FOLDER
from grader.source.attempts import Attempts, ProgressError, read_attempts
from grader.source.claims import claim
from grader.source.definitions import Dropped, definitions
from grader.source.source_lines import defined_names
from grader.source.submission_walk import SUFFIXES, SubmissionReader, clean_name, clip, file_kind

MAX_PROBLEMS = 40     # lines listed per student from the walk; the rest are counted
FALLBACK_NAME = FALLBACK_FOLDER


class Refusal(enum.Enum):
    """Why an entry of the submissions folder is not graded. Each is a row of the reports that
    names the entry and says what to do; none counts as a graded student."""
    LINK = "a symbolic link"
    TOOLING = "a file a tool writes"
    ODD_FILE = "not a folder, .py or .ipynb file"
    EMPTY = "an empty folder"
    UNREADABLE = "could not be read"
    SAME_ID = "a second submission of one id"


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
    refused: str = ""                   # why the entry is not graded at all (then it is a row, not a student)
    refusal: Refusal | None = None      # the kind of refusal, with ``refused``

    @property
    def variant_id(self) -> str:
        """The id their constants are drawn for: the one they submitted under, whatever row name
        the class gave them (a hash in the name is the batch's, not theirs)."""
        return self.id or self.name


# Entries the operating system or a tool leaves beside the submissions: who writes them.
TOOLING = {".DS_Store": "macOS's Finder", "__MACOSX": "macOS's archive utility", "Thumbs.db": "Windows Explorer",
           "desktop.ini": "Windows Explorer", ".git": "git", ".gitignore": "git", "__pycache__": "Python",
           ".ipynb_checkpoints": "Jupyter"}
ARCHIVES = (".zip", ".tar", ".tgz", ".gz", ".bz2", ".xz", ".7z", ".rar")
HASH_CHARS = 4  # hex digits of the id's hash that tell apart ids cleaning alike (more if those meet too)


def _tooling(name: str) -> str | None:
    """Who writes an entry named so (``._x``: the resource half macOS puts beside a file), if a tool does."""
    return TOOLING.get(name) or ("macOS (a file's resource fork)" if name.startswith("._") else None)


def _shown(entry: Path, folder: bool) -> str:
    return f"`{entry.name}/`" if folder else f"`{entry.name}`"


def look(entry: Path) -> tuple[Refusal, str] | None:
    """Why ``entry`` is refused before anything of it is read, with the line the reports show;
    None for an entry to grade. Links are never followed: their target is not looked at."""
    try:
        mode = entry.lstat().st_mode
    except OSError as exc:
        return Refusal.UNREADABLE, (f"`{entry.name}` could not be read ({exc.strerror}): give the grader read "
                                    "permission and run again")
    folder = stat.S_ISDIR(mode)
    if stat.S_ISLNK(mode):
        what = "folder" if entry.suffix not in SUFFIXES else "file"
        return Refusal.LINK, (f"`{entry.name}` is a symbolic link, never followed: copy the {what} itself into "
                              "the submissions folder and run again")
    if (who := _tooling(entry.name)) is not None:
        return Refusal.TOOLING, (f"{_shown(entry, folder)} is written by {who}, not a submission: nothing to do "
                                 "(delete it to drop this row)")
    if folder:
        try:
            with os.scandir(entry) as scan:
                empty = all(_tooling(item.name) is not None for item in scan)
        except OSError as exc:
            return Refusal.UNREADABLE, (f"`{entry.name}/` could not be opened ({exc.strerror}): give the grader "
                                        "read and execute permission (chmod -R a+rX) and run again")
        if empty:
            return Refusal.EMPTY, (f"`{entry.name}/` is an empty folder: nothing was handed in; copy the student's "
                                   "files into it if they sent any, and run again")
        return None
    if entry.suffix in SUFFIXES:
        if not stat.S_ISREG(mode):
            return Refusal.UNREADABLE, (f"`{entry.name}` is not a regular file ({file_kind(mode)}): hand in the file "
                                        "itself and run again")
        return None  # read in full by the walk: a file it cannot read is refused then (prepare)
    if entry.name.lower().endswith(ARCHIVES):
        return Refusal.ODD_FILE, (f"`{entry.name}` is an archive, not a folder, a .py or an .ipynb file: unpack "
                                  "it into a folder of its own and run again")
    return Refusal.ODD_FILE, (f"`{entry.name}` is not a folder, a .py or an .ipynb file: a student's work is "
                              "handed in as one of those (or inside their folder)")


def submitted_name(entry: Path) -> str:
    """The student's name as submitted: a file's name without .py/.ipynb, a folder's whole name."""
    try:
        is_folder = stat.S_ISDIR(entry.lstat().st_mode)
    except OSError:
        is_folder = False
    return entry.stem if entry.suffix in SUFFIXES and not is_folder else entry.name


def identity(student_id: str) -> str:
    """An id as compared: without surrounding spaces, in Unicode's composed form (a Mac writes
    ``ë`` as two characters): ``Zoë`` from a Mac and from Linux is one id."""
    return unicodedata.normalize("NFC", student_id.strip())


def id_hash(student_id: str, chars: int = HASH_CHARS) -> str:
    """A short hash of the id: the same in every run and on every machine, whoever else is in the class."""
    return hashlib.sha256(identity(student_id).encode()).hexdigest()[:chars]


def student_names(ids: list[str]) -> list[tuple[str, str | None]]:
    """A distinct row and folder name per id (ids as :func:`identity` compares them, all
    distinct), with a note where ids meet.

    An id's name is the id cleaned (:func:`clean_name`). Where several ids clean to one name,
    compared case-blind since a case-insensitive disk merges ``Ana`` and ``ana`` (``a b`` and
    ``a_b``; ``ana🙂`` and ``ana😀``), the one id that is that name exactly keeps it, and every
    other takes a short hash of its id (``a_b-3f9c``): one to one for every id, the same
    whatever order the entries come in, and no id is refused for another's.
    """
    cleaned = [clean_name(identity(i)) for i in ids]
    groups: dict[str, list[int]] = {}
    for i, name in enumerate(cleaned):
        groups.setdefault(name.casefold(), []).append(i)
    names: list[str | None] = [None] * len(ids)
    for members in groups.values():
        exact = [i for i in members if identity(ids[i]) == cleaned[i]]
        keep = members if len(members) == 1 else exact if len(exact) == 1 else []
        for i in keep:
            names[i] = cleaned[i]
    taken = {n.casefold() for n in names if n is not None}
    # longer hashes where a hashed name meets another name (an id may be `a_b-3f9c` itself)
    for i in sorted((i for i, n in enumerate(names) if n is None), key=lambda i: identity(ids[i])):
        name = next((f"{cleaned[i]}-{id_hash(ids[i], n)}" for n in (HASH_CHARS, 8, 16, 64)
                     if f"{cleaned[i]}-{id_hash(ids[i], n)}".casefold() not in taken), None)
        names[i] = name or f"{cleaned[i]}-{id_hash(ids[i], 64)}-{i}"
        taken.add(names[i].casefold())  # type: ignore[union-attr]
    notes: list[str | None] = [None] * len(ids)
    for members in groups.values():
        if len(members) > 1:
            told = " and ".join(f"`{ids[i]}` as `{names[i]}`" for i in sorted(members, key=lambda i: ids[i]))
            note = (f"ids that clean to one folder name, `{cleaned[members[0]]}`, are told apart: {told}; with "
                    "--variants they draw the same constants (the draw reads the cleaned id)")
            for i in members:
                notes[i] = note
        elif cleaned[members[0]] == FALLBACK_NAME and identity(ids[(i := members[0])]) != FALLBACK_NAME:
            notes[i] = f"name `{ids[i]}` has nothing usable as a folder name: graded as `{FALLBACK_NAME}`"
    return list(zip(names, notes))  # type: ignore[arg-type]


def _preference(copy: PurePosixPath, puzzle_id: str) -> tuple:
    """``puzzles/`` first, then files named after the puzzle, then the rest; shallower first."""
    match = PUZZLE_FILE.match(copy.name)
    return (copy.parent.name != "puzzles", not (match and match.group(1) == puzzle_id), len(copy.parts),
            copy.as_posix())


def choose_files(course: Course, found: list[tuple[str, PurePosixPath, str]], folder: Path,
                 named: dict[str, dict[str, set[str]]] | None = None
                 ) -> tuple[dict[str, Path], list[str], dict[str, str]]:
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
    which puzzle's kernel. ``name`` must be distinct within the class (see :func:`prepare_class`).
    A single file that cannot be read at all (no permission, not UTF-8) is refused: its row says
    why, and nobody is graded on a file the grader never read."""
    name = name or clean_name(identity(submitted_name(entry)))
    folder = workdir / name
    folder.mkdir(parents=True, exist_ok=True)
    reader = SubmissionReader()
    reader.read_entry(entry)
    if reader.unreadable:
        return Student(name, entry, folder, id=identity(submitted_name(entry)),
                       refused=f"`{entry.name}` {reader.unreadable}", refusal=Refusal.UNREADABLE)
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
    return Student(name, entry, folder, files, tuple(problems), attempts, identity(submitted_name(entry)), skipped)


def submissions(folder: Path) -> list[Path]:
    """Every entry of the submissions folder, hidden ones too, in order of name: each is a row
    (a student, or an entry refused and why: :func:`look`)."""
    with os.scandir(folder) as scan:
        return sorted((Path(folder) / item.name for item in scan), key=lambda p: p.name)


def _preferred(entry: Path) -> tuple:
    """Of entries with one id, the one graded: a folder, then a .py file, then a notebook."""
    folder = stat.S_ISDIR(entry.lstat().st_mode)
    return (not folder, entry.suffix != ".py", entry.name)


def prepare_class(folder: Path, course: Course, workdir: Path) -> list[Student]:
    """A row per entry of the submissions folder, in order of name: a student, with a distinct
    name and folder under ``workdir``, or an entry refused (``Student.refused`` says why and what
    to do). One id handed in twice (``bob/`` and ``bob.py``) is graded once, from the folder;
    the other entry is refused, saying which one is graded."""
    entries = submissions(folder)
    refusals = [look(entry) for entry in entries]
    # refused entries are named as handed in (`alice.zip`); a student by the id they submitted under
    ids = [entry.name if refused else identity(submitted_name(entry)) for entry, refused in zip(entries, refusals)]
    by_id: dict[str, list[int]] = {}
    for i, refused in enumerate(refusals):
        if refused is None:
            by_id.setdefault(ids[i], []).append(i)
    for same in by_id.values():
        kept, *others = sorted(same, key=lambda i: _preferred(entries[i]))
        for i in others:
            refusals[i] = Refusal.SAME_ID, (
                f"`{entries[i].name}` is a second submission of the id `{ids[i]}` (`{entries[kept].name}` is "
                f"graded): one submission per student; put both in one folder `{ids[i]}/`, or rename "
                f"`{entries[i].name}` to its own student's id, and run again")
            ids[i] = entries[i].name
    students = []
    for entry, refused, student_id, (name, note) in zip(entries, refusals, ids, student_names(ids)):
        if refused is not None:
            students.append(Student(name, entry, workdir / name, id=student_id, refused=refused[1],
                                    refusal=refused[0]))
            continue
        student = prepare(entry, course, workdir, name)
        students.append(replace(student, problems=(note, *student.problems)) if note and not student.refused
                        else student)
    return students
