"""Asking a warm server to grade: the socket's place, who may use it, what must match, and the wire.

``python -m grader watch`` (or ``serve``) keeps a grading context warm (:mod:`grader.app.warm_server`);
a plain ``python -m grader puzzle07`` asks it first (:func:`ask`) and grades fresh wherever it cannot
be sure the answer is a fresh run's, as dmypy's client does:

* the socket is in a folder of the user's own (mode 0700), one socket per course; each end checks
  that the other is the same user (SO_PEERCRED);
* a server grades only a run of its course, its grader code (a digest of every file of ``grader/``),
  its Python and packages, the environment its workers see, its options and its jail; otherwise it
  refuses, with the reason, and the command grades fresh. A socket nobody answers is ignored.

Messages are typed (msgspec Structs, msgpack: a report's inf stays inf), one request and its replies
per connection.
"""
from __future__ import annotations

import enum
import hashlib
import os
import site
import socket
import stat
import struct
import sys
import sysconfig
import tempfile
from dataclasses import dataclass, fields
from pathlib import Path
from typing import Union

import msgspec

from grader.course import kinds
from grader.course.loader import Course
from grader.judge.options import Options
from grader.judge.results import Report

PACKAGE = Path(__file__).resolve().parents[1]  # grader/: the code a server's workers run
ANSWER_WAIT = 5.0  # seconds a live server takes to accept or refuse; its grade then takes what it takes
MAX_REQUEST, MAX_REPLY = 1 << 16, 256 << 20
# What reaches a worker and could change what it computes (isolation.ENV_PASSED, less PATH and the
# locale, which differ between one terminal and the next and change no verdict), and the grader's own.
# (with the prefixes of the variables a kind's package reads: grader.course.kinds)
ENV_PREFIXES = ("TP_", "TRITON_", "CUDA_", "OMP_", "MKL_", "OPENBLAS_", "TORCH_", *kinds.env_prefixes())
ENV_NAMES = ("LD_LIBRARY_PATH", "PYTHONHASHSEED")
ENV_IGNORED = ("TRITON_CACHE_DIR", "TRITON_PUZZLES_PROGRESS")  # a cache, and where the command records


class Fresh(enum.Enum):
    """Why a command graded fresh, or that the warm server graded it."""

    SERVED = "graded by the warm workers of a running watch or serve"
    NO_SERVER = "no warm server runs for this course (`python -m grader watch` starts one)"
    STALE = "a warm server's socket was left behind, and nothing answers it"
    UNSAFE = "the warm server's folder is not private"
    FOREIGN = "the warm server's socket belongs to another user"
    REFUSED = "the warm server does not match this run"
    BROKE = "the warm server stopped answering"


@dataclass(frozen=True)
class Answer:
    """What asking the warm server gave: its report, or None and why this run grades fresh."""

    report: Report | None
    why: Fresh
    detail: str = ""

    @property
    def note(self) -> str:
        """One line for --verbose: which way this run was graded, and why."""
        if self.why is Fresh.SERVED:
            return f"{self.why.value} ({self.detail})"
        return f"graded fresh: {self.why.value}" + (f": {self.detail}" if self.detail else "")


