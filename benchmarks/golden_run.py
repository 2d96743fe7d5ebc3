"""The golden run: records every verdict and every report file the grader writes, made
comparable byte for byte between two runs, before and after a change that must not alter
behaviour (some 600 grader commands: roughly half an hour on 2 cores, --parallel 2).

    python benchmarks/golden_run.py --out DIR [--root COURSE] [--parallel 2]
    python benchmarks/golden_run.py --compare A B      # unified diff; exit 1 if they differ

Everything goes through the public entry points, in subprocesses, with the interpreter
(``--device cpu``), each command run twice, as JSON (``--json``) and as text (the default):

* ``solutions/all``: ``--all --solutions`` (``--jobs 2``); ``stubs/all``: ``--all``, the
  puzzle files as shipped (``--jobs 2``);
* ``wrong_kernels/``, ``hostile/``, ``variants/``: each file of ``tests/<folder>/`` with
  ``PUZZLE --file FILE``, its puzzle being the first 8 characters of its name, as the tests
  map them. Corpus files that import earlier puzzles' reference kernels (the autograd
  entries) are graded from a scratch folder holding a copy of each solution they import,
  beside them: the command line has no ``library`` option, and a learner's file imports its
  neighbours the same way. Hostile files are graded from a scratch copy with their tokens
  filled in (see tests/hostile/README.md); ``hostile/escapes.txt`` lists anything that
  escaped the sandbox (expected: nothing);
* ``batch/``: ``python -m grader batch --format gradescope`` of a class of three: alice (every
  solution), bob (the stubs of puzzles 1-10, nothing for the rest) and carol (the first
  wrong kernel of each puzzle, with the reference kernels the autograd ones import):
  grades.csv, results.json, junit.xml, gradescope/<student>/results.json, and the console;
* ``html/``: the HTML report, which only ``grader.app.notebook.check`` writes: kernels executed as
  a notebook cell would be, then checked (pictures included).

``exit_codes.txt`` holds every command's exit status; ``NAME.stderr`` a command's stderr where
there is one.

Normalisations, the only differences two runs of the same code may show (applied to every
file; nothing else is touched, so verdicts, kinds, messages, case lists and order stay):

1. Wall-clock time: JSON ``"seconds": 1.23`` becomes ``"seconds": "<s>"``; the text report's
   ``(1.2 s)`` becomes ``(<s> s)``; junit.xml's ``time="0.47"`` becomes ``time="<s>"``; the batch
   summary's ``graded in 12 s`` becomes ``graded in <s> s``.
2. Progress lines on stderr (``[3/34] puzzle07 pass (12 s, about 1 min left)``, one per item
   when stderr is not a terminal): the count and the time and ETA are dropped
   (``[*/34] puzzle07 pass``) and the block is sorted, because items finish in whichever order
   the parallel workers reach them.
3. Paths: the virtual environment becomes ``<VENV>``, the course checkout ``<ROOT>`` and this
   run's scratch folder ``<WORK>`` (longest first); any other ``/tmp/`` folder's random name
   (``tempfile``'s 8 characters) becomes ``<RANDOM>``.
4. The hostile corpus's ``@@SLEEP@@`` token, a random number so that leftover processes can
   be found, becomes ``<SLEEP>``.
5. The name a worker imports a learner's file under (``_learner_`` and 12 hex digits of its
   path's hash, which Helion's generated code names) becomes ``_learner_<PATH>``; the class
   page's ``graded in 83 s.`` becomes ``graded in <s> s.``.

Runs are isolated from the machine's state: a fresh Triton cache and progress file in the
scratch folder, which is removed at the end (``--keep-work`` keeps it).
"""
from __future__ import annotations

import argparse
import difflib
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

