"""``--bench`` rendered: the table (text), the document (JSON) and the plot of the size sweep,
each from a :class:`grader.judge.bench.model.BenchResult`."""
from __future__ import annotations

import json
from dataclasses import asdict
from pathlib import Path

from grader.judge.bench.model import BenchResult, Row


def _sizes(row: Row) -> str:
    return " ".join(f"{k}={v}" for k, v in row.sizes.items())


def _ms(value: float | None) -> str:
    return "-" if value is None else f"{value:.4f}"


def render_text(doc: BenchResult) -> str:
    if not doc.ok:
        return f"✗ {doc.puzzle} benchmark: {doc.error}"
    graphs = any(r.gpu_ms is not None for r in doc.rows)
    compiled = doc.compiled is not None
    per_size = any(r.copy_ms is not None for r in doc.rows)
    if any(r.flops is not None for r in doc.rows):
        return _render_compute(doc, compiled)
    lines = [f"{doc.puzzle} {doc.title} ({doc.what}) on {doc.device}; "
             f"copy bandwidth {doc.copy_gb_per_s:.0f} GB/s"
             f"{' (cached)' if doc.copy_cached else ''}; triton {doc.versions['triton']}, "
             f"torch {doc.versions['torch']}; {doc.statistic}",
             f"{'sizes':28} {'ms':>9} {'GB/s':>8} {'of copy':>8} {doc.baseline + ' ms':>20} {'GB/s':>8} {'of copy':>8}"
             + (f" {doc.compiled + ' ms':>26} {'of copy':>8}" if compiled else "")
             + f" {'copy GB/s':>9} {'speed-up':>9}" + (f" {'vs compiled':>11}" if compiled else "")
             + (f" {'GPU-only ms':>12} {'theirs':>8}" if graphs else "")]
    for r in doc.rows:
        theirs = f"{r.baseline_ms:20.4f} {r.baseline_gb_per_s:8.0f} {100 * r.baseline_copy_fraction:7.1f}%"
        if compiled:
            theirs += (f" {_ms(r.compiled_ms):>26} " + ("       -" if r.compiled_ms is None
                                                          else f"{100 * r.compiled_copy_fraction:7.1f}%"))
        speed = f"{r.speedup:8.2f}x" + (f" {'-' if r.compiled_speedup is None else f'{r.compiled_speedup:.2f}x':>11}"
                                        if compiled else "")
        gpu = f" {_ms(r.gpu_ms):>12} {_ms(r.baseline_gpu_ms):>8}" if graphs else ""
        lines.append(f"{_sizes(r):28} {r.ms:9.4f} {r.gb_per_s:8.0f} {100 * r.copy_fraction:7.1f}% "
                     f"{theirs} {r.copy_gb_per_s:9.0f} {speed}{gpu} {r.flag}")
    if per_size:
        lines.append("of copy: GB/s against a device-to-device copy moving the same bytes, timed at each size "
                     "in this run (copy GB/s).")
    if graphs:
        lines.append("GPU-only: the same step replayed as a CUDA graph, without the host's launch work. Where "
                     "ms is well above it, the step is host-bound: fewer launches, allocations and Python "
                     "calls per step help, not a faster kernel.")
    return "\n".join(lines + _verdicts(doc))


def _verdicts(doc: BenchResult) -> list[str]:
    """What was wrong, and what could not be trusted, size by size."""
    lines = [f"WRONG at {_sizes(r)}: {r.wrong}" for r in doc.rows if not r.correct and r.wrong]
    lines += [f"REJECTED at {_sizes(r)}: {r.rejected}" for r in doc.rows if r.rejected]
    if any(r.rejected for r in doc.rows):
        lines.append("The sweep stops at a size it rejects: no figure after it can be trusted.")
    return lines


def _tf(value: float | None) -> str:
    return "-" if value is None else f"{value:.0f}"


