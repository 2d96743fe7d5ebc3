"""``--bench``: time a puzzle's kernel on the GPU and report it against the device and PyTorch.

Figures per size: milliseconds, GB/s (from the least traffic any implementation needs),
the fraction of the device's own copy bandwidth, and the speed-up over PyTorch. A result
above the copy bandwidth is flagged: it means the byte count is wrong or the kernel did
not do the work.
"""
from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

from .course import Course, CourseError
from .isolation import jail_for, use_sandbox
from .worker_pool import WorkerDied, WorkerProcess, WorkerTimedOut

BENCH_TIMEOUT = 600.0


@dataclass(frozen=True)
class Row:
    sizes: dict
    ms: float
    baseline_ms: float
    gb_per_s: float
    copy_fraction: float
    speedup: float
    correct: bool
    max_abs_err: float
    gpu_ms: float | None = None  # autograd functions: the step replayed as a CUDA graph (no host work)
    baseline_gpu_ms: float | None = None
    gpu_note: str = ""
    ms_rounds: tuple = ()  # every round's figure; ms and baseline_ms are the fastest
    baseline_ms_rounds: tuple = ()

    @property
    def host_bound(self) -> bool:
        """The step took clearly longer than its GPU work: the host could not keep the GPU busy."""
        return self.gpu_ms is not None and self.ms > 1.15 * self.gpu_ms

    @property
    def flag(self) -> str:
        """WRONG and IMPOSSIBLE fail the run; a little above a copy only asks for a look (a
        kernel that mostly reads can edge past a copy, which reads and writes equally)."""
        if not self.correct:
            return "WRONG RESULT"
        if self.copy_fraction > 1.1:
            return "IMPOSSIBLE: far above copy bandwidth; check the byte count, or whether the kernel ran"
        if self.copy_fraction > 1.0:
            return "above copy bandwidth: check"
        if self.host_bound:
            return f"host-bound: the GPU works {self.gpu_ms:.4f} ms of it"
        return self.gpu_note

    @property
    def fails(self) -> bool:
        return self.flag.startswith(("WRONG", "IMPOSSIBLE"))


def run_bench(course: Course, puzzle_id: str, kernel_file: Path) -> dict:
    puzzle = course.puzzle(puzzle_id)
    if puzzle.bench is None:
        with_bench = [p for p in course.ids if course.puzzle(p).bench is not None]
        raise CourseError(f"{puzzle_id} has no benchmark; these do: {', '.join(with_bench) or 'none'}")
    worker = WorkerProcess("cuda", jail_for(course.root, [kernel_file], sandbox=use_sandbox("auto")))
    try:
        reply, _ = worker.request({"op": "bench", "puzzle_file": str(course.puzzle_file(puzzle_id)),
                                   "file": str(kernel_file)}, timeout=BENCH_TIMEOUT)
    except (WorkerTimedOut, WorkerDied) as exc:
        return {"ok": False, "puzzle": puzzle_id, "error": f"the benchmark did not finish: {type(exc).__name__}"}
    finally:
        worker.close()
    if not reply.get("ok"):
        return {"ok": False, "puzzle": puzzle_id, "error": reply.get("error", "unknown error")}
    return summarise(puzzle, reply)


