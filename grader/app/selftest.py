"""``python -m grader selftest``: what an instructor runs after editing a puzzle.

The reference solutions must pass, and every kernel of the wrong-kernel corpus
(``tests/wrong_kernels/``) must fail with the kind of reason it declares. Prints a table.
"""
from __future__ import annotations

import ast
from dataclasses import dataclass, replace
from pathlib import Path

from grader.course.loader import Course
from grader.course.syntax import parse
from grader.judge.options import Options
from grader.judge.results import Status
from grader.judge.session import grade_many


@dataclass(frozen=True)
class Row:
    target: str
    expected: str
    got: str
    ok: bool
    message: str


def declared(path: Path) -> dict:
    """A corpus file's EXPECT_* constants, read without running it."""
    found = {}
    for node in parse(path.read_text()).body:
        if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name) \
                and node.targets[0].id.startswith("EXPECT_"):
            found[node.targets[0].id] = ast.literal_eval(node.value)
    return found


def run(course: Course, options: Options, jobs: int = Options.JOBS) -> list[Row]:
    corpus = sorted((course.root / "tests" / "wrong_kernels").glob("puzzle*.py"))
    corpus = [p for p in corpus if p.name[:8] in course.ids]
    targets = [(p, course.solution_file(p)) for p in course.ids] + [(p.name[:8], p) for p in corpus]
    # Autograd entries of the corpus import the earlier puzzles' reference kernels.
    options = replace(options, library=(*options.library, str(course.root / "solutions")))
    report = grade_many(course, targets, options, jobs=jobs)
    rows = []
    for (puzzle_id, path), result in zip(targets, report.results):
        first = result.first_failure
        if result.status == Status.UNSUPPORTED or _uses_removed_api(result):
            # Neither right nor wrong on this Triton: the entry needs an API it no longer has.
            rows.append(Row(path.stem if path.parent.name != "solutions" else f"solution {puzzle_id}",
                            "pass or fail", Status.UNSUPPORTED, True, result.message))
            continue
        if path.parent.name == "solutions":
            rows.append(Row(f"solution {puzzle_id}", Status.PASS, result.status, result.passed, result.message))
            continue
        expect = declared(path).get("EXPECT_KIND", "?")
        got = getattr(first, "kind", None) or result.status
        rows.append(Row(path.stem, f"fail: {expect}", f"{result.status}: {got}" if not result.passed else Status.PASS,
                        result.status == Status.FAIL and got == expect, result.message))
    return rows


def _uses_removed_api(result) -> bool:
    """An autograd entry that launches block-pointer kernels where triton removed them (3.9)."""
    if result.status != Status.FAIL or "Block pointers have been removed" not in result.message:
        return False
    from grader.course import apis
    return not apis.works("make_block_ptr")


def render(rows: list[Row]) -> str:
    width = max(len(r.target) for r in rows)
    lines = [f"{'target':{width}}  {'expected':26}  {'got':26}  ok"]
    for r in rows:
        lines.append(f"{r.target:{width}}  {r.expected:26}  {r.got:26}  {'✓' if r.ok else '✗'}")
    bad = sum(not r.ok for r in rows)
    if bad:  # again after the table, where a log's tail (CI's) still shows them
        lines.append(f"\nnot as expected ({bad}):")
        lines.extend(f"  {r.target}: expected {r.expected}, got {r.got}\n    {r.message[:600]}"
                     for r in rows if not r.ok)
    skipped = sum(r.got == Status.UNSUPPORTED for r in rows)
    lines.append(f"{len(rows) - bad}/{len(rows)} as expected"
                 + (f" ({skipped} unsupported)" if skipped else ""))
    return "\n".join(lines)
