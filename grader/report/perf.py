"""Rendering ``--perf``'s :class:`grader.judge.perf.model.PerfResult`: a table of yours beside the
reference, each launch, and what the counts say; or JSON."""
from __future__ import annotations

import json
from dataclasses import asdict

from grader.judge.perf.model import LaunchCost, PerfProfile, PerfResult


def _time(ms: float) -> str:
    return f"{ms * 1e3:,.1f} µs" if ms < 1 else f"{ms:,.3f} ms"


def _bytes(n: float) -> str:
    return f"{n / 1e6:,.1f} MB" if n < 1e10 else f"{n / 1e9:,.2f} GB"


def _share(x: float) -> str:
    return f"{x:.0%}" if x >= 0.1 else f"{x:.1%}"


def _sizes(sizes) -> str:
    return ", ".join(f"{k}={v}" for k, v in sizes.items())


def _registers(profile: PerfProfile) -> str:
    known = [l for l in profile.launches if l.registers is not None]
    if not known:
        return "not compiled"
    return ", ".join(f"{l.registers}/{l.spill_bytes}" for l in known)


def _cores(profile: PerfProfile) -> str:
    used = {l.tensor_cores for l in profile.launches if l.flops}
    return ", ".join(sorted(u or "none (FMA units)" for u in used)) if used else "no tl.dot"


def _rows(result: PerfResult) -> list[tuple[str, ...]]:
    columns = [p for p in (result.yours, result.reference) if p is not None]

    def each(fn) -> tuple[str, ...]:
        return tuple(fn(p) if p.ok else "—" for p in columns)
    return [
        ("estimated time", *each(lambda p: _time(p.ms))),
        (f"of the limit ({_time(result.limit_ms)}, {result.limit_by})",
         *each(lambda p: _share(result.limit_ms / p.ms) if p.ms else "—")),
        ("bound by", *each(lambda p: p.bound)),
        (f"memory traffic (least: {_bytes(result.minimum_bytes)})", *each(lambda p: _bytes(p.dram_bytes))),
        ("bytes loaded / stored by the lanes", *each(lambda p: f"{_bytes(p.loaded)} / {_bytes(p.stored)}")),
        ("sectors moved through L2", *each(lambda p: _bytes(sum(l.l2_moved for l in p.launches)))),
        ("tl.dot FLOPs", *each(lambda p: f"{p.flops / 1e9:,.1f} G" if p.flops else "—")),
        ("tensor cores", *each(_cores)),
        ("registers / spill bytes per thread", *each(_registers)),
        ("programs per SM at once", *each(lambda p: ", ".join(str(l.resident) for l in p.launches))),
        ("launches", *each(lambda p: str(len(p.launches)))),
    ]


def _launch(launch: LaunchCost) -> str:
    grid = "×".join(str(g) for g in launch.grid if g > 1) or "1"
    config = f" {launch.config}" if launch.config else ""
    text = (f"  {launch.kernel}{config}: grid {grid} ({launch.interpreted} interpreted), {launch.num_warps} warps, "
            f"{_time(launch.ms)}, bound by {launch.bound}")
    if launch.alternatives:
        text += "\n    the autotuner's configs: " + "; ".join(f"{label or 'default'} {_time(ms)}"
                                                              for label, ms in launch.alternatives)
    if launch.planned and launch.interpreted < launch.planned:
        text += (f"\n    {launch.interpreted} of the {launch.planned} programs sampled: interpreting them took "
                 f"longer than the time budget, so this launch's figures rest on fewer programs")
    if launch.loops_sampled:
        text += ("\n    long loops sampled: of each, its first 16 iterations and 4 in its middle and at its end "
                 "ran, standing for the rest")
    if launch.compile_note:
        text += f"\n    {launch.compile_note}"
    return text


def render_text(result: PerfResult) -> str:
    lines = [f"{result.puzzle} {result.title} — estimated for an {result.device}",
             f"at {result.case} ({_sizes(result.sizes)}); no GPU was used: the kernel ran in the interpreter on a "
             f"sample of its programs, and was compiled for sm_90.", ""]
    if not result.yours.ok and result.reference is None:  # nothing counted (a Helion kernel): the reason alone
        return "\n".join([lines[0], "", result.yours.error[:1].upper() + result.yours.error[1:] + "."])
    if result.yours.wrong:
        lines += [f"Your kernel fails grading ({result.yours.wrong}): the figures of \"yours\" are those of a "
                  f"wrong kernel. Make it pass first.", ""]
    header = ("", "yours (fails grading)" if result.yours.wrong else "yours",
              *(("reference",) if result.reference is not None else ()))
    rows = [header, *_rows(result)]
    widths = [max(len(r[i]) for r in rows) for i in range(len(header))]
    lines += ["  ".join(cell.ljust(w) for cell, w in zip(row, widths)).rstrip() for row in rows]
    for profile in (result.yours, result.reference):
        if profile is None:
            continue
        lines.append("")
        if not profile.ok:
            lines.append(f"{profile.who}: no estimate: {profile.error}")
            continue
        lines.append(f"{profile.who}, launch by launch:")
        lines += [_launch(l) for l in profile.launches]
        if profile.torch_ops:
            lines.append(f"  PyTorch operators in the wrapper: {_time(profile.torch_ms)} "
                         f"({', '.join(f'{n} ×{c}' for n, c, _ in profile.torch_ops[:6])})")
    yours = result.yours
    # a note of the grade's that names a faster way comes first, in the grade's words: one change, said alike
    changes = [f"(grading's note) {note.removeprefix('Note: ').rstrip('.')}." for note in yours.notes]
    changes += yours.findings
    if yours.ok:
        lines += ["", f"Bound by {_bound_words(yours.bound)}."
                      + (f" The change most likely to help: {changes[0]}" if changes else "")]
    if len(changes) > 1:
        lines += ["", "What else the counts say:"] + [f"  • {f}" for f in changes[1:]]
    lines += _error_band(result.model)
    if yours.ok and yours.uncertain:
        lines += ["", "This estimate is less certain than that band:"] + [f"  • {u}" for u in yours.uncertain]
    return "\n".join(lines)


def _bound_words(bound: str) -> str:
    return {"memory": "memory (the bytes to and from HBM)", "L2": "L2 (the sectors moved between L2 and the SMs)",
            "latency": "latency (loads and reductions waited for one after another)",
            "ALU": "the ALU (arithmetic)", "tensor cores": "the tensor cores", "atomics": "atomics",
            "launch": "the launch itself"}.get(bound, bound)


def _error_band(model) -> list[str]:
    """The calibration's error on kinds of kernel it was not fitted on, then on those it was."""
    fit, held = model.get("fitted", {}), model.get("held_out_by_family", {})
    if not fit or not held:
        return []
    return ["", f"Error band: on kinds of kernel the model was not fitted on, half its estimates are within "
                f"{held['median']:.0%} of an H100's time and 90% within {held['p90']:.0%} ({held['kernels']} "
                f"kernels, each family held out in turn); on those it was fitted on, {fit['median']:.0%} and "
                f"{fit['p90']:.0%}. See docs/perf-model.md; on a GPU, time it with --bench."]


def as_json(result: PerfResult) -> dict:
    doc = asdict(result)
    doc["fraction_of_limit"] = result.fraction_of_limit
    return doc


def render_json(result: PerfResult) -> str:
    return json.dumps(as_json(result), indent=1)
