"""A class's results as files: grades.csv, results.json, junit.xml, report.html, similarity.json,
and Gradescope's format; and the summary ``python -m grader batch`` prints.

Separate renderers over the same ``StudentResult`` objects; none of them decides anything. Each
entry of the submissions folder is a row of every file but Gradescope's, an entry refused too
(its reason in ``problems``, no grades): Gradescope's files are grades, so a refused entry is
listed in ``gradescope/refused.json`` instead.
"""
from __future__ import annotations

import csv
import io
import json
from pathlib import Path
from xml.etree import ElementTree as ET

from grader.judge.results import Status, StudentResult, to_dict
from grader.judge.similarity.model import SimilarityReport, flagged_by
from grader.report.class_page import class_page
from grader.report.status_words import status_words


def _cell(text: str) -> str:
    """A cell a spreadsheet shows as text: submissions name files, and a problem line that
    starts with `=`, `+`, `-` or `@` would otherwise be run as a formula (CSV injection)."""
    return "'" + text if text[:1] in ("=", "+", "-", "@", "\t", "\r") else text



def grades_csv(results: list[StudentResult], puzzle_ids: list[str]) -> str:
    """A row per student: their key, a cell per puzzle (its status's ``csv``), the total, the
    problems and the id as submitted (last, so that a sheet reading columns by place still reads).
    A refused entry's row has no total (it is no grade of 0) and its reason as its problem."""
    out = io.StringIO()
    writer = csv.writer(out)  # quotes a cell holding a comma, a quote or a newline: one row per student
    writer.writerow(["student", *puzzle_ids, "total", "problems", "submitted_id"])
    for student in results:
        status = {r.puzzle: r.status for r in student.results}
        cells = [status_words(status[p]).csv if p in status else "" for p in puzzle_ids]
        total = "" if student.refused else student.total
        writer.writerow([_cell(student.student), *cells, total, _cell("; ".join(student.problems)),
                         _cell(student.id_as_submitted)])
    return out.getvalue()


def results_json(results: list[StudentResult], puzzle_ids: list[str], seconds: float) -> str:
    return json.dumps({
        "puzzles": puzzle_ids,
        "students": [{"student": s.student, "submitted_id": s.id_as_submitted, "refused": s.refused,
                      "total": s.total,
                      "problems": list(s.problems), "seconds": s.seconds,
                      "interpreter_limit": [r.puzzle for r in s.results if r.status == Status.INTERPRETER_LIMIT],
                      "results": [to_dict(r) | {"passed": r.passed} for r in s.results],
                      "attempts": [to_dict(a) for a in s.attempts]} for s in results],
        "seconds": seconds,
    }, indent=1, default=str)


def junit_xml(results: list[StudentResult]) -> str:
    """One testsuite per student: a testcase per puzzle and one per problem with their files.
    The suite's counts are those of its testcases: a puzzle not attempted (or that the installed
    Triton cannot run) is skipped, not failed; a grader error and a problem line are errors."""
    suites = ET.Element("testsuites")
    for student in results:
        if student.refused:  # no test ran: one skipped case, with the reason
            suite = ET.SubElement(suites, "testsuite", name=student.student, tests="1", failures="0", errors="0",
                                  skipped="1", time="0.00")
            ET.SubElement(ET.SubElement(suite, "properties"), "property", name="submitted_id",
                          value=student.id_as_submitted)
            ET.SubElement(ET.SubElement(suite, "testcase", classname=student.student, name="submission"),
                          "skipped", message=student.problems[0])
            continue
        elements = [status_words(r.status).junit for r in student.results]
        suite = ET.SubElement(suites, "testsuite", name=student.student,
                              tests=str(len(student.results) + len(student.problems)),
                              failures=str(elements.count("failure")),
                              errors=str(elements.count("error") + len(student.problems)),
                              skipped=str(elements.count("skipped")),
                              time=f"{student.seconds:.2f}")
        ET.SubElement(ET.SubElement(suite, "properties"), "property", name="submitted_id",
                      value=student.id_as_submitted)
        for problem in student.problems:
            case = ET.SubElement(suite, "testcase", classname=student.student, name="submission")
            ET.SubElement(case, "error", message=problem)
        for r in student.results:
            case = ET.SubElement(suite, "testcase", classname=student.student, name=r.puzzle, time=f"{r.seconds:.2f}")
            element = status_words(r.status).junit
            if element == "skipped":
                ET.SubElement(case, element, message=r.message or "not attempted")
            elif element == "error":
                ET.SubElement(case, element, message=r.message[:500])
            elif element == "failure":
                ET.SubElement(case, element, message=r.message[:500]).text = r.message
    ET.indent(suites)
    return ET.tostring(suites, encoding="unicode", xml_declaration=True)


