"""Calibrating ``--perf``'s H100 model against ``--bench`` (method: docs/perf-model.md).

Three steps, the first two on the GPU machine (the second uses its CPUs only):

    python benchmarks/perf_calibration.py measure DIR   # --bench at the headline size, each kernel
    python benchmarks/perf_calibration.py count DIR --jobs 12   # --perf's counts and ptxas's figures
    python benchmarks/perf_calibration.py fit DIR       # here: fit, write the coefficients and the data

The committed fit's inputs are in ``benchmarks/perf_calibration_data/`` (``fit`` that folder to
reproduce it).

The kernels are every reference solution with a Bench (puzzles 13-34) and every file of
``benchmarks/perf_kernels/`` (correct variants: slow, fast, other tiles). ``measure`` keeps,
per kernel, the bench's milliseconds (an autograd function: the step replayed as a CUDA graph,
the GPU's share, which is what the model estimates). ``count`` keeps the raw counts, so that
``fit`` can cost them again under any coefficients. ``fit`` chooses the coefficients that
minimise the mean |log(predicted / measured)|, writes them to ``grader/judge/perf/h100.json``
and the per-kernel data to ``benchmarks/perf_calibration.json``, and prints the figures: the
median and 90th percentile of |predicted/measured - 1|, the same for each kernel predicted by
a fit that never saw its puzzle (held out), and the order of each pair of one puzzle's kernels.
"""
from __future__ import annotations

import argparse
import json
import math
import statistics
import sys
import time
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

CORPUS = ROOT / "benchmarks" / "perf_kernels"
DATA = ROOT / "benchmarks" / "perf_calibration.json"
# What each calibration kernel varies (the manifest's "family"): the held-out figures leave one
# family out at a time, so that a kind of kernel is predicted by a fit that never saw its kind.
FAMILIES = ("access pattern", "loop structure", "RNG", "atomics", "tensor-core tiling")


def families() -> dict[str, str]:
    """kernel name -> family, from benchmarks/perf_kernels/manifest.json (references included)."""
    return {e["kernel"]: e["family"] for e in json.loads((CORPUS / "manifest.json").read_text())}


def kernels(only: list[str] | None = None) -> list[tuple[str, str, Path]]:
    """(kernel name, puzzle id, file) for every reference with a Bench and every corpus file."""
    from grader.course.loader import Course, PuzzleLoadError
    course = Course(ROOT)
    found = []
    for puzzle_id in course.ids:
        try:
            bench = course.puzzle(puzzle_id).bench
        except PuzzleLoadError:  # a Helion puzzle where helion is not installed: --perf counts none of them
            continue
        if bench is not None:
            found.append((f"{puzzle_id}_reference", puzzle_id, course.solution_file(puzzle_id)))
    for path in sorted(CORPUS.glob("puzzle*.py")):
        found.append((path.stem, path.stem[:8], path))
    return [k for k in found if not only or k[0] in only or k[1] in only]


def measure(folder: Path, only) -> None:
    from bench_headlines import HeadlineCourse

    from grader.judge.bench.run import run_bench
    from grader.judge.options import Options
    from grader.judge.session import Grading
    course = HeadlineCourse(ROOT)
    out = folder / "measured.json"
    done = json.loads(out.read_text()) if out.exists() else {}
    for name, puzzle_id, path in kernels(only):
        if name in done:
            continue
        started = time.perf_counter()
        try:
            with Grading(course, [path], Options(device="cuda", check_bounds=False, compile_check=False),
                         now=False) as grading:
                doc = run_bench(grading, puzzle_id, path)
            row = doc.rows[0] if doc.ok and doc.rows else None
            done[name] = {"puzzle": puzzle_id, "ok": bool(row and row.correct), "ms": row.ms if row else None,
                          "gpu_ms": row.gpu_ms if row else None, "baseline_ms": row.baseline_ms if row else None,
                          "wrong": (row.wrong if row else doc.error)[:300], "device": doc.device,
                          "versions": dict(doc.versions), "seconds": time.perf_counter() - started}
        except Exception as exc:  # one kernel's failure must not cost the others' figures
            done[name] = {"puzzle": puzzle_id, "ok": False, "wrong": f"{type(exc).__name__}: {exc}"[:300]}
        print(name, json.dumps(done[name]), flush=True)
        out.write_text(json.dumps(done, indent=1))


