"""Puzzle kinds as registries of wings: grader.course.kinds (the course's), grader.judge.kinds (the
grader's) and grader.sandbox.kinds (the worker's), each keyed by the names a puzzle file may give
(grader.course.puzzle.KINDS). That no other module names a kind: tests/test_kind_names.py."""
from __future__ import annotations

import ast
import importlib
from pathlib import Path

import pytest

import grader
import grader.course.kinds as course_kinds
import grader.judge.kinds as kinds
import grader.sandbox.kinds as worker_kinds
from grader.course.puzzle import KINDS as AUTHORED

PACKAGE = Path(grader.__file__).parent


def test_every_course_puzzle_is_of_a_registered_kind(course):
    for puzzle_id in course.ids:
        puzzle = course.puzzle(puzzle_id)
        assert kinds.kind_of(puzzle).name == puzzle.kind, puzzle_id
        assert worker_kinds.named(puzzle.kind).name == puzzle.kind, puzzle_id


def test_the_registries_hold_the_kinds_a_puzzle_may_name():
    assert list(kinds.KINDS) == list(AUTHORED)
    assert list(worker_kinds.KINDS) == list(AUTHORED)
    assert all(name == kind.name for name, kind in kinds.KINDS.items())
    # what no other kind owns loads as one kind: the worker always has an answer
    assert [k.name for k in worker_kinds.KINDS.values() if k.owns is None] == ["kernel"]


@pytest.mark.parametrize("registry", [course_kinds, kinds, worker_kinds], ids=["course", "judge", "sandbox"])
def test_each_wing_of_a_registry_is_listed_there(registry):
    """A new kind is a wing (a module or a package) beside its registry: forgetting its line there
    fails here, not at grading. Each wing declares the kind it is listed as."""
    root = Path(registry.__file__).parent
    found = sorted([*root.glob("*.py"), *(p.parent for p in root.glob("*/__init__.py"))])
    wings = [f"{registry.__name__}.{path.stem}" for path in found if path.stem not in ("__init__", "kind")]
    assert sorted(registry.WINGS.values()) == sorted(wings) and list(registry.WINGS) == list(AUTHORED)
    declared = registry.SPECS if registry is course_kinds else registry.KINDS
    for name, wing in registry.WINGS.items():
        module = importlib.import_module(wing)
        assert declared[name] is getattr(module, "SPEC" if registry is course_kinds else "KIND"), wing


def test_a_wing_declaring_another_kind_than_its_line_is_refused(monkeypatch):
    monkeypatch.setitem(kinds.WINGS, "tiled", "grader.judge.kinds.kernel")
    with pytest.raises(ValueError, match=r"^grader.judge.kinds.kernel.KIND declares kind 'kernel', listed as 'tiled'$"):
        kinds.named("tiled")


def test_an_unknown_kind_is_refused_with_the_kinds_there_are():
    there = ", ".join(map(repr, AUTHORED))  # 'kernel', 'function'
    with pytest.raises(kinds.UnknownKind) as refused:
        kinds.named("tiled")
    assert str(refused.value) == f"no puzzle kind 'tiled': the kinds are {there}"
    with pytest.raises(kinds.UnknownKind, match="no puzzle kind"):
        kinds.kind_of(type("Stub", (), {"kind": ["kernel"]})())  # not even a name
    with pytest.raises(ValueError) as refused:
        worker_kinds.named("tiled")
    assert str(refused.value) == f"the worker knows no puzzle kind 'tiled': it knows {there}"


def test_a_puzzle_file_naming_no_kind_fails_as_before():  # the text pinned: a new kind changes it
    from grader.course.puzzle import Case, Puzzle
    common = dict(id="puzzle99", title="t", statement="s", spec=lambda x: x, kernel="k",
                  cases=(Case("c", {"N": 4}, {}),))
    with pytest.raises(ValueError, match=r"^puzzle99: kind must be 'kernel' or 'function' or 'helion', not 'tiled'$"):
        Puzzle(grid=lambda d: (1,), kind="tiled", **common)
    with pytest.raises(ValueError, match=r"^puzzle99: a kernel puzzle needs a grid$"):
        Puzzle(grid=None, **common)
    assert Puzzle(grid=None, kind="function", **common).launch_grid(common["cases"][0]) == ()


