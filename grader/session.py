"""Grading several puzzles: a small pool of worker processes, one thread driving each.

Workers are started before anything else, so their imports (torch, triton: about 1.5 s)
overlap with the grader's own. A worker serves many puzzles and cases in turn; only a crash
or a timeout costs a restart.
"""
from __future__ import annotations

import queue
import threading
import time
from pathlib import Path

from .course import Course, PuzzleLoadError
from .options import Options
from .results import CheckResult, PuzzleResult, Report
from .isolation import jail_for, use_sandbox
from .worker_pool import SharedWorker, WorkerProcess


def grade_many(course: Course, targets: list[tuple[str, Path]], options: Options, jobs: int = 1,
               on_result=None) -> Report:
    """Grade ``(puzzle_id, kernel_file)`` pairs; results keep the order of ``targets``.

    A puzzle whose course file does not load (the learner broke the file the spec and cases
    come from) fails on its own, with the file, the line and the error; the rest are graded.
    """
    started = time.perf_counter()
    jobs = max(1, min(jobs, len(targets)))
    jail = jail_for(course.root, [path for _, path in targets], sandbox=use_sandbox(options.sandbox),
                    memory_mb=options.memory_mb, cpu_seconds=options.cpu_seconds, library=options.library)
    workers = [WorkerProcess(options.device, jail) for _ in range(jobs)]
    compiler = SharedWorker("compile", jail) if options.device == "cpu" and options.compile_check else None
    for worker in workers + ([compiler] if compiler else []):
        worker.start()
    from .grade import PuzzleGrader  # imports torch: only once the workers are starting too
    from .grade_function import FunctionGrader
    # Load every puzzle here, before the threads start (and while the workers import).
    broken = {pid: error for pid in dict.fromkeys(pid for pid, _ in targets)
              if (error := course.load_error(pid)) is not None}
    kinds = {pid: FunctionGrader if course.puzzle(pid).kind == "function" else PuzzleGrader
             for pid, _ in targets if pid not in broken}
    results: list[PuzzleResult | None] = [None] * len(targets)
    todo: queue.Queue = queue.Queue()
    for index, (puzzle_id, path) in enumerate(targets):
        if puzzle_id in broken:
            results[index] = load_failure(course, puzzle_id, path, broken[puzzle_id], options)
            if on_result is not None:
                on_result(results[index])
        else:
            todo.put((index, (puzzle_id, path)))

    def drive(worker: WorkerProcess) -> None:
        while True:
            try:
                index, (puzzle_id, path) = todo.get_nowait()
            except queue.Empty:
                return
            result = kinds[puzzle_id](course, puzzle_id, path, worker, options, compiler).grade()
            results[index] = result
            if on_result is not None:
                on_result(result)

    threads = [threading.Thread(target=drive, args=(w,), daemon=True) for w in workers]
    try:
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
    finally:
        for worker in workers + ([compiler.worker] if compiler else []):
            if kinds:
                worker.close()
            else:  # every puzzle's file was broken: nothing to wait for while the worker starts
                worker.kill()
    return Report(results=tuple(r for r in results if r is not None), seconds=time.perf_counter() - started)


def load_failure(course: Course, puzzle_id: str, path: Path, error: PuzzleLoadError, options: Options) -> PuzzleResult:
    """The failure of a puzzle whose course file does not load: no worker, no case run."""
    return PuzzleResult(puzzle=puzzle_id, title=course.title(puzzle_id), status="fail", source=str(path),
                        device=options.device, checks={"load": CheckResult(False, error.message, error.kind)},
                        message=error.message)
