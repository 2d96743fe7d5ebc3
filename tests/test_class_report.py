"""The class's page (report.html) from typed results, and the attempts a submission's progress
file carries: written by the learner's side, bounded, read back by a class's intake, listed by
the batch's reports."""
import json
import re
import tempfile
from dataclasses import replace
from pathlib import Path

import pytest

from grader.app.learner import ProgressFile
from grader.course.loader import Course
from grader.judge.batch_resume import finished
from grader.judge.failures import FailureKind
from grader.judge.results import Attempts, CaseResult, CheckResult, PuzzleResult, Status, StudentResult
from grader.judge.similarity.model import Fragment, PuzzleThreshold, SimilarityReport, SimilarPair
from grader.report.batch_files import summary, write_reports
from grader.report.class_page import class_page
from grader.source.attempts import IDLE, MAX_HISTORY, ProgressError, read_attempts
from grader.source.intake import prepare_class
from paths import ROOT

NEVER_RESCALED = ("case classic[seed=0] (N0=4, T=200, B1=64): wrong values in `z`: 400 of 800 elements differ. "
                  "It looks like an online sum never rescaled when the maximum grows: when a chunk raises the "
                  "maximum from m to m_new, multiply the running sum by `tl.exp(m - m_new)`.")
IDS = ["puzzle02", "puzzle19"]


def _case(passed: bool, message: str = "", kind=None) -> CaseResult:
    return CaseResult("classic", {"N0": 4, "T": 200}, {"B1": 64}, 0, (4,), passed, kind, message)


def _puzzle(puzzle: str, status: Status, message: str = "", checks=None) -> PuzzleResult:
    title = {"puzzle02": "Constant add, blocked", "puzzle19": "Online softmax"}[puzzle]
    cases = () if status == Status.NOT_ATTEMPTED else (
        (_case(True),) if status == Status.PASS else (_case(False, message, FailureKind.MISMATCH),))
    return PuzzleResult(puzzle, title, status, f"x/{puzzle}.py", "cpu", cases, checks or {}, message)


def class_results() -> list[StudentResult]:
    """Four students: two share the online softmax's known mistake, one's kernel does not compile."""
    compile_error = {"gpu_compile": CheckResult(False, "line 5: `tl.lod` is not a Triton function", FailureKind.COMPILE)}
    return [
        StudentResult("ana", (_puzzle("puzzle02", Status.PASS), _puzzle("puzzle19", Status.PASS)), (), 3.0,
                      (Attempts("puzzle02", 3, 420.0, "2026-11-20 10:00:00", "2026-11-20 10:07:00", "passed", 3),)),
        StudentResult("bo", (_puzzle("puzzle02", Status.PASS), _puzzle("puzzle19", Status.FAIL, NEVER_RESCALED)),
                      (), 3.0),
        StudentResult("cy", (_puzzle("puzzle02", Status.FAIL, compile_error["gpu_compile"].message, compile_error),
                             _puzzle("puzzle19", Status.FAIL, NEVER_RESCALED)), ("bad.py: could not be read",), 3.0),
        StudentResult("di", (_puzzle("puzzle02", Status.PASS), _puzzle("puzzle19", Status.NOT_ATTEMPTED,
                                                                         "no `online_softmax_kernel` in the submission")),
                      (), 3.0),
    ]


def similarity() -> SimilarityReport:
    fragments = (Fragment("bo/puzzles/puzzle19_online_softmax.py", 10, 12, "m = float('-inf')\ns = 0.0\n<b>"),
                 Fragment("cy/puzzles/puzzle19_online_softmax.py", 11, 13, "mx = float('-inf')\nt = 0.0\n"))
    return SimilarityReport((SimilarPair("puzzle19", ("bo", "cy"), 41, 1.0, fragments),),
                            (PuzzleThreshold("puzzle19", 66, 33, 0.85, 4),), "winnowing")


def _words(page: str) -> str:
    """The words a reader sees: no markup, no bars (their tooltips), no style or script."""
    page = re.sub(r"<(svg|style|script)\b.*?</\1>", " ", page, flags=re.S)
    page = re.sub(r"</?(a|b|code|span)\b[^>]*>", "", page)  # inline: no gap where they open or close
    return re.sub(r"\s+", " ", re.sub(r"<[^>]+>", " ", page)).strip()