HERE = Path(__file__).resolve().parent.parent
CORPORA = ("wrong_kernels", "hostile", "variants")
UNTOUCHED = "student,total\n"  # the hostile corpus's report folder holds this before and after
IMPORTS = re.compile(r"^from (puzzle\d\d_\w+) import", re.M)
# Notebook checks for the HTML report: (output name, file, kernel name, puzzle); files relative to the course.
HTML_CHECKS = (
    ("solution_puzzle01", "solutions/puzzle01_constant_add.py", "add_kernel", "puzzle01"),
    ("stub_puzzle03", "puzzles/puzzle03_outer_vector_add.py", "add_vec_kernel", "puzzle03"),
    ("puzzle01_print_tensor", "tests/wrong_kernels/puzzle01_print_tensor.py", "add_kernel", "puzzle01"),
    ("puzzle01_runtime_arange", "tests/wrong_kernels/puzzle01_runtime_arange.py", "add_kernel", "puzzle01"),
    ("puzzle02_missing_mask", "tests/wrong_kernels/puzzle02_missing_mask.py", "add_mask2_kernel", "puzzle02"),
    ("puzzle05_relu_on_y", "tests/wrong_kernels/puzzle05_relu_on_y.py", "mul_relu_block_kernel", "puzzle05"),
    ("solution_puzzle15", "solutions/puzzle15_weighted_sum_autograd.py", "WeightedSumFunc", "puzzle15"),
    ("puzzle15_numpy", "tests/wrong_kernels/puzzle15_numpy.py", "WeightedSumFunc", "puzzle15"),
)

# ---- normalisation ---------------------------------------------------------------------

SECONDS_JSON = re.compile(r'("seconds": )-?\d+(?:\.\d+)?(?:[eE][-+]?\d+)?')
SECONDS_TEXT = re.compile(r"\(\d+(?:\.\d+)? s\)")
JUNIT_TIME = re.compile(r'\btime="[\d.]+"')
BATCH_SECONDS = re.compile(r"\bgraded in \d+ s(?=[;.])")  # the summary's, and the class page's
# A module the worker loads a learner's file as, named from its path, which is a scratch folder's
LEARNER_MODULE = re.compile(r"\b_learner_[0-9a-f]{12}\b")
PROGRESS = re.compile(r"^\[\d+/(\d+)\] (.*?)(?: \([^()]*\))?$")
# tempfile.mkdtemp's names: a prefix, then 8 of [a-z0-9_]; the prefix (what made it) is kept.
TMP_NAME = re.compile(r"(/tmp/[\w.-]*?)[a-z0-9_]{8}(?=[/\s'\"`:),;\]]|$)", re.M)


def normalise(text: str, places: dict[str, str]) -> str:
    """``text`` with what varies between two runs of the same code replaced (module docstring)."""
    for literal in sorted(places, key=len, reverse=True):  # /work/x/.venv before /work/x
        text = text.replace(literal, places[literal])
    text = TMP_NAME.sub(r"\1<RANDOM>", text)
    text = SECONDS_JSON.sub(r'\1"<s>"', text)
    text = SECONDS_TEXT.sub("(<s> s)", text)
    text = JUNIT_TIME.sub('time="<s>"', text)
    text = BATCH_SECONDS.sub("graded in <s> s", text)
    text = LEARNER_MODULE.sub("_learner_<PATH>", text)
    return sort_progress(text)


def sort_progress(text: str) -> str:
    """Progress lines without their count and timing, sorted, where the first of them was."""
    lines = text.split("\n")
    found = [i for i, line in enumerate(lines) if PROGRESS.match(line)]
    if not found:
        return text
    block = sorted("[*/{}] {}".format(*PROGRESS.match(lines[i]).groups()) for i in found)
    rest = [line for i, line in enumerate(lines) if i not in set(found)]
    return "\n".join(rest[:found[0]] + block + rest[found[0]:])


# ---- the run ---------------------------------------------------------------------------

@dataclass
class Command:
    name: str        # the output file, relative to the golden folder
    argv: list[str]  # after `python -m grader`
    timeout: float = 900