def test_what_each_kind_says():
    kernel, function = kinds.KINDS["kernel"], kinds.KINDS["function"]
    assert function.order < kernel.order  # autograd puzzles start first when many are graded
    assert (kernel.pictures, kernel.viewer) == (True, True)
    assert (function.pictures, function.viewer) == (False, False)
    assert (kernel.bench.what, function.bench.what) == ("kernel", "forward + backward")
    assert (kernel.bench.spec_named, function.bench.spec_named) == (None, "PyTorch autograd")
    assert function.called == "an autograd puzzle"


def test_each_kind_names_its_runner_and_the_checks_it_lists():
    from grader.judge.kinds.function.run import FunctionRunner
    from grader.judge.kinds.helion.run import HelionRunner
    from grader.judge.kinds.kernel.run import KernelRunner
    kernel, function, helion = (kinds.KINDS[name] for name in ("kernel", "function", "helion"))
    assert (kernel.runner(), function.runner(), helion.runner()) == (KernelRunner, FunctionRunner, HelionRunner)
    # The sm_90 compile: beside a kernel's cases, gating them; after Helion's; an autograd case's
    # launches compile beside its replays, inside its runner (they fail the case, not the puzzle).
    assert [(c.name, c.gate) for c in kernel.checks()] == [("gpu_compile", True)]
    assert [(c.name, c.gate) for c in helion.checks()] == [("gpu_compile", False)]
    assert function.checks() == ()
    assert (kernel.warm, function.warm, helion.warm) == (frozenset(), {"fake_tensors"}, {"helion"})
    assert (kernel.decorator, function.decorator, helion.decorator) == ("@triton.jit", "@triton.jit",
                                                                        "@helion.kernel")


def test_every_registered_kind_is_whole():
    """Each kind of both registries, whichever there are: a runner that answers every step the life
    cycle asks, its checks, the words messages name it by, a --bench plan, and the worker's load,
    run, bench and profile."""
    from grader.judge.case_run import CaseRunner
    from grader.judge.kinds.kind import Check
    steps = [name for name in vars(CaseRunner) if not name.startswith("_")]
    assert len(steps) == 10, steps
    for name, kind in kinds.KINDS.items():
        runner = kind.runner()
        assert isinstance(runner, type) and all(callable(getattr(runner, step, None)) for step in steps), name
        assert all(isinstance(check, Check) and isinstance(check.gate, bool) for check in kind.checks()), name
        assert kind.called.startswith(("a ", "an ")) and kind.bench.what, name
    for name, kind in worker_kinds.KINDS.items():
        assert worker_kinds.named(name) is kind
        assert all(callable(step) for step in (kind.load, kind.ran, kind.bench, kind.profile)), name


def test_each_runner_extends_the_base_and_nothing_else():
    """A kind supplies steps to the one life cycle (grader.judge.grade): its runner extends the base
    (grader.judge.case_run.CaseRunner), no other runner, and no class in grader/ extends the grader."""
    from grader.judge.case_run import CaseRunner
    runners = {kind.runner() for kind in kinds.KINDS.values()}
    extending = []
    for path in sorted(PACKAGE.rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.ClassDef):
                bases = {b.id if isinstance(b, ast.Name) else getattr(b, "attr", "") for b in node.bases}
                if bases & {"PuzzleGrader", *(runner.__name__ for runner in runners)}:
                    extending.append(f"{path.relative_to(PACKAGE.parent)}:{node.lineno} {node.name}")
    assert not extending, extending
    for runner in runners:  # and at run time, whatever a module's text spells
        assert runner.__mro__[1:] == CaseRunner.__mro__, runner