def test_the_page_says_what_the_class_got_wrong_in_words():
    page = class_page(class_results(), IDS, 12.0, similarity())
    text = _words(page)
    assert "2 of 4: an online sum never rescaled when the maximum grows" in text
    assert "2 of 4: wrong values" in text and "1 of 4: " in text
    assert "4 students graded on 2 puzzles; a median of 1 puzzle passed." in text
    # the counts beside each percentage: puzzle 2 passed by 3 of 4, tried by 4; puzzle 19 by 1 of 4, tried by 3
    assert re.search(r"puzzle02 Constant add, blocked\s+3 of 4, 75 %\s+4 of 4", text)
    assert re.search(r"puzzle19 Online softmax\s+1 of 4, 25 %\s+3 of 4", text)


def test_the_page_links_each_student_to_their_messages_and_problems():
    page = class_page(class_results(), IDS, 12.0, similarity())
    assert "<a href='#s-cy-puzzle19'" in page and "id='s-cy-puzzle19'" in page and "id='s-cy'" in page
    assert "bad.py: could not be read" in page
    assert "tl.lod" in page and "wrong values in <code>z</code>" in page  # the notebook's renderer, inside
    assert "no <code>online_softmax_kernel</code> in the submission" in page or \
        "no `online_softmax_kernel` in the submission" in page


def test_the_page_shows_the_similar_pairs_escaped_and_marks_their_students():
    page = class_page(class_results(), IDS, 12.0, similarity())
    assert "flagged by the source (41 fingerprints shared, score 1.00)" in page
    assert "bo/puzzles/puzzle19_online_softmax.py</b>, lines 10-12" in page
    assert "&lt;b&gt;" in page and "\n<b>\n" not in page
    assert ("data-student='bo bo'><td class='who'><a href='#s-bo' title='bo'>bo</a> "
            "<span title='in a similar pair'>⚑") in page
    assert "Not looked for in this batch." in class_page(class_results(), IDS, 12.0, None)


def test_the_page_lists_attempts_and_time_spent():
    page = class_page(class_results(), IDS, 12.0)
    assert "<td>puzzle02</td><td>3</td><td>7 min</td>" in page and "passed (at attempt 3)" in page
    assert "<td class='n'>3 / 7 min</td>" in page  # ana's row: attempts / time


def _text(svg_or_page: str) -> list[str]:
    """The words an SVG or a page writes, one per <text>."""
    return re.findall(r"<text[^>]*>([^<]*)</text>", svg_or_page)


def test_the_passed_chart_has_a_named_bar_per_student_sorted_and_titled_axes():
    """Issue 34: five bars labelled "1" read as "everyone passed 1" when the students passed 2, 4, 1, 0, 3."""
    statuses = {"ana": 2, "bo": 4, "cy": 1, "di": 0, "eli": 3}
    ids = ["puzzle02", "puzzle19"] * 2
    results = [StudentResult(name, tuple(PuzzleResult(f"puzzle{i:02d}", "T", Status.PASS if i < n else Status.FAIL,
                                                      "x.py", "cpu") for i in range(4)), (), 1.0)
               for name, n in statuses.items()]
    page = class_page(results, ids, 1.0)
    chart = page[page.index("<h3>Puzzles passed per student</h3>"):page.index("<h3>Each puzzle attempted</h3>")]
    # a bar per student, most passed first, their name before it and their count after it
    rows = re.findall(r"<tr><td class='l' title='[^']*'>([^<]*)</td><td><svg.*?</svg></td><td>(\d+)</td></tr>", chart)
    assert rows == [("bo", "4"), ("eli", "3"), ("ana", "2"), ("cy", "1"), ("di", "0")]
    assert "<th class='l'>student</th><th>puzzles passed, of 4</th>" in chart  # the axes' titles
    ticks = re.findall(r"<text class='tp-tick'[^>]*>([^<]*)</text>", chart)
    assert ticks == ["0", "1", "2", "3", "4"]  # the x axis, 0 to the number of puzzles
    assert "<title>bo: 4 puzzles passed</title>" in chart
    assert _text(chart) == ticks, "a label in SVG text is cut at the chart's edge; labels are HTML"


