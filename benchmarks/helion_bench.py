"""The Helion track's solutions timed on a GPU with ``triton.testing.do_bench``, beside PyTorch,
at each puzzle's Bench sizes: a quick figure without the grader's harness (the grader's own
``--bench`` times a Helion kernel through its guarded loop, grader/sandbox/kinds/helion/bench.py):

    python benchmarks/helion_bench.py puzzle37 puzzle42 ... [--sizes 1] [--json OUT]

For each size the solution kernel is compiled with the Bench's ``blocks`` as Helion's tile sizes
and its ``launch`` (num_warps, num_stages) as the rest of the config, exactly one config, no
autotuning; its outputs are compared with the spec's (computed on the GPU in fp32); then it and
``Bench.baseline`` are each timed with ``triton.testing.do_bench`` (median of its calls). The
course's Triton solution for the same puzzle is timed by benchmarks/bench_headlines.py.
"""
from __future__ import annotations

import argparse
import importlib.util
import json
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from grader.course.case import Case  # noqa: E402
from grader.course.loader import Course  # noqa: E402
from grader.judge.plan import SpecShapes  # noqa: E402


def _solution(course: Course, puzzle):
    path = course.solution_file(puzzle.id)
    spec = importlib.util.spec_from_file_location(f"helion_solution_{puzzle.id}", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return getattr(module, puzzle.kernel)


def _compiled(kernel, args, blocks, launch):
    """The kernel bound to these arguments and compiled for one config: the Bench's tiles."""
    import helion
    bound = kernel.bind(args)
    config = helion.Config(block_sizes=list(blocks.values()), **dict(launch))
    return bound.compile_config(config, allow_print=False), config


def _size_row(puzzle, kernel, size: dict, torch, do_bench) -> dict:
    bench = puzzle.bench
    case = Case("bench", sizes=dict(size),
                blocks=dict(bench.blocks), dtypes=dict(bench.dtypes))
    plan = SpecShapes(puzzle).plan(case, device="cuda")
    inputs = [x.cuda() for x in plan.inputs]
    row = {"size": dict(size), "blocks": dict(bench.blocks), "launch": dict(bench.launch)}
    started = time.perf_counter()
    fn, config = _compiled(kernel, inputs, bench.blocks, bench.launch)
    got = fn(*inputs)
    torch.cuda.synchronize()
    row["compile_s"] = round(time.perf_counter() - started, 1)
    got = got if isinstance(got, tuple) else (got,)
    errors = []
    for name, value, expected in zip(puzzle.outputs, got, plan.expected):
        atol, rtol = bench.tolerances.get(str(expected.dtype).split(".")[-1]) or \
            puzzle.tolerance(str(expected.dtype).split(".")[-1])
        diff = (value.float().cpu() - expected.float()).abs()
        bad = (diff > atol + rtol * expected.float().abs()).float().mean().item()
        errors.append({"output": name, "max_abs_err": diff.max().item(), "share_outside_tolerance": bad})
    row["errors"] = errors
    row["helion_ms"] = do_bench(lambda: fn(*inputs))
    if bench.baseline is not None:
        row["baseline"] = bench.baseline_name
        row["baseline_ms"] = do_bench(lambda: bench.baseline(*inputs))
    values = {**size, **bench.blocks}
    row["gb_s"] = bench.bytes(values) / row["helion_ms"] / 1e6
    if bench.flops is not None:
        row["tflop_s"] = bench.flops(values) / row["helion_ms"] / 1e9
    return row


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("puzzles", nargs="+")
    parser.add_argument("--sizes", type=int, default=1, help="how many sizes of each sweep, headline first")
    parser.add_argument("--json", type=Path)
    args = parser.parse_args()
    import torch
    from triton.testing import do_bench
    course = Course(ROOT)
    rows = []
    for puzzle_id in args.puzzles:
        puzzle = course.puzzle(puzzle_id)
        if puzzle.bench is None:
            print(f"- {puzzle_id}: no Bench", flush=True)
            continue
        kernel = _solution(course, puzzle)
        for size in puzzle.bench.sizes[:args.sizes]:
            try:
                row = {"puzzle": puzzle_id, **_size_row(puzzle, kernel, size, torch, do_bench)}
            except Exception as exc:  # one size's failure must not cost the others' figures
                row = {"puzzle": puzzle_id, "size": dict(size), "error": f"{type(exc).__name__}: {exc}"[:2000]}
            rows.append(row)
            print(json.dumps(row), flush=True)
            if args.json:
                args.json.write_text(json.dumps(rows, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
