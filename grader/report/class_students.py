"""The class page's students: the first table (a row per student, a compact cell per puzzle, their
counts) and each student's section, folded, listing what they attempted.

Ids are untrusted (a folder may be named ``<img src=x onerror=...>``): every one is escaped, and
the page's anchors are built from the sanitised key (``StudentResult.student``), not the id.
"""
from __future__ import annotations

from html import escape

from grader.judge.results import PuzzleResult, Status, StudentResult
from grader.report.html import code_markup, render
from grader.report.progress import duration
from grader.report.status_words import GROUP_COLOURS, status_words

# A cell per puzzle: 42 of them must fit beside the names and counts in a 1,400 px window.
STYLE = (".tp-scroll{overflow-x:auto;max-width:100%}"
         ".tp-students{border-collapse:separate;border-spacing:1px}.tp-students td,.tp-students th{padding:.1em .4em}"
         ".tp-students th.m{font-size:10px;font-weight:normal;color:#616161;padding:0;text-align:center}"
         ".tp-students td.m{width:20px;min-width:20px;max-width:20px;height:20px;padding:0;text-align:center;"
         "font-size:11px;line-height:20px}.tp-students td.m a{display:block;color:inherit}"
         ".tp-students td.m.small{font-size:8px}.tp-students td.who{min-width:9em;max-width:17em;"
         "overflow-wrap:anywhere}.tp-students td.n{white-space:nowrap;text-align:right}"
         ".tp-students th.n{font-size:85%;max-width:6.5em;text-align:right}.tp-warn{color:#e65100}"
         ".chip{display:inline-block;min-width:20px;padding:0 2px;text-align:center;font-size:11px;line-height:18px}"
         ".tp-students tbody tr:nth-child(even) td.who,.tp-students tbody tr:nth-child(even) td.n{background:#fafafa}"
         ".tp-key{color:#757575;font-size:85%}.tp-student>summary{padding:.25em 0}"
         ".tp-student{border-top:1px solid #e0e0e0}.tp-student[open]{padding-bottom:.6em}"
         ".tp-student p,.tp-student details{margin:.15em 0}"
         # the charts' palette; the untried lighter than their grey, so that what was tried stands out
         + "".join(f".m.{group.replace(' ', '-')}{{background:{colour};color:#fff}}"
                   for group, colour in GROUP_COLOURS.items())
         + ".m.not-attempted{background:#eeeeee;color:#9e9e9e}")
NAME_CHARS = 40  # a longer id is cut in the table (whole in its tooltip and in the student's section)
# The grid's legend: one entry per mark, in the order a reader meets them.
LEGEND = (Status.PASS, Status.FAIL, Status.NOT_ATTEMPTED, Status.INTERPRETER_LIMIT, Status.UNSUPPORTED, Status.ERROR)


def anchor(student: str, puzzle: str = "") -> str:
    return escape(f"s-{student}" + (f"-{puzzle}" if puzzle else ""), quote=True)


def _css(status: Status) -> str:
    return status_words(status).group.replace(" ", "-")


def counts(student: StudentResult, puzzles: int) -> tuple[int, int, int]:
    """(passed, attempted, puzzles): attempted is every puzzle they handed a kernel in for."""
    attempted = sum(r.status != Status.NOT_ATTEMPTED for r in student.results)
    return student.total, attempted, puzzles


def _cell(student: StudentResult, result: PuzzleResult | None, puzzle: str) -> str:
    if result is None:
        return "<td class='m'></td>"
    cell = status_words(result.status).cell
    tip = escape(f"{puzzle} {result.title}: {result.message or result.status.saved}"[:300], quote=True)
    small = " small" if len(cell) > 1 else ""
    # a puzzle they did not attempt has no section of its own: its mark leads to the student's
    target = anchor(student.student, "" if result.status == Status.NOT_ATTEMPTED else puzzle)
    return f"<td class='m {_css(result.status)}{small}'><a href='#{target}' title='{tip}'>{cell}</a></td>"


def legend() -> str:
    return ("<p class='tp-legend'>" + " ".join(
        f"<span><span class='m chip {_css(status)}'>{status_words(status).cell}</span> "
        f"{escape(status_words(status).legend)}</span>" for status in LEGEND) + "</p>")


def _who(student: StudentResult, flagged: set[str]) -> str:
    """The id as submitted (cut past NAME_CHARS, whole in its tooltip), then ⚑ for a similar pair
    and ⚠ for problems with the submission (the first few in the tooltip, all in their section)."""
    who = student.id_as_submitted
    shown = who if len(who) <= NAME_CHARS else who[:NAME_CHARS - 1] + "…"
    flag = " <span title='in a similar pair'>⚑</span>" if student.student in flagged else ""
    problems = ""
    if student.problems:
        tip = escape("; ".join(student.problems[:3])[:300], quote=True)
        problems = f" <span class='tp-warn' title='{tip}'>⚠{len(student.problems)}</span>"
    return (f"<td class='who'><a href='#{anchor(student.student)}' title='{escape(who, quote=True)}'>"
            f"{escape(shown)}</a>{flag}{problems}</td>")