# ---- the wire: one request, then Accepted and Graded, or Refused -------------------------------
class Identity(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    """Everything a verdict depends on besides the kernel file: a server serves only its own."""

    root: str
    source: str         # digest of grader/
    runtime: str        # this Python, and the packages installed where it imports from
    environment: tuple[tuple[str, str], ...]
    options: Options


class Message(msgspec.Struct, frozen=True, forbid_unknown_fields=True, tag_field="message", tag=str.lower):
    pass


class Grade(Message):
    identity: Identity
    puzzle: str
    path: str


class Accepted(Message):
    pid: int


class Refused(Message):
    reason: str


class Graded(Message):
    report: Report


_ENCODER = msgspec.msgpack.Encoder()
_DECODER = msgspec.msgpack.Decoder(Union[Grade, Accepted, Refused, Graded])


def _send(sock: socket.socket, message: Message) -> None:
    data = _ENCODER.encode(message)
    sock.sendall(struct.pack(">I", len(data)) + data)


def _exactly(sock: socket.socket, count: int) -> bytes:
    chunks, left = [], count
    while left:
        chunk = sock.recv(min(left, 1 << 20))
        if not chunk:
            raise ConnectionError("the other end closed the socket")
        chunks.append(chunk)
        left -= len(chunk)
    return b"".join(chunks)


def _receive(sock: socket.socket, most: int) -> Message:
    (size,) = struct.unpack(">I", _exactly(sock, 4))
    if size > most:
        raise ConnectionError(f"a message of {size} bytes, over {most}")
    return _DECODER.decode(_exactly(sock, size))


def peer_uid(sock: socket.socket) -> int:
    """The user id of the process at the other end of a unix socket (Linux's SO_PEERCRED)."""
    creds = sock.getsockopt(socket.SOL_SOCKET, socket.SO_PEERCRED, struct.calcsize("3i"))
    return struct.unpack("3i", creds)[1]


# ---- what must match --------------------------------------------------------------------------
def source_digest() -> str:
    """A digest of every file of grader/ (13 ms): a server whose workers run other code is not asked."""
    digest = hashlib.sha256()
    for path in sorted(PACKAGE.rglob("*")):
        if "__pycache__" not in path.parts and path.is_file():
            digest.update(str(path.relative_to(PACKAGE)).encode() + b"\0" + path.read_bytes() + b"\0")
    return digest.hexdigest()


def runtime() -> str:
    """This Python, and the packages installed where it installs them: each install folder's
    distributions and path files by name (an install or an upgrade renames them). The folders come
    from sysconfig, not sys.path, which imported packages extend (Ray puts its own folder first);
    and not the folders' times: anything written beside the packages (a cache, a lock) changes those."""
    paths = sysconfig.get_paths()
    folders = sorted({paths["purelib"], paths["platlib"]})
    if site.ENABLE_USER_SITE:
        folders.append(site.getusersitepackages())
    installed = (".dist-info", ".egg-info", ".egg-link", ".pth")
    listed = [f"{folder}:{','.join(sorted(n for n in os.listdir(folder) if n.endswith(installed)))}"
              for folder in folders if os.path.isdir(folder)]
    return hashlib.sha256(" ".join([sys.executable, sys.version.split()[0], *listed]).encode()).hexdigest()


def environment() -> tuple[tuple[str, str], ...]:
    return tuple(sorted((name, value) for name, value in os.environ.items()
                        if (name.startswith(ENV_PREFIXES) or name in ENV_NAMES) and name not in ENV_IGNORED))


def identity(course: Course, options: Options) -> Identity:
    return Identity(str(course.root.resolve()), source_digest(), runtime(), environment(), options)


def mismatch(mine: Identity, theirs: Identity) -> str | None:
    """Why a server of identity ``mine`` must not grade a run of ``theirs``, in words; None if it may."""
    if mine.root != theirs.root:
        return f"it serves the course at {mine.root}, not {theirs.root}"
    if mine.source != theirs.source:
        return "the grader's code changed since it started (restart the watch)"
    if mine.runtime != theirs.runtime:
        return "it runs another Python, or packages were installed since it started (restart the watch)"
    if mine.environment != theirs.environment:
        differ = sorted({n for n, _ in set(mine.environment) ^ set(theirs.environment)})
        return f"it was started with other settings of {', '.join(differ)}"
    if mine.options != theirs.options:
        differ = [f"{f.name} {getattr(mine.options, f.name)!r} (this run: {getattr(theirs.options, f.name)!r})"
                  for f in fields(Options) if getattr(mine.options, f.name) != getattr(theirs.options, f.name)]
        return "it grades with " + ", ".join(differ)
    return None


# ---- where the socket is ----------------------------------------------------------------------
class Unsafe(Exception):
    """The socket's folder is not a private folder of this user's."""


def socket_path(root: Path, create: bool = False) -> Path:
    """The course's socket, in $XDG_RUNTIME_DIR/triton-puzzles or the temp folder's
    triton-puzzles-UID, which must be this user's alone (:class:`Unsafe` otherwise)."""
    base = os.environ.get("XDG_RUNTIME_DIR", "")
    folder = Path(base) / "triton-puzzles" if base and os.path.isdir(base) else \
        Path(tempfile.gettempdir()) / f"triton-puzzles-{os.getuid()}"
    if create:
        folder.mkdir(mode=0o700, exist_ok=True)
    found = os.lstat(folder)  # FileNotFoundError: no server ever ran here
    if not stat.S_ISDIR(found.st_mode) or found.st_uid != os.getuid() or found.st_mode & 0o077:
        raise Unsafe(f"{folder} must be a folder of yours that only you can open (mode 0700); remove it, "
                     "and the next watch makes it again")
    return folder / (hashlib.sha256(str(Path(root).resolve()).encode()).hexdigest()[:24] + ".sock")


# ---- the client: a command asks ----------------------------------------------------------------
def ask(course: Course, options: Options, puzzle: str, path: Path) -> Answer:
    """``puzzle`` graded on ``path`` by the course's warm server, or why not (then grade fresh)."""
    try:
        where = socket_path(course.root)
    except FileNotFoundError:
        return Answer(None, Fresh.NO_SERVER)
    except Unsafe as unsafe:
        return Answer(None, Fresh.UNSAFE, str(unsafe))
    if not where.exists():
        return Answer(None, Fresh.NO_SERVER)
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as sock:
        sock.settimeout(ANSWER_WAIT)
        try:
            sock.connect(str(where))
        except (ConnectionRefusedError, FileNotFoundError):
            return Answer(None, Fresh.STALE)
        except OSError as error:
            return Answer(None, Fresh.BROKE, str(error))
        if peer_uid(sock) != os.getuid():
            return Answer(None, Fresh.FOREIGN)
        try:
            _send(sock, Grade(identity(course, options), puzzle, str(Path(path).resolve())))
            reply = _receive(sock, MAX_REPLY)
            if isinstance(reply, Refused):
                return Answer(None, Fresh.REFUSED, reply.reason)
            if not isinstance(reply, Accepted):
                return Answer(None, Fresh.BROKE, f"it answered {type(reply).__name__}")
            server = reply.pid
            sock.settimeout(options.cpu_seconds + 60)  # a backstop only: each case has its own limit
            reply = _receive(sock, MAX_REPLY)
        except (OSError, ConnectionError, msgspec.MsgspecError) as error:
            return Answer(None, Fresh.BROKE, str(error) or type(error).__name__)
    if not isinstance(reply, Graded):  # its grade broke: said, and graded fresh
        return Answer(None, Fresh.BROKE, getattr(reply, "reason", type(reply).__name__))
    return Answer(reply.report, Fresh.SERVED, f"process {server}")
