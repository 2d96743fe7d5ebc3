"""The subcommands of ``python -m grader``: notebooks, hint, progress, batch, selftest, release, doctor,
watch, serve.

Each parses its own arguments and calls the module that does the work.
"""
from __future__ import annotations

import argparse
import sys
from pathlib import Path

from grader.app.frontend import UsageProblem, course_at
from grader.course.loader import CourseError
from grader.judge.options import Options
from grader.judge.results import ExitCode


def notebooks_main(argv) -> int:
    parser = argparse.ArgumentParser(prog="python -m grader notebooks",
                                     description="Generate notebooks/ from puzzles/ (never edit them by hand).")
    parser.add_argument("--check", action="store_true", help="exit 1 if the notebooks are out of date")
    parser.add_argument("--root", type=Path)
    args = parser.parse_args(argv)
    from grader.app import notebook_build
    course = course_at(args.root)
    if args.check:
        stale = notebook_build.stale(course)
        if stale:
            print(f"out of date: {', '.join(stale)}; run `python -m grader notebooks`", file=sys.stderr)
            return ExitCode.FAILED
        print("notebooks are up to date")
        return ExitCode.OK
    for path in notebook_build.write(course):
        print(f"wrote {path.relative_to(course.root)}")
    return ExitCode.OK


def hint_main(argv) -> int:
    parser = argparse.ArgumentParser(prog="python -m grader hint",
                                     description="Show the next hint of a puzzle: one more each time.")
    parser.add_argument("puzzle", metavar="PUZZLE", help="a puzzle id, e.g. puzzle04 (or 4)")
    parser.add_argument("--root", type=Path, help="the course folder (default: found from here)")
    args = parser.parse_args(argv)
    from rich.console import Console

    from grader.app.learner import ProgressFile, next_hint, progress_file
    from grader.course.loader import normalise_id
    course = course_at(args.root)
    puzzle_id = normalise_id(args.puzzle)
    course.puzzle_file(puzzle_id)  # an unknown puzzle is a usage error
    from grader.report.text import show
    console = Console(highlight=False, soft_wrap=True)
    for line in next_hint(course, puzzle_id, ProgressFile(progress_file(course))).lines():
        show(line, console)  # code styled on a terminal, between its backticks elsewhere
    return ExitCode.OK


def progress_main(argv) -> int:
    parser = argparse.ArgumentParser(prog="python -m grader progress",
                                     description="Show the progress saved by grading, from the command line "
                                                 "or the notebooks' checks, and the hints seen.")
    parser.add_argument("--file", type=Path, help="the progress file (default: the course's, in notebooks/)")
    parser.add_argument("--root", type=Path, help="the course folder (default: found from here)")
    args = parser.parse_args(argv)
    from grader.app.learner import PROGRESS_FILE, progress_file, saved_progress
    if args.file or args.root:
        candidates = [args.file or progress_file(course_at(args.root))]
    else:
        try:
            candidates = [progress_file(course_at(None))]
        except CourseError:  # outside a course: a notebook's file, here or in notebooks/
            candidates = [Path.cwd() / PROGRESS_FILE, Path.cwd() / "notebooks" / PROGRESS_FILE]
    print("\n".join(saved_progress(candidates)))
    return ExitCode.OK


# How a batch ends (docs/class-report.md; tests/test_batch_exit_codes.py): a student's grades never
# set it, so a script can tell "the class was graded" from "the batch did not run"; the grader's own
# bug always sets it, so that nobody takes a grade it broke for a grade.
BATCH_EXIT_CODES = """exit status:
  0    every student graded and the reports written, whatever their grades
  1    a puzzle file of the course itself does not load (the file and line are named), or
       the output was piped into a reader that stopped
  2    a usage problem: SUBMISSIONS is not a folder, no sandbox (bwrap) without --no-sandbox,
       --variants without --seed-secret, --resume of a folder
       without a readable results.json of this course, --address without --engine ray
  3    the grader itself broke: while grading a student (the batch goes on, the reports
       are written and that student's row says where), or outside: please report it
  130  stopped by Ctrl-C; once grading has begun, the reports are still written, the
       students not reached marked "not graded": finish with --resume OUT"""


