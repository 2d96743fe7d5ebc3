"""HTML report of one puzzle's result, for notebooks.

The case table takes the output's full width, one short row per case. What went wrong sits
under it, at full width too: the most telling failure's message in full, the others folded. The
memory-access picture comes last, large enough to read its labels (``max-width:100%`` lets it
shrink on a small screen). Nothing has a fixed height: one failure never scrolls in a box.
"""
from __future__ import annotations

import base64
import re
import struct
from html import escape
from pathlib import Path

from grader.judge.failures import label
from grader.judge.results import PuzzleResult, Status
from grader.report.status_words import status_words

MARK = {True: '<span style="color:#2e7d32">✓</span>', False: '<span style="color:#c62828">✗</span>'}
# Notebook 7 and JupyterLab lay tables out fixed, centred and right-aligned: undo that here.
TABLE = "width:100%;table-layout:auto;border-collapse:collapse;margin:0 0 .5em 0"
CELL = "text-align:left;padding:.25em .6em;vertical-align:top;white-space:nowrap"
MESSAGE = ("margin:.5em 0;padding:.4em .8em;border-left:3px solid #c62828;background:rgba(198,40,40,.06);"
           "white-space:pre-wrap;overflow-wrap:anywhere;line-height:1.45;text-align:left")
PICTURE_MIN, PICTURE_MAX = 960, 1400  # CSS px: a two-tensor picture (2134 px drawn) shows at 1067


def _values(values: dict) -> str:
    return ", ".join(f"{k}={v}" for k, v in values.items())


def code_markup(text: str) -> str:
    """Escaped text with its `quoted code` set as code."""
    return re.sub(r"`([^`\n]+)`", r"<code>\1</code>", escape(text))


def picture_width(png: bytes) -> int | None:
    """The CSS width to show a picture at: half its pixels (it is drawn at 110 dpi, for
    screens of twice the density), at least :data:`PICTURE_MIN` unless it is smaller."""
    if png[:8] != b"\x89PNG\r\n\x1a\n" or png[12:16] != b"IHDR":
        return None
    width = struct.unpack(">I", png[16:20])[0]
    return min(width, max(PICTURE_MIN, min(PICTURE_MAX, width // 2)))


def _message(head: str, text: str, printed: str = "") -> str:
    shown = (f"<details><summary>printed</summary><pre style='white-space:pre-wrap'>{escape(printed[:4000])}"
             f"</pre></details>" if printed.strip() else "")
    return f"<div class='tp-message' style='{MESSAGE}'><b>{escape(head)}</b>: {code_markup(text)}{shown}</div>"


def _failures(result: PuzzleResult) -> list[str]:
    """One block per failing case or check, the case's label and sizes first; the most telling
    failure (results.most_telling) leads, the others follow in the grader's order."""
    blocks = []
    shown = result.telling_failure
    for case in sorted(result.cases, key=lambda c: c is not shown):  # a stable sort: only the shown one moves
        if case.passed:
            continue
        head, text = f"{case.label} ({_values({**case.sizes, **case.blocks})})", case.message
        if text.startswith("case ") and ": " in text:  # "case classic[seed=0] (N0=…): what went wrong"
            head, text = text[len("case "):].split(": ", 1)
        blocks.append(_message(head, text, case.printed))
    for name, check in result.checks.items():
        if not check.passed:
            blocks.append(_message(name, check.message))
    return blocks


def render(result: PuzzleResult, picture: Path | None = None) -> str:
    shown_as = status_words(result.status)
    color = shown_as.colour
    if shown_as.notebook:  # not attempted, unsupported, the interpreter's limit, a grader error
        head = shown_as.notebook.format(puzzle=result.puzzle, title=escape(result.title),
                                        message=escape(result.message))
    elif result.status == Status.PASS:
        head = f"{result.puzzle} {escape(result.title)}: all {len(result.cases)} cases pass"
    else:
        head = (f"{result.puzzle} {escape(result.title)}: "
                f"{sum(c.passed for c in result.cases)}/{len(result.cases)} cases pass")
    rows = []
    for case in result.cases:
        err = "" if case.max_abs_err is None else f"{case.max_abs_err:.2g}"
        what = "" if case.passed else escape(label(case.kind))
        printed = " (printed)" if case.printed.strip() else ""
        rows.append(f"<tr><td style='{CELL}'>{escape(case.label)}</td><td style='{CELL}'>{escape(_values(case.sizes))}"
                    f"</td><td style='{CELL}'>{escape(_values(case.blocks))}</td><td style='{CELL}'>{MARK[case.passed]}"
                    f"</td><td style='{CELL}'>{err}</td><td style='{CELL};width:100%'>{what}{printed}</td></tr>")
    for name, check in result.checks.items():
        what = "" if check.passed else escape(label(check.kind))
        rows.append(f"<tr><td style='{CELL}' colspan=3>{escape(name)}</td><td style='{CELL}'>{MARK[check.passed]}"
                    f"</td><td style='{CELL}'></td><td style='{CELL};width:100%'>{what}</td></tr>")
    table = ""
    if rows:
        table = (f"<table class='tp-result' style='{TABLE}'><thead><tr>"
                 + "".join(f"<th style='{CELL}'>{h}</th>"
                           for h in ("case", "sizes", "blocks", "", "max err", "failure"))
                 + "</tr></thead><tbody>" + "".join(rows) + "</tbody></table>")
    blocks = _failures(result) if result.status == Status.FAIL else []
    if not blocks and result.status == Status.FAIL and result.message:
        blocks = [_message(result.puzzle, result.message)]
    messages = ""
    if blocks:
        rest = ""
        if len(blocks) > 1:
            rest = (f"<details class='tp-more'><summary>the other {len(blocks) - 1} failure(s)</summary>"
                    + "".join(blocks[1:]) + "</details>")
        messages = f"<div class='tp-messages'>{blocks[0]}{rest}</div>"
    image = ""
    if picture is not None and picture.is_file():
        png = picture.read_bytes()
        width = picture_width(png)
        size = f"width:{width}px;" if width else ""
        image = (f"<figure class='tp-picture' style='margin:.8em 0 0 0'><img alt='memory accesses' "
                 f"style='{size}max-width:100%;height:auto;display:block' "
                 f"src='data:image/png;base64,{base64.b64encode(png).decode()}'/>"
                 f"<figcaption style='font-size:90%;color:#616161'>Memory accesses of the first failing case "
                 f"(its title names the case).</figcaption></figure>")
    return (f"<div class='tp-check' style='width:100%'><p style='color:{color};font-weight:bold;text-align:left'>"
            f"{head}</p>{table}{messages}{image}</div>")
