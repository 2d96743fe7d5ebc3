"""``report.html``: a class's batch as one page an instructor reads, offline.

Self-contained: its CSS, its few lines of script (a filter over the students' table) and its
charts (inline SVG, :mod:`.charts`) are in the file; nothing is fetched. From the top: the
class's summary (the totals' distribution, each puzzle's pass rate, what went wrong most often
and the known mistakes recognised, "19 of 40: ..."), the similar submissions, a row per
student linking to their section, and a section per student with their problems, their
attempts and each puzzle's messages, as a notebook shows them (:mod:`.html`).
"""
from __future__ import annotations

import statistics
from html import escape

from grader.judge.results import Status, StudentResult
from grader.judge.status import GROUP_COLOURS
from grader.judge.similarity.model import SimilarityReport
from grader.report.charts import column_chart, legend, ranked_bars, stacked_rows
from grader.report.class_summary import MIN_ATTEMPT_STUDENTS, PuzzleSummary, summarise, totals
from grader.report.html import code_markup
from grader.report.html import render
from grader.report.progress import duration

STYLE = """
body{font-family:system-ui,sans-serif;margin:1.5em auto;max-width:1400px;padding:0 1em;color:#212121;line-height:1.4}
h1{font-size:1.6em}h2{margin-top:1.8em;border-bottom:1px solid #e0e0e0}h3{margin:.3em 0}
table{border-collapse:collapse}td,th{padding:.2em .5em;text-align:left;vertical-align:top}
.tp-students td.c,.tp-students th.c{text-align:center;padding:.15em .25em;font-size:90%}
.tp-students tr:nth-child(even){background:#fafafa}.pass a{color:#2e7d32}.fail a{color:#c62828}
.none a{color:#9e9e9e}.error a{color:#e65100}a{text-decoration:none}a:hover{text-decoration:underline}
.tp-mistakes li{margin:.1em 0}.tp-pair pre{background:#f5f5f5;padding:.5em;overflow-x:auto;margin:.3em 0}
.tp-fragments{display:flex;gap:1em;flex-wrap:wrap}.tp-fragments>div{flex:1 1 30em;min-width:0}
.tp-student{border-top:1px solid #e0e0e0;margin-top:1.2em;padding-top:.4em}.tp-note{color:#616161}
details>summary{cursor:pointer}.tp-legend span{margin-right:1em}
"""
SCRIPT = """
document.getElementById('tp-filter').addEventListener('input', function (event) {
  var word = event.target.value.toLowerCase();
  document.querySelectorAll('#tp-students tbody tr').forEach(function (row) {
    row.style.display = row.dataset.student.toLowerCase().includes(word) ? '' : 'none';
  });
});
"""


def _anchor(student: str, puzzle: str = "") -> str:
    return escape(f"s-{student}" + (f"-{puzzle}" if puzzle else ""), quote=True)


def _summary(results: list[StudentResult], puzzle_ids: list[str], summaries: list[PuzzleSummary]) -> str:
    graded = [s for s in results if s.results]
    counts = totals(results, len(puzzle_ids))
    median = statistics.median(s.total for s in graded) if graded else 0
    head = (f"<p>{len(graded)} students graded on {len(puzzle_ids)} puzzles; a median of {median:g} "
            f"puzzle{'' if median == 1 else 's'} passed.</p>")
    distribution = _passed_chart(graded, counts)
    # A puzzle's students in GROUP_COLOURS' order: passed, failed, not attempted, not decided here.
    rows = [(f"{s.puzzle} {s.title}", [(n, colour, group) for n, (group, colour) in
                                       zip((s.passed, s.failed, s.not_attempted, s.undecided), GROUP_COLOURS.items())])
            for s in summaries]
    rates = stacked_rows(rows, len(graded), "each puzzle's outcomes", [f"{s.pass_rate:.0%} passed" for s in summaries])
    mistakes = []
    for s in summaries:
        lines = s.lines()
        if lines:
            mistakes.append(f"<li><b>{escape(s.puzzle)} {escape(s.title)}</b><ul>"
                            + "".join(f"<li>{escape(line)}</li>" for line in lines) + "</ul></li>")
    mistakes_html = (f"<ul class='tp-mistakes'>{''.join(mistakes)}</ul>" if mistakes
                     else "<p>No puzzle failed for anyone.</p>")
    effort = _attempts(summaries)
    return (f"<h2 id='summary'>Class summary</h2>{head}<h3>Puzzles passed per student</h3>{distribution}"
            f"<h3>Each puzzle</h3>{legend([(c, w) for w, c in GROUP_COLOURS.items()])}{rates}"
            f"<h3>What went wrong most often</h3>{mistakes_html}{effort}")


# Up to this many students, a bar each (sorted, named); above, a histogram of the totals.
BAR_PER_STUDENT = 60