class Golden:
    def __init__(self, root: Path, out: Path, work: Path, parallel: int) -> None:
        self.root, self.out, self.work, self.parallel = root, out, work, parallel
        self.sleep = str(int.from_bytes(os.urandom(4), "big") % 90_000_000 + 10_000_000)
        self.places = {str(root): "<ROOT>", str(work): "<WORK>", sys.prefix: "<VENV>", self.sleep: "<SLEEP>"}
        self.env = dict(os.environ, PYTHONPATH=str(root), TRITON_CACHE_DIR=str(work / "triton-cache"),
                        TRITON_PUZZLES_PROGRESS=str(work / "progress.json"))
        self.exit_codes: dict[str, int | str] = {}  # "timeout" where a command hung

    def write(self, name: str, text: str) -> None:
        path = self.out / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(normalise(text, self.places))

    def grader(self, argv: list[str], timeout: float) -> subprocess.CompletedProcess:
        # cwd is the scratch folder: nothing a command writes lands in the checkout
        try:
            return subprocess.run([sys.executable, "-m", "grader", *argv], cwd=self.work, env=self.env,
                                  capture_output=True, text=True, timeout=timeout)
        except subprocess.TimeoutExpired as exc:  # a hang is a difference to show, not a reason to stop
            return subprocess.CompletedProcess(exc.cmd, "timeout", _text(exc.stdout), _text(exc.stderr))

    def run(self, command: Command) -> None:
        done = self.grader(command.argv, command.timeout)
        self.exit_codes[command.name] = done.returncode
        self.write(command.name, done.stdout)
        if done.stderr:
            self.write(command.name + ".stderr", done.stderr)

    # what to grade

    def commands(self) -> list[Command]:
        base = ["--device", "cpu", "--root", str(self.root)]
        found = []
        for folder, extra in (("solutions", ["--solutions"]), ("stubs", [])):
            for suffix, fmt in ((".json", ["--json"]), (".txt", [])):
                found.append(Command(f"{folder}/all{suffix}", ["--all", *extra, "--jobs", "2", *fmt, *base], 3600))
        for folder, path in self.corpus_files():
            for suffix, fmt in ((".json", ["--json"]), (".txt", [])):
                found.append(Command(f"{folder}/{path.stem}{suffix}",
                                     [path.name[:8], "--file", str(path), "--jobs", "1", *fmt, *base]))
        return found

    def corpus_files(self) -> list[tuple[str, Path]]:
        """Every file of the three corpora, as graded: in place, or from a scratch copy."""
        found = []
        for folder in CORPORA:
            for path in sorted((self.root / "tests" / folder).glob("puzzle*.py")):
                text = path.read_text()
                if folder == "hostile":
                    path = self.staged("hostile", path.name, self.fill(text))
                elif IMPORTS.search(text):
                    path = self.staged("with_solutions", path.name, text, IMPORTS.findall(text))
                found.append((folder, path))
        return found

    def staged(self, folder: str, name: str, text: str, imports=()) -> Path:
        where = self.work / folder
        where.mkdir(parents=True, exist_ok=True)
        for module in imports:
            assert module + ".py" != name, f"{name} would shadow the solution it imports"
            shutil.copy(self.root / "solutions" / f"{module}.py", where / f"{module}.py")
        (where / name).write_text(text)
        return where / name

    def fill(self, text: str) -> str:
        # @@OUT@@: a report folder of its own, not the batch's, which this run grades at the same time.
        # @@PORT@@ 9 (discard): nothing listens there; a connection that escapes is refused all the same.
        reports = self.work / "reports"
        if not reports.is_dir():
            reports.mkdir()
            (reports / "grades.csv").write_text(UNTOUCHED)
            (self.work / "marks").mkdir()  # exists, as in tests/test_hostile.py: a write there would succeed
        for token, value in {"@@MARK@@": self.work / "marks", "@@OUT@@": reports,
                             "@@PORT@@": 9, "@@SLEEP@@": self.sleep, "@@COURSE@@": self.root}.items():
            text = text.replace(token, str(value))
        return text

    def escapes(self) -> list[str]:
        """What the hostile corpus left outside its sandbox; leftover processes (carrying this run's
        token, so started by this run) are ended."""
        marks = self.work / "marks"
        found = [f"wrote {p}" for p in sorted(marks.rglob("*"))] if marks.is_dir() else []
        found += [f"wrote {p}" for p in sorted(Path("/tmp").glob(f"{self.sleep}*"))]
        grades = self.work / "reports" / "grades.csv"
        if grades.is_file() and grades.read_text() != UNTOUCHED:
            found.append(f"rewrote {grades}")
        for pid in filter(str.isdigit, os.listdir("/proc")):
            try:
                command = Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode()
            except OSError:
                continue
            if self.sleep in command:
                found.append(f"left a process: {command.strip()}")
                try:
                    os.kill(int(pid), signal.SIGKILL)
                except OSError:
                    pass
        return found

    def write_class(self) -> Path:
        students = self.work / "class"
        alice, bob, carol = (students / name / "puzzles" for name in ("alice", "bob", "carol"))
        for folder in (alice, bob, carol):
            folder.mkdir(parents=True)
        for path in sorted((self.root / "solutions").glob("puzzle*.py")):
            shutil.copy(path, alice / path.name)
        for path in sorted((self.root / "puzzles").glob("puzzle*.py"))[:10]:
            shutil.copy(path, bob / path.name)
        firsts: dict[str, Path] = {}
        for path in sorted((self.root / "tests" / "wrong_kernels").glob("puzzle*.py")):
            firsts.setdefault(path.name[:8], path)
        for path in firsts.values():
            text = path.read_text()
            (carol / path.name).write_text(text)
            for module in IMPORTS.findall(text):
                shutil.copy(self.root / "solutions" / f"{module}.py", carol / f"{module}.py")
        return students

    def batch(self) -> None:
        out = self.work / "batch-out"
        done = self.grader(["batch", str(self.write_class()), "--out", str(out), "--format", "gradescope",
                            "--device", "cpu", "--jobs", "2", "--root", str(self.root)], 3600)
        self.exit_codes["batch/console.txt"] = done.returncode
        self.write("batch/console.txt", done.stdout)
        if done.stderr:
            self.write("batch/console.txt.stderr", done.stderr)
        for path in sorted(p for p in out.rglob("*") if p.is_file()):
            self.write(f"batch/{path.relative_to(out)}", path.read_text())

    def html(self) -> None:
        folder = self.work / "html"
        done = subprocess.run([sys.executable, __file__, "--html-worker", str(folder), "--root", str(self.root)],
                              cwd=self.root, env=self.env, capture_output=True, text=True, timeout=1800)
        self.exit_codes["html"] = done.returncode
        if done.stdout or done.stderr:
            self.write("html/worker.log", done.stdout + done.stderr)
        for path in sorted(folder.glob("*.html")) if folder.is_dir() else ():
            self.write(f"html/{path.name}", path.read_text())

    def everything(self, only: str | None = None) -> None:
        """Every command, or (``only``, for trying this script out) those whose output name matches."""
        keep = (lambda name: re.search(only, name)) if only else (lambda name: True)
        commands = [c for c in self.commands() if keep(c.name)]  # stages the scratch copies first
        with ThreadPoolExecutor(self.parallel) as pool:
            futures = [pool.submit(self.run, c) for c in commands]
            futures += [pool.submit(step) for step in (self.batch, self.html) if keep(step.__name__)]
            for future in futures:
                future.result()
        self.write("hostile/escapes.txt", "".join(f"{e}\n" for e in self.escapes()) or "nothing escaped\n")
        self.write("exit_codes.txt", "".join(f"{name} {code}\n" for name, code in sorted(self.exit_codes.items())))
        odd = [f"{name} {code}" for name, code in sorted(self.exit_codes.items()) if code not in (0, 1)]
        if odd:  # in the golden files too; said here because it usually means a broken run
            print("exit codes other than 0 and 1:\n  " + "\n  ".join(odd), file=sys.stderr)