def test_a_large_class_gets_a_histogram_with_titled_axes_and_labels_that_do_not_run_together():
    from grader.report.charts import column_chart
    svg = column_chart([3, 0, 5] + [1] * 38, [str(n) for n in range(41)], "c", "puzzles passed", "students")
    words = _text(svg)
    assert "puzzles passed" in words and "students" in words
    # 41 columns of 17 px: every other one labelled, so that "10" and "11" do not run together
    assert re.findall(r"<text class='tp-tick'[^>]*>([^<]*)</text>", svg) == [str(n) for n in range(0, 41, 2)]
    assert "<title>puzzles passed 1: 0 students</title>" in svg
    results = [StudentResult(f"s{i:03d}", (_puzzle("puzzle02", Status.PASS),), (), 1.0) for i in range(61)]
    page = class_page(results, ["puzzle02"], 1.0)
    chart = page[page.index("<h3>Puzzles passed per student</h3>"):page.index("<h3>Each puzzle attempted</h3>")]
    assert "how many students passed each number of puzzles" in chart and "s000" not in chart


def test_attempt_figures_say_how_many_students_they_come_from_and_need_three():
    """Issue 34: one student's progress file made the class's median "36 min" on puzzle 1."""
    def tried(puzzle, minutes):
        return (Attempts(puzzle, 6, minutes * 60.0, "2026-11-20 10:00:00", "2026-11-20 11:00:00", "passed", 6),)
    results = class_results()  # ana alone carries a progress file (puzzle02, 7 min)
    text = re.sub(r"<[^>]+>", " ", class_page(results, IDS, 12.0))
    assert "Left out, from fewer than 3 students' progress files: puzzle02 (1 student)." in text
    assert "median time spent" not in text
    results = [StudentResult(n, r.results, r.problems, 3.0, tried("puzzle19", m) + tried("puzzle02", m))
               for n, r, m in zip("abc", class_results(), (10, 20, 36))]
    page = class_page(results, IDS, 12.0)
    assert "<th>students with a progress file</th><th>median attempts</th><th>median time spent</th>" in page
    assert "<tr><td>puzzle02 Constant add, blocked</td><td>3</td><td>6</td><td>20 min</td></tr>" in page
    assert "Left out" not in page


def test_the_page_is_self_contained():
    page = class_page(class_results(), IDS, 12.0, similarity())
    assert not re.search(r"(src|href)=['\"](?!#|data:)", page), "the page links to something outside itself"
    assert "<svg" in page and "<script>" in page and "default-src 'none'" in page


def test_batch_writes_the_page_and_the_similarity_file(tmp_path):
    results = class_results()
    write_reports(results, IDS, tmp_path, 12.0, similarity=similarity())
    assert (tmp_path / "report.html").read_text().startswith("<!DOCTYPE html>")
    assert SimilarityReport.from_json((tmp_path / "similarity.json").read_bytes()) == similarity()
    doc = json.loads((tmp_path / "results.json").read_text())
    assert doc["students"][0]["attempts"] == [{"puzzle": "puzzle02", "count": 3, "seconds": 420.0,
                                               "first": "2026-11-20 10:00:00", "last": "2026-11-20 10:07:00",
                                               "best": "passed", "passed_at_attempt": 3}]
    assert finished(tmp_path, IDS)["ana"].attempts == results[0].attempts  # --resume keeps them
    text = summary(results, IDS, 12.0, tmp_path, similarity())
    assert "1 pair(s) of similar submissions" in text and "puzzle19: bo and cy: flagged by the source (41 fingerprints shared" in text


# ---- attempts ------------------------------------------------------------------------------

def test_progress_keeps_a_bounded_history_with_the_count_and_time_spent(tmp_path):
    store = ProgressFile(tmp_path / ".progress.json")
    store.attempt("puzzle07", "not attempted", "2026-11-25 09:00:00")  # the stub: no attempt
    store.attempt("puzzle07", "failing", "2026-11-25 10:00:00")
    store.attempt("puzzle07", "failing", "2026-11-25 10:05:00")     # 5 min of work
    store.attempt("puzzle07", "passed", "2026-11-25 13:00:00")      # a break: counts IDLE at most
    for minute in range(MAX_HISTORY + 5):
        store.attempt("puzzle07", "passed", f"2026-11-26 08:{minute % 60:02d}:00")
    entry = store.load()["puzzle07"]
    assert entry["attempts"] == 3 + MAX_HISTORY + 5 and len(entry["history"]) == MAX_HISTORY
    assert entry["first"] == "2026-11-25 10:00:00" and entry["passed"] == {"at": "2026-11-25 13:00:00", "attempt": 3}
    (read,) = read_attempts(store.path.read_bytes(), ["puzzle07"])
    assert read.count == 3 + MAX_HISTORY + 5 and read.passed_at_attempt == 3 and read.best == "passed"
    # 10:05 -> 13:00 and 13:00 -> 08:00 the next day are breaks; then 54 one-minute gaps
    assert read.seconds == 300 + IDLE + IDLE + 54 * 60


