"""Starting, talking to and replacing workers (the grader's side of the wire).

A :class:`WorkerProcess` is a jail (see :mod:`grader.channel.isolation`) holding a zygote
(:mod:`grader.sandbox.zygote`), which imports torch and triton once, and the worker it forked
for the work at hand. Requests go to that worker over a socket of its own; :meth:`recycle`
ends it, so that the next request is served by a fresh fork, in which nothing an earlier
puzzle's code did survives. A worker that times out, crashes or sends garbage is killed
through the zygote; only a zygote that stops answering costs a new jail.
"""
from __future__ import annotations

import contextlib
import json
import math
import os
import select
import signal
import socket
import subprocess
import sys
import tempfile
import threading
from pathlib import Path

from grader.channel import wire
from grader.channel.isolation import Confined, Jail, start
from grader.channel.protocol import FROM_GRADER, MAX_MESSAGE, ChannelClosed, ChannelTimeout, Reader, write_message
from grader.channel.worker_errors import WorkerDied, WorkerTimedOut

STARTUP_TIMEOUT = 120.0  # importing torch and triton on a cold, busy machine
CONTROL_TIMEOUT = 30.0   # a fork, or reaping a worker: the zygote does nothing else
EXIT_GRACE = 5.0         # a worker asked to exit gets this long before it is killed


# The wall clock a request may take, for a CPU limit of L seconds: L times the machine's load per
# core (at least WALL_FACTOR times): a correct kernel starved of CPU on a busy machine is still
# judged by the CPU time it used; only one that neither uses CPU nor answers meets this.
WALL_FACTOR = 3.0


CGROUP = Path("/sys/fs/cgroup")


def usable_cpus() -> int:
    """The CPUs this process may use: a container's share, not the host's count that
    ``os.cpu_count()`` gives (a CI runner limited to 2 CPUs of a 64-core host). The fewest of the
    host's CPUs, this process's affinity, and a cgroup quota (v2 ``cpu.max``, v1 ``cfs_quota_us``)."""
    counts = [os.cpu_count() or 1]
    if hasattr(os, "sched_getaffinity"):
        counts.append(len(os.sched_getaffinity(0)))
    quotas = [(CGROUP / "cpu.max", None), (CGROUP / "cpu" / "cpu.cfs_quota_us", CGROUP / "cpu" / "cpu.cfs_period_us")]
    for quota, period in quotas:
        try:
            text = quota.read_text().split()
            amount, per = (text[0], text[1]) if period is None else (text[0], period.read_text().split()[0])
            if amount not in ("max", "-1") and float(per) > 0:
                counts.append(max(1, math.ceil(float(amount) / float(per))))
        except (OSError, ValueError, IndexError):
            continue
    return max(1, min(counts))


def backstop(limit: float) -> float:
    """The wall-clock seconds a request with ``limit`` CPU seconds is waited for, at this load."""
    try:
        load = os.getloadavg()[0] / usable_cpus()
    except OSError:
        load = 1.0
    return limit * max(WALL_FACTOR, WALL_FACTOR * load)


class ZygoteGone(Exception):
    """The zygote did not answer: it died (a worker may kill it) or hung."""


