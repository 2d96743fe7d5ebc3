"""How a process that runs learner code is confined (the grader's side: it builds the jail).

On Linux with bubblewrap (Debian's ``bubblewrap``) every worker runs in a sandbox of its own:

* no network, and its own PID namespace, so nothing inside can see or signal the grader,
  a neighbour or the reports being written;
* a filesystem made of read-only binds only: the system, Python and its packages, the
  grader, the course's ``puzzles/`` and the learner's own folder; a private ``/tmp`` is the
  only writable place. Output folders, other students and ``solutions/`` are not there;
* a clean environment (no tokens or keys leak in);
* killing its first process tears the whole namespace down, so no daemon outlives it.

Where bubblewrap is missing (macOS, some containers) the fallback is a process session that
is killed as a group, plus rlimits. ``batch`` refuses to run untrusted code that way unless
told ``--no-sandbox``. Limits (address space, CPU seconds, file size) apply in both modes.
"""
from __future__ import annotations

import atexit
import functools
import glob
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[1]  # grader/
TMP_MB = 512  # the sandbox's private /tmp (RAM-backed)
FILE_MB = 256  # largest file a worker may write, its stderr log included
# Environment a worker may see: what Python, Triton, torch and the math libraries read.
ENV_PASSED = ("PATH", "LANG", "LC_ALL", "LD_LIBRARY_PATH", "CUDA_VISIBLE_DEVICES", "CUDA_HOME",
              "OPENBLAS_CORETYPE", "OPENBLAS_L2_SIZE", "OMP_NUM_THREADS", "MKL_NUM_THREADS",
              "TRITON_PTXAS_PATH", "TRITON_LIBCUDA_PATH", "PYTHONHASHSEED",
              "TP_DIFFERENTIAL")  # the batched engine checked against the serial interpreter (tests)
# Set for every worker, sandboxed or not. ptxas refuses PTX with a non-ASCII character, and
# Triton's line info writes the kernel file's name into the PTX (`// José Müller.py:3:0`):
# without it a learner's file may have any name. Compile errors still name the learner's line
# (they come from Triton's front end, which line info does not touch).
# OpenBLAS on one thread: the interpreter's tl.dot multiplies small tiles, and the threads a
# larger pool wakes for each spin on a busy machine (measured: 8 ms of CPU for a 128 x 64 x 64 dot,
# against 0.2 ms on one thread). torch's own pool on one thread too, for the same reason: the
# interpreter's fp32 <-> fp16 conversions go through it (interpreter/halves.py; puzzle 32's long case
# took 13 s with two threads on 2 cores, 8 s with one).
WORKER_ENV = {"TRITON_DISABLE_LINE_INFO": "1", "OPENBLAS_NUM_THREADS": "1", "OMP_NUM_THREADS": "1"}


class SandboxUnavailable(RuntimeError):
    """bubblewrap is missing or cannot create namespaces here."""


@dataclass(frozen=True)
class Jail:
    """What one worker may read, and its limits."""

    readable: tuple[Path, ...] = ()    # learner folders (and the course's puzzles/), read-only
    memory_mb: int | None = None        # address-space cap
    cpu_seconds: int | None = None      # CPU-time cap for the worker's whole life
    sandbox: bool = True                # False: session + rlimits only (no bubblewrap)
    hidden: tuple[Path, ...] = field(default_factory=tuple)  # never visible, even inside a readable folder
    library: tuple[Path, ...] = ()      # readable folders learner code may import from (on its sys.path)


def _mounts_fault(path: str) -> str | None:
    """None where bwrap makes the sandbox's namespaces and mounts here, else the last line it said.
    The mounts, not only the namespaces: a container that lets bwrap create them but masks parts
    of its own /proc (Docker's and Podman's default) refuses a new /proc, and every worker would
    then fail to start, reported as the learner's kernel crashing."""
    probe = [path, "--unshare-all", "--die-with-parent", "--new-session", "--ro-bind", "/", "/",
             "--proc", "/proc", "--dev", "/dev", "--tmpfs", "/tmp", "true"]
    try:
        done = subprocess.run(probe, capture_output=True, text=True, timeout=20)
    except (OSError, subprocess.TimeoutExpired) as exc:
        return f"{type(exc).__name__}: {exc}"
    if done.returncode == 0:
        return None
    return (done.stderr.strip().splitlines() or [f"exit status {done.returncode}"])[-1]


@functools.lru_cache(maxsize=None)
def bubblewrap() -> str | None:
    """The bwrap binary, if it works here (a container may forbid user namespaces)."""
    path = shutil.which("bwrap")
    return path if path is not None and _mounts_fault(path) is None else None


