"""``python -m grader``: parse the command line, then grade and render through the modules
that do the work: :mod:`grader.app.targets` (what to grade), :mod:`grader.app.frontend` (the course,
the device), :mod:`grader.judge.session` (grading) and :mod:`grader.report` (rendering)."""
from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from grader.app.frontend import USAGE_ERROR, UsageProblem, course_at, has_cuda, pick_device, run_command, usage_error  # noqa: F401  (USAGE_ERROR: for callers)
from grader.app.targets import Target, resolve
from grader.course.loader import Course, PuzzleLoadError
from grader.judge.failures import FailureKind
from grader.judge.options import Options
from grader.judge.results import ExitCode, Status
from grader.report.status_words import status_words

FAIL_MARK = status_words(Status.FAIL).mark  # what starts a failure's line, as the text report marks it

def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="python -m grader",
        description="Grade Triton puzzle kernels against their PyTorch specs.",
        epilog="examples:\n  python -m grader puzzle01\n  python -m grader --all --solutions\n"
               "  python -m grader puzzle07 --file my_kernels.py --json\n"
               "  python -m grader notebooks [--check]     generate notebooks/ from puzzles/\n"
               "  python -m grader hint PUZZLE             the puzzle's next hint, one more each time\n"
               "  python -m grader progress                what grading and the notebooks' checks saved\n"
               "  python -m grader batch SUBMISSIONS       grade a class (report.html, grades.csv, results.json, ...)\n"
               "  python -m grader selftest                solutions pass, wrong kernels fail as declared\n"
               "  python -m grader release OUT_DIR         the learner's copy, without solutions\n"
               "  python -m grader doctor [--json]         check versions and grade puzzle 1: is this setup sound?\n"
               "  python -m grader watch PUZZLE|FILE       grade again on every save, with warm workers\n"
               "  python -m grader serve                   keep warm workers for plain commands (Ctrl-C stops)",
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("puzzles", nargs="*", metavar="PUZZLE", help="puzzle ids, e.g. puzzle07 (or 7)")
    parser.add_argument("--all", action="store_true", help="grade every puzzle")
    parser.add_argument("--solutions", action="store_true", help="grade the reference solutions in solutions/")
    parser.add_argument("--file", type=Path, help="grade the kernels in this .py file, found by kernel name")
    parser.add_argument("--json", action="store_true", help="print one JSON document instead of text")
    parser.add_argument("--device", choices=("auto", "cpu", "cuda"), default=Options.ASKED_DEVICE,
                        help="cuda runs on the GPU; cpu runs the Triton interpreter (default: cuda if available)")
    parser.add_argument("--timeout", type=float, default=Options.timeout,
                        help="CPU seconds allowed per case (default %(default)g)")
    parser.add_argument("--jobs", type=int, default=Options.JOBS,
                        help="worker processes grading in parallel (default: 2)")
    parser.add_argument("--no-bounds-check", action="store_true", help=argparse.SUPPRESS)  # to measure its cost
    parser.add_argument("--no-compile-check", action="store_true",
                        help="skip compiling interpreter-graded kernels for a GPU target")
    parser.add_argument("--viz", type=Path, metavar="PATH",
                        help="also draw which elements each program read and wrote (PNG or SVG), "
                             "yours beside the reference, for one case")
    parser.add_argument("--viz-case", metavar="NAME",
                        help="the case to draw (default: the first failing case, else the classic one)")
    parser.add_argument("--triton-viz", action="store_true",
                        help="trace one case (as --viz-case picks) with triton-viz and serve its 3-D viewer "
                             "on 127.0.0.1 until Ctrl-C (needs the [viz] extra)")
    parser.add_argument("--bench", action="store_true",
                        help="time the kernel on the GPU against the device's copy bandwidth and PyTorch")
    parser.add_argument("--plot", type=Path, metavar="PATH", help="with --bench: save a plot of the size sweep")
    parser.add_argument("--perf", action="store_true",
                        help="estimate the kernel's time on an H100, with no GPU: its memory traffic, "
                             "coalescing, FLOPs, registers and occupancy, beside the reference's")
    parser.add_argument("--root", type=Path, help="the course folder (default: found from here)")
    parser.add_argument("--fresh", action="store_true",
                        help="grade in fresh workers even while a watch keeps warm ones for this course")
    parser.add_argument("--verbose", "-v", action="store_true",
                        help="show every failing case and printed output, and whether a watch's warm workers graded")
    return parser