class WorkerProcess:
    """Fresh workers for ``device`` inside ``jail``: the zygote starts lazily (or at
    :meth:`start`), each worker at the first request after a :meth:`recycle`."""

    def __init__(self, device: str, jail: Jail | None = None) -> None:
        self.device = device
        self.jail = jail if jail is not None else Jail(sandbox=False)
        self.confined: Confined | None = None  # the zygote's jail
        self.control: socket.socket | None = None
        self._zygote_ready = False
        self.channel: socket.socket | None = None  # to the current worker
        self.reader: Reader | None = None
        self._worker_ready = False
        self.stderr = None
        self._stderr_mark = 0  # where the current worker's part of the shared log starts
        # Warm-up steps (sandbox.warmup) the zygote takes before it is ready, if set before it starts,
        # and that every fork asks for, if not yet taken.
        self.warm: frozenset[str] = frozenset()

    # ---- the zygote ----------------------------------------------------------------------
    def start(self) -> None:
        """Start the zygote, if it is not running: its imports then overlap with the grader's."""
        if self.confined is not None:
            return
        package_parent = str(Path(__file__).resolve().parents[2])  # the folder holding grader/
        # Library folders go after the grader's own: a learner module there never shadows it.
        env = {"PYTHONPATH": os.pathsep.join([package_parent, *map(str, self.jail.library)]), "PYTHONUNBUFFERED": "1"}
        if self.jail.sandbox:  # each worker compiles into a folder of its own, which ends with it
            env["TP_PRIVATE_TRITON_CACHE"] = "1"
        ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        self.stderr = tempfile.TemporaryFile()
        try:
            self.confined = start(
                [sys.executable, "-m", "grader.sandbox.zygote", "--device", self.device,
                 "--control-fd", str(theirs.fileno()), "--warm", ",".join(sorted(self.warm))], self.jail, env,
                gpu=self.device == "cuda",
                pass_fds=(theirs.fileno(),), stdin=subprocess.DEVNULL, stdout=self.stderr, stderr=self.stderr,
                cwd=tempfile.gettempdir(),  # never the folder where results are written
            )
        except BaseException:
            ours.close()
            raise
        finally:
            theirs.close()
        self.control = ours
        self._zygote_ready = False

    def _receive(self, timeout: float) -> dict:
        if not select.select([self.control], [], [], timeout)[0]:
            raise ZygoteGone(f"no answer in {timeout:.0f} s")
        data = self.control.recv(1 << 16)
        if not data:
            raise ZygoteGone("it closed its socket")
        try:
            message = json.loads(data)
        except ValueError:
            raise ZygoteGone(f"unreadable answer {data[:100]!r}") from None
        if not isinstance(message, dict) or "error" in message:
            raise ZygoteGone(f"it answered {str(message)[:200]}")
        return message

    def _ask_zygote(self, request: dict, fd: int | None = None, timeout: float = CONTROL_TIMEOUT) -> dict:
        self.start()
        try:
            if not self._zygote_ready:
                self._receive(STARTUP_TIMEOUT)
                self._zygote_ready = True
            data = json.dumps(request).encode()
            if fd is None:
                self.control.send(data)
            else:
                socket.send_fds(self.control, [data], [fd])
            return self._receive(timeout)
        except OSError as exc:
            raise ZygoteGone(str(exc)) from None

    # ---- the worker ----------------------------------------------------------------------
    def _fork(self) -> None:
        ours, theirs = socket.socketpair()
        try:
            try:
                self._ask_zygote({"op": "fork", "warm": sorted(self.warm)}, theirs.fileno())
            except ZygoteGone:  # a worker may have killed it: one new jail, then give up
                self.terminate()
                self._ask_zygote({"op": "fork", "warm": sorted(self.warm)}, theirs.fileno())
        except ZygoteGone as gone:
            ours.close()
            tail = self._stderr_tail()
            self.terminate()
            raise WorkerDied(None, f"the worker could not be started ({gone}): {tail}") from None
        finally:
            theirs.close()
        self.stderr.seek(0, os.SEEK_END)
        self._stderr_mark = self.stderr.tell()
        self.channel, self.reader, self._worker_ready = ours, Reader(ours.fileno()), False

    def _end_worker(self, kill: bool) -> tuple[int | None, bool]:
        """Close the current worker's socket and have the zygote reap it (killing it at once,
        or after a grace). Returns its return code and whether it had to be killed."""
        if self.channel is None:
            return None, False
        self.channel.close()
        self.channel, self.reader, self._worker_ready = None, None, False
        try:
            reply = self._ask_zygote({"op": "kill"} if kill else {"op": "end", "grace": EXIT_GRACE},
                                     timeout=CONTROL_TIMEOUT + EXIT_GRACE)
        except ZygoteGone:
            self.terminate()
            return None, False
        returncode = reply.get("returncode")
        return (returncode if isinstance(returncode, int) else None), bool(reply.get("killed"))

    def _stderr_tail(self) -> str:
        if self.stderr is None:
            return ""
        self.stderr.seek(0, os.SEEK_END)
        size = self.stderr.tell()
        self.stderr.seek(max(self._stderr_mark, size - 4000))
        return self.stderr.read().decode("utf-8", "replace")

    def request(self, message: wire.Request, blobs: list[bytes] = (), timeout: float | None = None,
                reply_bytes: int = MAX_MESSAGE):
        """Send one request; returns its reply (``message.REPLY`` or a ``wire.Failure``) and the
        reply's blobs (``reply_bytes`` of them at most: past that the stream is taken as corrupt).
        A reply that is not what the request allows is the worker's failure: it is killed, and
        that is reported as WorkerDied (a broken channel), as garbage is."""
        sent = wire.header(message)  # checked before any worker starts: a mistyped request is the grader's bug
        if reply_bytes > MAX_MESSAGE:
            sent[wire.REPLY_BYTES] = reply_bytes
        wall = None
        if timeout is not None:  # the worker holds itself to the CPU seconds; the wall clock is a backstop
            sent[wire.CPU_LIMIT] = timeout
            wall = backstop(timeout)
        if self.channel is None:
            self._fork()
        try:
            if not self._worker_ready:
                hello, _ = self.reader.read_message(STARTUP_TIMEOUT)
                try:
                    wire.Ready.parse(hello)
                except wire.WireError as exc:
                    raise ChannelClosed(str(exc)) from None
                self._worker_ready = True
            write_message(self.channel.fileno(), sent, list(blobs), most=FROM_GRADER)
            header, raw = self.reader.read_message(wall, most=reply_bytes)
        except ChannelTimeout:
            self.kill()
            raise WorkerTimedOut(timeout, wall) from None
        except (ChannelClosed, BrokenPipeError, OSError) as exc:
            returncode, killed = self._end_worker(kill=False)
            if returncode == -signal.SIGXCPU and timeout is not None:  # its CPU limit (worker._limit_cpu)
                raise WorkerTimedOut(timeout) from None
            tail = self._stderr_tail()
            if killed:  # alive, but it wrote garbage into the channel
                raise WorkerDied(None, str(exc), corrupted=True) from None
            raise WorkerDied(returncode, tail) from None
        try:
            return wire.parse_reply(message.REPLY, header), raw
        except wire.WireError as exc:
            self.malformed(exc)

    def malformed(self, error: Exception):
        """The worker answered with something its request does not allow: kill it, and raise
        WorkerDied as for garbage in the channel."""
        self.kill()
        raise WorkerDied(None, f"malformed reply: {error}", corrupted=True)

    def recycle(self) -> None:
        """End the current worker (it is asked to exit, then killed): the next request is
        served by a fresh one. Whatever it left running is killed with it."""
        if self.channel is None:
            return
        try:
            write_message(self.channel.fileno(), wire.header(wire.Exit()))
        except OSError:
            pass
        self._end_worker(kill=False)

    def kill(self) -> None:
        """Kill the current worker now (a timeout, a crash, garbage on its socket)."""
        self._end_worker(kill=True)

    # ---- the whole jail ------------------------------------------------------------------
    def close(self) -> None:
        """End the worker and the zygote, and wait until the jail is gone."""
        if self.confined is None:
            return
        self.recycle()
        if self.confined is None:  # recycling found the zygote gone, and ended the jail
            return
        if self.control is not None:
            self.control.close()  # the zygote exits when its socket closes
            self.control = None
        try:
            self.confined.proc.wait(timeout=EXIT_GRACE)
        except subprocess.TimeoutExpired:
            pass
        self.terminate()

    def terminate(self) -> None:
        """Kill the jail and everything in it at once."""
        if self.channel is not None:
            self.channel.close()
        if self.control is not None:
            self.control.close()
        if self.confined is not None:
            self.confined.kill()
        if self.stderr is not None:
            self.stderr.close()
        self.channel = self.reader = self.control = self.confined = self.stderr = None
        self._worker_ready = self._zygote_ready = False


class CompileChecker:
    """The GPU compile checker of one grading thread: a jail of compile workers, one fresh worker
    per :meth:`session` (a puzzle's checks), recycled at its end; the lock keeps a session whole.

    ``verdicts`` keeps the replies it gave, by what was asked (the request and the digest of the
    file it names), for as long as it lives: a notebook's check of an unchanged kernel compiles
    nothing again, and a specialisation is compiled once however many cases share it."""

    def __init__(self, device: str, jail: Jail | None = None) -> None:
        self.worker = WorkerProcess(device, jail)
        self.lock = threading.Lock()
        self.verdicts: dict[tuple[str, str], object] = {}

    def start(self) -> None:
        self.worker.start()

    @contextlib.contextmanager
    def session(self):
        """The worker for one puzzle's requests, fresh, and recycled after them."""
        with self.lock:
            try:
                yield self.worker
            finally:
                self.worker.recycle()

    def close(self) -> None:
        self.worker.close()

    def terminate(self) -> None:
        self.worker.terminate()
