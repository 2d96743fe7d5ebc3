"""Runs tests/engine_kernels.py's kernels with the batched engine and with the serial interpreter,
in this process as a cpu worker sets it up, and prints one JSON line per case: whether both
left the same bytes, printed the same, raised the same and found the same (bounds checker), and
how the engine ran each launch. ``python tests/engine_runner.py [case ...]``; ``--check`` says only
what differs and exits 1 if anything does."""
from __future__ import annotations

import contextlib
import io
import json
import os
import sys
from pathlib import Path

os.environ["TRITON_INTERPRET"] = "1"
ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from grader.sandbox.worker import prepare  # noqa: E402

prepare("cpu")

import numpy as np  # noqa: E402
import torch  # noqa: E402

from grader.sandbox.batched import lanes  # noqa: E402
from grader.sandbox.batched.engine import Batched  # noqa: E402
from grader.sandbox.bounds import BoundsChecker, Region  # noqa: E402
from grader.sandbox.launch import program_order  # noqa: E402
from grader.sandbox.learner_import import import_learner  # noqa: E402

K = import_learner(str(ROOT / "tests" / "engine_kernels.py"), "_engine_kernels")
gen = torch.Generator().manual_seed(0)


def randn(*shape):
    return torch.randn(*shape, generator=gen)


def nan(*shape, dtype=torch.float32):
    return torch.full(shape, float("nan"), dtype=dtype) if dtype.is_floating_point else torch.full(shape, -7, dtype=dtype)


# name -> (kernel, grid, arguments (tensors first: inputs, then outputs), how many are inputs)
CASES = {
    "rows_softmax": (K.rows_softmax, (300,), lambda: [randn(300, 100), nan(300, 100), 100, 128], 1),
    "triangle_sums": (K.triangle_sums, (300,), lambda: [randn(300, 100), nan(300), 100, 16], 1),
    "rows_per_program": (K.rows_per_program, (9,), lambda: [randn(50, 30), nan(50, 30), 50, 30, 6, 32], 1),
    "grid_stride": (K.grid_stride, (7,), lambda: [randn(50, 30), nan(50, 30), 50, 30, 32], 1),
    "early_exit": (K.early_exit, (12,), lambda: [randn(70), nan(100), 70, 8], 1),
    "halving_while": (K.halving_while, (40,), lambda: [randn(40).abs() * 100, nan(40)], 1),
    "count_then_branch": (K.count_then_branch, (33,), lambda: [torch.zeros(1, dtype=torch.int32),
                                                               nan(33, dtype=torch.int32)], 0),
    "histogram": (K.histogram, (40,), lambda: [torch.randint(0, 1000, (5000,), generator=gen, dtype=torch.int32),
                                               torch.zeros(16, dtype=torch.int32), 5000, 16, 128], 1),
    "chunked_histogram": (K.chunked_histogram, (10,), lambda: [torch.randint(0, 1000, (5000,), generator=gen,
                                                                             dtype=torch.int32),
                                                               torch.zeros(16, dtype=torch.int32), 5000, 16, 128, 4], 1),
    "float_accumulate": (K.float_accumulate, (10,), lambda: [randn(5000), torch.zeros(1), 5000, 128, 4], 1),
    "ticket": (K.ticket, (20,), lambda: [torch.zeros(1, dtype=torch.int32), nan(20, dtype=torch.int32)], 0),
    "locked_sum": (K.locked_sum, (24,), lambda: [randn(24, 20), torch.zeros(20), torch.zeros(1, dtype=torch.int32),
                                                 20, 32], 1),
    "reads_neighbour": (K.reads_neighbour, (10,), lambda: [randn(80), nan(80), 80, 8], 1),
    "reads_previous": (K.reads_previous, (10,), lambda: [randn(80), nan(80), nan(80), 80, 8], 1),
    "same_element": (K.same_element, (6,), lambda: [nan(4, dtype=torch.int32), 4], 0),
    "reads_unwritten": (K.reads_unwritten, (5,), lambda: [nan(20), nan(20), 4], 0),
    "strays_in_one_program": (K.strays_in_one_program, (8,), lambda: [randn(64), nan(64), 64, 8], 1),
    "prints": (K.prints, (4,), lambda: [randn(4, 2), 2], 1),
    "shapes": (K.shapes, (5,), lambda: [randn(5, 4, 8), nan(5), 4, 8], 1),
    "reductions": (K.reductions, (6,), lambda: [torch.rand(6, 8, 16, generator=gen), nan(6, 16), 8, 16], 1),
    "dots": (K.dots, (4,), lambda: [randn(4, 16, 32), randn(32, 16), nan(4, 16, 16), 16, 16, 32], 2),
    "randoms": (K.randoms, (6,), lambda: [nan(6 * 64), 1234, 64], 0),
    "block_pointers": (K.block_pointers, (4,), lambda: [randn(30, 50), nan(30, 50), 30, 50, 8, 16], 1),
    "descriptors": (K.descriptors, (4,), lambda: [randn(32, 48), nan(32, 48), 32, 48, 8, 16], 1),
    "uniform_store": (K.uniform_store, (9,), lambda: [randn(1), nan(2)], 1),
    "three_axes": (K.three_axes, (3, 4, 5), lambda: [nan(60, dtype=torch.int32)], 0),
    "writes_input": (K.writes_input, (4,), lambda: [randn(32), 32, 8], 1),
}