def test_the_runner_base_asks_for_sniff_and_run_and_does_nothing_else_unasked():
    """The base's contract: a runner writes ``sniff`` and ``run``; every other step it leaves does
    nothing, or gives the plain answer (the puzzle's cases, the learner's object loaded by name)."""
    from types import SimpleNamespace

    from grader.channel import wire
    from grader.course.loader import Course
    from grader.judge.case_run import CaseOutcome, CaseRunner
    from grader.judge.options import Options
    from grader.judge.results import PuzzleResult
    from pristine import PRISTINE

    class Sniffless(CaseRunner):
        def run(self, case, carried):
            return CaseOutcome()

    class Least(Sniffless):
        def sniff(self):
            return None

    puzzle = Course(PRISTINE).puzzle("puzzle02")
    state = SimpleNamespace(puzzle=puzzle, options=Options(), kernel_file=Path("/course/mine.py"))
    with pytest.raises(TypeError, match="abstract method '?sniff"):
        Sniffless(state)
    runner = Least(state)
    assert (runner.state, runner.puzzle, runner.options, runner.info) == (state, puzzle, state.options, None)
    assert runner.unsupported() is None  # puzzle 2 requires no Triton API a Triton lacks
    assert runner.load_request() == (wire.Load(file="/course/mine.py", kernel=puzzle.kernel), (), None)
    info = wire.Loaded(params=(), line=1)
    assert runner.loaded(info, None) == (info, None) and runner.info is info  # kept for the cases
    assert runner.cases() == list(puzzle.cases) and runner.cases() is not runner.cases()
    assert runner.next_pass({"classic[seed=0]": "carried"}, aborted=False) == []
    assert runner.settle({}) is None and runner.pass_note() == ""
    result = PuzzleResult(puzzle="puzzle02", title="t", status="pass", source="mine.py", device="cpu")
    assert runner.finish(result) is result


def test_the_life_cycle_names_no_kind():
    """grader/judge/grade.py: no kind's name, no module of a kind, no kind's own words."""
    path = PACKAGE / "judge" / "grade.py"
    source = path.read_text()
    tree = ast.parse(source)
    named = [node.value for node in ast.walk(tree) if isinstance(node, ast.Constant) and node.value in AUTHORED]
    imported = [node.module for node in ast.walk(tree) if isinstance(node, ast.ImportFrom)
                and (node.module or "").startswith("grader.judge.kinds")]
    imported += [alias.name for node in ast.walk(tree) if isinstance(node, ast.Import) for alias in node.names
                 if alias.name.startswith("grader.judge.kinds")]
    words = [word for word in ("helion", "autograd", "triton.jit", "torch.autograd") if word in source.lower()]
    assert (named, imported, words) == ([], [], [])


def test_load_asks_the_object_not_the_puzzle():
    def plain(x):
        return x

    class Wrapper:
        @staticmethod
        def forward(ctx, x):
            return plain(x)

    assert worker_kinds.for_object(Wrapper).name == "function"
    assert worker_kinds.for_object(plain).name == "kernel"
    assert worker_kinds.for_object(None).name == "kernel"
    from grader.source.capture import captured
    with pytest.raises(TypeError, match=r"^42 is neither a @triton.jit kernel nor a class$"):
        captured(42)


def _decorator_says(source: str) -> str | None:
    """What the definition rules say of the first definition's first decorator in ``source``."""
    import ast as syntax

    from grader.source.definition_rules import bindings_of, decorator_problem
    tree = syntax.parse(source)
    return decorator_problem(tree.body[-1].decorator_list[0], bindings_of(tree))


