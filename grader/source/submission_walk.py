"""Walking one student's submission, safely: which files are read, which refused, and why.

A submission is untrusted. The walk never follows a symbolic link (``O_NOFOLLOW``, each folder
opened relative to its parent's descriptor, so a link swapped in mid-walk is refused too),
refuses fifos and devices by file type and opens files non-blocking, caps sizes, file counts,
entries and depth, and gives every copy a cleaned name distinct from the others'. Each refusal
is a line of the walk's ``problems``, never an exception. It stands apart from
:mod:`grader.source.intake`, which decides what the walk's files mean (which file is graded for
which puzzle, the student's name and folder): this module only reads, and knows no course.
"""
from __future__ import annotations

import errno
import itertools
import os
import stat
from pathlib import Path, PurePosixPath

from grader.course.variant import folder_name
from grader.source.attempts import MAX_BYTES as PROGRESS_BYTES
from grader.source.attempts import PROGRESS_FILE
from grader.source.capture import from_notebook
from grader.source.claims import named_in_notebook, named_in_python
from grader.source.definitions import Dropped, definitions

SUFFIXES = (".py", ".ipynb")
MAX_BYTES = {".py": 1 << 20, ".ipynb": 16 << 20}  # a notebook carries its outputs' images
MAX_FILES = 200       # .py and .ipynb files read per student
MAX_ENTRIES = 5000    # files and folders looked at per student, whatever their kind
MAX_DEPTH = 8         # folders below the student's own
_LINK = "is a symbolic link: not read (submit the {} itself)"
_CLOEXEC = getattr(os, "O_CLOEXEC", 0)
_OPEN_FILE = os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | _CLOEXEC
_OPEN_FOLDER = os.O_RDONLY | os.O_NOFOLLOW | os.O_DIRECTORY | _CLOEXEC


class Refused(Exception):
    """A file intake will not read; the message completes "PATH ..." for the instructor."""


def clean_name(text: str) -> str:
    """One safe path component (:func:`grader.course.variant.folder_name`: the same mapping a
    student's id takes to their folder in ``release`` and in their draw)."""
    return folder_name(text)


_KINDS = {stat.S_IFIFO: "a fifo", stat.S_IFSOCK: "a socket", stat.S_IFCHR: "a character device",
          stat.S_IFBLK: "a block device", stat.S_IFDIR: "a folder"}


def file_kind(mode: int) -> str:
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
            raise Refused(f"is not a regular file ({file_kind(info.st_mode)}): not read")
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


class SubmissionReader:
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
        # why a submission that is one file could not be read at all (no permission, not UTF-8): then
        # intake refuses it as a whole, rather than grade every puzzle on a file it never read
        self.unreadable = ""
        self.unread: dict[str, str] = {}  # path as submitted -> why it could not be read

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
            self.unreadable = self.unread.get(entry.name, "")

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
            self.problems.append(f"{shown} is not a regular file ({file_kind(mode)}): not read")
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
            fix = ": give the grader read permission (chmod a+r) and run again" if exc.errno in (
                errno.EACCES, errno.EPERM) else ""
            self.refuse_file(shown, f"could not be read ({exc.strerror}){fix}")
            return
        try:
            decoded = raw.decode("utf-8")
        except UnicodeDecodeError as exc:
            self.refuse_file(shown, f"could not be read (not UTF-8 text: byte 0x{raw[exc.start]:02x} at offset "
                                    f"{exc.start}): save it as UTF-8 and hand it in again")
            return
        try:
            text = decoded.replace("\r\n", "\n").replace("\r", "\n")
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

    def refuse_file(self, shown: str, why: str) -> None:
        self.problems.append(f"{shown}: {why}")
        self.unread[shown] = why

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


def clip(text: str, limit: int) -> str:
    """``text`` cut to about ``limit`` characters at a word's end, with "…" where it was cut."""
    text = " ".join(text.split())
    if len(text) <= limit:
        return text
    cut = text[:limit].rstrip()
    space = cut.rfind(" ")
    return (cut[:space] if space > limit // 2 else cut) + " …"