def batch_main(argv) -> int:
    parser = argparse.ArgumentParser(prog="python -m grader batch",
                                     description="Grade a class: every entry of SUBMISSIONS is one student.",
                                     epilog=BATCH_EXIT_CODES, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("submissions", type=Path, help="a folder of student folders, .py files or notebooks")
    parser.add_argument("--out", type=Path, default=Path("grading"), help="where the reports go (default: grading/)")
    parser.add_argument("--jobs", type=int, default=Options.JOBS, help="students graded at once")
    parser.add_argument("--timeout", type=float, default=Options.timeout, help="CPU seconds per case")
    parser.add_argument("--memory-mb", type=int, default=Options.BATCH_MEMORY_MB,
                        help="address-space cap per worker (MiB)")
    parser.add_argument("--seed-secret", type=int, default=0, help="mixed into every input seed")
    parser.add_argument("--variants", action="store_true",
                        help="grade each student with their own values of the puzzles' free constants, drawn from "
                             "--seed-secret and their name: for a class handed `release --seed-secret` copies "
                             "(docs/variants.md)")
    parser.add_argument("--format", choices=("standard", "gradescope"), default="standard",
                        help="gradescope: also one results.json per student")
    parser.add_argument("--device", choices=("cpu", "cuda"), default=Options.BATCH_DEVICE)
    parser.add_argument("--no-sandbox", action="store_true",
                        help="grade without bubblewrap (process group and rlimits only): "
                             "for trusted code, or where bwrap cannot run")
    parser.add_argument("--engine", choices=("local", "ray"), default="local",
                        help="local: threads on this machine; ray: one Ray task per student (the [cluster] extra)")
    parser.add_argument("--address", help="with --engine ray: the cluster to join (default: a local Ray runtime)")
    parser.add_argument("--resume", type=Path, metavar="DIR",
                        help="keep the students an earlier batch graded into DIR; grade only the others")
    parser.add_argument("--no-similarity", action="store_true",
                        help="do not compare the students' code for similar submissions (similarity.json)")
    parser.add_argument("--root", type=Path)
    args = parser.parse_args(argv)
    course = course_at(args.root)
    if args.variants and not args.seed_secret:
        raise UsageProblem("--variants draws each student's values from the secret: add --seed-secret N, the one "
                           "you gave release")
    if args.address and args.engine != "ray":
        raise UsageProblem("--address names a Ray cluster: add --engine ray")
    if args.engine == "ray":
        import importlib.util
        if importlib.util.find_spec("ray") is None:
            raise UsageProblem('--engine ray needs Ray: pip install -e ".[cluster]" -c constraints.txt')
    done = {}
    if args.resume is not None:
        from grader.judge.batch_resume import ResumeError, finished
        try:
            done = finished(args.resume, course.ids)
        except ResumeError as exc:
            raise UsageProblem(str(exc)) from None
    from grader.judge.session import sandbox_missing
    if args.no_sandbox:
        print("warning: --no-sandbox: submissions run with your rights; they can read your files, "
              "reach the network and outlive the batch. Use it only for code you trust.", file=sys.stderr)
    elif (missing := sandbox_missing()) is not None:
        raise UsageProblem(f"batch grading runs untrusted code, and {missing}")
    if not args.submissions.is_dir():
        raise UsageProblem(f"{args.submissions} is not a folder of submissions")
    import time

    from grader.judge.classroom import grade_class
    from grader.report.batch_files import summary, write_reports
    from grader.report.progress import Progress
    started = time.perf_counter()
    options = Options(device=args.device, timeout=args.timeout, secret=args.seed_secret, variants=args.variants,
                      sandbox="off" if args.no_sandbox else "on")
    bars: list[Progress] = []  # made once intake has counted the students to grade
    try:
        run = grade_class(course, args.submissions, options, jobs=args.jobs, memory_mb=args.memory_mb,
                          engine=args.engine, address=args.address, done=done,
                          on_start=lambda total: bars.append(Progress(total)),
                          on_result=lambda r: bars[0].step(r.student, f"{r.total}/{len(course.ids)}"),
                          similarity=not args.no_similarity)
    finally:
        for bar in bars:
            bar.close()
    seconds = time.perf_counter() - started
    write_reports(run.results, course.ids, args.out, seconds, gradescope_files=args.format == "gradescope",
                  similarity=run.similarity)
    print(summary(run.results, course.ids, seconds, args.out, run.similarity))
    if run.stopped:  # as a shell reports Ctrl-C; the reports name the students left "not graded"
        print(f"stopped: the students not graded are marked so; finish with --resume {args.out}", file=sys.stderr)
        return ExitCode.INTERRUPTED
    if broke := [r.id_as_submitted for r in run.results if r.grader_broke]:
        print(f"the grader itself broke while grading {len(broke)} of {len(run.results)} students "
              f"({', '.join(broke[:5])}{', ...' if len(broke) > 5 else ''}): their rows in {args.out} say where, "
              f"and their grades there are not to be trusted. Please report it.", file=sys.stderr)
        return ExitCode.INTERNAL_ERROR
    return ExitCode.OK


def selftest_main(argv) -> int:
    parser = argparse.ArgumentParser(prog="python -m grader selftest",
                                     description="Solutions must pass; the wrong-kernel corpus must fail as declared.")
    parser.add_argument("--jobs", type=int, default=Options.JOBS)
    parser.add_argument("--root", type=Path)
    args = parser.parse_args(argv)
    course = course_at(args.root)
    from grader.app.learner import instructor_only, is_release
    if is_release(course):
        raise UsageProblem(instructor_only('selftest'))
    from grader.app import selftest
    rows = selftest.run(course, Options(timeout=Options.SELFTEST_TIMEOUT), jobs=args.jobs)
    print(selftest.render(rows))
    return 0 if all(r.ok for r in rows) else 1


def release_main(argv) -> int:
    parser = argparse.ArgumentParser(prog="python -m grader release",
                                     description="Write the learner's copy of the course, without solutions.")
    parser.add_argument("out", type=Path)
    parser.add_argument("--seed-secret", type=int, default=0,
                        help="with --student or --roster: the secret batch will grade with; each student's "
                             "puzzles state their own values of the free constants (the secret is not written)")
    who = parser.add_mutually_exclusive_group()
    who.add_argument("--student", metavar="ID", help="one student's release: ID is their submission's name in batch")
    who.add_argument("--roster", type=Path, metavar="FILE",
                     help="one release per student, OUT/ID/: a file of ids, one a line (or a CSV's first column)")
    parser.add_argument("--root", type=Path)
    args = parser.parse_args(argv)
    from grader.app.learner import instructor_only, is_release
    from grader.app.release import LeakError, read_roster, release, release_class, students_variant
    course = course_at(args.root)
    if is_release(course):
        raise UsageProblem(instructor_only('release'))
    if (args.student is not None or args.roster is not None) != bool(args.seed_secret):
        raise UsageProblem("a release per student needs both --seed-secret N (not 0) and --student ID or --roster "
                           "FILE: the secret is the one you will give batch --seed-secret N --variants")
    try:
        if args.roster is not None:
            students = read_roster(args.roster)
            folders = release_class(course, args.out, args.seed_secret, students)
            renamed = [f"{s} -> {f.name}/" for s, f in zip(students, folders) if f.name != s]
            print(f"wrote {len(students)} releases to {args.out}/ID/ (no solutions), each stating its student's "
                  f"values; grade them with batch --seed-secret {args.seed_secret} --variants"
                  + (f"; folders of ids that are not folder names: {', '.join(renamed)}" if renamed else ""))
            return ExitCode.OK
        variant = students_variant(course, args.seed_secret, args.student) if args.student is not None else None
        written = release(course, args.out, variant)
    except (FileExistsError, LeakError, ValueError, OSError) as exc:
        raise UsageProblem(str(exc)) from None
    whose = f" for {args.student}" if args.student is not None else ""
    print(f"wrote {', '.join(p.name for p in written)} to {args.out}/{whose} (no solutions)")
    return ExitCode.OK


def doctor_main(argv) -> int:
    parser = argparse.ArgumentParser(prog="python -m grader doctor",
                                     description="Check the installed versions and grade puzzle 1: "
                                                 "can this machine be trusted to grade?")
    parser.add_argument("--json", action="store_true", help="print one JSON document instead of text")
    parser.add_argument("--root", type=Path, help="the course folder (default: found from here)")
    args = parser.parse_args(argv)
    from grader.app import doctor
    course = course_at(args.root) if args.root else _course_here()
    report = doctor.checkup(course)
    if args.json:
        print(doctor.render_json(report))
    else:
        from rich.console import Console
        doctor.render_text(report, Console(highlight=False))
    return report.exit_code


def watch_main(argv) -> int:
    parser = argparse.ArgumentParser(prog="python -m grader watch",
                                     description="Grade one puzzle again on every save of its file, with warm workers; "
                                                 "plain `python -m grader` commands use them too while it runs. "
                                                 "Ctrl-C stops.")
    parser.add_argument("target", metavar="PUZZLE|FILE", help="a puzzle id (puzzle07 or 7), or a .py file")
    parser.add_argument("--file", type=Path, help="with a puzzle id: grade the kernel in this .py file")
    parser.add_argument("--device", choices=("auto", "cpu", "cuda"), default=Options.ASKED_DEVICE)
    parser.add_argument("--timeout", type=float, default=Options.timeout, help="CPU seconds allowed per case")
    parser.add_argument("--no-compile-check", action="store_true",
                        help="skip compiling interpreter-graded kernels for a GPU target")
    parser.add_argument("--interval", type=float, default=0.3, help="seconds between looks at the file")
    parser.add_argument("--no-serve", action="store_true", help="grade for this watch only: plain commands start fresh")
    parser.add_argument("--verbose", "-v", action="store_true", help="show every failing case and printed output")
    parser.add_argument("--root", type=Path, help="the course folder (default: found from here)")
    args = parser.parse_args(argv)
    from grader.app.frontend import pick_device
    from grader.app.watch import run, target
    course = course_at(args.root)
    puzzle, path, own = target(course, args.target, args.file)
    if args.timeout <= 0 or args.interval <= 0:
        raise UsageProblem("--timeout and --interval must be positive")
    options = Options(device=pick_device(args.device), timeout=args.timeout, compile_check=not args.no_compile_check)
    return run(course, puzzle, path, options, interval=args.interval, serve=not args.no_serve, record=own,
               verbose=args.verbose)


def serve_main(argv) -> int:
    parser = argparse.ArgumentParser(prog="python -m grader serve",
                                     description="Keep warm workers for this course's puzzles/ files: plain "
                                                 "`python -m grader PUZZLE` commands with the same options grade "
                                                 "through them. Ctrl-C stops.")
    parser.add_argument("--device", choices=("auto", "cpu", "cuda"), default=Options.ASKED_DEVICE)
    parser.add_argument("--timeout", type=float, default=Options.timeout, help="CPU seconds allowed per case")
    parser.add_argument("--no-compile-check", action="store_true",
                        help="skip compiling interpreter-graded kernels for a GPU target")
    parser.add_argument("--root", type=Path, help="the course folder (default: found from here)")
    args = parser.parse_args(argv)
    from grader.app.frontend import pick_device
    from grader.app.warm_server import serve
    if args.timeout <= 0:
        raise UsageProblem("--timeout must be positive")
    course = course_at(args.root)
    return serve(course, Options(device=pick_device(args.device), timeout=args.timeout,
                                 compile_check=not args.no_compile_check))


def _course_here():
    """The doctor also runs outside a course (versions are still worth reading): None there."""
    try:
        return course_at(None)
    except CourseError:
        return None


SUBCOMMANDS = {"notebooks": notebooks_main, "hint": hint_main, "progress": progress_main, "batch": batch_main,
               "selftest": selftest_main, "release": release_main, "doctor": doctor_main,
               "watch": watch_main, "serve": serve_main}
