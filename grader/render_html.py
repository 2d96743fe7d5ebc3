"""HTML report of one puzzle's result, for notebooks: one row per case."""
from __future__ import annotations

import base64
from html import escape
from pathlib import Path

from .results import PuzzleResult

MARK = {True: '<span style="color:#2e7d32">✓</span>', False: '<span style="color:#c62828">✗</span>'}
HEADLINE = {"pass": "#2e7d32", "fail": "#c62828", "not_attempted": "#757575", "unsupported": "#757575",
            "error": "#e65100"}


def _values(values: dict) -> str:
    return ", ".join(f"{k}={v}" for k, v in values.items())


def render(result: PuzzleResult, picture: Path | None = None) -> str:
    color = HEADLINE[result.status]
    if result.status == "pass":
        head = f"{result.puzzle} {escape(result.title)}: all {len(result.cases)} cases pass"
    elif result.status == "not_attempted":
        head = f"{result.puzzle} {escape(result.title)}: not attempted yet (the kernel is still the stub)"
    elif result.status == "unsupported":
        head = f"{result.puzzle} {escape(result.title)}: {escape(result.message)}"
    elif result.status == "error":
        head = f"{result.puzzle}: grader error (not your fault): {escape(result.message)}"
    else:
        head = f"{result.puzzle} {escape(result.title)}: {sum(c.passed for c in result.cases)}/{len(result.cases)} cases pass"
    rows = []
    for case in result.cases:
        err = "" if case.max_abs_err is None else f"{case.max_abs_err:.2g}"
        message = escape(case.message.split(": ", 1)[-1]) if case.message else ""
        printed = (f'<details><summary>printed</summary><pre>{escape(case.printed[:4000])}</pre></details>'
                   if case.printed.strip() else "")
        rows.append(f"<tr><td>{escape(case.label)}</td><td>{escape(_values(case.sizes))}</td>"
                    f"<td>{escape(_values(case.blocks))}</td><td>{MARK[case.passed]}</td><td>{err}</td>"
                    f"<td style='text-align:left;max-width:38em'>{message}{printed}</td></tr>")
    for name, check in result.checks.items():
        rows.append(f"<tr><td colspan=3>{escape(name)}</td><td>{MARK[check.passed]}</td><td></td>"
                    f"<td style='text-align:left;max-width:38em'>{escape(check.message)}</td></tr>")
    table = ""
    if rows:
        table = ("<table class='tp-result'><thead><tr><th>case</th><th>sizes</th><th>blocks</th><th></th>"
                 "<th>max err</th><th>message</th></tr></thead><tbody>" + "".join(rows) + "</tbody></table>")
    elif result.status == "fail":
        table = f"<p>{escape(result.message)}</p>"
    image = ""
    if picture is not None and picture.is_file():
        data = base64.b64encode(picture.read_bytes()).decode()
        image = (f"<div style='flex:1;min-width:20em'><img alt='memory accesses' style='max-width:100%' "
                 f"src='data:image/png;base64,{data}'/></div>")
    return (f"<div class='tp-check'><p style='color:{color};font-weight:bold'>{head}</p>"
            f"<div style='display:flex;gap:1em;flex-wrap:wrap'><div style='flex:1'>{table}</div>{image}</div></div>")