def test_a_progress_file_from_before_the_history_still_counts_one_attempt():
    legacy = json.dumps({"puzzle02": {"status": "passed", "latest": {"status": "passed", "at": "2026-11-20 09:00:00"}},
                         "puzzle03": {"hints": 2}}).encode()
    assert read_attempts(legacy, ["puzzle02", "puzzle03"]) == (
        Attempts("puzzle02", 1, 0.0, "2026-11-20 09:00:00", "2026-11-20 09:00:00", "passed", None),)


@pytest.mark.parametrize("raw, reason", [(b"not json", "is not a progress file"),
                                         (b'{"puzzle02": {"attempts": "many"}}', "unreadable entry for puzzle02"),
                                         (b"[1, 2]", "is not a progress file")])
def test_a_broken_progress_file_is_a_reason_not_a_crash(raw, reason):
    with pytest.raises(ProgressError, match=reason):
        read_attempts(raw, ["puzzle02"])


def test_intake_reads_the_progress_file_a_submission_carries(tmp_path):
    from pristine import PRISTINE  # the course as committed, whatever a learner solved
    course = Course(PRISTINE)
    subs = tmp_path / "subs"
    (subs / "ana" / "notebooks").mkdir(parents=True)
    (subs / "ana" / "puzzle02.py").write_text((ROOT / "solutions" / "puzzle02_constant_add_blocked.py").read_text())
    store = ProgressFile(subs / "ana" / "notebooks" / ".progress.json")
    store.attempt("puzzle02", "failing", "2026-11-25 10:00:00")
    store.attempt("puzzle02", "passed", "2026-11-25 10:10:00")
    (subs / "bo").mkdir()
    (subs / "bo" / ".progress.json").write_text("{broken")
    (subs / "bo" / "notebooks").mkdir()
    (subs / "bo" / "notebooks" / ".progress.json").write_text("{}")
    (subs / "cy").mkdir()
    (subs / "cy" / ".progress.json").symlink_to(store.path)
    students = {s.name: s for s in prepare_class(subs, course, Path(tempfile.mkdtemp(dir=tmp_path)))}
    assert students["ana"].attempts == (Attempts("puzzle02", 2, 600.0, "2026-11-25 10:00:00", "2026-11-25 10:10:00",
                                                 "passed", 2),)
    assert students["bo"].attempts == ()
    assert any(p.startswith(".progress.json is not a progress file") and p.endswith("attempts not listed")
               for p in students["bo"].problems)
    assert "notebooks/.progress.json: a second progress file, not read (attempts are from .progress.json)" \
        in students["bo"].problems
    assert students["cy"].attempts == () and any("is a symbolic link: not read" in p for p in students["cy"].problems)


# ---- a class of 5 and of 40 on the whole course, from typed results (nothing graded) ----------

# Ids a real class hands in: a space, accents, a long name, and hostile ones (a folder may be
# named so): the page must show each as typed, escaped, on one page that fits 1,400 px.
AWKWARD_IDS = ("Zoë Ñúñez", "ana lee", "Maximilian Alexander von Hohenzollern-Sigmaringen",
               "<img src=x onerror=window.__pwned=1>", "=HYPERLINK(\"http://x\",\"y\") ' onmouseover='window.__pwned=2")


def typed_class(students: int, seed: int = 44) -> list[StudentResult]:
    """``students`` students on the course's 42 puzzles, as a batch reports them: each attempts
    the early puzzles more often than the late ones, passes most, fails some with a message; one
    hands in nothing readable. The first five carry AWKWARD_IDS."""
    import random

    from grader.source.submission_walk import clean_name
    from pristine import PRISTINE
    course = Course(PRISTINE)
    rng = random.Random(seed)
    ids = [*AWKWARD_IDS, *(f"student{n:02d}" for n in range(len(AWKWARD_IDS), students))][:students]
    results = []
    for n, submitted in enumerate(ids):
        reach = 0 if n == 1 else rng.randint(3, len(course.ids))  # "ana lee" sent nothing readable
        puzzles = []
        for k, puzzle_id in enumerate(course.ids):
            title = course.puzzle(puzzle_id).title
            tried = k < reach and rng.random() < 0.85 - k / 60
            status = (Status.NOT_ATTEMPTED if not tried else Status.PASS if rng.random() < 0.7
                      else Status.INTERPRETER_LIMIT if rng.random() < 0.1 else Status.FAIL)
            message = {Status.FAIL: NEVER_RESCALED, Status.NOT_ATTEMPTED: "no `kernel` in the submission",
                       Status.INTERPRETER_LIMIT: "the interpreter cannot run tl.dot on fp8"}.get(status, "")
            cases = () if status in (Status.NOT_ATTEMPTED, Status.INTERPRETER_LIMIT) else (
                _case(status == Status.PASS, message, None if status == Status.PASS else FailureKind.MISMATCH),)
            puzzles.append(PuzzleResult(puzzle_id, title, status, f"x/{puzzle_id}.py", "cpu", cases, {}, message))
        problems = ("notes.py: could not be read (SyntaxError line 3)",) if n == 1 else ()
        attempts = (Attempts("puzzle01", 6, 36 * 60.0, "2026-11-20 10:00:00", "2026-11-20 10:36:00", "passed", 6),
                    ) if n % 3 == 0 else ()
        results.append(StudentResult(clean_name(submitted), tuple(puzzles), problems, 3.0, attempts, submitted))
    return results