def bench_main(args, course: Course, targets: list[Target]) -> int:
    if len(targets) != 1:
        raise UsageProblem("--bench times one puzzle: name exactly one")
    if args.device == "cpu" or not has_cuda():
        raise UsageProblem("--bench needs a CUDA GPU, and this machine has none (grading works without one; "
                           "timing does not)")
    broken = course.load_error(targets[0].puzzle)
    if broken is not None:  # the learner's puzzle file: a failure to fix, not a usage error
        print(json.dumps({"error": broken.message}) if args.json else f"{FAIL_MARK} {broken.message}")
        return ExitCode.FAILED
    from grader.judge.bench.run import run_bench
    from grader.judge.session import Grading
    from grader.report import bench
    with Grading(course, [targets[0].path], Options(device="cuda", check_bounds=False, compile_check=False),
                 now=False) as grading:
        doc = run_bench(grading, targets[0].puzzle, targets[0].path)  # a CourseError: a usage problem
    print(bench.render_json(doc) if args.json else bench.render_text(doc))
    if args.plot is not None and doc.ok:
        print(f"plot: {bench.plot(doc, args.plot)}", file=sys.stderr)
    return ExitCode.FAILED if doc.fails else ExitCode.OK


def perf_main(args, course: Course, targets: list[Target]) -> int:
    if len(targets) != 1:
        raise UsageProblem("--perf estimates one puzzle: name exactly one")
    from grader.judge.session import Grading
    # the interpreter worker starts at once: its zygote's imports (torch, triton) overlap the
    # puzzle's load here, which imports torch too; a context left unused (the puzzle does not
    # load, a Helion puzzle's refusal) kills it at once
    with Grading(course, [targets[0].path], Options(device="cpu", compile_check=False), now=True) as grading:
        broken = course.load_error(targets[0].puzzle)
        if broken is not None:
            print(json.dumps({"error": broken.message}) if args.json else f"{FAIL_MARK} {broken.message}")
            return ExitCode.FAILED
        from grader.judge.perf.run import run_perf
        from grader.report import perf
        doc = run_perf(grading, targets[0].puzzle, targets[0].path)
    print(perf.render_json(doc) if args.json else perf.render_text(doc))
    return ExitCode.OK if doc.yours.ok else ExitCode.FAILED


class FirstFailure:
    """One puzzle's first failing case, shown as soon as it is judged: the rest of the cases and the
    compile check may take a while. On a terminal it is a transient line on stderr that the full
    report replaces (:meth:`close`), so that each message is printed once; where stderr is not a
    terminal (a pipe, a file, CI) nothing is shown early: the report says it all."""

    def __init__(self, target, console=None) -> None:
        from rich.console import Console
        self.target, self.shown, self.live = target, False, None
        self.console = console or Console(stderr=True)

    def __call__(self, puzzle_id: str, case) -> None:
        if self.shown or case.passed or case.kind == FailureKind.SKIPPED or not self.console.is_terminal:
            return
        self.shown = True
        from rich.live import Live
        from rich.text import Text
        message = self.target.lines.relabel(case.message) if self.target.lines is not None else case.message
        first = message.splitlines()[0]
        self.live = Live(Text(f"{FAIL_MARK} {puzzle_id}, first failing case (the report follows): {first}"),
                         console=self.console, transient=True, auto_refresh=False)
        self.live.start(refresh=True)

    def close(self) -> None:
        """Erase the early line: the report, printed next, holds the same message."""
        if self.live is not None:
            self.live.stop()
            self.live = None


def _reported(args, course: Course, targets: list[Target], report):
    """Record (the learner's own puzzles/), relabel (a notebook's cells) and print ``report``, however
    it was graded; the report as printed."""
    if not args.solutions and args.file is None:  # the learner's own puzzles/: what `progress` shows
        from grader.app.learner import record
        record(course, report.results)
    if any(t.lines is not None for t in targets):
        from grader.app.targets import relabel
        report = relabel(report, targets)  # a notebook's "line N" said as "line M of code cell K"
    if args.json:
        from grader.report.json_report import render
        print(render(report))
    else:
        from grader.report.text import render, show
        show(render(report, verbose=args.verbose))
    return report


def main(argv=None) -> int:
    """``python -m grader``: a subcommand, or grading; each ends through :func:`run_command`."""
    argv = sys.argv[1:] if argv is None else list(argv)
    from grader.app.commands import SUBCOMMANDS
    if argv and argv[0] in SUBCOMMANDS:
        return run_command(SUBCOMMANDS[argv[0]], argv[1:])
    return run_command(grade_main, argv)


