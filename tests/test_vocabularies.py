"""Vocabularies that cross a boundary are enums whose members are the strings that always crossed
it: why a puzzle file did not load (into a result's JSON), the names of a result's checks (the
keys of its ``checks`` in JSON and on the warm server's wire)."""
import json
from pathlib import Path

import pytest

from grader.course.loader import LoadFailure, PuzzleLoadError
from grader.judge.failures import FailureKind
from grader.judge.options import Options
from grader.judge.results import Status, to_dict


def test_a_load_failure_keeps_its_word_and_is_a_failure_kind_but_unsupported():
    assert [f.value for f in LoadFailure] == ["syntax", "exception", "not_found", "unsupported"]
    assert {FailureKind(f) for f in LoadFailure if f != LoadFailure.UNSUPPORTED} == {
        FailureKind.SYNTAX, FailureKind.EXCEPTION, FailureKind.NOT_FOUND}
    assert PuzzleLoadError("p.py line 3: does not parse", "syntax", 3).kind is LoadFailure.SYNTAX
    assert PuzzleLoadError("p.py raised").kind is LoadFailure.EXCEPTION
    with pytest.raises(ValueError):
        PuzzleLoadError("p.py", "mismatch")  # a failure kind, but not one a file's loading ends in


def test_a_load_failure_crosses_into_the_results_json_as_its_word(course):
    from grader.judge.session import load_failure
    error = PuzzleLoadError("puzzles/puzzle01_constant_add.py line 3: does not parse", LoadFailure.SYNTAX, 3)
    result = load_failure(course, "puzzle01", Path("puzzles/puzzle01_constant_add.py"), error, Options())
    assert result.status == Status.FAIL and result.checks["load"].kind is FailureKind.SYNTAX
    written = json.loads(json.dumps(to_dict(result)))
    assert written["checks"]["load"]["kind"] == "syntax" and written["status"] == "fail"
    missing = PuzzleLoadError("puzzles/puzzle35_x.py needs helion, which is not installed here", "unsupported")
    unsupported = load_failure(course, "puzzle01", Path("p.py"), missing, Options())
    assert unsupported.status == Status.UNSUPPORTED and not unsupported.checks


def test_a_checks_name_is_its_word_in_json_and_on_the_warm_servers_wire():
    import msgspec

    from grader.judge.results import CheckName, CheckResult, PuzzleResult, Report
    assert [n.value for n in CheckName] == ["load", "sniffing", "gpu_compile"]
    result = PuzzleResult(puzzle="puzzle01", title="Constant add", status=Status.FAIL, source="p.py", device="cpu",
                          checks={CheckName.GPU_COMPILE: CheckResult(False, "ptxas failed", FailureKind.COMPILE)})
    assert list(json.loads(json.dumps(to_dict(result)))["checks"]) == ["gpu_compile"]
    back = msgspec.msgpack.decode(msgspec.msgpack.encode(Report((result,))), type=Report).results[0]
    assert list(back.checks) == ["gpu_compile"] and CheckName.GPU_COMPILE in back.checks


def test_every_kinds_check_is_named_from_the_vocabulary():
    from grader.judge.kinds import KINDS
    from grader.judge.results import CheckName
    names = {check.name for kind in KINDS.values() for check in kind.checks()}
    assert names and all(isinstance(name, CheckName) for name in names)


def test_failure_kind_has_one_import_path_the_failures_face():
    import ast
    root = Path(__file__).resolve().parents[1]
    elsewhere = []
    for folder in ("grader", "tests", "benchmarks", "scripts"):
        for path in (root / folder).rglob("*.py"):
            if path.is_relative_to(root / "grader" / "judge" / "failures"):
                continue  # the package's own modules define it and gather it into the face
            for node in ast.walk(ast.parse(path.read_text())):
                if isinstance(node, ast.ImportFrom) and any(a.name == "FailureKind" for a in node.names) \
                        and node.module != "grader.judge.failures":
                    elsewhere.append(f"{path.relative_to(root)}:{node.lineno} from {node.module}")
    assert not elsewhere, elsewhere


def test_warm_steps_are_named_by_enums_and_cross_to_the_zygote_as_their_words():
    import enum

    from grader.channel.wire import CoreWarmStep
    from grader.course.kinds import package_warm_steps
    from grader.judge.kinds import KINDS
    from grader.sandbox import kinds as worker_kinds
    from grader.sandbox.warmup import CORE
    assert [s.value for s in CoreWarmStep] == ["interpreter", "compiler", "torch"]
    steps = [step.name for step in CORE + worker_kinds.warm_steps()]
    assert all(isinstance(name, enum.StrEnum) for name in steps), steps
    asked = {name for kind in KINDS.values() for name in kind.warm} | set(package_warm_steps().values())
    assert asked and asked <= set(steps), asked - set(steps)  # what the grader asks for, a zygote knows
    # the zygote's command line and its fork request carry the words
    assert ",".join(sorted({CoreWarmStep.TORCH, CoreWarmStep.COMPILER})) == "compiler,torch"
    assert json.loads(json.dumps({"op": "fork", "warm": sorted({CoreWarmStep.TORCH})})) == {"op": "fork", "warm": ["torch"]}