def gradescope(student: StudentResult) -> str:
    """Gradescope autograder results: one test per puzzle, one point each."""
    # A puzzle this Triton cannot run, or that only a GPU can grade, has no point either way.
    tests = [{"name": r.puzzle, "score": int(r.passed), "max_score": int(r.status.counts),
              "status": "passed" if r.passed else "failed",
              "output": r.message} for r in student.results]
    return json.dumps({"score": student.total, "tests": tests,
                       "output": "; ".join(student.problems) or f"{student.total}/{len(tests)} puzzles pass",
                       "extra_data": {"submitted_id": student.id_as_submitted}}, indent=1)


def gradescope_refused(results: list[StudentResult]) -> str:
    """The entries refused, each with its id as handed in and why: no grade to upload, and not lost."""
    return json.dumps([{"student": s.student, "submitted_id": s.id_as_submitted, "reason": s.problems[0]}
                       for s in results if s.refused], indent=1, ensure_ascii=False)


def summary(results: list[StudentResult], puzzle_ids: list[str], seconds: float, out,
            similarity: SimilarityReport | None = None) -> str:
    """One line per student (puzzles passed, and the problems with their submission), then
    the pairs of similar submissions, how many were graded and where the files went."""
    lines, limited = [], []
    for student in results:
        if student.refused:
            lines.append(f"{student.student:30s}   -  ({student.problems[0]})")
            continue
        gpu = [r.puzzle for r in student.results if r.status == Status.INTERPRETER_LIMIT]
        limited += [f"  {student.student} {r.puzzle}: {r.message}" for r in student.results
                    if r.status == Status.INTERPRETER_LIMIT]
        notes = list(student.problems) + ([f"{len(gpu)} to grade on a GPU: {', '.join(gpu)}"] if gpu else [])
        note = f"  ({'; '.join(notes)})" if notes else ""
        lines.append(f"{student.student:30s} {student.total:3d}/{len(puzzle_ids)}{note}")
    if limited:  # counted apart: neither passed nor failed until a GPU grades them
        lines += [f"{len(limited)} outcome(s) the interpreter could not decide (the kernels compile for sm_90; "
                  f"grade them with --device cuda):"] + limited
    if similarity is not None and similarity.error:
        lines.append(f"similar submissions were not compared: {similarity.error}")
    elif similarity is not None and similarity.pairs:
        lines.append(f"{len(similarity.pairs)} pair(s) of similar submissions (see {out}/report.html):")
        lines += [f"  {p.puzzle}: {p.students[0]} and {p.students[1]}: {flagged_by(p)}" for p in similarity.pairs]
    refused = sum(r.refused for r in results)
    told = f" ({refused} entr{'y' if refused == 1 else 'ies'} of the folder refused, each a row saying why)" \
        if refused else ""
    return "\n".join(lines + [f"{len(results) - refused} students graded{told} in {seconds:.0f} s; reports in "
                               f"{out}/ (open report.html)"])


def write_reports(results: list[StudentResult], puzzle_ids: list[str], out: Path, seconds: float,
                  gradescope_files: bool = False, similarity: SimilarityReport | None = None) -> None:
    """grades.csv, results.json, junit.xml, report.html and, when the batch compared the
    students' code, similarity.json (and one Gradescope results.json per student). Written only
    after every worker has finished: no submission runs while they are written."""
    out.mkdir(parents=True, exist_ok=True)
    (out / "report.html").write_text(class_page(results, puzzle_ids, seconds, similarity), encoding="utf-8")
    if similarity is not None:
        (out / "similarity.json").write_bytes(similarity.to_json())
    (out / "grades.csv").write_text(grades_csv(results, puzzle_ids))
    (out / "results.json").write_text(results_json(results, puzzle_ids, seconds))
    (out / "junit.xml").write_text(junit_xml(results))
    if gradescope_files:
        (out / "gradescope").mkdir(exist_ok=True)
        (out / "gradescope" / "refused.json").write_text(gradescope_refused(results), encoding="utf-8")
        for student in results:
            if student.refused:
                continue
            folder = out / "gradescope" / student.student
            folder.mkdir(parents=True, exist_ok=True)
            (folder / "results.json").write_text(gradescope(student))
