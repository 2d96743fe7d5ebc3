"""How long a learner and an instructor wait: the latency targets of issue 21.

    python benchmarks/latency.py [--root COURSE] [--repeat 5] [--only notebook,puzzles,all,student,class]
    python benchmarks/latency.py --only watch [--repeat 5]

Every figure is wall time on this machine, with a cold compile cache (an empty TRITON_CACHE_DIR,
and every sandboxed worker compiles into a folder of its own anyway), each command in a fresh
process, as a learner or CI runs it:

* ``notebook``: ``check(kernel, "puzzle01")`` in one Python process, as a notebook calls it: the
  first check, then the median of ``--repeat`` more (the warm loop; target 0.2 s).
* ``puzzles``: ``python -m grader puzzleNN`` for every puzzle, as a learner runs it: in a copy of
  the course whose puzzle files hold the solutions in their learner's part (targets: 3 s for a
  classic puzzle, 5 s for any); the same with ``--solutions``; and puzzle 31 with a changed
  kernel (a new constant in its source: nothing of it can have been compiled before).
* ``all``: ``python -m grader --all --solutions`` (target 30 s).
* ``student``: ``python -m grader batch`` of one student who solved every puzzle, ``--jobs 2``
  (target 45 s).

Beside each wall time, the CPU time (user + system) of the command and of the processes it
waited for: on a shared machine under load, wall time counts the neighbours' work as well. The
sandboxed workers are forked by zygotes and are not all waited for, so most of the
interpreter's own time is left out: the figure is the grader's side (planning, packing,
comparing, the compile checks' launch), which the size of a case's tensors drives.
* ``class``: the same for 6 such students: the class throughput the README quotes.
* ``helion`` (only when asked): each Helion puzzle (35-42) with ``--solutions``, cold (``python -m
  grader puzzleNN --solutions`` in a fresh process, an empty compile cache) and warm (the
  notebook's ``check()`` of the solution's kernel, the second in one process): wall and the CPU
  seconds of every process under it (targets, issue 31: 10 s cold, 5 s warm on 2 idle cores).
* ``perf`` (only when asked): ``python -m grader puzzleNN --perf`` for every puzzle in the solved
  copy (the learner's file beside the reference), cold, warm, then with the learner's part
  changed, wall and CPU seconds
  (targets: 30 s cold, 10 s warm on 2 idle cores).

* ``watch`` (only when asked): the editor's loop of issue 44, in a copy of the course whose puzzle
  files hold the solutions: ``python -m grader watch puzzleNN`` (not a terminal: one line per grade)
  for a classic puzzle (07), an attention puzzle (31) and a Helion puzzle (35); ``--repeat`` saves
  of the learner's part, each a new line in it (so the compile check runs again, as after a real
  edit): the grade's own seconds (the watch's status line) and the wall time from the save to the
  line, which adds the look at the file (every 0.3 s) and its settling (0.1 s); targets 0.3 s for the
  classic puzzle, 1 s for the others, on 2 idle cores. Then, while the watch of puzzle 07 runs, the
  plain ``python -m grader puzzle07`` through its warm workers and with ``--fresh``, wall seconds
  (each checked to have been served as asked: ``--verbose`` says which way it was graded).

``--root`` measures another checkout (an older commit, for the figures before a change): its
grader is the one imported, through PYTHONPATH.
"""
from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent.parent

NOTEBOOK = r'''
import json, sys, tempfile, time
sys.path.insert(0, sys.argv[1])
from grader.app.notebook import check
from grader.app.learner import ProgressFile
from puzzle01_constant_add import add_kernel
progress = ProgressFile(tempfile.mktemp(suffix=".json"))
times = []
for _ in range(1 + int(sys.argv[2])):
    started = time.perf_counter()
    assert check(add_kernel, "puzzle01", progress=progress).passed
    times.append(time.perf_counter() - started)
print(json.dumps(times))
'''


