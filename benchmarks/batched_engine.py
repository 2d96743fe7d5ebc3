"""The batched engine against the serial interpreter: wall time of each form (tests/engine_kernels.py),
and the cost of one operation on FlashAttention's key loop, per launch and per program.

    python benchmarks/batched_engine.py [--forms] [--attention] [--repeat 3]

Each figure is the median of ``--repeat`` runs in this process, set up as a cpu worker is (the
grader's semantics, the batched engine installed), without the bounds checker. "Operations" are
the interpreter builder's calls (an add, a load, a dot): the serial interpreter makes each once per
program, the batched engine once per group of programs.
"""
from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests"))

import torch  # noqa: E402

import engine_runner as runner  # noqa: E402 (sets TRITON_INTERPRET and prepares as a cpu worker)
from grader.sandbox.batched.engine import Batched  # noqa: E402
from grader.sandbox.launch import program_order  # noqa: E402


class Counted:
    """Counts the interpreter builder's operations while active."""

    def __enter__(self):
        from triton.runtime import interpreter
        self.builder, self.count = interpreter.interpreter_builder, 0
        self.saved = []
        for name in dir(type(self.builder)):
            if name.startswith("create_") and name not in ("create_get_program_id", "create_get_num_programs"):
                method = getattr(self.builder, name)

                def counted(*args, _method=method, **kwargs):
                    self.count += 1
                    return _method(*args, **kwargs)
                self.saved.append(name)
                setattr(self.builder, name, counted)
        return self

    def __exit__(self, *exc):
        for name in self.saved:
            delattr(self.builder, name)


def timed(run, repeat: int) -> float:
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        run()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def forms(repeat: int) -> None:
    print("| form | programs | serial | batched | group runs | ratio |")
    print("|---|---|---|---|---|---|")
    for name, (kernel, grid, make, inputs) in runner.CASES.items():
        if name == "strays_in_one_program":  # out of bounds: without the bounds check it reads wild memory
            continue
        def go(batched, _kernel=kernel, _grid=grid, _make=make):
            args = _make()
            with (Batched() if batched else program_order(False)) as order:
                _kernel[_grid](*args)
            return order
        try:
            serial = timed(lambda: go(False), repeat)
        except Exception:  # noqa: BLE001 (a kernel meant to fail: timed as it fails)
            serial = float("nan")
        try:
            batched = timed(lambda: go(True), repeat)
            launch = go(True).launches[0]
            runs = f"{launch.runs}" + (f" (serially: {launch.serial})" if launch.serial else "")
        except Exception:  # noqa: BLE001
            batched, runs = float("nan"), "raised"
        programs = 1
        for g in grid:
            programs *= g
        print(f"| {name} | {programs} | {serial * 1e3:.1f} ms | {batched * 1e3:.1f} ms | {runs} | "
              f"{serial / batched:.1f}x |")


def attention(repeat: int) -> None:
    """puzzle31's solution on one head of a 4100-long sequence (65 query blocks of 64), non-causal
    and causal: the key loop is most of its operations. One head: the causal launch splits into a
    group per query block (each its own trip count), so it shows the engine's cost over the serial
    interpreter's where nothing batches; the puzzle's cases have 4 to 12 heads to a group."""
    sys.path.insert(0, str(ROOT / "solutions"))
    from grader.sandbox.learner_import import import_learner
    solution = import_learner(str(ROOT / "solutions" / "puzzle31_flash_attention_forward.py"), "_attention")
    kernel = solution.attention_fwd_kernel
    n, d, block = 4100, 64, 64
    # per program-operation: the wall time over the operations the serial interpreter makes (one per program)
    print("| attention key loop | programs | engine | wall | operations | per operation | per program-operation |")
    print("|---|---|---|---|---|---|---|")
    for causal in (0, 1):
        gen = torch.Generator().manual_seed(causal)
        q, k, v = (torch.randn(1, n, d, generator=gen).half() for _ in range(3))
        o, lse = torch.empty(1, n, d, dtype=torch.float16), torch.empty(1, n)
        grid = ((n + block - 1) // block, 1)
        # as a worker has them
        inputs = [(t.data_ptr(), t.data_ptr() + t.numel() * t.element_size()) for t in (q, k, v)]
        serial_ops = None
        for batched in (False, True):
            def go():
                with Counted() as counted, (Batched(readonly=inputs) if batched else program_order(False)):
                    kernel[grid](q, k, v, o, lse, n, n, d, block, block, causal)
                return counted.count
            ops = go()
            serial_ops = serial_ops or ops
            wall = timed(go, repeat)
            print(f"| {'causal' if causal else 'full'} | {grid[0]} | {'batched' if batched else 'serial'} | "
                  f"{wall:.2f} s | {ops} | {wall / ops * 1e6:.0f} µs | {wall / serial_ops * 1e6:.1f} µs |")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--forms", action="store_true")
    parser.add_argument("--attention", action="store_true")
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    both = not (args.forms or args.attention)
    if args.forms or both:
        forms(args.repeat)
    if args.attention or both:
        attention(args.repeat)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
