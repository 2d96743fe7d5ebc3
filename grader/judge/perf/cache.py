"""``--perf``'s counts, kept between runs: the course's solution is the same every time a learner
asks, so its interpreter run and its compile are done once per machine; a learner's counts are
kept as well, and its compiled figures by the launch, and a passing verdict by the puzzle's and
the grader's text: a second ``--perf`` of an unchanged kernel starts no worker, compiles and
grades nothing again (Triton keeps compiles the same way).

The key is what the counts depend on: the kernel file's text and that of every Python file
beside it (a file may import its neighbour's kernel: puzzle 33's imports puzzle 31's), the
puzzle file's less the learner's part (which the course's solution never runs: a learner's edit
keeps the reference's counts), the request (the sizes, the sample), and the grader's own counting code (the
worker's hooks and sampler, the compile's figures, the wire). A change to any of them is a new
key. The entries are plain JSON under the user's cache folder; one that does not read back is
ignored and made again.
"""
from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path

import msgspec

from grader.channel import wire, wire_measure

_COUNTING = ("sandbox/perf/record.py", "sandbox/perf/sample.py", "sandbox/perf/run.py", "sandbox/compile_stats.py",
             "channel/wire.py")


def folder() -> Path:
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "triton-puzzles" / "perf"


def _beside(kernel_file: Path) -> list[Path]:
    """The kernel's file and the Python files beside it, which it may import."""
    kernel_file = Path(kernel_file)
    return [kernel_file, *sorted(p for p in kernel_file.parent.glob("*.py") if p.name != kernel_file.name)]


def _course_part(puzzle_file: Path) -> bytes:
    """The puzzle file's text less the learner's part between its markers, where it has one."""
    from grader.source.source_lines import marker_lines
    lines = Path(puzzle_file).read_text(encoding="utf-8", errors="replace").splitlines()
    opening, closing = marker_lines(lines)
    if len(opening) == 1 and len(closing) == 1 and opening[0] < closing[0]:
        lines = lines[:opening[0] + 1] + lines[closing[0]:]
    return "\n".join(lines).encode()


def key(kernel_file: Path, puzzle_file: Path, request: wire_measure.Profile, who: str = "") -> str | None:
    """The key of one implementation's counts and figures (``who``: "" for the course's solution,
    "yours-" for the learner's); None where a file cannot be read."""
    digest = hashlib.sha256(_versions())
    package = Path(__file__).resolve().parents[2]
    try:
        for path in (*_beside(kernel_file), *(package / p for p in _COUNTING)):
            digest.update(Path(path).read_bytes())
        digest.update(_course_part(puzzle_file))
    except OSError:
        return None
    digest.update(json.dumps(wire.header(request), sort_keys=True).encode())
    return who + digest.hexdigest()[:32]


def load(name: str) -> tuple[wire_measure.Profiled, list] | None:
    """The kept counts and figures ((KernelStats or None, note) per launch), or None."""
    try:
        doc = json.loads((folder() / f"{name}.json").read_text())
        reply = wire.parse_reply(wire_measure.Profiled, doc["reply"])
        stats = [(wire.convert(s, wire.KernelStats) if s else None, note) for s, note in doc["stats"]]
    except (OSError, ValueError, KeyError, TypeError, wire.WireError):
        return None
    return (reply, stats) if isinstance(reply, wire_measure.Profiled) else None


def store(name: str, reply: wire_measure.Profiled, stats: list) -> None:
    doc = {"reply": wire.header(reply), "stats": [[msgspec.to_builtins(s) if s else None, note] for s, note in stats]}
    try:
        folder().mkdir(parents=True, exist_ok=True)
        (folder() / f"{name}.json").write_text(json.dumps(doc))
    except OSError:
        pass  # a cache that cannot be written costs the reference's run next time, nothing else


def _versions() -> bytes:
    """Triton's and torch's versions: a new compiler or interpreter is a new key."""
    from importlib.metadata import PackageNotFoundError, version
    found = []
    for name in ("triton", "torch"):
        try:
            found.append(version(name))
        except PackageNotFoundError:
            found.append("")
    return " ".join(found).encode()


def compiled_key(kernel_file: Path, message: wire.Compile) -> str | None:
    """The key of one launch's sm_90 figures: the file's text, the launch, the compile's code."""
    digest = hashlib.sha256(_versions())
    try:
        for path in _beside(kernel_file):
            digest.update(Path(path).read_bytes())
        digest.update((Path(__file__).resolve().parents[2] / "sandbox/compile_stats.py").read_bytes())
    except OSError:
        return None
    digest.update(json.dumps(wire.header(message), sort_keys=True).encode())
    return "compiled-" + digest.hexdigest()[:32]


def load_compiled(name: str) -> wire.KernelStats | None:
    try:
        return wire.convert(json.loads((folder() / f"{name}.json").read_text()), wire.KernelStats)
    except (OSError, ValueError, TypeError, wire.WireError):
        return None


def store_compiled(name: str, stats: wire.KernelStats) -> None:
    try:
        folder().mkdir(parents=True, exist_ok=True)
        (folder() / f"{name}.json").write_text(json.dumps(msgspec.to_builtins(stats)))
    except OSError:
        pass  # the compile runs again next time


def verdict_key(kernel_file: Path, puzzle_file: Path) -> str | None:
    """The key of a kernel's verdict: its file, the puzzle's, and every module of the grader."""
    digest = hashlib.sha256(_versions())
    package = Path(__file__).resolve().parents[2]
    try:
        for path in (*_beside(kernel_file), puzzle_file, *sorted(package.rglob("*.py"))):
            digest.update(Path(path).read_bytes())
    except OSError:
        return None
    return "verdict-" + digest.hexdigest()[:32]


def load_verdict(name: str) -> tuple[str, tuple[str, ...]] | None:
    """(why grading failed the kernel, "" where it passed; the grade's notes of a faster way)."""
    try:
        kept = json.loads((folder() / f"{name}.json").read_text())
        wrong, notes = kept["wrong"], kept["notes"]
    except (OSError, ValueError, KeyError, TypeError):
        return None
    if not isinstance(wrong, str) or not isinstance(notes, list) or not all(isinstance(n, str) for n in notes):
        return None
    return wrong, tuple(notes)


def store_verdict(name: str, wrong: str, notes: tuple[str, ...] = ()) -> None:
    try:
        folder().mkdir(parents=True, exist_ok=True)
        (folder() / f"{name}.json").write_text(json.dumps({"wrong": wrong, "notes": list(notes)}))
    except OSError:
        pass