HELION_NOTEBOOK = r'''
import importlib.util, json, sys, tempfile, time
import psutil
from grader.app.notebook import check
from grader.app.learner import ProgressFile
from grader.course.loader import load_puzzle
progress, me = ProgressFile(tempfile.mktemp(suffix=".json")), psutil.Process()


def cpu():  # this process and every one under it, with what those reaped had used
    total = 0.0
    for p in [me, *me.children(recursive=True)]:
        try:
            t = p.cpu_times()
            total += t.user + t.system + t.children_user + t.children_system
        except psutil.Error:
            pass
    return total


for solution, puzzle in zip(sys.argv[1::2], sys.argv[2::2]):
    spec = importlib.util.spec_from_file_location(f"solution_{puzzle}", solution)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    kernel = getattr(module, load_puzzle(solution.replace("solutions", "puzzles")).kernel)
    for _ in range(2):
        started, used = time.perf_counter(), cpu()
        passed = check(kernel, puzzle, progress=progress, picture=False).passed
        print(json.dumps([puzzle, passed, time.perf_counter() - started, cpu() - used]), flush=True)
'''


def environment(root: Path, cache: str) -> dict:
    return dict(os.environ, TRITON_CACHE_DIR=cache, PYTHONPATH=str(root))


CPU = {}  # the command line -> CPU seconds of its last run (see timed)


def timed(command: list[str], root: Path, cwd: Path | None = None) -> float:
    """Wall seconds of ``command`` in a fresh process with an empty compile cache. Its CPU
    seconds (user + system, of the command and the processes it waited for; see above) go to
    ``CPU``: on a shared, loaded machine wall time measures the neighbours too."""
    import resource
    with tempfile.TemporaryDirectory() as cache:
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        started = time.perf_counter()
        run = subprocess.run(command, cwd=cwd or root, env=environment(root, cache), capture_output=True, text=True)
        seconds = time.perf_counter() - started
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
    CPU[" ".join(command)] = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    if run.returncode not in (0, 1):
        raise SystemExit(f"{' '.join(command)} failed ({run.returncode}):\n{run.stderr[-2000:]}")
    return seconds


def cpu_of(command: list[str]) -> float:
    return CPU.get(" ".join(command), float("nan"))


def grader(*args: str) -> list[str]:
    return [sys.executable, "-m", "grader", *args]


def notebook(root: Path, repeat: int) -> list[str]:
    with tempfile.TemporaryDirectory() as cache:
        run = subprocess.run([sys.executable, "-c", NOTEBOOK, str(root / "solutions"), str(repeat)],
                             cwd=root / "notebooks", env=environment(root, cache), capture_output=True, text=True)
    if run.returncode != 0:
        raise SystemExit(f"the notebook check failed:\n{run.stderr[-2000:]}")
    times = json.loads(run.stdout.strip().splitlines()[-1])
    return [f"| notebook `check()` of puzzle01, first | {times[0]:.2f} s | |",
            f"| notebook `check()` of puzzle01, warm (median of {repeat}) | {statistics.median(times[1:]):.2f} s "
            f"| 0.2 s |"]


def solved_course(root: Path, folder: Path) -> Path:
    """A copy of the course whose puzzle files hold the solutions in their learner's part: the
    files a learner who solved every puzzle grades."""
    sys.path.insert(0, str(root))
    from grader.source.source_lines import marker_lines
    course = folder / "course"
    for part in ("puzzles", "solutions", "notebooks"):
        shutil.copytree(root / part, course / part, ignore=shutil.ignore_patterns("__pycache__", ".progress.json"))
    for puzzle in (course / "puzzles").glob("puzzle[0-9][0-9]_*.py"):
        lines = puzzle.read_text().splitlines()
        (opening,), (closing,) = marker_lines(lines)
        solution = (course / "solutions" / puzzle.name).read_text().splitlines()
        puzzle.write_text("\n".join(lines[:opening + 1] + solution + lines[closing:]) + "\n")
    return course


