"""Triton 3.6 to 3.9: APIs are tried, not looked up, and a puzzle whose API is gone is
`unsupported` (neither passed nor failed) in every report."""
from __future__ import annotations

import json

import pytest

from conftest import COURSE
from grader.course import apis
from grader.judge.options import Options
from grader.judge.results import PuzzleResult, Report, StudentResult
from grader.judge.session import grade_many
from grader.report import json_report as render_json
from grader.report import text as render_text
from grader.report.batch_files import grades_csv, gradescope, junit_xml


def test_apis_are_tried():
    import triton.language as tl
    assert apis.works("make_tensor_descriptor")
    assert not apis.works("no_such_api")
    # On the tested set block pointers work; on 3.9 the stub raises, and the probe says so.
    assert apis.works("make_block_ptr") == (tuple(int(p) for p in __import__("triton").__version__.split(".")[:2])
                                            < (3, 9))
    assert hasattr(tl, "make_block_ptr")  # why hasattr is not enough: 3.9 keeps the name


@pytest.fixture(scope="module")
def without_block_pointers(solution_results):
    """Puzzles 13 and 16 as on triton 3.9: the probe for block pointers fails. Puzzle 16 needs no
    block pointer, so its result is the session's shared one (read before the probe is patched,
    which would otherwise apply to the shared grading too); puzzle 13 is graded here."""
    puzzle16 = solution_results["puzzle16"]
    real = apis.works
    apis.works = lambda api: False if api == "make_block_ptr" else real(api)
    try:
        report = grade_many(COURSE, [("puzzle13", COURSE.solution_file("puzzle13"))], Options(), jobs=1)
    finally:
        apis.works = real
    return Report(results=(*report.results, puzzle16), seconds=report.seconds)


@pytest.mark.slow  # grades puzzles 13 and 16
def test_a_removed_api_makes_the_puzzle_unsupported_with_what_to_do(without_block_pointers):
    result = without_block_pointers.results[0]
    assert result.status == "unsupported" and not result.cases
    assert "this puzzle needs `tl.make_block_ptr`" in result.message
    assert "(triton 3.8 is the last version with it)" in result.message
    assert "Do puzzle16 instead" in result.message and "pip install -c constraints.txt triton" in result.message
    assert without_block_pointers.results[1].status == "pass"


@pytest.mark.slow  # grades puzzles 13 and 16
def test_unsupported_is_neither_passed_nor_failed(without_block_pointers):
    report = without_block_pointers
    assert report.exit_code == 0
    assert report.summary.unsupported == 1 and report.summary.failed == 0 and report.summary.passed == 1
    text = render_text.render(report)
    assert "– puzzle13 Weighted sum, forward (block pointers): unsupported, not a fail" in text
    assert "1/2 passed, 1 unsupported" in text
    assert json.loads(render_json.render(report))["summary"]["unsupported"] == 1


@pytest.mark.slow  # grades puzzles 13 and 16
def test_batch_reports_show_unsupported_apart(without_block_pointers):
    student = StudentResult("ada", without_block_pointers.results, (), 1.0)
    assert "ada,n/a,1,1," in grades_csv([student], ["puzzle13", "puzzle16"])
    junit = junit_xml([student])
    assert 'failures="0"' in junit and "<skipped" in junit
    tests = json.loads(gradescope(student))["tests"]
    assert tests[0]["max_score"] == 0 and tests[1]["max_score"] == 1


def test_a_grader_error_has_its_own_exit_code():
    error = PuzzleResult(puzzle="puzzle01", title="t", status="error", source="x", device="cpu", message="boom")
    passed = PuzzleResult(puzzle="puzzle02", title="t", status="pass", source="x", device="cpu")
    assert Report((error, passed)).exit_code == 3
    assert Report((passed,)).exit_code == 0


def test_probes_asked_from_several_threads_agree():
    """Graders ask from their threads at once; the interpreter patches triton.language while a
    probe runs, so two probes at a time once made one of them fail (puzzle 14 'unsupported'
    on triton 3.7)."""
    from concurrent.futures import ThreadPoolExecutor
    apis._works.cache_clear()
    expected = tuple(int(p) for p in __import__("triton").__version__.split(".")[:2]) < (3, 9)
    with ThreadPoolExecutor(4) as pool:
        answers = list(pool.map(apis.works, ["make_block_ptr"] * 4 + ["make_tensor_descriptor"] * 4))
    assert answers == [expected] * 4 + [True] * 4