@dataclass(frozen=True)
class SandboxProbe:
    """Whether a worker's sandbox starts here: ``state`` "works", "missing" (no bwrap) or
    "fails" (bwrap is there and stops; ``error``, its words)."""

    state: str
    error: str = ""


PROBE_WORD = "sandboxed"


def probe_sandbox(course_root: Path | None = None, timeout: float = 60.0) -> SandboxProbe:
    """Start one tiny process (this Python, printing a word) in the jail a worker gets: the same
    namespaces, mounts, binds and clean environment, so that a bind that fails shows, not only bwrap."""
    path = shutil.which("bwrap")
    if path is None:
        return SandboxProbe("missing")
    fault = _mounts_fault(path)
    if fault is not None:
        return SandboxProbe("fails", fault)
    readable = (Path(course_root).resolve() / "puzzles",) if course_root is not None else ()
    info_read, info_write = os.pipe()
    try:
        command = bwrap_command([sys.executable, "-I", "-c", f"print({PROBE_WORD!r})"], Jail(readable=readable),
                                {}, info_write, gpu=False)
        done = subprocess.run(command, capture_output=True, text=True, timeout=timeout, pass_fds=(info_write,))
    except (OSError, subprocess.TimeoutExpired, SandboxUnavailable) as exc:
        return SandboxProbe("fails", f"{type(exc).__name__}: {exc}")
    finally:
        os.close(info_read)
        os.close(info_write)
    if done.returncode == 0 and done.stdout.strip() == PROBE_WORD:
        return SandboxProbe("works")
    said = (done.stderr.strip().splitlines() or [f"exit status {done.returncode}, no output"])[-1]
    return SandboxProbe("fails", said)


def sandbox_available() -> bool:
    return bubblewrap() is not None


@functools.lru_cache(maxsize=None)
def _identity_files() -> tuple[str, str]:
    """A passwd and a group file naming only the sandbox's own user. Some libraries look the
    user up (CUDA's initialisation through torch did: "getpwuid(): uid not found"), and the
    host's files are not the sandbox's business."""
    folder = tempfile.mkdtemp(prefix="triton-puzzles-identity-")
    atexit.register(shutil.rmtree, folder, True)
    uid, gid = os.getuid(), os.getgid()
    passwd, group = os.path.join(folder, "passwd"), os.path.join(folder, "group")
    with open(passwd, "w") as f:
        f.write(f"learner:x:{uid}:{gid}:learner:/tmp:/bin/sh\n")
    with open(group, "w") as f:
        f.write(f"learner:x:{gid}:\n")
    return passwd, group


def _system_binds() -> list[str]:
    args = []
    for top in ("/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32"):
        if os.path.islink(top):
            args += ["--symlink", os.readlink(top), top]
        elif os.path.isdir(top):
            args += ["--ro-bind", top, top]
    # The dynamic loader's configuration and the alternatives some /usr/bin links go through; no
    # passwd, no host names, no certificates: nothing a kernel needs.
    for path in ("/etc/ld.so.cache", "/etc/ld.so.conf", "/etc/ld.so.conf.d", "/etc/alternatives",
                 "/etc/localtime"):
        if os.path.exists(path):
            args += ["--ro-bind", path, path]
    return args


def _python_binds() -> list[Path]:
    """The interpreter, the virtual environment and every folder on sys.path outside them."""
    roots = {Path(sys.base_prefix).resolve(), Path(sys.prefix).resolve(), PACKAGE}
    for entry in sys.path:
        if entry and os.path.isdir(entry) and ("site-packages" in entry or "dist-packages" in entry):
            roots.add(Path(entry).resolve())  # never '' or the current folder: that may be the course root
    return sorted(roots)


def _gpu_devices() -> list[str]:
    args = []
    for node in sorted(glob.glob("/dev/nvidia*")) + sorted(glob.glob("/dev/dri/*")):
        args += ["--dev-bind", node, node]
    return args


def _environment(extra: dict[str, str]) -> list[str]:
    """A clean environment; the worker sets TRITON_INTERPRET itself for --device cpu."""
    env = {name: os.environ[name] for name in ENV_PASSED if name in os.environ}
    env.update({"HOME": "/tmp", "TMPDIR": "/tmp", "USER": "learner", "LOGNAME": "learner",
                "TRITON_CACHE_DIR": "/tmp/triton-cache", "MPLCONFIGDIR": "/tmp/matplotlib",
                "PYTHONDONTWRITEBYTECODE": "1"})
    env.update(extra)
    env.update(WORKER_ENV)
    args = ["--clearenv"]
    for name, value in sorted(env.items()):
        args += ["--setenv", name, value]
    return args