def _count_one(item) -> tuple[str, dict]:
    name, puzzle_id, path = item
    import msgspec

    from grader.channel import wire
    from grader.course.loader import Course
    from grader.judge.options import Options
    from grader.judge.perf.run import measure as measure_counts
    from grader.judge.perf.run import perf_case, profile_request
    from grader.judge.session import Grading
    course = Course(ROOT)
    puzzle = course.puzzle(puzzle_id)
    started = time.perf_counter()
    try:
        case, _ = perf_case(puzzle)
        request, least = profile_request(course, puzzle, case, path)
        with Grading(course, [path], Options(device="cpu", compile_check=False), now=False) as grading:
            solution = path if "solutions" in path.parts else None
            reply, stats, error = measure_counts(grading, puzzle, path, request, solution)
        return name, {"puzzle": puzzle_id, "least": least, "error": error,
                      "reply": wire.header(reply) if reply is not None else None,
                      "stats": [[msgspec.to_builtins(s) if s else None, note] for s, note in stats],
                      "seconds": time.perf_counter() - started}
    except Exception as exc:  # a grader bug on one kernel: recorded, the others go on
        import traceback
        return name, {"puzzle": puzzle_id, "error": "".join(traceback.format_exception(exc))[-2000:]}


# A kernel timed on another card (the H200 of 2026-11-27), scaled to the H100 by the ratio of a
# kernel timed on both that is bound as it is: the same puzzle's reference where memory bounds
# both, else the kernel named here.
SCALED_BY = {"puzzle13_column_block_ptr": "puzzle13_column_at_a_time",
             "puzzle28_tiles_16x16": "puzzle28_tiny_tiles_k16"}


def scale(folder: Path, other: Path) -> None:
    """Adds to FOLDER/measured.json the kernels of OTHER (a measured.json from another card) it
    lacks, each scaled by its baseline's H100/other ratio; keeps the other card's figure beside."""
    out = folder / "measured.json"
    done = json.loads(out.read_text())
    theirs = json.loads(other.read_text())
    for name, entry in theirs.items():
        if name in done or not entry.get("ok"):
            continue
        base = SCALED_BY.get(name, f"{entry['puzzle']}_reference")
        mine, card = done[base], theirs[base]
        ratio = (mine["gpu_ms"] or mine["ms"]) / (card["gpu_ms"] or card["ms"])
        done[name] = {**entry, "ms": entry["ms"] * ratio, "gpu_ms": entry["gpu_ms"] and entry["gpu_ms"] * ratio,
                      "device": mine["device"], "measured_on": entry["device"], "measured_ms": entry["ms"],
                      "scaled_by": f"{base}: {ratio:.4f}"}
        print(f"{name:40s} {entry['ms']:9.4f} ms on {entry['device']} x {ratio:.3f} ({base}) = {done[name]['ms']:.4f}")
    out.write_text(json.dumps(done, indent=1))


def _restat_one(item) -> tuple[str, list]:
    """ptxas's and the PTX's figures again for each launch ``count`` recorded (no interpreter)."""
    name, entry, path = item
    import msgspec

    from grader.course.loader import Course
    from grader.judge.options import Options
    from grader.judge.perf.run import compile_stats
    from grader.judge.session import Grading
    course = Course(ROOT)
    puzzle = course.puzzle(entry["puzzle"])
    reply, _ = _parsed(name, entry)
    with Grading(course, [path], Options(device="cpu", compile_check=False), now=False) as grading:
        compiler = grading.compiler(path if "solutions" in path.parts else None)
        memo: dict = {}
        stats = [compile_stats(compiler, path, puzzle.kernel, launch, memo) for launch in reply.launches]
    return name, [[msgspec.to_builtins(s) if s else None, note] for s, note in stats]