def _render_compute(doc: BenchResult, compiled: bool) -> str:
    """A compute-bound puzzle's table: TFLOP/s, and yours as a share of the baseline's."""
    lines = [f"{doc.puzzle} {doc.title} ({doc.what}) on {doc.device}; triton {doc.versions['triton']}, "
             f"torch {doc.versions['torch']}; {doc.statistic}",
             f"{'sizes':40} {'ms':>9} {'TFLOP/s':>8} {doc.baseline + ' ms':>22} {'TFLOP/s':>8} {'yours/theirs':>12}"
             + (f" {'compiled TFLOP/s':>17}" if compiled else "")]
    for r in doc.rows:
        lines.append(f"{_sizes(r):40} {r.ms:9.4f} {_tf(r.tflops):>8} {r.baseline_ms:22.4f} "
                     f"{_tf(r.baseline_tflops):>8} {100 * r.speedup:11.1f}%"
                     + (f" {_tf(r.compiled_tflops):>17}" if compiled else "") + f" {r.flag}")
    lines.append("yours/theirs: the baseline's time over yours (100 % = as fast as the baseline).")
    return "\n".join(lines + _verdicts(doc))


def _row_json(row: Row) -> dict:
    return asdict(row) | {
        "gb_per_s": row.gb_per_s, "copy_fraction": row.copy_fraction, "speedup": row.speedup,
        "baseline_gb_per_s": row.baseline_gb_per_s, "baseline_copy_fraction": row.baseline_copy_fraction,
        "compiled_gb_per_s": row.compiled_gb_per_s, "compiled_copy_fraction": row.compiled_copy_fraction,
        "compiled_speedup": row.compiled_speedup, "tflops": row.tflops, "baseline_tflops": row.baseline_tflops,
        "compiled_tflops": row.compiled_tflops,
        "flag": row.flag, "fails": row.fails, "host_bound": row.host_bound}


def as_json(doc: BenchResult) -> dict:
    if not doc.ok:
        return {"ok": False, "puzzle": doc.puzzle, "error": doc.error}
    return {"ok": True, "puzzle": doc.puzzle, "title": doc.title, "device": doc.device,
            "versions": dict(doc.versions), "copy_gb_per_s": doc.copy_gb_per_s, "copy_cached": doc.copy_cached,
            "baseline": doc.baseline, "compiled": doc.compiled, "what": doc.what, "blocks": dict(doc.blocks),
            "launch": dict(doc.launch), "statistic": doc.statistic, "peak_gb_per_s": doc.peak_gb_per_s,
            "peak_tflops": doc.peak_tflops, "rows": [_row_json(r) for r in doc.rows]}


def render_json(doc: BenchResult) -> str:
    return json.dumps(as_json(doc), indent=2)


def plot(doc: BenchResult, path: Path) -> Path:
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    rows = sorted(doc.rows, key=lambda r: r.traffic)  # by bytes moved
    labels = [_sizes(r) for r in rows]
    fig, ax = plt.subplots(figsize=(7, 4))
    ax.plot(labels, [r.gb_per_s for r in rows], "o-", label="yours")
    ax.plot(labels, [r.baseline_gb_per_s for r in rows], "s--", label=doc.baseline)
    if doc.compiled is not None and all(r.compiled_ms is not None for r in rows):
        ax.plot(labels, [r.compiled_gb_per_s for r in rows], "^--", label=doc.compiled)
    if rows and all(r.gpu_ms for r in rows):  # an autograd step: its GPU work alone, as a CUDA graph
        ax.plot(labels, [r.traffic / (r.gpu_ms * 1e-3) / 1e9 for r in rows], "o:", label="yours, GPU only")
    if rows and all(r.copy_ms is not None for r in rows):
        ax.plot(labels, [r.copy_gb_per_s for r in rows], ":", color="grey", label="copy of the same bytes")
    else:
        ax.axhline(doc.copy_gb_per_s, color="grey", ls=":", label="device copy")
    ax.set_ylabel("GB/s")
    ax.set_title(f"{doc.puzzle} {doc.title} on {doc.device}", fontsize=9)
    ax.legend(fontsize=8)
    plt.setp(ax.get_xticklabels(), rotation=20, ha="right", fontsize=7)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return Path(path)
