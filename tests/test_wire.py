"""The worker wire and the result model's vocabulary: typed messages, statuses and failure kinds."""
from __future__ import annotations

import ast
import json
from pathlib import Path

import pytest

from grader.results import CaseResult, CheckResult, FailureKind, PuzzleResult, Status, to_dict

ROOT = Path(__file__).resolve().parent.parent


def test_statuses_and_kinds_read_as_the_plain_strings_they_replace():
    case = CaseResult(name="a", sizes={}, blocks={}, seed=0, grid=(1,), passed=False, kind="mismatch")
    result = PuzzleResult(puzzle="p", title="t", status="fail", source="s", device="cpu", cases=(case,))
    assert case.kind is FailureKind.MISMATCH and result.status is Status.FAIL
    assert f"{case.kind} {result.status}" == "mismatch fail" and case.kind == "mismatch"
    assert json.loads(json.dumps(to_dict(result)))["cases"][0]["kind"] == "mismatch"
    assert json.dumps(to_dict(result)).count('"fail"') == 1


def test_an_unknown_status_or_kind_is_refused():
    with pytest.raises(ValueError, match="unknown failure kind 'mismatched'"):
        CaseResult(name="a", sizes={}, blocks={}, seed=0, grid=(1,), passed=False, kind="mismatched")
    with pytest.raises(ValueError, match="unknown failure kind"):
        CheckResult(False, "x", "oops")
    with pytest.raises(ValueError, match="unknown status 'passed'"):
        PuzzleResult(puzzle="p", title="t", status="passed", source="s", device="cpu")


def test_every_kind_the_grader_and_the_corpus_name_is_a_failure_kind():
    """Kinds written as literals (``kind="..."``, ``Outcome(False, "...")``, ``CheckResult(False, ..., "...")``)
    and every kind the wrong-kernel corpus expects."""
    named = set()
    for path in (ROOT / "grader").glob("*.py"):
        for node in ast.walk(ast.parse(path.read_text())):
            if not isinstance(node, ast.Call):
                continue
            callee = ast.unparse(node.func)
            for keyword in node.keywords:
                if keyword.arg == "kind" and isinstance(keyword.value, ast.Constant) and callee != "Puzzle":
                    named.add(keyword.value.value)
            if callee in ("Outcome", "CheckResult") and len(node.args) >= 2 + (callee == "CheckResult"):
                value = node.args[1 + (callee == "CheckResult")]
                if isinstance(value, ast.Constant) and isinstance(value.value, str):
                    named.add(value.value)
    for path in (ROOT / "tests" / "wrong_kernels").glob("*.py"):
        for node in ast.parse(path.read_text()).body:
            if isinstance(node, ast.Assign) and ast.unparse(node.targets[0]) == "EXPECT_KIND":
                named.add(node.value.value)
    named.discard(None)
    assert named and named <= {k.value for k in FailureKind}, named - {k.value for k in FailureKind}