def typed_similarity(results: list[StudentResult]) -> SimilarityReport:
    """A pair between two awkward ids (their keys, as the similarity pass names students)."""
    a, b = results[0].student, results[3].student  # Zoë Ñúñez and the <img ...> id
    shared = (Fragment(f"{a}/puzzle07.py", 3, 4, "x = 1\n"),)
    return SimilarityReport((SimilarPair("puzzle07", (a, b), 33, 0.91, shared),),
                            (PuzzleThreshold("puzzle07", 40, 20, 0.85, len(results)),), "winnowing")


def test_the_first_table_has_a_row_per_student_a_cell_per_puzzle_and_their_counts():
    results = typed_class(5)
    ids = [r.puzzle for r in results[0].results]
    page = class_page(results, ids, 60.0, typed_similarity(results))
    assert page.index("<h2 id='students'>") < page.index("<h2 id='summary'>")  # the table comes first
    table = page[page.index("<table id='tp-students'"):page.index("</table>", page.index("<table id='tp-students'"))]
    rows = re.findall(r"<tr data-student=.*?</tr>", table)
    assert len(rows) == 5 and all(row.count("<td class='m ") == 42 for row in rows)
    zoe = results[0]
    passed, tried = zoe.total, sum(r.status != Status.NOT_ATTEMPTED for r in zoe.results)
    assert f"<b>{passed}</b> / {tried} / 42</td>" in rows[0] and "Zoë Ñúñez</a>" in rows[0]
    assert f"title='{passed} passed of {tried} attempted, of 42 puzzles'" in rows[0]
    assert "<td class='n'>6 / 36 min</td>" in rows[0]  # her progress file: 6 attempts, 36 minutes
    assert "ana lee</a> <span class='tp-warn' title='notes.py: could not be read (SyntaxError line 3)'>⚠1" in rows[1]
    # the legend names every mark the cells use
    legend = _words(page[page.index("<p class='tp-legend'>"):])
    assert legend.startswith("✓ passed ✗ failed – not attempted gpu to grade on a GPU")
    # a failed mark leads to that puzzle's messages; a puzzle not attempted, to the student's section
    failed = next(r for r in zoe.results if r.status == Status.FAIL)
    assert f"<td class='m failed'><a href='#s-Zoë_Ñúñez-{failed.puzzle}'" in rows[0]
    assert "<td class='m not-attempted'><a href='#s-Zoë_Ñúñez' " in rows[0]


def test_each_student_is_folded_and_lists_only_what_they_attempted():
    results = typed_class(5)
    ids = [r.puzzle for r in results[0].results]
    page = class_page(results, ids, 60.0)
    sections = re.findall(r"<details class='tp-student' id='([^']*)'>(.*?)</details>(?=<details class='tp-student'|"
                          r"</body>|<script>)", page, flags=re.S)
    assert [key for key, _ in sections] == [f"s-{r.student}" for r in results]  # folded: no `open`
    zoe, text = results[0], sections[0][1]
    tried = [r for r in zoe.results if r.status != Status.NOT_ATTEMPTED]
    untried = [r.puzzle for r in zoe.results if r.status == Status.NOT_ATTEMPTED]
    assert _words(text).startswith(f"Zoë Ñúñez: {zoe.total} passed of {len(tried)} attempted, of 42 puzzles "
                                   "(files and links under Zoë_Ñúñez)")
    assert all(f"id='s-Zoë_Ñúñez-{r.puzzle}'" in text for r in tried)
    assert not any(f"id='s-Zoë_Ñúñez-{p}'" in text for p in untried)  # one line for them, not 42 paragraphs
    assert f"Not attempted: {len(untried)} puzzles (" in text and "42)." in text
    assert "<details class='tp-student' id='s-ana_lee'><summary><b>ana lee</b>: 0 passed of 0 attempted, of 42 " \
           "puzzles · 1 problem(s) with the submission" in page