def _text(output: bytes | str | None) -> str:
    return output.decode(errors="replace") if isinstance(output, bytes) else output or ""


def html_worker(folder: Path, root: Path) -> None:
    """Run inside a fresh process: each kernel executed as a notebook cell (its source under a
    cell's file name, in linecache), then ``check()``ed, and its HTML written."""
    import linecache
    sys.path.insert(0, str(root / "solutions"))  # as a notebook that imports puzzle 13's kernel
    from grader.app.notebook import ProgressFile, check
    folder.mkdir(parents=True, exist_ok=True)
    for n, (name, file, kernel, puzzle) in enumerate(HTML_CHECKS):
        source = (root / file).read_text()
        cell = f"/tmp/ipykernel_4242/{n}.py"  # fixed: messages say "the cell defining ..." anyway
        linecache.cache[cell] = (len(source), None, source.splitlines(True), cell)
        namespace = {"__name__": "__main__"}
        exec(compile(source, cell, "exec"), namespace)
        shown = check(namespace[kernel], puzzle, device="cpu", progress=ProgressFile(folder / "progress.json"))
        (folder / f"{name}.html").write_text(shown.html)


# ---- compare ---------------------------------------------------------------------------

def compare(a: Path, b: Path, width: int = 400) -> int:
    """A unified diff of two golden folders (lines longer than ``width`` are cut in the display
    only: the HTML's pictures are one line); 1 if anything differs."""
    names = sorted({p.relative_to(a).as_posix() for p in a.rglob("*") if p.is_file()}
                   | {p.relative_to(b).as_posix() for p in b.rglob("*") if p.is_file()})
    differ = 0
    for name in names:
        left, right = a / name, b / name
        if not left.is_file() or not right.is_file():
            print(f"only in {a if left.is_file() else b}: {name}")
            differ += 1
            continue
        if left.read_bytes() == right.read_bytes():
            continue
        differ += 1
        def lines(path: Path) -> list[str]:
            return [line if len(line) <= width else f"{line[:width]}... ({len(line)} characters)\n"
                    for line in path.read_text().splitlines(True)]
        sys.stdout.writelines(difflib.unified_diff(lines(left), lines(right), fromfile=f"{a}/{name}",
                                                   tofile=f"{b}/{name}"))
    print(f"{differ} of {len(names)} files differ" if differ else f"identical: {len(names)} files")
    return 1 if differ else 0


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", type=Path, help="the golden folder to write (must not exist)")
    parser.add_argument("--compare", nargs=2, type=Path, metavar=("A", "B"), help="diff two golden folders")
    parser.add_argument("--root", type=Path, default=HERE, help="the checkout to grade with (default: this one)")
    parser.add_argument("--parallel", type=int, default=2, help="commands run at once (default 2)")
    parser.add_argument("--keep-work", action="store_true", help="keep the scratch folder")
    parser.add_argument("--only", metavar="REGEX", help="only the outputs whose name matches (not a golden run)")
    parser.add_argument("--html-worker", type=Path, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    root = args.root.resolve()
    if args.html_worker:
        html_worker(args.html_worker, root)
        return 0
    if args.compare:
        return compare(*args.compare)
    if args.out is None:
        parser.error("give --out DIR or --compare A B")
    if args.out.exists():
        parser.error(f"{args.out} exists: a golden folder is written whole, never over another")
    work = Path(tempfile.mkdtemp(prefix="golden-"))
    started = time.perf_counter()
    try:
        Golden(root, args.out.resolve(), work, args.parallel).everything(args.only)
    finally:
        if not args.keep_work:
            shutil.rmtree(work, ignore_errors=True)
    print(f"golden run written to {args.out} in {time.perf_counter() - started:.0f} s", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