def _passed_chart(graded: list[StudentResult], counts: list[int]) -> str:
    """Each student's passed count, as a sorted bar with their name; a large class as a
    histogram of how many students passed how many puzzles. Both axes titled either way."""
    if len(graded) <= BAR_PER_STUDENT:
        rows = sorted(((s.student, s.total) for s in graded), key=lambda row: (-row[1], row[0].casefold()))
        return ranked_bars(rows, len(counts) - 1, "puzzles passed by each student, most first",
                           "puzzles passed", "student")
    return column_chart(counts, [str(n) for n in range(len(counts))],
                        "how many students passed each number of puzzles", "puzzles passed", "students")


def _attempts(summaries: list[PuzzleSummary]) -> str:
    """The median attempts and time per puzzle, each saying how many students' progress files it
    comes from; a puzzle with fewer than MIN_ATTEMPT_STUDENTS is named, not given a median."""
    told = [s for s in summaries if s.attempts_from]
    if not told:
        return ""
    cells = "".join(f"<tr><td>{escape(s.puzzle)} {escape(s.title)}</td><td>{s.attempts_from}</td>"
                    f"<td>{s.attempts_median:g}</td><td>{s.minutes_median:g} min</td></tr>"
                    for s in told if s.attempts_median is not None)
    few = [s for s in told if s.attempts_median is None]
    note = (f"<p class='tp-note'>Left out, from fewer than {MIN_ATTEMPT_STUDENTS} students' progress files: "
            + ", ".join(f"{escape(s.puzzle)} ({s.attempts_from} student{'s' if s.attempts_from > 1 else ''})"
                        for s in few) + ".</p>") if few else ""
    table = ("<table class='tp-effort'><thead><tr><th>puzzle</th><th>students with a progress file</th>"
             "<th>median attempts</th><th>median time spent</th></tr></thead><tbody>" + cells + "</tbody></table>"
             if cells else "")
    return ("<h3>Attempts (from the progress files submitted)</h3><p class='tp-note'>Medians over the students "
            "whose submission carried a progress file (<code>.progress.json</code>) that lists the puzzle.</p>"
            + table + note)


def _similarity(report: SimilarityReport | None) -> str:
    if report is None:
        return "<h2 id='similar'>Similar submissions</h2><p>Not looked for in this batch.</p>"
    if report.error:
        return (f"<h2 id='similar'>Similar submissions</h2><p>The comparison failed (a bug of the grader's, "
                f"please report it; the grades are not affected): {escape(report.error)}</p>")
    head = (f"<h2 id='similar'>Similar submissions</h2><p class='tp-note'>{len(report.pairs)} pair(s) above the "
            f"thresholds; found by {escape(report.method)}. A pair is a lead to look at, not a verdict.</p>")
    pairs = []
    for pair in report.pairs:
        a, b = pair.students
        fragments = "".join(
            f"<div><b>{escape(f.file)}</b>, lines {f.first_line}-{f.last_line}<pre>{escape(f.text)}</pre></div>"
            for f in pair.fragments)
        pairs.append(f"<details class='tp-pair' open><summary><b>{escape(pair.puzzle)}</b>: "
                     f"<a href='#{_anchor(a)}'>{escape(a)}</a> and <a href='#{_anchor(b)}'>{escape(b)}</a> share "
                     f"{pair.shared} fingerprints (score {pair.score:.2f})</summary>"
                     f"<div class='tp-fragments'>{fragments}</div></details>")
    limits = "".join(f"<tr><td>{t.puzzle}</td><td>{t.compared}</td><td>{t.reference_fingerprints}</td>"
                     f"<td>{t.min_shared}</td><td>{t.min_score:.2f}</td></tr>" for t in report.puzzles if t.compared)
    table = ("<details><summary>Thresholds per puzzle</summary><table><thead><tr><th>puzzle</th><th>students "
             "compared</th><th>reference's fingerprints</th><th>shared at least</th><th>score at least</th></tr>"
             f"</thead><tbody>{limits}</tbody></table></details>")
    return head + "".join(pairs) + table