def test_the_puzzle_ranges_of_a_student_s_untried_line():
    from grader.report.class_students import _numbers
    assert _numbers(["puzzle01", "puzzle03", "puzzle04", "puzzle05", "puzzle07", "puzzle08"]) == "1, 3–5, 7, 8"


def test_hostile_ids_are_shown_as_typed_never_as_markup():
    results = typed_class(5)
    ids = [r.puzzle for r in results[0].results]
    page = class_page(results, ids, 60.0, typed_similarity(results))
    from html.parser import HTMLParser

    class Elements(HTMLParser):
        seen: list[tuple[str, list]] = []

        def handle_starttag(self, tag, attrs):
            self.seen.append((tag, attrs))
    parser = Elements()
    parser.feed(page)
    # as a browser parses it: no element the ids made, no event handler on any element
    assert not [tag for tag, _ in parser.seen if tag == "img"]
    assert not [(tag, name) for tag, attrs in parser.seen for name, _ in attrs if name.startswith("on")]
    assert "&lt;img src=x onerror=window.__pwned=1&gt;</a>" in page  # the table's name, escaped
    assert "<b>=HYPERLINK(&quot;http://x&quot;,&quot;y&quot;) &#x27; onmouseover=&#x27;window.__pwned=2</b>" in page
    # the similar pair names both by the id they submitted, escaped, linking to their keys' anchors
    assert ("<a href='#s-Zoë_Ñúñez'>Zoë Ñúñez</a> and "
            "<a href='#s-_img_src_x_onerror_window.__pwned_1_'>&lt;img src=x onerror=window.__pwned=1&gt;</a>: "
            "flagged by the source (33 fingerprints shared") in page


def test_every_file_keeps_the_id_as_submitted_and_a_hostile_one_breaks_none(tmp_path):
    import csv
    import xml.etree.ElementTree as ET
    odd = 'Zoë, "the 2nd"\n=1+1'  # a comma, quotes and a newline (a folder's name may hold all three)
    results = [replace(r, submitted_id=odd if i == 0 else r.submitted_id) for i, r in enumerate(typed_class(5))]
    ids = [r.puzzle for r in results[0].results]
    write_reports(results, ids, tmp_path, 60.0)
    with open(tmp_path / "grades.csv", newline="") as f:
        rows = list(csv.DictReader(f))
    assert [row["submitted_id"] for row in rows] == [odd, "ana lee", "Maximilian Alexander von Hohenzollern-"
                                                     "Sigmaringen", "<img src=x onerror=window.__pwned=1>",
                                                     "'=HYPERLINK(\"http://x\",\"y\") ' onmouseover='window.__pwned=2"]
    assert [row["student"] for row in rows] == [r.student for r in results]  # the key: their folder's name
    assert list(rows[0])[-1] == "submitted_id" and all(row["total"].isdigit() for row in rows)
    doc = json.loads((tmp_path / "results.json").read_text())
    assert [s["submitted_id"] for s in doc["students"]] == [odd] + [r.submitted_id for r in results[1:]]
    assert finished(tmp_path, ids)["Zoë_Ñúñez"].submitted_id == odd  # --resume keeps it
    suites = ET.parse(tmp_path / "junit.xml").getroot()
    assert [s.find("properties/property").get("value") for s in suites][:2] == [odd, "ana lee"]
    assert "Zoë, &quot;the 2nd&quot;\n=1+1" in (tmp_path / "report.html").read_text()


def test_a_result_typed_without_an_id_is_named_by_its_key_everywhere():
    student = StudentResult("ada", (_puzzle("puzzle02", Status.PASS),), (), 1.0)
    from grader.report.batch_files import grades_csv, results_json
    assert grades_csv([student], ["puzzle02"]).splitlines() == ["student,puzzle02,total,problems,submitted_id",
                                                               "ada,1,1,,ada"]
    assert json.loads(results_json([student], ["puzzle02"], 1.0))["students"][0]["submitted_id"] == "ada"