def summarise(puzzle, reply: dict) -> dict:
    """The worker's timings as the report: bandwidth, fraction of copy, speed-ups and flags."""
    copy = reply["copy"]["gb_per_s"]
    rows = []
    for r in reply["results"]:
        gbs = puzzle.bench.bytes(r["sizes"]) / (r["ms"] * 1e-3) / 1e9
        rows.append(Row(
            sizes=r["sizes"], ms=r["ms"], baseline_ms=r["baseline_ms"], gb_per_s=gbs, copy_fraction=gbs / copy,
            speedup=r["baseline_ms"] / r["ms"], correct=r["correct"], max_abs_err=r["max_abs_err"],
            gpu_ms=r.get("gpu_ms"), baseline_gpu_ms=r.get("baseline_gpu_ms"), gpu_note=r.get("gpu_note", ""),
            ms_rounds=tuple(r.get("ms_rounds", ())), baseline_ms_rounds=tuple(r.get("baseline_ms_rounds", ()))))
    return {"ok": True, "puzzle": puzzle.id, "title": puzzle.title, "device": reply["device"],
            "versions": reply["versions"], "copy_gb_per_s": copy, "copy_cached": reply["copy"]["cached"],
            "baseline": puzzle.bench.baseline_name if puzzle.kind == "kernel" else "PyTorch autograd",
            "what": "forward + backward" if puzzle.kind == "function" else "kernel",
            "blocks": dict(puzzle.bench.blocks), "launch": dict(puzzle.bench.launch),
            "statistic": reply["statistic"],
            "rows": [r.__dict__ | {"flag": r.flag, "fails": r.fails, "host_bound": r.host_bound} for r in rows]}


def render_text(doc: dict) -> str:
    if not doc["ok"]:
        return f"✗ {doc['puzzle']} benchmark: {doc['error']}"
    graphs = any(r.get("gpu_ms") is not None for r in doc["rows"])
    lines = [f"{doc['puzzle']} {doc['title']} ({doc['what']}) on {doc['device']}; "
             f"copy bandwidth {doc['copy_gb_per_s']:.0f} GB/s"
             f"{' (cached)' if doc['copy_cached'] else ''}; triton {doc['versions']['triton']}, "
             f"torch {doc['versions']['torch']}; {doc['statistic']}",
             f"{'sizes':28} {'ms':>9} {'GB/s':>8} {'of copy':>8} {doc['baseline'] + ' ms':>20} {'speed-up':>9}"
             + (f" {'GPU-only ms':>12} {'theirs':>8}" if graphs else "")]
    for r in doc["rows"]:
        sizes = " ".join(f"{k}={v}" for k, v in r["sizes"].items())
        gpu = f" {_ms(r.get('gpu_ms')):>12} {_ms(r.get('baseline_gpu_ms')):>8}" if graphs else ""
        lines.append(f"{sizes:28} {r['ms']:9.4f} {r['gb_per_s']:8.0f} {100 * r['copy_fraction']:7.1f}% "
                     f"{r['baseline_ms']:20.4f} {r['speedup']:8.2f}x{gpu} {r['flag']}")
    if graphs:
        lines.append("GPU-only: the same step replayed as a CUDA graph, without the host's launch work. Where "
                     "ms is well above it, the step is host-bound: fewer launches, allocations and Python "
                     "calls per step help, not a faster kernel.")
    return "\n".join(lines)


def _ms(value: float | None) -> str:
    return "-" if value is None else f"{value:.4f}"


def render_json(doc: dict) -> str:
    return json.dumps(doc, indent=2)


def plot(doc: dict, path: Path) -> Path:
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    rows = sorted(doc["rows"], key=lambda r: r["gb_per_s"] * r["ms"])  # GB/s x ms: by bytes moved
    labels = [" ".join(f"{k}={v}" for k, v in r["sizes"].items()) for r in rows]
    fig, ax = plt.subplots(figsize=(7, 4))
    ax.plot(labels, [r["gb_per_s"] for r in rows], "o-", label="yours")
    ax.plot(labels, [r["gb_per_s"] / r["speedup"] for r in rows], "s--", label=doc["baseline"])
    if all(r.get("gpu_ms") for r in rows):  # an autograd step: its GPU work alone, as a CUDA graph
        ax.plot(labels, [r["gb_per_s"] * r["ms"] / r["gpu_ms"] for r in rows], "o:", label="yours, GPU only")
    ax.axhline(doc["copy_gb_per_s"], color="grey", ls=":", label="device copy")
    ax.set_ylabel("GB/s")
    ax.set_title(f"{doc['puzzle']} {doc['title']} on {doc['device']}", fontsize=9)
    ax.legend(fontsize=8)
    plt.setp(ax.get_xticklabels(), rotation=20, ha="right", fontsize=7)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return Path(path)

