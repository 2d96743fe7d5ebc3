"""What --perf keeps between runs of an unchanged kernel: its sm_90 figures and a passing verdict."""
from types import SimpleNamespace

from grader.channel import wire, wire_measure
from grader.judge.perf import cache as perf_cache
from grader.judge.perf.run import compile_stats, verdict

STATS = wire.KernelStats(label="", registers=40, spill_bytes=0, shared=0, num_warps=4, num_stages=3,
                         tensor_cores="", alu=12)
LAUNCH = wire_measure.LaunchProfile(kernel="add_kernel", group=0, config="", grid=(8, 1, 1), interpreted=8, num_warps=4,
                            num_stages=3, accesses=(), dots=(), alu=0, sfu=0, seconds=0.0, path=("add_kernel",))


class Compiler:
    def __init__(self) -> None:
        self.asked = 0

    def request(self, message, timeout=None):
        self.asked += 1
        return wire.Compiled(variants=1, stats=(STATS,)), []


def test_a_kernels_compiled_figures_are_kept_until_its_text_changes(tmp_path, monkeypatch):
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    kernel = tmp_path / "kernel.py"
    kernel.write_text("# one\n")
    compiler = Compiler()
    assert compile_stats(compiler, kernel, "add_kernel", LAUNCH, {}) == (STATS, "")
    assert compile_stats(compiler, kernel, "add_kernel", LAUNCH, {}) == (STATS, "") and compiler.asked == 1
    kernel.write_text("# two\n")
    compile_stats(compiler, kernel, "add_kernel", LAUNCH, {})
    assert compiler.asked == 2


def test_a_passing_verdict_is_kept_and_a_failing_one_asked_again(tmp_path, monkeypatch):
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    kernel, puzzle = tmp_path / "kernel.py", tmp_path / "puzzle.py"
    kernel.write_text("# a kernel\n")
    puzzle.write_text("# its puzzle\n")
    graded = []

    def grade(targets, passed):
        graded.append(targets)
        return SimpleNamespace(results=[SimpleNamespace(passed=passed, message="case x: wrong values",
                                                        status=SimpleNamespace(value="fail"))])
    for passed, expected in ((False, "case x: wrong values"), (False, "case x: wrong values"), (True, ""), (True, "")):
        grading = SimpleNamespace(course=SimpleNamespace(puzzle_file=lambda pid: puzzle,
                                                         puzzle=lambda pid: SimpleNamespace(check=None)),
                                  grade=lambda targets, passed=passed: grade(targets, passed))
        assert verdict(grading, "puzzle01", kernel).wrong == expected
    assert len(graded) == 3  # twice failing, once passing; the second pass was kept
    assert perf_cache.folder().is_dir()


def test_a_learners_counts_are_kept_until_its_file_or_a_neighbour_changes(tmp_path, monkeypatch):
    """Puzzle 33's file imports puzzle 31's kernel: a change beside the file is a new key too."""
    from grader.judge.perf import cache as perf_cache
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    folder = tmp_path / "puzzles"
    folder.mkdir()
    kernel, neighbour, puzzle = folder / "puzzle33.py", folder / "puzzle31.py", tmp_path / "spec.py"
    for path, text in ((kernel, "from puzzle31 import k\n"), (neighbour, "k = 1\n"), (puzzle, "# spec\n")):
        path.write_text(text)
    request = wire_measure.Profile(puzzle_file=str(puzzle), file=str(kernel), inputs=(), outputs=(), ranges={}, values={},
                           grid=(8, 1, 1), programs=16, seconds=2.0)
    first = perf_cache.key(kernel, puzzle, request, "yours-")
    assert first.startswith("yours-") and perf_cache.key(kernel, puzzle, request, "yours-") == first
    assert perf_cache.key(kernel, puzzle, request) != first  # the course's solution's are kept apart
    neighbour.write_text("k = 2\n")
    assert perf_cache.key(kernel, puzzle, request, "yours-") != first
    solution = tmp_path / "solutions" / "puzzle33.py"
    solution.parent.mkdir()
    solution.write_text("def k(): pass\n")
    puzzle.write_text("spec = 1\n# ---- your part (the kernel)\nmine = 1\n# ----------------------------------\n")
    theirs = perf_cache.key(solution, puzzle, request)
    puzzle.write_text("spec = 1\n# ---- your part (the kernel)\nmine = 2\n# ----------------------------------\n")
    assert perf_cache.key(solution, puzzle, request) == theirs  # the learner's edit keeps the reference's
    puzzle.write_text("spec = 2\n# ---- your part (the kernel)\nmine = 2\n# ----------------------------------\n")
    assert perf_cache.key(solution, puzzle, request) != theirs
    assert perf_cache.key(folder / "gone.py", puzzle, request) is None