def grade_main(argv: list[str]) -> int:
    """``python -m grader PUZZLE...``: grade, and print the report."""
    parser = build_parser()
    if "--json" in argv:  # a bad option is a usage error too: JSON as well, not argparse's text
        def json_error(message: str):
            raise SystemExit(usage_error(message, as_json=True))
        parser.error = json_error
    args = parser.parse_args(argv)
    course = course_at(args.root)  # here and below, a CourseError is a usage problem (run_command)
    if args.solutions:
        from grader.app.learner import instructor_only, is_release
        if is_release(course):
            raise UsageProblem(instructor_only("--solutions"))
    targets = resolve(course, args.puzzles, file=args.file, every=args.all, solutions=args.solutions)
    if args.viz is not None and len(targets) != 1:
        raise UsageProblem("--viz draws one puzzle: name exactly one")
    if args.viz is not None and args.viz.suffix not in (".png", ".svg"):
        raise UsageProblem("--viz writes a .png or .svg file")
    if args.viz_case is not None:
        from grader.judge.pictures import choose_case
        try:
            choose_case(course.puzzle(targets[0].puzzle).cases, args.viz_case, None)
        except PuzzleLoadError:
            pass  # grading reports the broken file as that puzzle's failure, and nothing is drawn
    if args.triton_viz:
        from grader.app.viewer import unavailable_reason
        reason = unavailable_reason()
        if reason or len(targets) != 1:
            raise UsageProblem(reason or "--triton-viz shows one puzzle: name exactly one")
    if args.jobs < 1 or args.timeout <= 0:
        raise UsageProblem("--jobs and --timeout must be positive")

    if args.bench and args.perf:
        raise UsageProblem("--bench times on a GPU, --perf estimates without one: ask for one of them")
    if args.bench:
        return bench_main(args, course, targets)
    if args.perf:
        return perf_main(args, course, targets)
    import time
    from dataclasses import replace

    device = pick_device(args.device)
    options = Options(device=device, timeout=args.timeout, compile_check=not args.no_compile_check,
                      check_bounds=not args.no_bounds_check)
    progress = None
    if len(targets) > 1:  # --all or several puzzles: long enough to want to see it move
        from grader.report.progress import Progress
        from grader.report.status_words import status_words
        progress = Progress(len(targets))
    first_failure = None if progress is not None or args.json else FirstFailure(targets[0])
    started = time.perf_counter()
    if not args.fresh and len(targets) == 1 and targets[0].lines is None and args.viz is None and not args.triton_viz:
        # a watch's (or serve's) warm workers, where they grade exactly as a fresh run would; else fresh
        from grader.app.warm_link import ask
        answer = ask(course, options, targets[0].puzzle, targets[0].path)
        if args.verbose:
            print(answer.note, file=sys.stderr)
        if answer.report is not None:
            report = _reported(args, course, targets, replace(answer.report, seconds=time.perf_counter() - started))
            return report.exit_code
    from grader.judge.session import Grading
    # One grading context for the run: its workers grade, then trace the picture asked for.
    with Grading(course, [t.path for t in targets], options, min(args.jobs, len(targets))) as grading:
        try:
            report = grading.grade([(t.puzzle, t.path) for t in targets],
                                   on_result=None if progress is None else
                                   lambda result: progress.step(result.puzzle, status_words(result.status).bar),
                                   on_case=first_failure)
        finally:
            if progress is not None:
                progress.close()
            if first_failure is not None:
                first_failure.close()
        report = _reported(args, course, targets, replace(report, seconds=time.perf_counter() - started))
        if (args.viz is not None or args.triton_viz) and course.load_error(targets[0].puzzle) is not None:
            return report.exit_code  # the puzzle file does not load: its failure is above, nothing to draw
        if args.viz is not None:
            from grader.judge.pictures import traced
            from grader.report.pictures import draw_traced
            drawn = draw_traced(traced(grading, targets[0].puzzle, targets[0].path, case_name=args.viz_case,
                                result=report.results[0], timeout=args.timeout), args.viz)
            print(f"memory-access picture of case {drawn.case}: {drawn.path}", file=sys.stderr)
    if args.triton_viz:
        from grader.app.viewer import serve_from_cli
        return serve_from_cli(course, targets[0].puzzle, targets[0].path,
                              case_name=args.viz_case, result=report.results[0])
    return report.exit_code