def puzzles(root: Path, only: list[str] = ()) -> list[str]:
    ids = sorted(p.name[:8] for p in (root / "solutions").glob("puzzle[0-9][0-9]_*.py")
                 if not only or p.name[:8] in only)
    with tempfile.TemporaryDirectory() as folder:
        course = solved_course(root, Path(folder))
        seconds = {pid: timed(grader(pid, "--device", "cpu"), root, cwd=course) for pid in ids}
        cpu = {pid: cpu_of(grader(pid, "--device", "cpu")) for pid in ids}
    solutions = {pid: timed(grader(pid, "--solutions", "--device", "cpu"), root) for pid in ids}
    classic = {pid: s for pid, s in seconds.items() if int(pid[6:]) <= 34} or seconds  # the Triton puzzles
    slowest = max(seconds, key=seconds.get)
    slowest_classic = max(classic, key=classic.get)
    rows = [f"| one puzzle as a learner grades it, median of all {len(ids)} | "
            f"{statistics.median(seconds.values()):.2f} s | |",
            f"| one Triton puzzle (1-34), slowest ({slowest_classic}) | {classic[slowest_classic]:.2f} s "
            f"({cpu[slowest_classic]:.2f} s) | 3 s |",
            f"| one puzzle, slowest ({slowest}) | {seconds[slowest]:.2f} s | 5 s |",
            f"| one puzzle with `--solutions`, median (slowest: {max(solutions, key=solutions.get)}, "
            f"{max(solutions.values()):.2f} s) | {statistics.median(solutions.values()):.2f} s | |"]
    solution = next((root / "solutions").glob("puzzle31_*.py"))
    with tempfile.TemporaryDirectory(dir=Path.home()) as folder:  # not /tmp: the sandbox has its own
        changed = Path(folder) / solution.name
        # A different constant in the kernel's source: nothing compiled before can be reused.
        changed.write_text(solution.read_text().replace("@triton.jit", f"NONCE = {time.time_ns()}\n\n@triton.jit", 1))
        rows.append("| puzzle31, a changed kernel | "
                    f"{timed(grader('puzzle31', '--file', str(changed), '--device', 'cpu'), root):.2f} s "
                    "| 5 s |")
    rows.append("")
    rows.append("Every puzzle, as a learner grades it: " + ", ".join(f"{pid[6:]} {s:.1f}" for pid, s in seconds.items())
                + " (s, wall); CPU: " + ", ".join(f"{pid[6:]} {c:.1f}" for pid, c in cpu.items()) + " (s).")
    return rows


def perf_latency(root: Path, ids: list[str]) -> list[str]:
    """``python -m grader puzzleNN --perf`` for each puzzle, in a copy of the course whose puzzle
    files hold the solutions (the learner's file, beside the course's reference): cold (empty
    compile cache, no kept reference counts), then warm (both kept, as a learner's second try),
    then changed (a line added to the learner's part: what a learner who edits the kernel waits for);
    wall seconds and the CPU seconds of the command and every process under it (its workers).
    The load is printed: on a shared machine the CPU time is the steadier figure."""
    import resource
    rows = ["| puzzle | cold wall | cold CPU | warm wall | warm CPU | changed wall | changed CPU | load |",
            "|---|---|---|---|---|---|---|---|"]
    print("\n".join(rows), flush=True)
    with tempfile.TemporaryDirectory() as folder:
        course = solved_course(root, Path(folder))
        for pid in ids:
            rows.append(_perf_twice(root, course, pid, resource))
            print(rows[-1], flush=True)
    return rows