def test_a_kinds_own_decorator_is_judged_from_its_spec():
    """Helion's decorator and its config options, as grader.course.kinds describes them."""
    head = "import helion\n"
    assert _decorator_says(head + "@helion.kernel(static_shapes=True)\ndef k(x): pass") is None
    assert _decorator_says(head + "@helion.kernel(config=helion.Config(block_sizes=[32]))\ndef k(x): pass") is None
    assert _decorator_says(head + "@helion.kernel(True)\ndef k(x): pass") == \
        "`helion.kernel(...)` takes options by keyword only"
    assert _decorator_says(head + "C = helion.Config(block_sizes=[32])\n@helion.kernel(config=C)\ndef k(x): pass") == \
        ("option `config` of `helion.kernel` must be written out as "
         "`helion.Config(block_sizes=[...], num_warps=...)` with literal values")
    assert _decorator_says(head + "@helion.kernel(configs=[helion.Config(block_sizes=[n])])\ndef k(x): pass") == \
        ("option `configs` of `helion.kernel` must be written out as "
         "`helion.Config(block_sizes=[...], num_warps=...)` with literal values")


# ---- a fourth kind, added the real way: its wings in a package of its own, and one line in each registry

# The toy kind's wings: its spec for the course, its PuzzleKind for the grader, its WorkerKind for the worker.
TOY_WINGS = {
    "course.py": """
from grader.course.kinds import Decorator, KindSpec
from grader.course.tracks import Track

SPEC = KindSpec(
    "toy", decorator=Decorator("toy.kernel", frozenset({"toy.kernel"}), family="Toy's (kernel)", config_name="toy.Config",
                               config_origins=frozenset({"toy.Config"}), config_options=("config",),
                               config_example="toy.Config(tile=...)"),
    package="toy", install="pip install toy", stand_ins=("toy", "toy.lang"), warm="toy",
    track=Track("toys", 5, "Track five: toy kernels", called="the toy track"))
""",
    "judge.py": """
from grader.judge.kinds.kind import BenchPlan, PuzzleKind, kernel_size_plan


class ToyRunner:
    pass


KIND = PuzzleKind(name="toy", called="a toy puzzle", runner=lambda: ToyRunner, order=2, pictures=False, viewer=False,
                  bench=BenchPlan(blocks=True, plan=kernel_size_plan, what="toy kernel"), warm=frozenset({"toy"}),
                  decorator="@toy.kernel")
""",
    "worker.py": """
from grader.sandbox.kinds.kind import WorkerKind
from grader.sandbox.warmup import WarmStep

KIND = WorkerKind("toy", owns=lambda obj: getattr(obj, "is_toy", False), load=None, ran=lambda kernel: None,
                  bench=None, profile=None, warm=(WarmStep("toy", lambda: None, asked=("cpu", "compile")),))
""",
}
# Its package, installed as far as the grader can tell, which the grader's own process must never import.
TOY_PACKAGE = {"__init__.py": "raise ImportError('toy is imported only by the worker')\n", "lang.py": ""}
TOY_PUZZLE = """
import toy
import toy.lang as tl
from grader.puzzle import Case, Puzzle


@toy.kernel(config=toy.Config(tile=4))
def toy_copy(x):
    return tl.copy(x)


PUZZLE = Puzzle(id="puzzle99", title="Toy copy", statement="Copy x.", spec=lambda x: x, kernel="toy_copy", grid=None,
                cases=(Case("small", {"N": 4}, {}),), kind="toy", track="toys")
"""


@pytest.fixture
def toy(tmp_path, monkeypatch):
    """The toy kind's wings in a package on sys.path, and its one line in each registry."""
    import sys
    for folder, files in (("toy_kind", {"__init__.py": "", **TOY_WINGS}), ("toy", TOY_PACKAGE)):
        (tmp_path / folder).mkdir()
        for name, text in files.items():
            (tmp_path / folder / name).write_text(text)
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.setitem(course_kinds.WINGS, "toy", "toy_kind.course")
    monkeypatch.setitem(kinds.WINGS, "toy", "toy_kind.judge")
    monkeypatch.setitem(worker_kinds.WINGS, "toy", "toy_kind.worker")
    yield tmp_path
    for name in [n for n in sys.modules if n.split(".")[0] in ("toy", "toy_kind")]:
        del sys.modules[name]