def restat(folder: Path, only, jobs: int) -> None:
    """Compile every counted launch again for its figures (after the compile's figures grew)."""
    out = folder / "counts.json"
    done = json.loads(out.read_text())
    files = {name: path for name, _, path in kernels(only)}
    todo = [(n, e, files[n]) for n, e in done.items() if n in files and e.get("reply") and not e.get("error")]
    with ProcessPoolExecutor(max_workers=jobs) as pool:
        for name, stats in pool.map(_restat_one, todo):
            done[name]["stats"] = stats
            print(name, [s[0] and (s[0]["alu"], s[0]["loops"]) for s in stats], flush=True)
            out.write_text(json.dumps(done))


def count(folder: Path, only, jobs: int) -> None:
    out = folder / "counts.json"
    done = json.loads(out.read_text()) if out.exists() else {}
    todo = [k for k in kernels(only) if k[0] not in done or done[k[0]].get("error")]
    with ProcessPoolExecutor(max_workers=jobs) as pool:
        for name, result in pool.map(_count_one, todo):
            done[name] = result
            print(name, result.get("error", "")[:300] or f"{result['seconds']:.1f} s", flush=True)
            out.write_text(json.dumps(done))


_PARSED: dict[str, tuple] = {}  # kernel -> (reply, stats): parsed once, costed many times by the fit


def _parsed(name: str, entry: dict) -> tuple:
    from grader.channel import wire, wire_measure
    if name not in _PARSED:
        reply = wire.parse_reply(wire_measure.Profiled, entry["reply"])
        stats = [(wire.convert(s, wire.KernelStats) if s else None, note) for s, note in entry["stats"]]
        _PARSED[name] = (reply, stats)
    return _PARSED[name]


def predictions(counts: dict, c: dict) -> dict[str, float]:
    from grader.judge.perf.run import costed
    out = {}
    for name, entry in counts.items():
        if entry.get("error") or not entry.get("reply"):
            continue
        reply, stats = _parsed(name, entry)
        out[name] = costed("x", Path(name), reply, stats, "", c).ms
    return out


def _loss(predicted: dict, measured: dict, names) -> float:
    errors = [abs(math.log(predicted[n] / measured[n])) for n in names if n in predicted and predicted[n] > 0]
    return sum(errors) / max(1, len(errors)) if errors else float("inf")


# The launch costs are not fitted: every calibration kernel runs for 48 µs or more, so the fit
# cannot see them; they stay at what an empty launch takes on an H100 (perf_estimate.DEFAULTS).
FITTED = ("dram_eff", "l2_bytes_per_s", "l2_keeps", "cross_miss", "partial_miss", "fp16_eff", "tf32_eff", "fp32_eff",
          "mma_factor", "alu_eff", "slow_eff", "atomics_per_s", "conflicts_per_s", "same_address_s", "latency_s",
          "spill_factor", "p", "ptx_eff", "reduce_s", "stage_s")
# where a coefficient is a share of a peak, at most the peak; an ALU "efficiency" above 1 says the
# interpreter counts more operations than the compiled code runs (address arithmetic it folds)
BOUNDS = {"dram_eff": (0.5, 1.0), "l2_keeps": (0.05, 1.0), "cross_miss": (0.0, 1.0), "partial_miss": (0.0, 1.0),
          "fp16_eff": (0.2, 1.0), "tf32_eff": (0.05, 1.0), "fp32_eff": (0.05, 1.0), "mma_factor": (0.1, 1.0),
          "alu_eff": (0.05, 8.0), "slow_eff": (0.05, 8.0), "spill_factor": (0.0, 64.0), "p": (1.0, 16.0),
          "latency_s": (1e-7, 2e-6), "same_address_s": (0.0, 1e-7), "ptx_eff": (0.25, 4.0),
          "reduce_s": (0.0, 0.3e-6), "stage_s": (0.0, 0.3e-6)}


