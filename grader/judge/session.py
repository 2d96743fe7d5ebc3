"""Grading several puzzles: a small pool of worker processes, one thread driving each.

Workers are started before anything else, so their imports (torch, triton: about 1.5 s)
overlap with the grader's own. A worker serves many puzzles and cases in turn; only a crash
or a timeout costs a restart.

``grade_many`` (``--all``, several puzzles, a notebook's ``check()``) and
``classroom.grade_class`` (a class, one student per task) both run their tasks through the one
pool of threads (:mod:`grader.judge.thread_pool`), and both grade a puzzle through
:func:`grade_puzzle`, the one place that asks a puzzle's kind (:mod:`grader.judge.kinds`) for its
runner: a class opens a :class:`Grading` per student.
"""
from __future__ import annotations

import time
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Sequence

from grader.channel.isolation import Jail, worker_jail
from grader.channel.wire import CoreWarmStep
from grader.channel.worker_pool import CompileChecker, WorkerProcess
from grader.course.kinds import package_warm_steps
from grader.course.loader import Course, LoadFailure, PuzzleLoadError
from grader.judge.kinds import KINDS, kind_of
from grader.judge.options import Options
from grader.judge.results import CheckName, CheckResult, PuzzleResult, Report, Status
from grader.judge.thread_pool import run_pool


@dataclass(frozen=True)
class Crew:
    """The workers one grading thread uses: its own; on a GPU an interpreter worker beside it,
    where every case also runs with each load and store checked (a GPU cannot see a stray load
    whose value is never used); in the interpreter, its compile checker."""

    worker: WorkerProcess
    bounds: WorkerProcess | None = None
    compiler: CompileChecker | None = None


def start_workers(options: Options, jail: Jail, count: int, now: bool = True,
                  compile_warm: frozenset[str] = frozenset()) -> list[Crew]:
    """``count`` crews for ``options.device``, each with a compile checker where the interpreter
    grades (device cpu, compile check on), whose zygotes take the ``compile_warm`` steps before
    they are ready. ``now``: started at once, so that their imports overlap with the grader's;
    else each starts at its first request."""
    checks = options.device == "cpu" and options.compile_check
    # A compile checker per thread: each puzzle's check runs beside its cases, and a thread never
    # waits for another's compile (on 2 cores, one checker for two threads left a core idle).
    crews = [Crew(WorkerProcess(options.device, jail),
                  WorkerProcess("cpu", jail) if options.device == "cuda" and options.check_bounds else None,
                  CompileChecker("compile", jail) if checks else None)
             for _ in range(count)]
    # A kind's package (grader.course.kinds: helion): its import is seconds, taken by the interpreter's
    # zygote as it starts, beside the grader's own start; a compile checker's fork asks for it where
    # that kind's Triton needs it.
    packages = compile_warm & set(package_warm_steps().values())
    for crew in crews:
        if crew.compiler is not None:
            crew.compiler.worker.warm = compile_warm - packages
        if packages and crew.worker.device == "cpu":
            crew.worker.warm = frozenset(packages)
    for worker in _processes(crews) if now else ():
        worker.start()
    return crews


def sandbox_missing() -> str | None:
    """Why submissions could not run in the bubblewrap sandbox here, or None where they can."""
    from grader.channel.isolation import SandboxUnavailable, use_sandbox
    try:
        use_sandbox("on")
    except SandboxUnavailable as exc:
        return str(exc)
    return None


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


