"""A status's meaning is the judge's (grader.judge.status), its presentation the renderers'
(grader.report.status_words, one StatusWords per status, built by keyword), and what the progress
file saves a SavedStatus whose words stay the strings the file has always held."""
import dataclasses
import json

import pytest

from grader.app.learner import ProgressFile
from grader.judge.results import PuzzleResult, Report, Status
from grader.judge.status import Status as JudgedStatus
from grader.report.status_words import GROUP_COLOURS, STATUS_WORDS, StatusWords, status_words
from grader.report.text import render
from grader.source.attempts import SavedStatus, rank


def test_every_status_has_its_words_and_a_group_with_a_colour():
    assert set(STATUS_WORDS) == set(Status)
    assert all(isinstance(status_words(s), StatusWords) for s in Status)
    assert {status_words(s).group for s in Status} <= set(GROUP_COLOURS)


def test_status_words_are_built_by_keyword_only():
    fields = [f.name for f in dataclasses.fields(StatusWords)]
    with pytest.raises(TypeError):
        StatusWords(*["x"] * len(fields))
    words = StatusWords(**{name: "x" for name in fields})
    assert words.mark == "x" and words.terminal == "x"


def test_the_judge_keeps_meaning_and_no_presentation():
    assert JudgedStatus is Status
    assert not any(hasattr(Status.PASS, name) for name in ("outcome", "mark", "colour", "tally"))
    assert [s for s in Status if not s.counts] == [Status.UNSUPPORTED, Status.INTERPRETER_LIMIT]


def _result(status: Status, message: str = "") -> PuzzleResult:
    return PuzzleResult(puzzle="puzzle01", title="Constant add", status=status, source="p.py", device="cpu",
                        message=message)


def test_the_terminal_reads_its_words_from_the_table():
    report = Report(results=(_result(Status.NOT_ATTEMPTED), _result(Status.UNSUPPORTED, "needs helion"),
                             _result(Status.ERROR, "it broke")), seconds=0.0)
    assert render(report) == (
        "· puzzle01 Constant add: not attempted\n"
        "– puzzle01 Constant add: unsupported, not a fail\n    needs helion\n"
        "! puzzle01 Constant add: GRADER ERROR (not your fault; please report it)\n    it broke\n"
        "0/3 passed, 1 not attempted, 1 unsupported, 1 grader error(s) (0.0 s)")


def test_the_progress_bar_and_the_watch_say_each_status_in_words():
    from grader.app.watch import Verdict
    assert [status_words(s).bar for s in Status] == [
        "pass", "fail", "not attempted", "unsupported", "interpreter limit", "error"]
    assert Verdict(Status.INTERPRETER_LIMIT, "", 1.0, "09:00:00").words == "INTERPRETER LIMIT"
    assert Verdict(Status.FAIL, "case big", 1.0, "09:00:00").words == "FAIL case big"


def test_saved_statuses_keep_the_progress_files_words():
    assert [s.value for s in SavedStatus] == ["not attempted", "unsupported", "failing", "grade on a GPU", "passed"]
    assert {s: s.saved for s in Status} == {
        Status.PASS: "passed", Status.FAIL: "failing", Status.NOT_ATTEMPTED: "not attempted",
        Status.UNSUPPORTED: "unsupported", Status.INTERPRETER_LIMIT: "grade on a GPU", Status.ERROR: "failing"}
    assert rank("passed") > rank("failing") == rank("grade on a GPU") > rank("unsupported") > rank("not attempted")
    assert rank("edited by hand") == 0 and rank(None) == 0


def test_a_saved_status_crosses_the_progress_file_as_its_plain_word(tmp_path):
    store = ProgressFile(tmp_path / ".progress.json")
    store.attempt("puzzle01", Status.FAIL.saved, "2026-11-29 09:00:00")
    store.attempt("puzzle01", Status.PASS.saved, "2026-11-29 09:05:00")
    store.attempt("puzzle01", Status.FAIL.saved, "2026-11-29 09:10:00")  # the best is kept
    entry = json.loads((tmp_path / ".progress.json").read_text())["puzzle01"]
    assert entry["status"] == "passed" and type(entry["status"]) is str
    assert entry["latest"] == {"status": "failing", "at": "2026-11-29 09:10:00"}
    assert store.status("puzzle01") == SavedStatus.PASSED


def test_the_class_pages_legend_reads_its_words_from_the_table():
    from grader.report.class_students import legend
    page = legend()
    assert page.count("<span class='m chip") == len(Status)
    assert ("<span class='m chip not-decided-here'>gpu</span> to grade on a GPU (the interpreter cannot run it; "
            "not a fail)</span>") in page
    assert "<span class='m chip passed'>✓</span> passed</span>" in page
    assert page.index("gpu</span>") < page.index("n/a</span>") < page.index("!</span>")  # the order a reader meets them
