"""``report.html``: a class's batch as one page an instructor reads, offline.

Self-contained: its CSS, its few lines of script (a filter over the students' table, and a link
that opens the folded section it leads to) and its charts (:mod:`.charts`) are in the file;
nothing is fetched. From the top: a row per student with a cell per puzzle and their counts
(:mod:`.class_students`), the class's summary (the totals, each puzzle's outcomes with their
counts and what went wrong most often, "19 of 40: ..."), the similar submissions, then a folded
section per student with what they attempted, as a notebook shows it (:mod:`.html`).
"""
from __future__ import annotations

import statistics
from html import escape

from grader.judge.results import StudentResult
from grader.judge.similarity.model import SimilarityReport, flagged_by
from grader.report.charts import STYLE as CHART_STYLE
from grader.report.charts import column_chart, legend, ranked_bars, stacked_rows
from grader.report.class_students import STYLE as STUDENTS_STYLE
from grader.report.class_students import anchor, student_section, students_table
from grader.report.class_summary import MIN_ATTEMPT_STUDENTS, PuzzleSummary, summarise, totals
from grader.report.progress import duration
from grader.report.status_words import GROUP_COLOURS

STYLE = """
body{font-family:system-ui,sans-serif;margin:1.5em auto;max-width:1400px;padding:0 1em;color:#212121;line-height:1.4}
h1{font-size:1.6em}h2{margin-top:1.8em;border-bottom:1px solid #e0e0e0}h3{margin:.3em 0}
table{border-collapse:collapse}td,th{padding:.2em .5em;text-align:left;vertical-align:top}
a{text-decoration:none}a:hover{text-decoration:underline}
.tp-pair pre{background:#f5f5f5;padding:.5em;overflow-x:auto;margin:.3em 0}
.tp-fragments{display:flex;gap:1em;flex-wrap:wrap}.tp-fragments>div{flex:1 1 30em;min-width:0}
.tp-note{color:#616161}details>summary{cursor:pointer}.tp-legend span{margin-right:1em}
""" + CHART_STYLE + STUDENTS_STYLE
SCRIPT = """
document.getElementById('tp-filter').addEventListener('input', function (event) {
  var word = event.target.value.toLowerCase();
  document.querySelectorAll('#tp-students tbody tr').forEach(function (row) {
    row.style.display = row.dataset.student.toLowerCase().includes(word) ? '' : 'none';
  });
});
// A link into a folded section (a student's, a puzzle's) opens it and everything around it.
function tpReveal() {
  var id = location.hash.slice(1), target = null;
  try { target = id && document.getElementById(decodeURIComponent(id)); } catch (e) { return; }
  for (var el = target; el; el = el.parentElement) { if (el.tagName === 'DETAILS') { el.open = true; } }
  if (target) { target.scrollIntoView(); }
}
window.addEventListener('hashchange', tpReveal);
tpReveal();
"""


def _summary(results: list[StudentResult], puzzle_ids: list[str], summaries: list[PuzzleSummary]) -> str:
    graded = [s for s in results if s.results]
    counts = totals(results, len(puzzle_ids))
    median = statistics.median(s.total for s in graded) if graded else 0
    head = (f"<p>{len(graded)} students graded on {len(puzzle_ids)} puzzles; a median of {median:g} "
            f"puzzle{'' if median == 1 else 's'} passed.</p>")
    distribution = _passed_chart(graded, counts)
    # A row per puzzle someone attempted; the others in one line, not 30 empty bars.
    tried = [s for s in summaries if s.students > s.not_attempted]
    rows = [(f"{s.puzzle} {s.title}", _outcomes(s), _figures(s)) for s in tried]
    rates = (stacked_rows(rows, len(graded), "each puzzle's outcomes", ["passed", "attempted",
                                                                         "what went wrong most often"], wide_last=True)
             if rows else "<p>Nobody attempted any puzzle.</p>")
    nobody = [s.puzzle for s in summaries if s not in tried]
    untried = (f"<p class='tp-note'>Attempted by nobody: {len(nobody)} puzzle{'s' if len(nobody) > 1 else ''} "
               f"({', '.join(nobody)}).</p>" if nobody and tried else "")
    return (f"<h2 id='summary'>Class summary</h2>{head}<h3>Puzzles passed per student</h3>{distribution}"
            f"<h3>Each puzzle attempted</h3>{legend([(c, w) for w, c in GROUP_COLOURS.items()])}{rates}{untried}"
            + _attempts(summaries))