# Kernels whose outputs are read (or not) before a store reaches them, run without the bounds check too.
UNHOOKED = ("reads_unwritten", "rows_softmax", "histogram", "ticket", "locked_sum", "reads_previous", "early_exit")


def checker_for(tensors, inputs: int, params):
    regions, outputs = [], {}
    for i, (t, param) in enumerate(zip(tensors, params)):
        start, nbytes = t.data_ptr(), t.numel() * t.element_size()
        role = "input" if i < inputs else "output"
        regions.append(Region(f"t{i}", start, nbytes, start, start + nbytes, t.element_size(), tuple(t.shape),
                              param, role))
        if role == "output":
            outputs[i] = t.numpy().reshape(-1)
    from triton.runtime import interpreter
    return BoundsChecker(regions, str(ROOT / "tests" / "engine_kernels.py"), interpreter.interpreter_builder,
                         None, True, outputs)


def watch_for(tensors, inputs: int):
    """The worker's watch for reads of output elements nothing stored yet (every interpreted run)."""
    from triton.runtime import interpreter

    from grader.sandbox.unwritten_reads import UnwrittenReads, Watched
    from grader.sandbox.worker import Worker
    outputs = [Watched(f"t{i}", t.data_ptr(), t.numel() * t.element_size(), t.element_size(), tuple(t.shape))
               for i, t in enumerate(tensors) if i >= inputs]
    return UnwrittenReads(outputs, interpreter.interpreter_builder, Worker.learner_line)


def run(name: str, batched: bool, reverse: bool, budget: int | None = None, hooked: bool = True):
    """``hooked``: with the bounds check (else only the watch of unwritten reads, as a large case's first run)."""
    kernel, grid, make, inputs = CASES[name]
    gen.manual_seed(sum(map(ord, name)))
    args = make()
    tensors = [a for a in args if isinstance(a, torch.Tensor)]
    params = [p for p, a in zip(kernel.arg_names, args) if isinstance(a, torch.Tensor)]
    checker = checker_for(tensors, inputs, params) if hooked else None
    watch = watch_for(tensors, inputs)
    readonly = [(t.data_ptr(), t.data_ptr() + t.numel() * t.element_size()) for t in tensors[:inputs]]
    order = Batched(reverse=reverse, readonly=readonly) if batched else program_order(reverse)
    out, error = io.StringIO(), None
    saved = lanes.BUDGET
    if budget is not None:
        lanes.BUDGET = budget
    if checker is not None:
        checker.install()
    watch.install()
    try:
        with contextlib.redirect_stdout(out), order:
            kernel[grid](*args)
    except Exception as exc:  # noqa: BLE001 (the kernel's error is a result)
        cause = exc
        while cause.__cause__ is not None:
            cause = cause.__cause__
        error = f"{type(cause).__name__}: {cause}"
    finally:
        if checker is not None:
            checker.uninstall()
        watch.uninstall()
        lanes.BUDGET = saved
    launches = [{"programs": launch.programs, "runs": launch.runs, "serial": launch.serial, "crossed": launch.crossed}
                for launch in getattr(order, "launches", [])]
    found = {"overlaps": checker.overlaps, "early_reads": checker.early_reads, "crossings": checker.log.crossings} \
        if checker is not None else {"overlaps": [], "early_reads": [], "crossings": []}
    return {"bytes": [t.numpy().tobytes().hex() for t in tensors], "printed": out.getvalue(), "error": error,
            "unwritten": watch.reads(), "launches": launches, **found}


def compare(name: str, reverse: bool = False, budget: int | None = None, hooked: bool = True) -> dict:
    serial, batched = run(name, False, reverse, hooked=hooked), run(name, True, reverse, budget, hooked)
    same = {key: serial[key] == batched[key]
            for key in ("bytes", "printed", "error", "overlaps", "early_reads", "crossings", "unwritten")}
    return {"case": name if hooked else f"unhooked {name}", "reverse": reverse, "budget": budget, "same": same,
            "launches": batched["launches"], "error": batched["error"], "printed": batched["printed"],
            "overlaps": batched["overlaps"], "early_reads": batched["early_reads"], "crossings": batched["crossings"],
            "unwritten": batched["unwritten"], "serial_error": serial["error"]}


