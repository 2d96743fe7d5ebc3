"""Starting, talking to and replacing worker processes (the grader's side of the wire)."""
from __future__ import annotations

import os
import subprocess
import threading
import sys
import tempfile
from pathlib import Path

from . import wire
from .isolation import Confined, Jail, start
from .protocol import ChannelClosed, ChannelTimeout, Reader, write_message

STARTUP_TIMEOUT = 120.0  # importing torch and triton on a cold, busy machine


class WorkerDied(Exception):
    def __init__(self, returncode: int | None, stderr_tail: str, corrupted: bool = False) -> None:
        super().__init__(f"worker died ({returncode}): {stderr_tail[-500:]}")
        self.returncode = returncode
        self.stderr_tail = stderr_tail
        self.corrupted = corrupted  # alive, but it wrote garbage into the channel


class WorkerTimedOut(Exception):
    pass


class WorkerProcess:
    """One ``python -m grader.sandbox.worker`` child, confined by ``jail`` (see ``isolation``). Started
    lazily; restarted after a death."""

    def __init__(self, device: str, jail: Jail | None = None) -> None:
        self.device = device
        self.jail = jail if jail is not None else Jail(sandbox=False)
        self.confined: Confined | None = None
        self.proc: subprocess.Popen | None = None
        self.reader: Reader | None = None
        self.stderr = None
        self._ready = False

    def start(self) -> None:
        if self.proc is not None:
            return
        package_parent = str(Path(__file__).resolve().parent.parent)
        # Library folders go after the grader's own: a learner module there never shadows it.
        env = {"PYTHONPATH": os.pathsep.join([package_parent, *map(str, self.jail.library)]), "PYTHONUNBUFFERED": "1"}
        self.stderr = tempfile.TemporaryFile()
        self.confined = start(
            [sys.executable, "-m", "grader.sandbox.worker", "--device", self.device], self.jail, env,
            gpu=self.device == "cuda", stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=self.stderr,
            cwd=tempfile.gettempdir(),  # never the folder where results are written
        )
        self.proc = self.confined.proc
        self.reader = Reader(self.proc.stdout.fileno())
        self._ready = False

    def _stderr_tail(self) -> str:
        if self.stderr is None:
            return ""
        self.stderr.seek(0, os.SEEK_END)
        size = self.stderr.tell()
        self.stderr.seek(max(0, size - 4000))
        return self.stderr.read().decode("utf-8", "replace")

    def request(self, message: wire.Request, blobs: list[bytes] = (), timeout: float | None = None):
        """Send one request; returns its reply (``message.REPLY`` or a ``wire.Failure``) and the
        reply's blobs. A reply that is not what the request allows is the worker's failure: it
        is killed, and that is reported as WorkerDied (a broken channel), as garbage is."""
        self.start()
        try:
            if not self._ready:
                hello, _ = self.reader.read_message(STARTUP_TIMEOUT)
                try:
                    wire.Ready.parse(hello)
                except wire.WireError as exc:
                    raise ChannelClosed(str(exc)) from None
                self._ready = True
            write_message(self.proc.stdin.fileno(), message.to_json(), list(blobs))
            header, raw = self.reader.read_message(timeout)
        except ChannelTimeout:
            self.kill()
            raise WorkerTimedOut() from None
        except (ChannelClosed, BrokenPipeError, OSError) as exc:
            corrupted = False
            try:
                returncode = self.proc.wait(timeout=5) if self.proc else None
                if returncode is not None and returncode > 128 and self.confined.sandboxed:
                    returncode = 128 - returncode  # bwrap passes a killed child on as 128 + signal
                tail = self._stderr_tail()
            except subprocess.TimeoutExpired:  # alive, but it wrote garbage into the channel
                returncode, tail, corrupted = None, str(exc), True
            self.kill()
            raise WorkerDied(returncode, tail, corrupted) from None
        try:
            return wire.parse_reply(message.REPLY, header), raw
        except wire.WireError as exc:
            self.malformed(exc)

    def malformed(self, error: Exception):
        """The worker answered with something its request does not allow: kill it, and raise
        WorkerDied as for garbage in the channel."""
        self.kill()
        raise WorkerDied(None, f"malformed reply: {error}", corrupted=True)

    def kill(self) -> None:
        if self.proc is None:
            return
        self.confined.kill()  # everything it started, and wait until it is gone
        for stream in (self.proc.stdin, self.proc.stdout):
            try:
                stream.close()
            except OSError:
                pass
        if self.stderr is not None:
            self.stderr.close()
        self.proc, self.confined, self.reader, self.stderr, self._ready = None, None, None, None, False

    def close(self) -> None:
        if self.proc is None:
            return
        try:
            write_message(self.proc.stdin.fileno(), wire.Exit().to_json())
            self.proc.wait(timeout=5)
        except (OSError, subprocess.TimeoutExpired):
            pass
        self.kill()


class SharedWorker:
    """One worker serving several grading threads, one request at a time (the compile checker)."""

    def __init__(self, device: str, jail: Jail | None = None) -> None:
        self.worker = WorkerProcess(device, jail)
        self.lock = threading.Lock()

    def start(self) -> None:
        self.worker.start()

    def request(self, message: wire.Request, blobs: list[bytes] = (), timeout: float | None = None):
        with self.lock:
            return self.worker.request(message, blobs, timeout)

    def malformed(self, error: Exception):
        with self.lock:
            self.worker.malformed(error)

    def kill(self) -> None:
        with self.lock:
            self.worker.kill()

    def close(self) -> None:
        self.worker.close()
