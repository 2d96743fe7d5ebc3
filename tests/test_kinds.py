"""Puzzle kinds as registries: grader.judge.kinds (the grader's) and grader.sandbox.kinds (the
worker's), both keyed by the names a puzzle file may give (grader.course.puzzle.KINDS)."""
from __future__ import annotations

import ast
import importlib
from pathlib import Path

import pytest

import grader
import grader.judge.kinds as kinds
import grader.sandbox.kinds as worker_kinds
from grader.course.puzzle import KINDS as AUTHORED

PACKAGE = Path(grader.__file__).parent
# Where a kind's name may be compared with: the two registries.
REGISTRIES = {PACKAGE / "judge" / "kinds", PACKAGE / "sandbox" / "kinds"}  # each folder, its wings inside


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


def test_each_module_of_grader_kinds_is_a_registered_kind():
    """A new kind is a module or a package here: forgetting to register it fails here, not at grading."""
    root = PACKAGE / "judge" / "kinds"
    found = sorted([*root.glob("*.py"), *(p.parent for p in root.glob("*/__init__.py"))])
    assert len(found) > 2, "grader/judge/kinds/ moved: this test must follow it"
    for path in found:
        if path.stem in ("__init__", "kind"):
            continue
        module = importlib.import_module(f"grader.judge.kinds.{path.stem}")
        assert kinds.KINDS.get(module.KIND.name) is module.KIND, path.name


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


def test_no_kind_overrides_the_life_cycle():
    """A kind supplies steps to the one life cycle (grader.judge.grade); no class in grader/ extends
    it, nor the runners it is given: each kind's runner stands alone."""
    from grader.judge.grade import PuzzleGrader
    extending = []
    for path in sorted(PACKAGE.rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.ClassDef):
                bases = {b.id if isinstance(b, ast.Name) else getattr(b, "attr", "") for b in node.bases}
                if bases & {"PuzzleGrader", "KernelRunner", "FunctionRunner", "HelionRunner"}:
                    extending.append(f"{path.relative_to(PACKAGE.parent)}:{node.lineno} {node.name}")
    assert not extending, extending
    for kind in kinds.KINDS.values():  # and at run time, whatever a module's text spells
        runner = kind.runner()
        assert not issubclass(runner, PuzzleGrader) and runner.__mro__ == (runner, object), runner


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


# ---- no kind is told by its name outside the registries ---------------------------------------

def _mentions_kind(node: ast.AST) -> bool:
    return (isinstance(node, ast.Name) and node.id == "kind") or (isinstance(node, ast.Attribute)
                                                                  and node.attr == "kind")


def _kind_names(node: ast.AST) -> set[str]:
    """The kind names a compared operand spells: a string, or strings in a literal tuple, list or set."""
    items = node.elts if isinstance(node, (ast.Tuple, ast.List, ast.Set)) else [node]
    return {item.value for item in items if isinstance(item, ast.Constant) and item.value in AUTHORED}


def kind_comparisons(source: str) -> list[int]:
    """The lines where a ``kind`` is compared with a kind's name (==, !=, in, not in)."""
    lines = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Compare):
            operands = [node.left, *node.comparators]
            if any(map(_mentions_kind, operands)) and any(_kind_names(op) for op in operands):
                lines.append(node.lineno)
    return lines


def test_the_detector_finds_the_comparisons_it_forbids():
    forbidden = ['puzzle.kind == "function"', 'course.puzzle(p).kind != "kernel"',
                 'self.kind not in ("kernel", "function")', 'kind == "kernel"', '"function" == self.puzzle.kind']
    allowed = ['failure.kind == "out_of_bounds"', 'c.kind != "skipped"', 'self.kind not in KINDS',
               'name == "kernel"']
    assert all(kind_comparisons(text) for text in forbidden)
    assert not any(kind_comparisons(text) for text in allowed)


def test_no_module_outside_the_registries_compares_a_kind_with_a_name():
    assert all(path.exists() for path in REGISTRIES), "a registry moved: REGISTRIES must follow it"
    found = []
    for path in sorted(PACKAGE.rglob("*.py")):
        if path in REGISTRIES or any(path.is_relative_to(r) for r in REGISTRIES if r.is_dir()):
            continue
        found += [f"{path.relative_to(PACKAGE.parent)}:{line}" for line in kind_comparisons(path.read_text())]
    assert not found, "ask grader.judge.kinds (or grader.sandbox.kinds) instead: " + ", ".join(found)


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


def test_a_fourth_kind_is_one_spec_for_the_course_and_the_definition_rules(monkeypatch):
    """A toy kind with a decorator of its own: registering its spec is all the definition rules,
    the loader's package list and the puzzle's kind check need (none of them names a kind)."""
    from grader.course import kinds as course_kinds
    toy = course_kinds.KindSpec(
        "toy", decorator=course_kinds.Decorator("toy.kernel", frozenset({"toy.kernel"}), family="Toy's (kernel)",
                                                config_name="toy.Config", config_origins=frozenset({"toy.Config"}),
                                                config_options=("config",), config_example="toy.Config(tile=...)"),
        package="toy", install="pip install toy")
    monkeypatch.setitem(course_kinds.SPECS, "toy", toy)
    assert course_kinds.packages() == {"helion": "pip install -e '.[helion]' -c constraints.txt",
                                       "toy": "pip install toy"}
    assert _decorator_says("import toy\n@toy.kernel(config=toy.Config(tile=4))\ndef k(x): pass") is None
    assert _decorator_says("import toy\n@toy.kernel(config=3 + x)\ndef k(x): pass") == \
        "option `config` of `toy.kernel` must be written out as `toy.Config(tile=...)` with literal values"
    refused = _decorator_says("import tile\n@tile.kernel\ndef k(x): pass")
    assert refused.startswith("decorator `tile.kernel` is not one of Triton's (jit, autotune, heuristics, "
                              "constexpr, constexpr_function), Helion's (kernel), Toy's (kernel) or Python's")