def _nested(path: Path, roots: list[Path]) -> bool:
    return any(path == root or root in path.parents for root in roots)


def bwrap_command(argv: list[str], jail: Jail, env: dict[str, str], info_fd: int, gpu: bool) -> list[str]:
    """The bwrap command line that runs ``argv`` inside ``jail``."""
    binary = bubblewrap()
    if binary is None:
        raise SandboxUnavailable("bubblewrap (bwrap) is not installed or cannot create namespaces here")
    args = [binary, "--unshare-all", "--die-with-parent", "--new-session", "--info-fd", str(info_fd),
            "--proc", "/proc", "--dev", "/dev", "--ro-bind-try", "/sys", "/sys",
            "--size", str(TMP_MB << 20), "--tmpfs", "/tmp"]
    args += _system_binds()
    passwd, group = _identity_files()
    args += ["--ro-bind", passwd, "/etc/passwd", "--ro-bind", group, "/etc/group"]
    readable = [*_python_binds(), *[Path(p).resolve() for p in jail.readable]]
    bound: list[Path] = []
    for path in sorted(set(readable), key=lambda p: len(p.parts)):
        if path.exists() and not _nested(path, bound) and str(path) not in ("/", "/tmp"):
            args += ["--ro-bind", str(path), str(path)]
            bound.append(path)
    for path in jail.hidden:  # e.g. solutions/ or an --out folder inside a readable folder
        path = Path(path).resolve()
        if path.is_dir() and _nested(path, bound):
            args += ["--tmpfs", str(path), "--remount-ro", str(path)]
    if gpu:
        args += _gpu_devices()
    args += _environment(env)
    args += ["--chdir", "/tmp", "--", *argv]
    return args


TASKS_SPARE = 2048  # processes and threads a worker may add to what its user already runs


def _task_cap() -> int | None:
    """A cap on the user's tasks that leaves a worker room for torch's threads but stops a fork
    bomb. RLIMIT_NPROC counts every task of the real user and does not apply to root, so as
    root the sandbox's PID namespace and the per-case timeout are what bound one."""
    if os.getuid() == 0 or not os.path.isdir("/proc"):
        return None
    tasks = 0
    for entry in os.scandir("/proc"):
        if not entry.name.isdigit():
            continue
        try:
            if entry.stat().st_uid == os.getuid():  # every thread counts against RLIMIT_NPROC
                tasks += len(os.listdir(f"/proc/{entry.name}/task"))
        except OSError:  # gone meanwhile
            continue
    return tasks + TASKS_SPARE


def limiter(jail: Jail):
    """rlimits for the child (``preexec_fn``); inherited by everything it starts."""
    tasks = _task_cap()  # counted here: a preexec_fn should do as little as it can

    def apply() -> None:
        import resource
        if tasks is not None:
            soft, hard = resource.getrlimit(resource.RLIMIT_NPROC)
            cap = tasks if hard == resource.RLIM_INFINITY else min(tasks, hard)
            resource.setrlimit(resource.RLIMIT_NPROC, (cap, cap))
        if jail.memory_mb:
            cap = jail.memory_mb << 20
            resource.setrlimit(resource.RLIMIT_AS, (cap, cap))
        if jail.cpu_seconds:
            resource.setrlimit(resource.RLIMIT_CPU, (jail.cpu_seconds, jail.cpu_seconds + 5))
        resource.setrlimit(resource.RLIMIT_FSIZE, (FILE_MB << 20, FILE_MB << 20))
        resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
    return apply


