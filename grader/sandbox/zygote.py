"""The jailed parent of every worker: ``python -m grader.sandbox.zygote --device cpu|cuda|compile``.

It imports torch and triton once (about 1.5 s), then forks a fresh worker for each puzzle the
grader grades, and for each phase of an autograd puzzle. A worker is the only process that
runs learner code, and it ends with its puzzle: whatever that code patched, planted or left
running in its process is gone before the next puzzle's worker is forked from this clean one,
which never imports a learner file. A fork costs about 15 ms.

The grader speaks to this process over a ``SOCK_SEQPACKET`` control socket (its number is
``--control-fd``), one JSON object a message:

* ``{"op": "fork", "warm": [...]}`` with a stream socket attached (``SCM_RIGHTS``): warm the
  named steps of :mod:`grader.sandbox.warmup` not yet warmed, then fork a worker that serves the
  framed protocol (:mod:`grader.channel.protocol`) on that socket; reply ``{"pid": N}``.
* ``{"op": "end", "grace": S}``: wait up to S seconds for the worker to exit, then kill it;
  reply ``{"returncode": R, "killed": K}`` (R negative: the signal that ended it, as
  ``subprocess`` says; K: whether the grace ran out).
* ``{"op": "kill"}``: kill the worker now; the same reply.

After a worker ends, everything it started is killed too: this process is a subreaper, so a
daemon a worker left behind becomes its child, and is found and killed before the next fork.
It is not dumpable, so a worker running as the same user can neither trace it nor touch its
memory. A worker that kills it costs only time: the grader sees the control socket close and
starts a new jail.
"""
from __future__ import annotations

import argparse
import ctypes
import json
import os
import select
import shutil
import signal
import socket
import sys
import tempfile
import time

PR_SET_PDEATHSIG = 1
PR_SET_DUMPABLE = 4
PR_SET_CHILD_SUBREAPER = 36


def _prctl(option: int, value: int) -> None:
    try:
        ctypes.CDLL(None, use_errno=True).prctl(option, value, 0, 0, 0)
    except (OSError, AttributeError):  # not Linux: no subreaper, and the fallback is rlimits only
        pass


def _returncode(status: int) -> int:
    return -os.WTERMSIG(status) if os.WIFSIGNALED(status) else os.WEXITSTATUS(status)


def _children() -> list[int]:
    """This process's children, orphans reparented to it included (as a subreaper)."""
    me, found = os.getpid(), []
    try:
        entries = os.listdir("/proc")
    except OSError:
        return found
    for entry in entries:
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat", "rb") as f:
                stat = f.read().decode("ascii", "replace")
        except OSError:  # gone meanwhile
            continue
        # "pid (comm) state ppid ...": comm may hold spaces and parentheses, so cut at the last ")"
        fields = stat[stat.rfind(")") + 2:].split()
        if len(fields) > 1 and fields[1] == str(me):
            found.append(int(entry))
    return found


def sweep() -> None:
    """Kill and reap every process this one still has: whatever a finished worker left behind."""
    for _ in range(50):
        children = _children()
        for pid in children:
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
        while True:
            try:
                pid, _ = os.waitpid(-1, os.WNOHANG)
            except ChildProcessError:
                return
            if pid == 0:
                break
        if not children:
            return
        time.sleep(0.01)


IDLE_BEFORE_WARMING = 0.5  # seconds without a request before the zygote warms what no fork asked for yet


