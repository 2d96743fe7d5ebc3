"""``batch --resume DIR``: the students a previous batch already graded, read back from its
``results.json``, so that only the others are graded again.

The file is the grader's own report, but a resumed batch trusts nothing it cannot check: an
entry that does not read back into the result model is graded again, not guessed at.
"""
from __future__ import annotations

import json
from pathlib import Path

from grader.judge.results import REFUSED, Attempts, CaseResult, CheckResult, PuzzleResult, StudentResult

NOT_GRADED = "not graded"  # the start of the problem line of a student a batch did not finish


class ResumeError(Exception):
    """The folder to resume holds no readable results.json (a usage error: exit code 2)."""


def not_graded(name: str, problems: tuple[str, ...], reason: str) -> StudentResult:
    """A student the batch stopped before grading: in every report, and graded on --resume."""
    return StudentResult(name, (), (*problems, f"{NOT_GRADED}: {reason}"), 0.0)


def refused(name: str, submitted_id: str, reason: str) -> StudentResult:
    """An entry of the submissions folder intake refused: a row with its reason, no grades."""
    return StudentResult(name, (), (f"{REFUSED}: {reason}",), 0.0, (), submitted_id)


def was_graded(result: StudentResult) -> bool:
    return not result.refused and not any(p.startswith(NOT_GRADED + ":") for p in result.problems)


def _case(d: dict) -> CaseResult:
    return CaseResult(name=d["name"], sizes=d["sizes"], blocks=d["blocks"], seed=d["seed"], grid=tuple(d["grid"]),
                      passed=d["passed"], kind=d.get("kind"), message=d.get("message", ""),
                      max_abs_err=d.get("max_abs_err"), seconds=d.get("seconds", 0.0), printed=d.get("printed", ""))


def _puzzle(d: dict) -> PuzzleResult:
    return PuzzleResult(puzzle=d["puzzle"], title=d["title"], status=d["status"], source=d["source"],
                        device=d["device"], cases=tuple(_case(c) for c in d.get("cases", ())),
                        checks={k: CheckResult(v["passed"], v.get("message", ""), v.get("kind"), v.get("ttir", ""))
                                for k, v in d.get("checks", {}).items()},
                        message=d.get("message", ""), seconds=d.get("seconds", 0.0),
                        variant=dict(d.get("variant") or {}), graded_at=d.get("graded_at", ""))


def finished(out: Path, puzzle_ids: list[str]) -> dict[str, StudentResult]:
    """Graded students of ``out/results.json`` by name (their row's key; the batch matches them to
    students by ``submitted_id`` where it was written, :mod:`.classroom`). Only a report of the same course (the
    same puzzle ids) is resumed: grades against another course would not mean the same."""
    path = out / "results.json"
    try:
        data = json.loads(path.read_text())
    except FileNotFoundError:
        raise ResumeError(f"{out} has no results.json to resume from: "
                          "give the --out folder of an earlier batch") from None
    except (OSError, ValueError) as exc:
        raise ResumeError(f"{path} could not be read ({exc}); grade the class afresh with another --out") from None
    if data.get("puzzles") != list(puzzle_ids):
        raise ResumeError(f"{path} was written for puzzles {data.get('puzzles')}, not this course's "
                          f"{list(puzzle_ids)}: resume only a batch of the same course")
    done = {}
    for entry in data.get("students", []):
        try:
            result = StudentResult(entry["student"], tuple(_puzzle(r) for r in entry["results"]),
                                   tuple(entry["problems"]), float(entry["seconds"]),
                                   tuple(Attempts(**a) for a in entry.get("attempts", ())),
                                   str(entry.get("submitted_id", "")))
        except (KeyError, TypeError, ValueError):
            continue  # unreadable: graded again
        if was_graded(result):
            done[result.student] = result
    return done
