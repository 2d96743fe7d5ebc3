"""Grading several puzzles: a small pool of worker processes, one thread driving each.

Workers are started before anything else, so their imports (torch, triton: about 1.5 s)
overlap with the grader's own. A worker serves many puzzles and cases in turn; only a crash
or a timeout costs a restart.

The pool here is the only one: ``grade_many`` (``--all``, several puzzles, a notebook's
``check()``) and ``batch.grade_class`` (a class, one student per task) both run their tasks
through :func:`run_pool`, and both grade a puzzle through :func:`grade_puzzle`, the one place
that picks the grader for a puzzle's kind.
"""
from __future__ import annotations

import queue
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Sequence, TypeVar

from .course import Course, PuzzleLoadError
from .options import Options
from .results import CheckResult, PuzzleResult, Report
from .isolation import Jail, worker_jail
from .worker_pool import SharedWorker, WorkerProcess

Task = TypeVar("Task")
Done = TypeVar("Done")


def run_pool(tasks: Sequence[Task], threads: int, work: Callable[[int, Task], Done],
             on_done: Callable[[Done], None] | None = None, stop: threading.Event | None = None) -> list[Done | None]:
    """``work(thread, task)`` for every task, on ``threads`` threads; the results keep the order
    of ``tasks``. ``thread`` (0 .. threads-1) says which thread runs the task, so that each can
    own a worker. ``on_done`` sees every result as it comes (a progress bar). An exception in
    ``work`` ends its thread (Python prints it) and leaves None in the task's place: a caller
    that must account for every task catches inside ``work``.

    With a ``stop`` event, Ctrl-C sets it instead of raising: the tasks under way finish, no
    other starts, and theirs stay None (the caller sees ``stop.is_set()``)."""
    results: list[Done | None] = [None] * len(tasks)
    todo: queue.Queue = queue.Queue()
    for item in enumerate(tasks):
        todo.put(item)

    def drive(thread: int) -> None:
        while stop is None or not stop.is_set():
            try:
                index, task = todo.get_nowait()
            except queue.Empty:
                return
            results[index] = work(thread, task)
            if on_done is not None:
                on_done(results[index])

    pool = [threading.Thread(target=drive, args=(n,), daemon=True) for n in range(max(1, threads))]
    for thread in pool:
        thread.start()
    try:
        for thread in pool:
            thread.join()
    except KeyboardInterrupt:
        if stop is None:
            raise
        stop.set()
        for thread in pool:
            thread.join()
    return results


@dataclass(frozen=True)
class Crew:
    """The workers one grading thread uses: its own; on a GPU an interpreter worker beside it,
    where every case also runs with each load and store checked (a GPU cannot see a stray load
    whose value is never used); and the compile checker, one for all threads."""

    worker: WorkerProcess
    bounds: WorkerProcess | None = None
    compiler: SharedWorker | None = None


def start_workers(options: Options, jail: Jail, count: int, now: bool = True) -> list[Crew]:
    """``count`` crews for ``options.device``, sharing the compile checker where the interpreter
    grades (device cpu, compile check on). ``now``: started at once, so that their imports
    overlap with the grader's; else each starts at its first request."""
    compiler = SharedWorker("compile", jail) if options.device == "cpu" and options.compile_check else None
    crews = [Crew(WorkerProcess(options.device, jail),
                  WorkerProcess("cpu", jail) if options.device == "cuda" and options.check_bounds else None, compiler)
             for _ in range(count)]
    for worker in _processes(crews) if now else ():
        worker.start()
    return crews


def _processes(crews: list[Crew]) -> list[WorkerProcess]:
    """Every worker process of ``crews``, each once."""
    found = []
    for crew in crews:
        for worker in (crew.worker, crew.bounds, crew.compiler.worker if crew.compiler else None):
            if worker is not None and worker not in found:
                found.append(worker)
    return found


def stop_workers(crews: list[Crew], wait: bool = True) -> None:
    """Close every worker (``wait``: let each finish and exit; else kill them at once)."""
    for worker in _processes(crews):
        worker.close() if wait else worker.terminate()


def grade_puzzle(course: Course, puzzle_id: str, path: Path, crew: Crew, options: Options) -> PuzzleResult:
    """One puzzle graded by the grader of its kind: an autograd Function's or a kernel's."""
    from .grade import PuzzleGrader  # imports torch: only once the workers are starting too
    from .grade_function import FunctionGrader
    kind = FunctionGrader if course.puzzle(puzzle_id).kind == "function" else PuzzleGrader
    return kind(course, puzzle_id, path, crew.worker, options, crew.compiler, crew.bounds).grade()


def grade_many(course: Course, targets: list[tuple[str, Path]], options: Options, jobs: int = 1,
               on_result=None) -> Report:
    """Grade ``(puzzle_id, kernel_file)`` pairs; results keep the order of ``targets``.

    A puzzle whose course file does not load (the learner broke the file the spec and cases
    come from) fails on its own, with the file, the line and the error; the rest are graded.
    """
    started = time.perf_counter()
    jobs = max(1, min(jobs, len(targets)))
    jail = worker_jail(course.root, [path for _, path in targets], options)
    crews = start_workers(options, jail, jobs)
    from . import grade, grade_function  # noqa: F401  (torch: while the workers import, before the threads)
    # Load every puzzle here, before the threads start (and while the workers import).
    broken = {pid: error for pid in dict.fromkeys(pid for pid, _ in targets)
              if (error := course.load_error(pid)) is not None}
    for puzzle_id, _ in targets:
        if puzzle_id not in broken:
            course.puzzle(puzzle_id)
    results: list[PuzzleResult | None] = [None] * len(targets)
    todo = []
    for index, (puzzle_id, path) in enumerate(targets):
        if puzzle_id in broken:
            results[index] = load_failure(course, puzzle_id, path, broken[puzzle_id], options)
            if on_result is not None:
                on_result(results[index])
        else:
            todo.append((index, puzzle_id, path))
    try:
        graded = run_pool(todo, jobs, lambda thread, task: grade_puzzle(course, task[1], task[2], crews[thread],
                                                                        options), on_result)
    finally:
        # Every puzzle's file broken: nothing to wait for while the workers start.
        stop_workers(crews, wait=bool(todo))
    for (index, _, _), result in zip(todo, graded):
        results[index] = result
    return Report(results=tuple(r for r in results if r is not None), seconds=time.perf_counter() - started)


def load_failure(course: Course, puzzle_id: str, path: Path, error: PuzzleLoadError, options: Options) -> PuzzleResult:
    """The failure of a puzzle whose course file does not load: no worker, no case run."""
    return PuzzleResult(puzzle=puzzle_id, title=course.title(puzzle_id), status="fail", source=str(path),
                        device=options.device, checks={"load": CheckResult(False, error.message, error.kind)},
                        message=error.message)