class Zygote:
    def __init__(self, device: str, control: socket.socket, warmth=None) -> None:
        self.device = device
        self.control = control
        self.warmth = warmth  # what is left to warm (grader.sandbox.warmup.Warmth), or None
        self.child: int | None = None
        self.status: int | None = None  # the last worker's wait status, once reaped
        self.private: str | None = None  # the last worker's own folder (its cwd, TMPDIR, Triton cache)

    def fork(self, channel: int) -> int:
        self.private = tempfile.mkdtemp(prefix="worker-")
        pid = os.fork()
        if pid == 0:  # the worker: it never returns to this loop
            code = 1
            try:
                self.control.close()
                code = _serve(self.device, channel, self.private)
            except BaseException:  # on stderr, whose last line the grader quotes: an exit 1 alone says nothing
                import traceback
                traceback.print_exc()
                sys.stderr.flush()
            finally:
                os._exit(code)
        os.close(channel)
        self.child, self.status = pid, None
        return pid

    def end(self, grace: float) -> dict:
        """Wait for the worker (``grace`` seconds, then kill it); then sweep what it left.
        Returns its return code, and whether it had to be killed."""
        if self.child is None:
            return {"returncode": None, "killed": False}
        deadline, killed = time.monotonic() + grace, False
        while self.status is None:
            pid, status = os.waitpid(self.child, os.WNOHANG)
            if pid:
                self.status = status
            elif time.monotonic() >= deadline:
                os.kill(self.child, signal.SIGKILL)
                _, self.status = os.waitpid(self.child, 0)
                killed = grace > 0
            else:
                time.sleep(0.005)
        self.child = None
        sweep()
        if self.private is not None:
            shutil.rmtree(self.private, ignore_errors=True)
            self.private = None
        return {"returncode": _returncode(self.status), "killed": killed}

    def serve(self) -> None:
        self.control.send(json.dumps({"op": "ready", "device": self.device}).encode())
        while True:
            # No worker, and no request for a while (a notebook between checks): warm the next step,
            # so that no later fork waits. Never beside a worker, whose cases it would slow down.
            while self.child is None and self.warmth is not None and self.warmth.idle and \
                    not select.select([self.control], [], [], IDLE_BEFORE_WARMING)[0]:
                self.warmth.warm_idle()
            try:
                data, fds, _, _ = socket.recv_fds(self.control, 1 << 16, 1)
            except OSError:
                data, fds = b"", []
            if not data:  # the grader went away
                self.end(0.0)
                return
            try:
                request = json.loads(data)
                op = request["op"]
            except (ValueError, KeyError, TypeError):
                op = None
            if op == "fork" and len(fds) == 1:
                wanted = request.get("warm")
                if self.warmth is not None and isinstance(wanted, list):
                    self.warmth.warm([w for w in wanted if isinstance(w, str)])
                self.end(0.0)  # one worker at a time: a worker the grader forgot is killed
                reply = {"pid": self.fork(fds[0])}
            elif op == "end":
                reply = self.end(float(request.get("grace", 5.0)))
            elif op == "kill":
                reply = self.end(0.0)
            else:
                for fd in fds:
                    os.close(fd)
                reply = {"error": f"unknown control message {data[:100]!r}"}
            self.control.send(json.dumps(reply).encode())


def _serve(device: str, channel: int, private: str) -> int:
    """The worker's life: a folder of its own, then the protocol on ``channel`` until Exit."""
    from grader.channel.protocol import Reader
    from grader.sandbox.worker import Worker
    _prctl(PR_SET_DUMPABLE, 1)  # its own /proc entries, as any process
    _prctl(PR_SET_PDEATHSIG, signal.SIGKILL)  # a zygote killed takes its worker with it
    os.chdir(private)
    # Nothing one puzzle writes is read by the next: temporary files and compiled kernels stay here.
    os.environ["TMPDIR"] = private
    tempfile.tempdir = None
    if os.environ.get("TP_PRIVATE_TRITON_CACHE") == "1":
        os.environ["TRITON_CACHE_DIR"] = os.path.join(private, "triton-cache")
    worker = Worker(device, channel)
    worker.hello()
    worker.serve(Reader(channel))
    return 0


def _parse_args(argv=None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="python -m grader.sandbox.zygote")
    parser.add_argument("--device", choices=("cpu", "cuda", "compile"), required=True,
                        help="cpu: the Triton interpreter; cuda: the GPU; compile: GPU compile checks only")
    parser.add_argument("--control-fd", type=int, required=True)
    parser.add_argument("--warm", default="", help="warm-up steps to take before it is ready, comma-separated")
    return parser.parse_args(argv)


def main(argv=None) -> int:
    args = _parse_args(argv)
    if args.device == "cpu":
        os.environ["TRITON_INTERPRET"] = "1"
    # The current folder is where a worker may write: never a place to import from.
    sys.path[:] = [p for p in sys.path if p not in ("", os.getcwd())]
    os.dup2(2, 1)  # anything printed goes to the log, never into a channel
    from grader.sandbox.worker import prepare
    warmth = prepare(args.device, [step for step in args.warm.split(",") if step])
    _prctl(PR_SET_CHILD_SUBREAPER, 1)
    _prctl(PR_SET_DUMPABLE, 0)
    Zygote(args.device, socket.socket(fileno=args.control_fd), warmth).serve()
    # Its worker is reaped and its folder gone: nothing is left to finish. Python's own shutdown
    # (the modules torch and helion loaded, their exit hooks) took 1-4 s, which the grader waits
    # for as its command ends: this process ends without it.
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(0)


if __name__ == "__main__":
    sys.exit(main())