def grade_puzzle(course: Course, puzzle_id: str, path: Path, crew: Crew, options: Options,
                 on_case=None) -> PuzzleResult:
    """One puzzle graded through the life cycle (grader.judge.grade), with its kind's runner and checks.
    ``on_case(puzzle_id, CaseResult)`` sees each case as soon as it is judged."""
    from grader.judge.grade import PuzzleGrader
    kind = kind_of(course.puzzle(puzzle_id))
    try:
        made = PuzzleGrader(course, puzzle_id, path, crew.worker, options, crew.compiler, crew.bounds, on_case,
                            kind=kind)
    except Exception as exc:  # noqa: BLE001 (the grader's own bug before grading began: this puzzle's
        # result says so; raised here, it would end the pool's thread and leave the puzzle out of the report)
        return PuzzleResult(puzzle=puzzle_id, title=course.title(puzzle_id), status=Status.ERROR, source=str(path),
                            device=options.device, message=f"grader error: {type(exc).__name__}: {exc}")
    return made.grade()


class Grading:
    """One grading context: the jail, each thread's workers and compile checker, and their end.

    ``files`` are what its workers may read (their folders, and the course's ``puzzles/``).
    Grade through :meth:`grade` as often as wanted: every puzzle gets fresh workers, forked from
    zygotes that stay warm, and a compile checker that remembers what it compiled. A notebook
    keeps one open across its checks; a command opens one and closes it when done."""

    def __init__(self, course: Course, files: Sequence[Path], options: Options, jobs: int = 1,
                 now: bool = True, kernels: Sequence[Path] | None = None) -> None:
        """``kernels``: the files to be graded, where known beyond ``files`` (a student's)."""
        self.course, self.options, self.jobs = course, options, max(1, jobs)
        self.jail = worker_jail(course.root, list(files), options)
        self.crews = start_workers(options, self.jail, self.jobs, now, _compile_warm(kernels or files))
        self.used = False  # whether any worker was asked anything: a context that never was ends at once
        self.references: dict[Path | None, WorkerProcess] = {}  # solution (None: the learner's) -> its tracer
        self.compilers: dict[Path | None, WorkerProcess] = {}   # likewise, compile workers (--perf)

    def worker(self, thread: int = 0) -> WorkerProcess:
        """The worker of ``thread``'s crew, for work other than grading (``--bench``)."""
        self.used = True
        return self.crews[thread].worker

    def tracer(self, thread: int = 0) -> WorkerProcess:
        """An interpreter worker of ``thread``'s crew, which records every access (a picture):
        the crew's own worker in the interpreter, its bounds checker beside a GPU."""
        self.used = True
        crew = self.crews[thread]
        if crew.worker.device == "cpu" or crew.bounds is not None:
            return crew.worker if crew.worker.device == "cpu" else crew.bounds
        if None not in self.references:  # a GPU crew without a bounds checker: one of the same jail
            self.references[None] = WorkerProcess("cpu", self.jail)
        return self.references[None]

    def reference(self, solution: Path) -> WorkerProcess:
        """An interpreter worker in a jail of its own that reads the course's ``solution`` (the
        learner's workers never see ``solutions/``): a picture's reference column. Kept, and
        ended with this context."""
        solution = Path(solution).resolve()
        if solution not in self.references:
            self.references[solution] = WorkerProcess("cpu", worker_jail(self.course.root, [solution]))
        return self.references[solution]

    def compiler(self, solution: Path | None = None) -> WorkerProcess:
        """A compile worker (sm_90, no GPU needed) that reads the learner's files, or with
        ``solution`` one in a jail that reads that solution only: ``--perf``'s registers and
        spills. Kept, and ended with this context."""
        self.used = True
        key = None if solution is None else Path(solution).resolve()
        if key not in self.compilers:
            jail = self.jail if key is None else worker_jail(self.course.root, [key])
            self.compilers[key] = WorkerProcess("compile", jail)
        return self.compilers[key]

    def grade(self, targets: list[tuple[str, Path]], on_result=None, on_case=None) -> Report:
        """Grade ``(puzzle_id, kernel_file)`` pairs; results keep the order of ``targets``.
        ``on_result`` sees each puzzle's result, ``on_case`` each case's, as soon as known.

        A puzzle whose course file does not load (the learner broke the file the spec and cases
        come from) fails on its own, with the file, the line and the error; the rest are graded.
        """
        started = time.perf_counter()
        course, options = self.course, self.options
        for kind in KINDS.values():  # each runner's imports (torch): while the workers import, before the threads
            kind.runner(), kind.checks()
        from grader.judge import grade  # noqa: F401 (the life cycle, imported here rather than in a thread)
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
        self.used = self.used or bool(todo)
        threads = min(self.jobs, len(todo))
        # The longest first (by the kind's order: autograd puzzles; then the later tracks): no thread
        # is left alone with a long puzzle at the end. Results keep the order of ``targets`` all the same.
        todo.sort(key=lambda task: (kind_of(course.puzzle(task[1])).order, -task[0]))
        graded = run_pool(todo, threads, lambda thread, task: grade_puzzle(course, task[1], task[2], self.crews[thread],
                                                                           options, on_case), on_result)
        for (index, _, _), result in zip(todo, graded):
            results[index] = result
        return Report(results=tuple(r for r in results if r is not None), seconds=time.perf_counter() - started)

    def serves(self, files: Sequence[Path]) -> bool:
        """Whether workers grading ``files`` would be this context's: the same jail (what they may
        read, their sandbox and caps). A kept context grades only what a fresh one would read alike."""
        return worker_jail(self.course.root, list(files), self.options) == self.jail

    def forget_compiled(self) -> None:
        """Drop the compile checkers' remembered replies: they are keyed by the kernel file's
        digest alone, and a module it imports may have changed since."""
        for crew in self.crews:
            if crew.compiler is not None:
                crew.compiler.verdicts.clear()

    def close(self, wait: bool = True) -> None:
        """End every worker: let them finish and exit; a context never used, or closed with
        ``wait=False``, is killed at once (nothing to wait for while its workers start)."""
        stop_workers(self.crews, wait=wait and self.used)
        for worker in (*self.references.values(), *self.compilers.values()):
            worker.close() if wait else worker.terminate()
        self.references.clear()
        self.compilers.clear()

    def __enter__(self) -> "Grading":
        return self

    def __exit__(self, *exc) -> None:
        self.close()