class Confined:
    """A started worker: the process object and how to tear it down completely."""

    def __init__(self, proc: subprocess.Popen, info_read: int | None) -> None:
        self.proc = proc
        self._info_read = info_read
        self._inner_pid: int | None = None

    @property
    def sandboxed(self) -> bool:
        return self._info_read is not None

    def _inner(self) -> int | None:
        """The sandbox's first process, as the host sees it (bwrap reports it on its info fd)."""
        if self._inner_pid is None and self._info_read is not None:
            import select
            chunks = b""
            while select.select([self._info_read], [], [], 2.0)[0]:
                chunk = os.read(self._info_read, 4096)
                if not chunk:
                    break
                chunks += chunk
            try:
                self._inner_pid = int(json.loads(chunks.decode() or "{}").get("child-pid") or 0) or None
            except ValueError:
                self._inner_pid = None
            os.close(self._info_read)
            self._info_read = -1
        return self._inner_pid

    def kill(self) -> None:
        """Kill everything the worker started, and wait until it is gone.

        In a sandbox, killing its first process makes the kernel kill every other process of
        the PID namespace before that one is reaped; bwrap reaps it, then exits. Outside one,
        the whole process group (the worker's session) is killed."""
        if self.sandboxed:
            inner = self._inner()
            if inner:
                try:
                    os.kill(inner, signal.SIGKILL)
                except ProcessLookupError:
                    pass
        try:
            os.killpg(self.proc.pid, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            pass
        self.proc.wait()


@functools.lru_cache(maxsize=None)
def _spawner():
    """The one thread that starts every jail. bwrap's --die-with-parent (PR_SET_PDEATHSIG) fires
    when the *thread* that started it ends: a jail started by a grading pool's thread would die
    with that thread, under a notebook's kept context, whose next check finds it gone. This thread
    lives as long as the grader's process."""
    from concurrent.futures import ThreadPoolExecutor
    return ThreadPoolExecutor(max_workers=1, thread_name_prefix="jail-spawner")


def _popen(*args, **kwargs) -> subprocess.Popen:
    return _spawner().submit(subprocess.Popen, *args, **kwargs).result()


def start(argv: list[str], jail: Jail, env: dict[str, str], gpu: bool, pass_fds=(), **popen) -> Confined:
    """Start ``argv`` confined by ``jail`` (``pass_fds``: the sockets it talks over; ``popen``:
    its standard streams)."""
    if not jail.sandbox:
        full_env = {**os.environ, **env, **WORKER_ENV}
        full_env["PYTHONPATH"] = os.pathsep.join(p for p in (env.get("PYTHONPATH"), os.environ.get("PYTHONPATH")) if p)
        full_env.pop("TRITON_INTERPRET", None)  # the worker sets it itself for --device cpu
        proc = _popen(argv, env=full_env, start_new_session=True, preexec_fn=limiter(jail),
                      pass_fds=pass_fds, **popen)
        return Confined(proc, None)
    info_read, info_write = os.pipe()
    try:
        command = bwrap_command(argv, jail, env, info_write, gpu)
        proc = _popen(command, start_new_session=True, preexec_fn=limiter(jail),
                      pass_fds=(info_write, *pass_fds), **popen)
    except BaseException:
        os.close(info_read)
        raise
    finally:
        os.close(info_write)
    return Confined(proc, info_read)


def use_sandbox(mode: str) -> bool:
    """``mode`` is Options.sandbox: "auto", "on" (refuse to run without one) or "off"."""
    if mode == "off":
        return False
    if sandbox_available():
        return True
    if mode == "on":
        raise SandboxUnavailable("bubblewrap (bwrap) is not installed or cannot create namespaces here; "
                                 "install Debian's `bubblewrap`, or pass --no-sandbox to grade without one")
    return False


def jail_for(course_root: Path, files, *, sandbox: bool, memory_mb: int | None = None,
             cpu_seconds: int | None = None, hidden=(), library=()) -> Jail:
    """The jail of a worker grading ``files``: their folders and the course's puzzles/ are
    readable; the course's solutions/ is hidden unless a file graded is one of them or it is
    in ``library`` (folders the learner's imports may come from, such as earlier puzzles'
    reference kernels for a test corpus)."""
    folders = {Path(f).resolve().parent for f in files}
    library = tuple(Path(p).resolve() for p in library)
    solutions = (Path(course_root) / "solutions").resolve()
    hide = [Path(h) for h in hidden] + ([solutions] if solutions not in folders and solutions not in library else [])
    return Jail(readable=(Path(course_root).resolve() / "puzzles", *sorted(folders), *library), memory_mb=memory_mb,
                cpu_seconds=cpu_seconds, sandbox=sandbox, hidden=tuple(hide), library=library)


def worker_jail(course_root: Path, files, options=None) -> Jail:
    """The jail of a worker grading ``files``, with ``options`` (a :class:`grader.judge.options.Options`):
    its sandbox mode, caps and library folders. Without options (one picture, one benchmark for
    the learner at hand) the sandbox where it works, and no caps."""
    if options is None:
        return jail_for(course_root, files, sandbox=use_sandbox("auto"))
    return jail_for(course_root, files, sandbox=use_sandbox(options.sandbox), memory_mb=options.memory_mb,
                    cpu_seconds=options.cpu_seconds, library=options.library)