def tree_cpu(command: list[str], cwd: Path, env: dict) -> tuple[float, float, int]:
    """(wall seconds, CPU seconds of the command and every process under it, exit code). The
    workers are forked by zygotes and not all reaped by a process the command waits for, so
    their CPU is read while they live (every 0.2 s: a worker's last fraction of a second may be
    missed)."""
    import psutil
    started = time.perf_counter()
    run = subprocess.Popen(command, cwd=cwd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    top, seen = psutil.Process(run.pid), {}
    while run.poll() is None:
        try:
            for p in [top, *top.children(recursive=True)]:
                try:
                    t = p.cpu_times()
                    seen[p.pid] = max(seen.get(p.pid, 0.0), t.user + t.system)
                except psutil.Error:
                    pass
        except psutil.Error:
            pass
        time.sleep(0.2)
    wall = time.perf_counter() - started
    return wall, sum(seen.values()), run.returncode


def _perf_twice(root: Path, course: Path, pid: str, resource) -> str:
    figures = []
    with tempfile.TemporaryDirectory() as cache, tempfile.TemporaryDirectory() as kept:
        env = dict(environment(root, cache), XDG_CACHE_HOME=kept)
        for step in ("cold", "warm", "changed"):
            if step == "changed":  # a learner's edit: a new line in their part of the puzzle file
                _edit(next((course / "puzzles").glob(f"{pid}_*.py")))
            wall, cpu, code = tree_cpu(grader(pid, "--perf"), course, env)
            figures.append(f"{wall:.1f} s | {cpu:.1f} s" + ("" if code in (0, 1) else f" (exit {code})"))
    return f"| {pid} | {' | '.join(figures)} | {os.getloadavg()[0]:.1f} |"


def _edit(puzzle: Path) -> None:
    from grader.source.source_lines import marker_lines
    lines = puzzle.read_text().splitlines()
    (opening,), _ = marker_lines(lines)
    puzzle.write_text("\n".join(lines[:opening + 1] + [f"NONCE = {time.time_ns()}"] + lines[opening + 1:]) + "\n")


def helion_latency(root: Path, ids: list[str]) -> list[str]:
    """Each Helion puzzle's solution checked cold (the command, a fresh process) and warm (the
    notebook's second check), wall and CPU seconds, with the load at the time."""
    rows = ["| puzzle | cold wall | cold CPU | warm wall | warm CPU | load |", "|---|---|---|---|---|---|"]
    print("\n".join(rows), flush=True)
    solutions = {pid: next((root / "solutions").glob(f"{pid}_*.py")) for pid in ids}
    cold = {}
    for pid in ids:
        with tempfile.TemporaryDirectory() as cache:
            cold[pid] = tree_cpu(grader(pid, "--solutions", "--device", "cpu"), root, environment(root, cache))
    with tempfile.TemporaryDirectory() as cache:
        run = subprocess.run([sys.executable, "-c", HELION_NOTEBOOK,
                              *[str(x) for pid in ids for x in (solutions[pid].resolve(), pid)]],
                             cwd=root / "notebooks", env=environment(root, cache), capture_output=True, text=True)
    checks = [json.loads(line) for line in run.stdout.splitlines() if line.startswith("[")]
    warm = {pid: (wall, used, passed) for pid, passed, wall, used in checks}  # the second of each puzzle
    for pid in ids:
        wall, used, code = cold[pid]
        warm_wall, warm_cpu, passed = warm.get(pid, (float("nan"), float("nan"), False))
        rows.append(f"| {pid} | {wall:.1f} s | {used:.1f} s{'' if code in (0, 1) else f' (exit {code})'} | "
                    f"{warm_wall:.1f} s | {warm_cpu:.1f} s{'' if passed else ' (not passed)'} | "
                    f"{os.getloadavg()[0]:.1f} |")
        print(rows[-1], flush=True)
    if run.returncode != 0:
        print(f"the notebook's checks failed:\n{run.stderr[-2000:]}")
    return rows


WATCHED = ("puzzle07", "puzzle31", "puzzle35")  # a classic puzzle, an attention puzzle, a Helion puzzle

# A watch's grades in one process, as `watch` runs them (its kept context, a save between grades): for
# each save, the seconds until every small case was judged (what a terminal's status line says while
# the large cases run) and until the verdict.
WATCH_CASES = r'''
import json, sys, time
from pathlib import Path
from grader.app.frontend import course_at
from grader.app.warm_server import WarmGrading
from grader.judge.options import Options
sys.path.insert(0, sys.argv[1])
from latency import _edit
course = course_at(None)
for pid in sys.argv[3:]:
    path = course.puzzle_file(pid)
    small = {c.name for c in course.puzzle(pid).cases if not c.large}
    warm = WarmGrading(course, Options(device="cpu"), [path])
    warm.grade(pid, path)
    for _ in range(int(sys.argv[2])):
        _edit(path)
        started, seen = time.perf_counter(), {}
        def on_case(puzzle, case):
            seen.setdefault(case.name, time.perf_counter() - started)
        report = warm.grade(pid, path, on_case)
        took = time.perf_counter() - started
        print(json.dumps([pid, report.results[0].status, max(v for k, v in seen.items() if k in small), took]),
              flush=True)
    warm.close()
'''


def watch_latency(root: Path, repeat: int) -> list[str]:
    """The watch's warm re-grades after a save, and a plain command through its workers or fresh."""
    rows = ["| what | grade (median, max) | save to verdict (median) | load | target |", "|---|---|---|---|---|"]
    print("\n".join(rows), flush=True)
    with tempfile.TemporaryDirectory(dir=Path.home()) as folder, tempfile.TemporaryDirectory() as cache:
        course = solved_course(root, Path(folder))
        env = dict(environment(root, cache), XDG_RUNTIME_DIR=str(Path(folder)))  # a socket of this run's own
        for pid in WATCHED:
            rows += _watched(course, pid, repeat, env, commands=pid == WATCHED[0])
        run = subprocess.run([sys.executable, "-c", WATCH_CASES, str(HERE / "benchmarks"), str(repeat), *WATCHED],
                             cwd=course, env=env, capture_output=True, text=True)
    graded = [json.loads(line) for line in run.stdout.splitlines() if line.startswith("[")]
    for pid in WATCHED:
        mine = [g for g in graded if g[0] == pid]
        if mine:
            rows.append(f"| in one process, {pid}: every small case judged, then the verdict ({mine[0][1]}) | "
                        f"{statistics.median(g[2] for g in mine):.2f} s, "
                        f"then {statistics.median(g[3] for g in mine):.2f} s "
                        f"| | {os.getloadavg()[0]:.1f} | |")
            print(rows[-1], flush=True)
    if run.returncode != 0:
        print(f"the in-process grades failed:\n{run.stderr[-2000:]}")
    return rows


def _watched(course: Path, pid: str, repeat: int, env: dict, commands: bool) -> list[str]:
    import re
    import select
    import signal
    watch = subprocess.Popen(grader("watch", pid, "--device", "cpu"), cwd=course, env=env, stdout=subprocess.PIPE,
                             stderr=subprocess.PIPE, text=True, bufsize=1)

    def line(seconds: float = 300.0) -> str:
        """The watch's next status line (a grade's)."""
        while select.select([watch.stdout], [], [], seconds)[0]:
            said = watch.stdout.readline()
            if not said:
                raise SystemExit(f"watch {pid} ended:\n{watch.stderr.read()[-2000:]}")
            if said.startswith("watching "):
                return said
        raise SystemExit(f"watch {pid}: no grade in {seconds:.0f} s")
    rows = []
    try:
        started = time.perf_counter()
        line()
        cold = time.perf_counter() - started
        grades, latencies = [], []
        for _ in range(repeat):
            _edit(next((course / "puzzles").glob(f"{pid}_*.py")))
            saved = time.perf_counter()
            said = line()
            latencies.append(time.perf_counter() - saved)
            grades.append(float(re.search(r"\(([\d.]+) s\)", said).group(1)))
        target = "0.3 s" if pid == WATCHED[0] else "1 s"
        verdict = re.search(r"last: (\w+)", said).group(1)
        rows.append(f"| watch {pid}, warm re-grade after a save ({repeat}, {verdict}; first {cold:.1f} s) | "
                    f"{statistics.median(grades):.2f} s, {max(grades):.2f} s | {statistics.median(latencies):.2f} s | "
                    f"{os.getloadavg()[0]:.1f} | {target} |")
        print(rows[-1], flush=True)
        if commands:
            for how in ("--verbose", "--fresh"):
                walls, ways = [], set()
                for _ in range(repeat):
                    begun = time.perf_counter()
                    run = subprocess.run(grader(pid, "--device", "cpu", how), cwd=course, env=env,
                                         capture_output=True, text=True)
                    walls.append(time.perf_counter() - begun)
                    ways.add("warm" if "graded by the warm workers" in run.stderr else "fresh")
                    if run.returncode not in (0, 1):
                        raise SystemExit(f"{pid} {how} failed ({run.returncode}):\n{run.stderr[-2000:]}")
                said = "through the watch's workers" if how == "--verbose" else "`--fresh`"
                rows.append(f"| `python -m grader {pid}`, {said} (graded {'/'.join(sorted(ways))}) | "
                            f"{statistics.median(walls):.2f} s, {max(walls):.2f} s | | {os.getloadavg()[0]:.1f} | |")
                print(rows[-1], flush=True)
    finally:
        watch.send_signal(signal.SIGINT)
        try:
            code = watch.wait(60)
        except subprocess.TimeoutExpired:
            watch.kill()
            code = None
        restarted = "changed" in watch.stderr.read()
    if code != 0 or restarted:
        print(f"watch {pid}: exit {code}{'; restarted (the grader changed under it)' if restarted else ''}")
    return rows


def class_of(root: Path, students: int) -> float:
    """Seconds of ``batch --jobs 2`` for ``students`` copies of solutions/."""
    with tempfile.TemporaryDirectory() as folder:
        for n in range(students):
            shutil.copytree(root / "solutions", Path(folder) / "class" / f"student{n:02d}",
                            ignore=shutil.ignore_patterns("__pycache__"))
        command = grader("batch", str(Path(folder) / "class"), "--out", str(Path(folder) / "out"), "--jobs", "2")
        seconds = timed(command, root)
        CPU["batch"] = cpu_of(command)
        return seconds


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--root", type=Path, default=HERE)
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--only", default="notebook,puzzles,all,student,class")
    parser.add_argument("--students", type=int, default=6)
    parser.add_argument("--puzzles", default="", help="with --only puzzles or perf: these puzzles only, e.g. 22,31")
    args = parser.parse_args()
    root = args.root.resolve()
    wanted = args.only.split(",")
    load = os.getloadavg()[0]
    head = subprocess.run(["git", "-C", str(root), "rev-parse", "--short", "HEAD"], capture_output=True, text=True)
    print(f"{root} at {head.stdout.strip()}, {os.cpu_count()} cores, load {load:.1f} at the start")
    chosen = [f"puzzle{int(n.removeprefix('puzzle')):02d}" for n in args.puzzles.split(",") if n.strip()]
    print("| what | wall (CPU) | target |")
    print("|---|---|---|")
    if "notebook" in wanted:
        print("\n".join(notebook(root, args.repeat)), flush=True)
    if "all" in wanted:
        command = grader('--all', '--solutions', '--device', 'cpu')
        print(f"| `--all --solutions` | {timed(command, root):.1f} s ({cpu_of(command):.1f} s) | 30 s |", flush=True)
    if "student" in wanted:
        seconds = class_of(root, 1)
        print(f"| one complete student, `batch --jobs 2` | {seconds:.1f} s ({CPU['batch']:.1f} s) | 45 s |", flush=True)
    if "class" in wanted:
        seconds = class_of(root, args.students)
        print(f"| {args.students} complete students, `batch --jobs 2` | {seconds:.1f} s "
              f"({60 * args.students / seconds:.1f} students a minute) | |", flush=True)
    if "puzzles" in wanted:
        print("\n".join(puzzles(root, chosen)), flush=True)
    if "helion" in wanted:  # not by default: two checks a puzzle, seconds each
        ids = sorted(p.name[:8] for p in (root / "solutions").glob("puzzle[0-9][0-9]_*.py")
                     if 35 <= int(p.name[6:8]) <= 42)
        helion_latency(root, [pid for pid in ids if not chosen or pid in chosen])  # prints
    if "watch" in wanted:  # not by default: a watch per puzzle, and commands beside one
        watch_latency(root, args.repeat)  # prints
    if "perf" in wanted:  # not by default: two --perf runs a puzzle
        ids = sorted(p.name[:8] for p in (root / "solutions").glob("puzzle[0-9][0-9]_*.py"))
        perf_latency(root, [pid for pid in ids if not chosen or pid in chosen])  # prints
    return 0


if __name__ == "__main__":
    sys.exit(main())