def _compile_warm(files: Sequence[Path]) -> frozenset[str]:
    """What the zygotes should import before they are ready: torch in the compile checkers', if a
    file to be graded imports it (a learner's puzzle file does; a solution does not); a kind's
    package in the interpreter's, if one imports it (a Helion puzzle's file imports helion)."""
    from grader.source.source_lines import imports_package, imports_torch
    warm = set()
    for path in files:
        try:
            text = Path(path).read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError):
            continue
        warm |= {CoreWarmStep.TORCH} if imports_torch(text) else set()
        warm |= {step for package, step in package_warm_steps().items() if imports_package(text, package)}
    return frozenset(warm)


def grade_many(course: Course, targets: list[tuple[str, Path]], options: Options, jobs: int = 1,
               on_result=None, on_case=None) -> Report:
    """Grade ``(puzzle_id, kernel_file)`` pairs in a context of their own (see :class:`Grading`)."""
    started = time.perf_counter()
    with Grading(course, [path for _, path in targets], options, min(jobs, max(1, len(targets)))) as grading:
        report = grading.grade(targets, on_result, on_case)
    return replace(report, seconds=time.perf_counter() - started)


def load_failure(course: Course, puzzle_id: str, path: Path, error: PuzzleLoadError, options: Options) -> PuzzleResult:
    """The failure of a puzzle whose course file does not load: no worker, no case run."""
    if error.kind == LoadFailure.UNSUPPORTED:  # its track's package is not installed: not the learner's failure
        return PuzzleResult(puzzle=puzzle_id, title=course.title(puzzle_id), status=Status.UNSUPPORTED,
                            source=str(path), device=options.device, message=error.message)
    return PuzzleResult(puzzle=puzzle_id, title=course.title(puzzle_id), status=Status.FAIL, source=str(path),
                        device=options.device, checks={CheckName.LOAD: CheckResult(False, error.message, error.kind)},
                        message=error.message)
