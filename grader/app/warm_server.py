"""The warm server's side: a kept grading context whose every grade is a fresh run's, served on
the course's socket (:mod:`grader.app.warm_link` says who may ask, and what must match)."""
from __future__ import annotations

import hashlib
import os
import socket
import sys
import threading
from pathlib import Path

import msgspec

from grader.app.warm_link import (
    ANSWER_WAIT,
    MAX_REQUEST,
    Accepted,
    Grade,
    Graded,
    Identity,
    Refused,
    _receive,
    _send,
    environment,
    mismatch,
    peer_uid,
    runtime,
    socket_path,
    source_digest,
)
from grader.course.loader import Course, load_puzzle
from grader.judge.options import Options
from grader.judge.results import Report
from grader.judge.session import Grading


class WarmGrading:
    """A kept grading context and the lock each grade holds (the watch's own and a command's), each
    graded as a fresh run would: fresh workers, the course's puzzle files read again (the learner
    edits the file the spec comes from), and the compile checker's memory, keyed by the kernel
    file's digest alone, dropped when a module beside it changes."""

    def __init__(self, course: Course, options: Options, files: list[Path], kernels: list[Path] | None = None) -> None:
        self.course, self.options = course, options
        self.source = source_digest()  # before the workers start: they import this code
        self.identity = Identity(str(course.root.resolve()), self.source, runtime(), environment(), options)
        self.grading = Grading(course, files, options, 1, now=True, kernels=kernels)
        self.lock = threading.Lock()
        self.beside: tuple[Path, str] | None = None  # the last kernel's folder, and the modules it may import

    def stale(self) -> bool:
        """Whether the grader's code on disk is no longer what these workers run."""
        return source_digest() != self.source

    def serves(self, path: Path) -> bool:
        return self.grading.serves([path])

    def grade(self, puzzle: str, path: Path, on_case=None) -> Report:
        """``puzzle`` graded from ``path``; ``on_case(puzzle, CaseResult)`` sees each case as it is judged."""
        path = Path(path).resolve()
        with self.lock:
            load_puzzle.cache_clear()
            beside = (path.parent, _modules_digest(path.parent, self.options.library))
            if beside != self.beside:
                self.grading.forget_compiled()
                self.beside = beside
            return self.grading.grade([(puzzle, path)], on_case=on_case)

    def close(self, wait: bool = True) -> None:
        self.grading.close(wait=wait)


def _modules_digest(folder: Path, library) -> str:
    """What a kernel in ``folder`` may import: the .py files there and one folder down, and in the
    library folders, by name, size and time."""
    digest = hashlib.sha256()
    for place in (folder, *map(Path, library)):
        for path in sorted([*place.glob("*.py"), *place.glob("*/*.py")]):
            try:
                found = path.stat()
            except OSError:
                continue
            digest.update(f"{path}:{found.st_size}:{found.st_mtime_ns}\0".encode())
    return digest.hexdigest()


class AlreadyServed(Exception):
    """Another live server holds this course's socket."""


