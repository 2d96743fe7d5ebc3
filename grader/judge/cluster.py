"""Batch grading on a Ray cluster: ``python -m grader batch SUBMISSIONS --out DIR --engine ray``.

Only the scheduling changes. Each student is one Ray task that calls the local engine's own
grading of a student (:func:`grader.judge.classroom.grade_student`, handed in by the caller: Ray
sends it by name) on the node it lands on: the same sandbox, limits and checks, the same result
objects. What travels:

* **the course** (its ``puzzles/`` files) is put in Ray's object store once per batch; each
  node writes it to a folder named by its content hash the first time a task there needs it,
  and every later task on that node reads that folder;
* **a student** travels as the bytes of their sanitised files (intake ran on the driver);
* **a result** comes back as a :class:`grader.judge.results.StudentResult`, and the driver writes
  every report, as the local engine does.

Faults: Ray re-runs a task whose worker process or node died, up to ``RETRIES`` times; a
student whose task still fails is reported with the reason, never dropped. The grader itself
(and torch, triton) must be installed on every node, as for the local engine.
"""
from __future__ import annotations

import hashlib
import os
import tempfile
from pathlib import Path
from typing import Callable

from grader.course.loader import Course
from grader.judge.batch_resume import not_graded
from grader.judge.options import Options
from grader.judge.results import StudentResult
from grader.source.intake import Student

RETRIES = 3  # re-runs of a task whose worker or node died (Ray's max_retries)


def course_bundle(course: Course) -> dict[str, bytes]:
    """The course files a grading node needs, by path relative to the course root."""
    folder = course.root / "puzzles"
    return {f"puzzles/{p.name}": p.read_bytes() for p in sorted(folder.iterdir())
            if p.is_file() and p.suffix == ".py"}


def student_bundle(student: Student) -> dict[str, bytes]:
    """A student's sanitised files, by path relative to their folder."""
    return {str(p.relative_to(student.folder)): p.read_bytes()
            for p in sorted(student.folder.rglob("*")) if p.is_file()}


def materialise_course(bundle: dict[str, bytes], base: Path | None = None) -> Path:
    """The course on this node: one folder per distinct course, written once (atomically)."""
    digest = hashlib.sha256()
    for name in sorted(bundle):
        digest.update(name.encode() + b"\0" + bundle[name] + b"\0")
    root = (base or Path(tempfile.gettempdir())) / f"triton-puzzles-course-{digest.hexdigest()[:16]}"
    if not root.is_dir():
        staging = Path(tempfile.mkdtemp(prefix=root.name + "-", dir=root.parent))
        for name, data in bundle.items():
            (staging / name).parent.mkdir(parents=True, exist_ok=True)
            (staging / name).write_bytes(data)
        try:
            os.rename(staging, root)  # another task on this node may have won the race: fine
        except OSError:
            import shutil
            shutil.rmtree(staging, ignore_errors=True)
    return root


GradeStudent = Callable[[Course, Student, Options, int], StudentResult]


def grade_bundle(grade_student: GradeStudent, course_files: dict[str, bytes], name: str, source: str,
                 files: dict[str, bytes], puzzle_files: dict[str, str], problems: tuple[str, ...],
                 options: Options, memory_mb: int) -> StudentResult:
    """One student, on whichever node runs this: what a Ray task executes."""
    course = Course(materialise_course(course_files))
    with tempfile.TemporaryDirectory(prefix="triton-puzzles-student-") as work:
        folder = Path(work) / name
        for rel, data in files.items():
            (folder / rel).parent.mkdir(parents=True, exist_ok=True)
            (folder / rel).write_bytes(data)
        student = Student(name=name, source=Path(source), folder=folder,
                          files={pid: folder / rel for pid, rel in puzzle_files.items()}, problems=problems)
        return grade_student(course, student, options, memory_mb)


def grade_class_on_ray(course: Course, students: list[Student], options: Options, memory_mb: int,
                       grade_student: GradeStudent, address: str | None = None,
                       on_result: Callable[[StudentResult], None] | None = None,
                       num_gpus: float = 0.0) -> tuple[list[StudentResult | None], bool]:
    """Every student, one Ray task each: (results in the students' order, stopped by Ctrl-C).

    Ctrl-C cancels the tasks still queued or running; their students stay None, and the
    caller reports them "not graded", so that ``--resume`` picks them up.
    """
    import ray

    started_here = not ray.is_initialized()
    if started_here:
        _start(ray, address)
    results: list[StudentResult | None] = [None] * len(students)
    try:
        course_ref = ray.put(course_bundle(course))
        task = ray.remote(grade_bundle).options(num_cpus=1, num_gpus=num_gpus, max_retries=RETRIES,
                                                retry_exceptions=False, name="grade-student")
        pending = {}
        for index, student in enumerate(students):
            puzzle_files = {pid: str(path.relative_to(student.folder)) for pid, path in student.files.items()}
            ref = task.remote(grade_student, course_ref, student.name, str(student.source), student_bundle(student),
                              puzzle_files,
                              student.problems, options, memory_mb)
            pending[ref] = index
        try:
            while pending:
                done, _ = ray.wait(list(pending), num_returns=1, timeout=0.5)  # timed: Ctrl-C gets through
                if not done:
                    continue
                index = pending.pop(done[0])
                try:
                    results[index] = ray.get(done[0])
                except ray.exceptions.RayError as exc:  # retries spent, or a grader bug in the task
                    student = students[index]
                    results[index] = not_graded(student.name, student.problems, _reason(exc))
                if on_result is not None:
                    on_result(results[index])
        except KeyboardInterrupt:
            for ref in pending:
                ray.cancel(ref, force=True)
            return results, True
        return results, False
    finally:
        if started_here:
            ray.shutdown()


def _start(ray, address: str | None, attempts: int = 3) -> None:
    """Join the cluster at ``address``, or start a local Ray runtime on this machine's CPUs.
    A local runtime's start can time out on a loaded machine (its agent has a fixed 15 s to
    come up): that is tried again, the rest is not."""
    for attempt in range(1, attempts + 1):
        try:
            # No dashboard, and the workers' output stays in their logs: the driver draws progress.
            ray.init(address=address, include_dashboard=False, log_to_driver=False,
                     **({} if address else {"num_cpus": os.cpu_count()}))
            return
        except Exception as exc:
            if address or attempt == attempts or "timed out during startup" not in str(exc):
                raise
            ray.shutdown()


def _reason(exc: Exception) -> str:
    first = str(exc).strip().splitlines()[0] if str(exc).strip() else ""
    return f"the grading task failed after {RETRIES} retries ({type(exc).__name__}: {first[:200]})"


def gpus_per_task(options: Options) -> float:
    """GPUs a task asks for: one when grading on CUDA, none in the interpreter."""
    return 1.0 if options.device == "cuda" else 0.0