def fit(counts: dict, measured: dict, names, start: dict, sweeps: int = 12) -> dict:
    """Coordinate descent on each coefficient in turn, by multiplicative steps, within bounds."""
    c = dict(start)
    best = _loss(predictions({n: counts[n] for n in names}, c), measured, names)
    for sweep in range(sweeps):
        step = 2.0 if sweep < 4 else 1.3 if sweep < 8 else 1.08
        improved = False
        for key in FITTED:
            for factor in (step, 1 / step):
                trial = dict(c)
                value = trial[key] * factor if trial[key] else 0.05
                low, high = BOUNDS.get(key, (0.0, float("inf")))
                trial[key] = min(high, max(low, value))
                loss = _loss(predictions({n: counts[n] for n in names}, trial), measured, names)
                if loss < best - 1e-6:
                    best, c, improved = loss, trial, True
        if not improved and step < 1.1:
            break
    return c


def figures(predicted: dict, measured: dict) -> dict:
    ratios = sorted(abs(predicted[n] / measured[n] - 1) for n in predicted if n in measured)
    if not ratios:
        return {}
    return {"kernels": len(ratios), "median": statistics.median(ratios),
            "p90": ratios[min(len(ratios) - 1, math.ceil(0.9 * len(ratios)) - 1)]}


def ordering(predicted: dict, measured: dict, puzzle_of: dict) -> tuple[int, int, list]:
    """Pairs of one puzzle's kernels whose measured times differ by more than 10 %: how many the
    estimate puts in the same order."""
    right = total = 0
    wrong = []
    names = sorted(n for n in predicted if n in measured)
    for i, a in enumerate(names):
        for b in names[i + 1:]:
            if puzzle_of[a] != puzzle_of[b] or abs(math.log(measured[a] / measured[b])) < math.log(1.1):
                continue
            total += 1
            if (measured[a] < measured[b]) == (predicted[a] < predicted[b]):
                right += 1
            else:
                wrong.append((a, b))
    return right, total, wrong


def _tolerance_only(entry: dict) -> bool:
    """A matmul the bench of 2026-11-26 called wrong only for its tolerance: an fp16 output at
    K = 8192 held to the small cases' (issue 23; every such kernel passes grading). Its time stands."""
    return entry.get("puzzle") in ("puzzle28", "puzzle29", "puzzle30") and \
        str(entry.get("wrong", "")).startswith("wrong values") and "max abs err 0.25," in str(entry.get("wrong"))


def uncertain(counts: dict, c: dict) -> dict[str, str]:
    """kernel -> why ``--perf`` calls its estimate uncertain ("" where it does not)."""
    from grader.judge.perf.findings import uncertainty
    from grader.judge.perf.run import costed
    out = {}
    for name, entry in counts.items():
        if entry.get("error") or not entry.get("reply"):
            continue
        reply, stats = _parsed(name, entry)
        out[name] = "; ".join(uncertainty(costed("x", Path(name), reply, stats, "", c)))
    return out


def held_out_by_family(counts: dict, measured: dict, names: list, family_of: dict, start: dict) -> dict:
    """Each family predicted by a fit on the others, started from the physical defaults: nothing
    of the family leaks in, not even through the full fit's coefficients."""
    held_out = {}
    for family in FAMILIES:
        kept = [n for n in names if family_of.get(n) != family]
        left = [n for n in names if family_of.get(n) == family]
        if not left:
            continue
        c_out = fit(counts, measured, kept, start, sweeps=10)
        held_out.update(predictions({n: counts[n] for n in left}, c_out))
    return held_out