class WarmServer:
    """Serves a :class:`WarmGrading` on the course's socket, a thread per command, until :meth:`stop`.
    ``on_served(puzzle, report)`` sees each grade it gave."""

    def __init__(self, warm: WarmGrading, on_served=None) -> None:
        self.warm, self.on_served = warm, on_served
        self.path = socket_path(warm.course.root, create=True)
        self.listener: socket.socket | None = None
        self.inode = None
        self.stopped = threading.Event()

    def start(self) -> None:
        if self.path.exists():
            with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as probe:
                try:
                    probe.connect(str(self.path))
                    raise AlreadyServed(f"another warm server serves this course ({self.path})")
                except (ConnectionRefusedError, FileNotFoundError):
                    self.path.unlink(missing_ok=True)  # left behind by a server that died
        listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        try:
            listener.bind(str(self.path))
        except OSError as error:  # another server bound it in between
            listener.close()
            raise AlreadyServed(f"another warm server serves this course ({error})") from None
        os.chmod(self.path, 0o600)
        self.inode = os.stat(self.path).st_ino
        listener.listen(8)
        listener.settimeout(0.2)
        self.listener = listener
        threading.Thread(target=self._accept, name="warm-server", daemon=True).start()

    def _accept(self) -> None:
        while not self.stopped.is_set():
            try:
                conn, _ = self.listener.accept()
            except TimeoutError:
                continue
            except OSError:
                return
            threading.Thread(target=self._serve, args=(conn,), daemon=True).start()

    def _serve(self, conn: socket.socket) -> None:
        with conn:
            conn.settimeout(ANSWER_WAIT)
            try:
                if peer_uid(conn) != os.getuid():
                    return  # another user: not a word
                request = _receive(conn, MAX_REQUEST)
                if not isinstance(request, Grade):
                    return
                reason = mismatch(self.warm.identity, request.identity)
                if reason is None and not self.warm.serves(Path(request.path)):
                    reason = (f"it was started for files in another folder than {Path(request.path).parent} "
                              "(watch this file to grade it warm)")
                if reason is not None:
                    _send(conn, Refused(reason))
                    return
                _send(conn, Accepted(os.getpid()))
                conn.settimeout(None)
                try:
                    report = self.warm.grade(request.puzzle, Path(request.path))
                except Exception as error:  # noqa: BLE001 (the command grades fresh and says it there)
                    _send(conn, Refused(f"its grade broke: {type(error).__name__}: {error}"))
                    return
                _send(conn, Graded(report))
            except (OSError, ConnectionError, msgspec.MsgspecError):
                return  # the command went away, or sent garbage: it grades fresh
        if self.on_served is not None:
            self.on_served(request.puzzle, report)

    def stop(self) -> None:
        """Stop listening, and remove the socket if it is still this server's."""
        self.stopped.set()
        if self.listener is not None:
            self.listener.close()
            self.listener = None
        try:
            if os.stat(self.path).st_ino == self.inode:
                self.path.unlink()
        except OSError:
            pass


def serve(course: Course, options: Options, *, stop: threading.Event | None = None, check_every: float = 2.0) -> int:
    """``python -m grader serve``: a warm server for the course's puzzles/ files, in the foreground,
    one line per grade, until Ctrl-C (exit 0); started again when the grader's code changes."""
    import time

    from grader.app.warm_link import Unsafe
    files = list(course.puzzle_files.values())
    stop = stop or threading.Event()
    warm = server = None
    stale = False

    def said(puzzle: str, report: Report) -> None:
        result = report.results[0]
        print(f"{time.strftime('%H:%M:%S')} {puzzle} {result.status.value.replace('_', ' ').upper()} "
              f"({result.seconds:.2f} s)", flush=True)
    try:
        warm = WarmGrading(course, options, files[:1], kernels=files)  # any puzzle: warm all
        server = WarmServer(warm, on_served=said)
        try:
            server.start()
        except (AlreadyServed, Unsafe) as why:
            print(f"error: {why}", file=sys.stderr)
            return 2
        print(f"serving warm grading of {course.root} ({options.device}) on {server.path}; Ctrl-C stops",
              flush=True)
        while not stop.wait(check_every) and not stale:
            stale = warm.stale()
    except KeyboardInterrupt:
        pass
    finally:
        if server is not None:
            server.stop()
        if warm is not None:
            warm.close(wait=False)
    if stale:
        return restart("serve")
    print("warm server stopped", file=sys.stderr)
    return 0


RESTART = 75  # EX_TEMPFAIL: the grader's code changed under a process not started as `python -m grader`


def restart(command: str) -> int:
    """Start ``python -m grader COMMAND ...`` again in this process, with the grader's new code."""
    print(f"the grader's code changed: {command} starts again", file=sys.stderr)
    if sys.argv[1:2] == [command]:
        os.execv(sys.executable, [sys.executable, "-m", "grader", *sys.argv[1:]])
    return RESTART