def test_a_fourth_kind_is_its_wings_and_a_line_in_each_registry(toy):
    """Nothing else names a kind (tests/test_kind_names.py), so the toy kind's wings and three lines
    are all that the puzzle's check, the loader, the definition rules, the tracks, the grading
    context, the worker and doctor need."""
    import sys

    from grader.app.doctor import package_finding
    from grader.course.loader import load_puzzle
    from grader.judge.options import Options
    from grader.judge.session import _compile_warm, start_workers
    assert list(course_kinds.SPECS) == list(kinds.KINDS) == list(worker_kinds.KINDS) == [*AUTHORED, "toy"]
    # the puzzle's check and the loader: its file read for its PUZZLE with toy stood in for, never imported
    (toy / "puzzle99_toy_copy.py").write_text(TOY_PUZZLE)
    puzzle = load_puzzle(str(toy / "puzzle99_toy_copy.py"))
    assert (puzzle.kind, puzzle.track, kinds.kind_of(puzzle).called) == ("toy", "toys", "a toy puzzle")
    assert "toy" not in sys.modules and course_kinds.stand_ins()[-2:] == ("toy", "toy.lang")
    assert course_kinds.packages() == {"helion": "pip install -e '.[helion]' -c constraints.txt",
                                       "toy": "pip install toy"}
    assert [t.notebook for t in course_kinds.tracks()][-2:] == ["04_helion", "05_toys"]
    # the definition rules judge its decorator from its spec
    assert _decorator_says("import toy\n@toy.kernel(config=toy.Config(tile=4))\ndef k(x): pass") is None
    assert _decorator_says("import toy\n@toy.kernel(config=3 + x)\ndef k(x): pass") == \
        "option `config` of `toy.kernel` must be written out as `toy.Config(tile=...)` with literal values"
    refused = _decorator_says("import tile\n@tile.kernel\ndef k(x): pass")
    assert refused.startswith("decorator `tile.kernel` is not one of Triton's (jit, autotune, heuristics, "
                              "constexpr, constexpr_function), Helion's (kernel), Toy's (kernel) or Python's")
    # the grading context warms its package where a file imports it: the interpreter's zygote as it starts
    assert _compile_warm([toy / "puzzle99_toy_copy.py"]) == {"toy"}
    crew, = start_workers(Options(device="cpu"), None, 1, now=False, compile_warm=frozenset({"torch", "toy"}))
    assert crew.worker.warm == {"toy"} and crew.compiler.worker.warm == {"torch"}
    # the worker: its object, its warm step
    assert worker_kinds.for_object(type("Kernel", (), {"is_toy": True})()).name == "toy"
    assert [step.name for step in worker_kinds.warm_steps()] == ["fake_tensors", "helion", "toy"]
    # doctor: its package, its track
    assert package_finding(course_kinds.SPECS["toy"], None).message == (
        "toy is not installed: the toy track's puzzles are graded `unsupported` (the other tracks do not need it).")


def test_a_puzzle_naming_a_kind_or_track_none_lists_is_refused_with_those_there_are(toy):
    from grader.course.puzzle import Case, Puzzle
    common = dict(id="puzzle99", title="t", statement="s", spec=lambda x: x, kernel="k", grid=None,
                  cases=(Case("c", {"N": 4}, {}),))
    with pytest.raises(ValueError, match=r"^puzzle99: kind must be 'kernel' or 'function' or 'helion' or 'toy', "
                                         r"not 'tiled'$"):
        Puzzle(kind="tiled", **common)
    with pytest.raises(ValueError, match=r"^puzzle99: track must be one of 'classic', 'cs336', 'transformer', "
                                         r"'helion', 'toys', not 'tiles'$"):
        Puzzle(kind="toy", track="tiles", **common)