def _students_table(results: list[StudentResult], puzzle_ids: list[str], flagged: set[str]) -> str:
    heads = "".join(f"<th class='c' title='{p}'>{p[len('puzzle'):]}</th>" for p in puzzle_ids)
    rows = []
    for student in results:
        by_id = {r.puzzle: r for r in student.results}
        cells = []
        for p in puzzle_ids:
            result = by_id.get(p)
            mark, css = (result.status.outcome.cell, result.status.outcome.css) if result else ("", "none")
            tip = escape(f"{p}: {result.message or result.status}" if result else p, quote=True)
            cells.append(f"<td class='c {css}'><a href='#{_anchor(student.student, p)}' title='{tip}'>{mark}</a></td>")
        spent = sum(a.seconds for a in student.attempts)
        effort = f"{sum(a.count for a in student.attempts)} / {duration(spent)}" if student.attempts else ""
        note = " ⚑" if student.student in flagged else ""
        problems = f"{len(student.problems)}" if student.problems else ""
        rows.append(f"<tr data-student='{escape(student.student, quote=True)}'><td><a href='#{_anchor(student.student)}'>"
                    f"{escape(student.student)}</a>{note}</td><td>{student.total}</td>{''.join(cells)}"
                    f"<td>{effort}</td><td>{problems}</td></tr>")
    return ("<h2 id='students'>Students</h2><p><label>Find a student: <input id='tp-filter' type='search'></label> "
            "<span class='tp-note'>⚑: in a similar pair. Each mark links to that puzzle's messages.</span></p>"
            f"<table id='tp-students' class='tp-students'><thead><tr><th>student</th><th>total</th>{heads}"
            f"<th>attempts / time</th><th>problems</th></tr></thead><tbody>{''.join(rows)}</tbody></table>")


def _variant(result) -> str:
    """The student's own values the puzzle was graded with (``batch --variants``), if any."""
    if not result.variant:
        return ""
    values = ", ".join(f"{escape(name)} = {escape(value)}" for name, value in result.variant.items())
    return f" <span class='tp-variant'>(their {values})</span>"


def _student(student: StudentResult, titles: dict[str, str]) -> str:
    parts = [f"<section class='tp-student' id='{_anchor(student.student)}'><h3>{escape(student.student)}: "
             f"{student.total}/{len(student.results) or len(titles)} passed</h3>"]
    if student.problems:
        parts.append("<p>Problems with the submission:</p><ul class='tp-problems'>"
                     + "".join(f"<li>{escape(p)}</li>" for p in student.problems) + "</ul>")
    if student.attempts:
        rows = "".join(f"<tr><td>{a.puzzle}</td><td>{a.count}</td><td>{duration(a.seconds)}</td><td>{escape(a.first)}"
                       f"</td><td>{escape(a.last)}</td><td>{escape(a.best)}"
                       f"{f' (at attempt {a.passed_at_attempt})' if a.passed_at_attempt else ''}</td></tr>"
                       for a in student.attempts)
        parts.append("<table class='tp-attempts'><thead><tr><th>puzzle</th><th>attempts</th><th>time spent</th>"
                     f"<th>first</th><th>last</th><th>best</th></tr></thead><tbody>{rows}</tbody></table>")
    for result in student.results:
        anchor = _anchor(student.student, result.puzzle)
        title = escape(result.title) + _variant(result)
        if result.status == Status.PASS:
            parts.append(f"<p id='{anchor}'>{result.status.outcome.cell} {result.puzzle} {title}: "
                         f"all {len(result.cases)} cases pass</p>")
        elif result.status == Status.NOT_ATTEMPTED:
            parts.append(f"<p id='{anchor}' class='tp-note'>{result.status.outcome.cell} {result.puzzle} {title}: "
                         f"{code_markup(result.message or 'not attempted')}</p>")
        else:
            parts.append(f"<details id='{anchor}'><summary>{result.status.outcome.cell} {result.puzzle} "
                         f"{title}: {code_markup(result.message[:200])}</summary>{render(result)}</details>")
    return "".join(parts) + "</section>"


def class_page(results: list[StudentResult], puzzle_ids: list[str], seconds: float,
               similarity: SimilarityReport | None = None, title: str = "Triton Puzzles: class report") -> str:
    summaries = summarise(results, puzzle_ids)
    titles = {s.puzzle: s.title for s in summaries}
    flagged = {name for pair in (similarity.pairs if similarity else ()) for name in pair.students}
    body = (f"<h1>{escape(title)}</h1><p class='tp-note'>{len(results)} submissions, graded in {duration(seconds)}. "
            "<a href='#summary'>Summary</a> · <a href='#similar'>Similar submissions</a> · "
            "<a href='#students'>Students</a></p>"
            + _summary(results, puzzle_ids, summaries) + _similarity(similarity)
            + _students_table(results, puzzle_ids, flagged)
            + "".join(_student(s, titles) for s in results))
    # A page that opens offline and never reaches out: everything inline, and the policy says so.
    policy = "default-src 'none'; style-src 'unsafe-inline'; script-src 'unsafe-inline'; img-src data:"
    return (f"<!DOCTYPE html><html lang='en'><head><meta charset='utf-8'><meta http-equiv='Content-Security-Policy' "
            f"content=\"{policy}\"><meta name='viewport' content='width=device-width, initial-scale=1'>"
            f"<title>{escape(title)}</title><style>{STYLE}</style></head><body>{body}<script>{SCRIPT}</script>"
            "</body></html>\n")