def students_table(results: list[StudentResult], puzzle_ids: list[str], titles: dict[str, str],
                   flagged: set[str]) -> str:
    """A row per student: their id as submitted, passed / attempted / puzzles, a cell per puzzle,
    and their attempts and time from a progress file."""
    heads = "".join(f"<th class='m' title='{escape(p + ' ' + titles.get(p, ''), quote=True)}'>"
                    f"{p[len('puzzle'):]}</th>" for p in puzzle_ids)
    rows = []
    for student in results:
        by_id = {r.puzzle: r for r in student.results}
        cells = "".join(_cell(student, by_id.get(p), p) for p in puzzle_ids)
        passed, attempted, total = counts(student, len(puzzle_ids))
        score = (f"<td class='n' title='{passed} passed of {attempted} attempted, of {total} puzzles'><b>{passed}"
                 f"</b> / {attempted} / {total}</td>" if student.results
                 else f"<td class='n'>{_ungraded(student)}</td>")
        spent = sum(a.seconds for a in student.attempts)
        effort = f"{sum(a.count for a in student.attempts)} / {duration(spent)}" if student.attempts else ""
        key = escape(f"{student.id_as_submitted} {student.student}", quote=True)  # what the filter matches
        rows.append(f"<tr data-student='{key}'>{_who(student, flagged)}{score}{cells}<td class='n'>{effort}</td></tr>")
    return ("<h2 id='students'>Students</h2><p><label>Find a student: <input id='tp-filter' type='search'></label> "
            "<span class='tp-note'>⚑: in a similar pair; ⚠: problems with the submission. A mark leads to that "
            "puzzle's messages; a name, to the student's details.</span></p>" + legend()
            + "<div class='tp-scroll'><table id='tp-students' class='tp-students'><thead><tr><th>student</th>"
            f"<th class='n'>passed / attempted / puzzles</th>{heads}<th class='n'>attempts / time</th></tr></thead>"
            f"<tbody>{''.join(rows)}</tbody></table></div>")


def _ungraded(student: StudentResult) -> str:
    """A row with no grades: an entry intake refused (no student graded), or one the batch did not reach."""
    return "refused" if student.refused else "not graded"


def _variant(result: PuzzleResult) -> str:
    """The student's own values the puzzle was graded with (``batch --variants``), if any."""
    if not result.variant:
        return ""
    values = ", ".join(f"{escape(name)} = {escape(value)}" for name, value in result.variant.items())
    return f" <span class='tp-variant'>(their {values})</span>"


def _numbers(puzzle_ids: list[str]) -> str:
    """puzzle03, puzzle04, puzzle05, puzzle09 -> "3-5, 9": the puzzles not attempted, in one line."""
    numbers = [int(p[len("puzzle"):]) for p in puzzle_ids if p[len("puzzle"):].isdigit()]
    runs: list[list[int]] = []
    for n in numbers:
        if runs and n == runs[-1][-1] + 1:
            runs[-1].append(n)
        else:
            runs.append([n])
    return ", ".join(f"{r[0]}–{r[-1]}" if len(r) > 2 else ", ".join(map(str, r)) for r in runs)


def _puzzle(student: StudentResult, result: PuzzleResult) -> str:
    at = anchor(student.student, result.puzzle)
    head = f"{status_words(result.status).cell} {result.puzzle} {escape(result.title)}{_variant(result)}"
    if result.status == Status.PASS:
        return f"<p id='{at}'>{head}: all {len(result.cases)} cases pass</p>"
    if result.status == Status.FAIL:
        return (f"<details id='{at}'><summary>{head}: {code_markup(result.message[:200])}</summary>"
                f"{render(result)}</details>")
    return f"<p id='{at}' class='tp-note'>{head}: {code_markup(result.message or result.status.saved)}</p>"


def student_section(student: StudentResult, puzzles: int, flagged: set[str]) -> str:
    """Folded: their counts in the summary line; open, their problems, their attempts, and each
    puzzle they attempted. The puzzles they did not are one line, except where a file of theirs
    held the kernel and was not graded for it (the reason is theirs to read)."""
    passed, attempted, total = counts(student, puzzles)
    who = student.id_as_submitted
    line = (f"{passed} passed of {attempted} attempted, of {total} puzzles" if student.results
            else _ungraded(student))
    key = (f" <span class='tp-key'>(files and links under <code>{escape(student.student)}</code>)</span>"
           if student.student != who else "")
    flag = " ⚑ in a similar pair" if student.student in flagged else ""
    problems = f" · {len(student.problems)} problem(s) with the submission" if student.problems and \
        not student.refused else ""
    parts = [f"<details class='tp-student' id='{anchor(student.student)}'><summary><b>{escape(who)}</b>: {line}"
             f"{flag}{problems}{key}</summary>"]
    if student.problems:
        parts.append(f"<p>{'Why it was not graded' if student.refused else 'Problems with the submission'}:"
                     "</p><ul class='tp-problems'>"
                     + "".join(f"<li>{escape(p)}</li>" for p in student.problems) + "</ul>")
    if student.attempts:
        rows = "".join(f"<tr><td>{a.puzzle}</td><td>{a.count}</td><td>{duration(a.seconds)}</td><td>{escape(a.first)}"
                       f"</td><td>{escape(a.last)}</td><td>{escape(a.best)}"
                       f"{f' (at attempt {a.passed_at_attempt})' if a.passed_at_attempt else ''}</td></tr>"
                       for a in student.attempts)
        parts.append("<table class='tp-attempts'><thead><tr><th>puzzle</th><th>attempts</th><th>time spent</th>"
                     f"<th>first</th><th>last</th><th>best</th></tr></thead><tbody>{rows}</tbody></table>")
    untried = [r for r in student.results if r.status == Status.NOT_ATTEMPTED]
    parts += [_puzzle(student, r) for r in student.results
              if r.status != Status.NOT_ATTEMPTED or r.message.startswith("not attempted:")]
    if untried:
        parts.append(f"<p class='tp-note'>Not attempted: {len(untried)} puzzle{'s' if len(untried) > 1 else ''} "
                     f"({_numbers([r.puzzle for r in untried])}).</p>")
    return "".join(parts) + "</details>"