def fast_race(differential: str | None = None) -> dict:
    """reads_neighbour without a bounds check, failing fast: the crossing the batch met, raised.
    With ``differential`` as TP_DIFFERENTIAL, the same: the engine's own finding is not compared."""
    label = "fast_race" if differential is None else f"fast_race_differential_{differential}"
    if differential is not None:
        os.environ["TP_DIFFERENTIAL"] = differential
    try:
        return _fast_race(label)
    finally:
        os.environ.pop("TP_DIFFERENTIAL", None)


def _fast_race(label: str) -> dict:
    from grader.sandbox.batched.engine import ProgramsCrossed
    kernel, grid, make, _ = CASES["reads_neighbour"]
    args = make()
    names = lambda address: ("y", (80,), (address - args[1].data_ptr()) // 4)  # noqa: E731
    try:
        from grader.sandbox.worker import Worker
        with Batched(fail_fast=True, names=names, lines=Worker.learner_line,
                     readonly=[(args[0].data_ptr(), args[0].data_ptr() + 320)]):
            kernel[grid](*args)
    except Exception as exc:  # noqa: BLE001
        cause = exc
        while cause.__cause__ is not None:
            cause = cause.__cause__
        if isinstance(cause, ProgramsCrossed):
            return {"case": label, "reverse": False, "budget": None, "crossing": cause.crossing}
        return {"case": label, "reverse": False, "budget": None, "crossing": repr(cause)}
    return {"case": label, "reverse": False, "budget": None, "crossing": None}


def differential_catches() -> dict:
    """With TP_DIFFERENTIAL set and the engine broken on purpose (``tl.arange`` one too far), the
    launch raises EnginesDisagree; unbroken, it passes."""
    from triton.runtime import interpreter

    from grader.sandbox.batched.differential import EnginesDisagree
    os.environ["TP_DIFFERENTIAL"] = "all"
    said = {}
    builder = interpreter.InterpreterBuilder
    honest = builder.create_make_range
    for broken in (False, True):
        if broken:
            builder.create_make_range = lambda self, ty, start, stop: (
                honest(self, ty, start, stop) if lanes.current() is None else
                interpreter.TensorHandle(np.arange(start + 1, stop + 1, dtype=np.int32)[None], ty.scalar))
        args = CASES["rows_softmax"][2]()
        try:
            with Batched():
                K.rows_softmax[(30,)](*args)
            said[str(broken)] = "agreed"
        except Exception as exc:  # noqa: BLE001
            cause = exc
            while cause.__cause__ is not None:
                cause = cause.__cause__
            said[str(broken)] = f"{type(cause).__name__}: {cause}" if isinstance(cause, EnginesDisagree) else repr(cause)
        finally:
            builder.create_make_range = honest
    os.environ.pop("TP_DIFFERENTIAL")
    return {"case": "differential", "reverse": False, "budget": None, "said": said}


def check() -> int:
    """``--check``: one line per case that differs from the serial interpreter, and exit 1 if any
    does (CI runs it on each Triton it installs: the engine's reading of the interpreter's internals)."""
    differing = 0
    for name in CASES:
        for reverse in (False, True):
            run = compare(name, reverse)
            if not all(run["same"].values()):
                differing += 1
                print(f"{name}{' reversed' if reverse else ''}: {run['same']}")
    said = differential_catches()["said"]
    if said != {"False": "agreed", "True": said["True"]} or not said["True"].startswith("EnginesDisagree"):
        differing += 1
        print(f"the differential check: {said}")
    import triton
    print(f"triton {triton.__version__}: {2 * len(CASES)} runs of {len(CASES)} kernels, {differing} differ")
    return 1 if differing else 0


if __name__ == "__main__":
    if "--check" in sys.argv:
        raise SystemExit(check())
    names = [a for a in sys.argv[1:] if a in CASES] or list(CASES)
    for name in names:
        for reverse in (False, True):
            print(json.dumps(compare(name, reverse), default=str), flush=True)
    print(json.dumps(compare("rows_softmax", False, budget=8192), default=str), flush=True)
    print(json.dumps(compare("triangle_sums", False, budget=256), default=str), flush=True)
    for name in UNHOOKED:  # the watch of unwritten reads alone, as in a large case's first run
        print(json.dumps(compare(name, False, hooked=False), default=str), flush=True)
    print(json.dumps(differential_catches(), default=str), flush=True)
    print(json.dumps(fast_race(), default=str), flush=True)
    for setting in ("all", "0.5"):
        print(json.dumps(fast_race(setting), default=str), flush=True)