def _outcomes(s: PuzzleSummary) -> list[tuple[int, str, str]]:
    """A puzzle's students in GROUP_COLOURS' order: passed, failed, not attempted, not decided here."""
    return [(n, colour, group) for n, (group, colour) in
            zip((s.passed, s.failed, s.not_attempted, s.undecided), GROUP_COLOURS.items())]


def _figures(s: PuzzleSummary) -> list[str]:
    """The counts beside the percentage ("4 of 5, 80 %"), how many attempted, what went wrong."""
    lines = s.lines()
    return [f"{s.passed} of {s.students}, {round(100 * s.pass_rate)} %",
            f"{s.students - s.not_attempted} of {s.students}",
            "<ul>" + "".join(f"<li>{escape(line)}</li>" for line in lines) + "</ul>" if lines else ""]


# Up to this many students, a bar each (sorted, named); above, a histogram of the totals.
BAR_PER_STUDENT = 60


def _passed_chart(graded: list[StudentResult], counts: list[int]) -> str:
    """Each student's passed count, as a sorted bar with their name; a large class as a
    histogram of how many students passed how many puzzles. Both axes titled either way."""
    if len(graded) <= BAR_PER_STUDENT:
        rows = sorted(((s.id_as_submitted, s.total) for s in graded), key=lambda row: (-row[1], row[0].casefold()))
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


def _similarity(report: SimilarityReport | None, shown: dict[str, str]) -> str:
    """The pairs, each student named by the id they submitted (the pass knows them by their key)."""
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
        named = [f"<a href='#{anchor(who)}'>{escape(shown.get(who, who))}</a>" for who in (a, b)]
        # folded: the line says who and how much; the shared fragments are a click away
        pairs.append(f"<details class='tp-pair'><summary><b>{escape(pair.puzzle)}</b>: {named[0]} and {named[1]}: "
                     f"{escape(flagged_by(pair))}</summary>"
                     f"<div class='tp-fragments'>{fragments}</div></details>")
    limits = "".join(f"<tr><td>{t.puzzle}</td><td>{t.compared}</td><td>{t.reference_fingerprints}</td>"
                     f"<td>{t.min_shared}</td><td>{t.min_score:.2f}</td><td>{t.compiled}</td>"
                     f"<td>{t.min_compiled_score:.2f}</td></tr>" for t in report.puzzles if t.compared)
    table = ("<details><summary>Thresholds per puzzle</summary><table><thead><tr><th>puzzle</th><th>students "
             "compared</th><th>reference's fingerprints</th><th>source: shared at least</th><th>source: score at "
             "least</th><th>compiled kernels compared</th><th>compiled kernel: score at least</th></tr>"
             f"</thead><tbody>{limits}</tbody></table></details>")
    return head + "".join(pairs) + table


def class_page(results: list[StudentResult], puzzle_ids: list[str], seconds: float,
               similarity: SimilarityReport | None = None, title: str = "Triton Puzzles: class report") -> str:
    summaries = summarise(results, puzzle_ids)
    titles = {s.puzzle: s.title for s in summaries}
    flagged = {name for pair in (similarity.pairs if similarity else ()) for name in pair.students}
    shown = {s.student: s.id_as_submitted for s in results}
    refused = sum(r.refused for r in results)  # rows, never students: counted apart
    told = (f" and {refused} entr{'y' if refused == 1 else 'ies'} of the folder refused (each row says why)"
            if refused else "")
    body = (f"<h1>{escape(title)}</h1><p class='tp-note'>{len(results) - refused} submissions{told}, graded in "
            f"{duration(seconds)}. "
            "<a href='#students'>Students</a> · <a href='#summary'>Summary</a> · "
            "<a href='#similar'>Similar submissions</a> · <a href='#details'>Each student</a></p>"
            + students_table(results, puzzle_ids, titles, flagged)
            + _summary(results, puzzle_ids, summaries) + _similarity(similarity, shown)
            + "<h2 id='details'>Each student</h2><p class='tp-note'>Folded: a row opens what that student "
              "attempted, their problems and their attempts.</p>"
            + "".join(student_section(s, len(puzzle_ids), flagged) for s in results))
    # A page that opens offline and never reaches out: everything inline, and the policy says so.
    policy = "default-src 'none'; style-src 'unsafe-inline'; script-src 'unsafe-inline'; img-src data:"
    return (f"<!DOCTYPE html><html lang='en'><head><meta charset='utf-8'><meta http-equiv='Content-Security-Policy' "
            f"content=\"{policy}\"><meta name='viewport' content='width=device-width, initial-scale=1'>"
            f"<title>{escape(title)}</title><style>{STYLE}</style></head><body>{body}<script>{SCRIPT}</script>"
            "</body></html>\n")
