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

The one hidden file read is the learner's progress file (``.progress.json`` in the submission's
own folder or one below, as ``notebooks/``): its attempts are listed, never trusted further
(:mod:`grader.source.attempts`).
"""
from __future__ import annotations

import errno
import functools
import itertools
import os
import stat
from dataclasses import dataclass, field, replace
from pathlib import Path, PurePosixPath
from typing import Mapping

from grader.source.attempts import MAX_BYTES as PROGRESS_BYTES
from grader.source.attempts import PROGRESS_FILE, Attempts, ProgressError, read_attempts
from grader.source.capture import from_notebook
from grader.source.claims import claim, named_in_notebook, named_in_python
from grader.source.definitions import Dropped, definitions
from grader.course.loader import PUZZLE_FILE, Course
from grader.course.variant import FALLBACK_FOLDER, folder_name, student_key
from grader.source.source_lines import defined_names

SUFFIXES = (".py", ".ipynb")
MAX_BYTES = {".py": 1 << 20, ".ipynb": 16 << 20}  # a notebook carries its outputs' images
MAX_FILES = 200       # .py and .ipynb files read per student
MAX_ENTRIES = 5000    # files and folders looked at per student, whatever their kind
MAX_DEPTH = 8         # folders below the student's own
MAX_PROBLEMS = 40     # lines listed per student from the walk; the rest are counted
FALLBACK_NAME = FALLBACK_FOLDER
_LINK = "is a symbolic link: not read (submit the {} itself)"
_CLOEXEC = getattr(os, "O_CLOEXEC", 0)
_OPEN_FILE = os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | _CLOEXEC
_OPEN_FOLDER = os.O_RDONLY | os.O_NOFOLLOW | os.O_DIRECTORY | _CLOEXEC


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


class Refused(Exception):
    """A file intake will not read; the message completes "PATH ..." for the instructor."""


def clean_name(text: str) -> str:
    """One safe path component (:func:`grader.course.variant.folder_name`: the same mapping a
    student's id takes to their folder in ``release`` and in their draw)."""
    return folder_name(text)


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


_KINDS = {stat.S_IFIFO: "a fifo", stat.S_IFSOCK: "a socket", stat.S_IFCHR: "a character device",
          stat.S_IFBLK: "a block device", stat.S_IFDIR: "a folder"}


def _file_kind(mode: int) -> str:
    return _KINDS.get(stat.S_IFMT(mode), "a special file")


def _read_capped(name: str, dir_fd: int | None, limit: int) -> bytes:
    """The bytes of a regular file, opened without following a link and without blocking."""
    try:
        fd = os.open(name, _OPEN_FILE, dir_fd=dir_fd)
    except OSError as exc:
        if exc.errno == errno.ELOOP:  # a link swapped in after the walk saw a file
            raise Refused(_LINK.format("file")) from None
        raise
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            raise Refused(f"is not a regular file ({_file_kind(info.st_mode)}): not read")
        data = b""
        while info.st_size <= limit and len(data) <= limit and (chunk := os.read(fd, limit + 1 - len(data))):
            data += chunk  # a regular file is read whole at once: the loop is for short reads only
        if max(len(data), info.st_size) > limit:
            raise Refused(f"is too large (over {limit >> 20} MiB): not read")
        return data
    finally:
        os.close(fd)


def _visit_order(item: os.DirEntry) -> tuple:
    """Files before folders, ``puzzles/`` first, names that need no cleaning before those that
    do: the caps cut what matters least, and an exact name keeps its copy's name."""
    return (item.is_dir(follow_symlinks=False), item.name != "puzzles", clean_name(item.name) != item.name, item.name)


class _Reader:
    """One student's walk: what was read, what was refused, and the counts the caps are on."""

    def __init__(self) -> None:
        self.found: list[tuple[str, PurePosixPath, str]] = []  # (path as submitted, copy's path, its text)
        self.problems: list[str] = []
        self.entries = self.files = 0
        self.stopped = False
        self.copies: dict[str, str] = {}  # casefolded copy path -> the path as submitted that has it
        self.dropped: list[tuple[str, tuple[Dropped, ...]]] = []  # what definitions-only left out, per file
        self.notes: list[str] = []
        self.progress: tuple[str, bytes] | None = None  # (path as submitted, its bytes)
        self.named: dict[str, dict[str, set[str]]] = {}  # path as submitted -> kernel -> puzzles it names

    def stop(self, text: str) -> None:
        self.problems.append(text)
        self.stopped = True

    def read_entry(self, entry: Path) -> None:
        try:
            mode = entry.lstat().st_mode
        except OSError as exc:
            self.problems.append(f"{entry.name}: could not be read ({exc.strerror})")
            return
        if stat.S_ISDIR(mode):
            self.read_folder(str(entry), None, PurePosixPath(), PurePosixPath(), 0)
        else:
            self.read_other(str(entry), None, PurePosixPath(entry.name), PurePosixPath(), mode)

    def read_folder(self, name: str, parent_fd: int | None, shown: PurePosixPath, copy: PurePosixPath,
                    depth: int) -> None:
        where = f"{shown}/" if shown.parts else "the submission"
        if depth > MAX_DEPTH:
            self.problems.append(f"{where} is nested more than {MAX_DEPTH} folders deep: not read")
            return
        try:
            fd = os.open(name, _OPEN_FOLDER, dir_fd=parent_fd)
        except OSError as exc:  # ELOOP: a link swapped in after the walk saw a folder
            self.problems.append(f"{where} {_LINK.format('folder')}" if exc.errno == errno.ELOOP
                                 else f"{where} could not be opened ({exc.strerror})")
            return
        try:
            with os.scandir(fd) as scan:
                items = list(itertools.islice(scan, MAX_ENTRIES + 1))  # never list a million entries
            if len(items) > MAX_ENTRIES:
                self.problems.append(f"{where} holds more than {MAX_ENTRIES} files and folders: not read")
                return
            for item in sorted(items, key=_visit_order):
                if item.name == PROGRESS_FILE and depth <= 1 and not self.stopped:  # beside the puzzles or notebooks
                    self.read_progress(item.name, fd, shown / item.name)
                    continue
                # .git, .ipynb_checkpoints, __pycache__: tooling and stale copies, not the submission
                if self.stopped or item.name.startswith(".") or item.name == "__pycache__":
                    continue
                path = shown / item.name
                self.entries += 1
                if self.entries > MAX_ENTRIES:
                    self.stop(f"more than {MAX_ENTRIES} files and folders: stopped at {path}; the rest was not read")
                    return
                try:
                    mode = item.stat(follow_symlinks=False).st_mode
                except OSError as exc:
                    self.problems.append(f"{path}: could not be read ({exc.strerror})")
                    continue
                if stat.S_ISDIR(mode):
                    self.read_folder(item.name, fd, path, self.copy_path(copy, item.name, f"{path}/", True), depth + 1)
                else:
                    self.read_other(item.name, fd, path, copy, mode)
        finally:
            os.close(fd)

    def read_other(self, name: str, dir_fd: int | None, shown: PurePosixPath, copy: PurePosixPath, mode: int) -> None:
        if stat.S_ISLNK(mode):
            self.problems.append(f"{shown} {_LINK.format('file' if shown.suffix in SUFFIXES else 'folder')}")
        elif shown.suffix in SUFFIXES:  # anything else (data, pictures, a README) is not the submission's code
            self.read_file(name, dir_fd, str(shown), copy, mode)

    def read_file(self, name: str, dir_fd: int | None, shown: str, copy: PurePosixPath, mode: int) -> None:
        if not stat.S_ISREG(mode):
            self.problems.append(f"{shown} is not a regular file ({_file_kind(mode)}): not read")
            return
        self.files += 1
        if self.files > MAX_FILES:
            self.stop(f"more than {MAX_FILES} .py and .ipynb files: stopped at {shown}; the rest was not read")
            return
        suffix = os.path.splitext(name)[1]
        try:
            raw = _read_capped(name, dir_fd, MAX_BYTES[suffix])
        except Refused as exc:
            self.problems.append(f"{shown} {exc}")
            return
        except OSError as exc:
            self.problems.append(f"{shown}: could not be read ({exc.strerror})")
            return
        try:
            text = raw.decode("utf-8").replace("\r\n", "\n").replace("\r", "\n")
            self.named[shown] = (named_in_notebook if suffix == ".ipynb" else named_in_python)(text)
            if suffix == ".ipynb":
                text, skipped = from_notebook(text)
                copy_name = clean_name(os.path.basename(name)[:-len(suffix)]).replace("-", "_") + "_ipynb.py"
                if skipped:
                    examples = ", ".join(f"`{clip(s, 40)}`" for s in skipped[:2])
                    self.notes.append(f"{shown}: {len(skipped)} statement(s) outside definitions not run "
                                      f"(e.g. {examples}): only definitions are graded")
            else:
                kept = definitions(text)
                text, copy_name = kept.text, os.path.basename(name)
                self.dropped.append((shown, kept.dropped))
        except Exception as exc:  # a syntax error, a broken notebook, a parser's recursion limit
            self.problems.append(f"{shown}: could not be read ({type(exc).__name__}: {exc})")
            return
        self.found.append((shown, self.copy_path(copy, copy_name, shown), text))

    def read_progress(self, name: str, dir_fd: int, shown: PurePosixPath) -> None:
        """The learner's progress file: the first one found (the submission's own folder before
        notebooks/), read as a file is, never followed if a link; the others are listed."""
        if self.progress is not None:
            self.notes.append(f"{shown}: a second progress file, not read (attempts are from {self.progress[0]})")
            return
        try:
            self.progress = (str(shown), _read_capped(name, dir_fd, PROGRESS_BYTES))
        except Refused as exc:
            self.notes.append(f"{shown} {exc}")
        except OSError as exc:
            self.notes.append(f"{shown}: could not be read ({exc.strerror})")

    def copy_path(self, parent: PurePosixPath, name: str, shown: str, folder: bool = False) -> PurePosixPath:
        """``parent/name`` cleaned, made distinct from every other copy (case-blind)."""
        cleaned = clean_name(name)
        stem, ext = (cleaned, "") if folder else os.path.splitext(cleaned)
        path = parent / cleaned
        for n in itertools.count(2):
            if path.as_posix().casefold() not in self.copies:
                break
            path = parent / f"{stem}-{n}{ext}"
        if path.name != cleaned:
            self.problems.append(f"{shown} copied as {path}: {parent / cleaned} was taken by "
                         f"{self.copies[(parent / cleaned).as_posix().casefold()]}")
        self.copies[path.as_posix().casefold()] = shown
        return path


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


def clip(text: str, limit: int) -> str:
    """``text`` cut to about ``limit`` characters at a word's end, with "…" where it was cut."""
    text = " ".join(text.split())
    if len(text) <= limit:
        return text
    cut = text[:limit].rstrip()
    space = cut.rfind(" ")
    return (cut[:space] if space > limit // 2 else cut) + " …"


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
    reader = _Reader()
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