def fit_main(folder: Path) -> None:
    from grader.judge.perf import estimate as model
    counts = json.loads((folder / "counts.json").read_text())
    bench = json.loads((folder / "measured.json").read_text())
    measured = {n: (e["gpu_ms"] or e["ms"]) for n, e in bench.items()
                if (e.get("ok") or _tolerance_only(e)) and (e.get("gpu_ms") or e.get("ms"))}
    names = [n for n in measured if n in counts and not counts[n].get("error")]
    puzzle_of = {n: counts[n]["puzzle"] for n in names}
    family_of = families()
    missing = [n for n in names if n not in family_of]
    if missing:
        raise SystemExit(f"no family in the manifest for {missing}")
    c = fit(counts, measured, names, dict(model.DEFAULTS))
    predicted = predictions({n: counts[n] for n in names}, c)
    held_out = held_out_by_family(counts, measured, names, family_of, dict(model.DEFAULTS))
    flagged = uncertain({n: counts[n] for n in names}, c)
    right, total, wrong = ordering(predicted, measured, puzzle_of)
    right_out, _, _ = ordering(held_out, measured, puzzle_of)
    by_family = {f: figures({n: held_out[n] for n in names if family_of[n] == f and n in held_out}, measured)
                 for f in FAMILIES}
    misses = sorted((n for n in names if max(held_out[n] / measured[n], measured[n] / held_out[n]) > 2),
                    key=lambda n: -abs(math.log(held_out[n] / measured[n])))
    first = next(iter(bench.values()))
    summary = {"fitted": figures(predicted, measured), "held_out_by_family": figures(held_out, measured),
               "families": by_family,
               "off_by_2_held_out": {"kernels": len(misses), "said_uncertain": sum(bool(flagged[n]) for n in misses)},
               "order": {"right": right, "pairs": total, "held_out_right": right_out, "wrong": wrong},
               "device": first.get("device"), "versions": first.get("versions"), "date": time.strftime("%Y-%m-%d")}
    print(json.dumps(summary, indent=1))
    model.COEFFICIENTS.write_text(json.dumps({"coefficients": c, "fit": summary}, indent=1) + "\n")
    DATA.write_text(json.dumps([{"kernel": n, "puzzle": puzzle_of[n], "family": family_of[n],
                                 "measured_ms": round(measured[n], 5), "predicted_ms": round(predicted[n], 5),
                                 "held_out_ms": round(held_out[n], 5), "uncertain": flagged[n]}
                                for n in sorted(names)], indent=1) + "\n")
    print(f"{'kernel':42s} {'family':18s} {'measured':>9s} {'fitted':>9s} {'held out':>9s}  ratio (held out)")
    for n in sorted(names, key=lambda n: held_out[n] / measured[n]):
        mark = f"  uncertain: {flagged[n]}" if flagged[n] else ""
        print(f"{n:42s} {family_of[n]:18s} {measured[n]:9.4f} {predicted[n]:9.4f} {held_out[n]:9.4f}  "
              f"{predicted[n] / measured[n]:5.2f} ({held_out[n] / measured[n]:5.2f}){mark}")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("step", choices=("measure", "count", "restat", "scale", "fit"))
    parser.add_argument("folder", type=Path)
    parser.add_argument("--only", nargs="*", help="kernel names or puzzle ids")
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument("--other", type=Path, help="scale: a measured.json from another card")
    args = parser.parse_args()
    args.folder.mkdir(parents=True, exist_ok=True)
    if args.step == "measure":
        measure(args.folder, args.only)
    elif args.step == "count":
        count(args.folder, args.only, args.jobs)
    elif args.step == "scale":
        scale(args.folder, args.other)
    elif args.step == "restat":
        restat(args.folder, args.only, args.jobs)
    else:
        fit_main(args.folder)
    return 0


if __name__ == "__main__":
    sys.exit(main())
