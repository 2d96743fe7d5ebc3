"""Plain-text report: one line per puzzle, the reason under a failure, then a summary. Code in it
is marked as Markdown marks it, between backticks; :func:`show` prints it on a terminal with
the code styled instead, and as it is elsewhere: the code is always set apart from the prose."""
from __future__ import annotations

import re
from collections import Counter

from grader.judge.failures import FailureKind
from grader.judge.results import CaseResult, CheckName, CheckResult, PuzzleResult, Report, Status
from grader.report.status_words import status_words


def render_puzzle(result: PuzzleResult, verbose: bool = False) -> str:
    shown_as = status_words(result.status)
    head = f"{shown_as.mark} {result.puzzle} {result.title}"
    if shown_as.terminal:  # not attempted, unsupported, the interpreter's limit, a grader error
        line = shown_as.terminal.format(head=head, message=result.message)
        if verbose and result.status == Status.NOT_ATTEMPTED and result.message:  # why: which code is the stub
            line += f"\n    {result.message.removeprefix('not attempted: ')}"
    elif result.status == Status.PASS:
        cases = len(result.cases)
        compiled = " + GPU compile check" if CheckName.GPU_COMPILE in result.checks else ""
        line = f"{head}: {cases}/{cases} cases pass{compiled} ({result.seconds:.1f} s)"
        line += f"\n    {result.graded_at}" if result.graded_at else ""
        more = result.message.splitlines()[1:]
        line += "".join(f"\n    {said.removesuffix(f' ({result.graded_at})')}"
                        for said in more if said.startswith("Note: "))
    elif not result.cases:
        line = f"{head}\n    {result.message}"
    elif any(not check.passed for check in result.checks.values()):  # ran beside a failed compile check
        ran = [c for c in result.cases if c.kind != FailureKind.SKIPPED]
        line = (f"{head}: does not compile for a GPU (the interpreter ran {len(ran)} of {len(result.cases)} "
                f"case(s) beside the check, {sum(c.passed for c in ran)} passing: none counts until it "
                f"compiles)\n    {result.message}")
    else:
        passed = sum(c.passed for c in result.cases)
        line = f"{head}: {passed}/{len(result.cases)} cases pass\n    {result.message}"
    lines = [line]
    # a passing case that says what was not checked here (Case.interpreted): said, never left out in silence
    lines += [f"    {c.label}: {c.message}" for c in result.cases if c.passed and c.message]
    failures = [c for c in result.cases if not c.passed]
    shown = result.telling_failure  # the case the message above is (results.most_telling)
    extra = failures if verbose else [c for c in failures if c is not shown]
    if result.status == Status.FAIL and extra and not isinstance(shown, CheckResult):
        if verbose:
            lines += [f"    - {c.message}" for c in extra if c.message != result.message]
        else:
            lines.append(f"    ({len(extra)} more failing case(s): "
                         f"{', '.join(c.label for c in extra[:6])}{', ...' if len(extra) > 6 else ''}; "
                         "--verbose shows them)")
    for check_name, check in result.checks.items():
        if not check.passed and check.message != result.message:
            lines.append(f"    {check_name}: {check.message}")
    printed = [c for c in result.cases if c.printed.strip()]
    if not verbose and isinstance(shown, CaseResult) and shown.printed.strip():
        output = shown.printed.strip().splitlines()
        lines.append(f"    output of {shown.label}:")
        lines += [f"      | {text}" for text in output[:12]]
        if len(output) > 12:
            lines.append(f"      ({len(output) - 12} more lines; --verbose shows all output)")
    if verbose and result.generated:  # what a Helion kernel became: the Triton code Helion generated
        lines.append("    the Triton code your kernel became:")
        lines += [f"      | {text}" for text in result.generated.rstrip().splitlines()]
    if verbose and printed:
        for c in printed:
            lines.append(f"    output of {c.label}:")
            lines += [f"      | {text}" for text in c.printed.strip().splitlines()[:40]]
    return "\n".join(lines)


def render(report: Report, verbose: bool = False) -> str:
    body = [render_puzzle(r, verbose) for r in report.results]
    counts = Counter(r.status for r in report.results)
    tail = f"{counts[Status.PASS]}/{len(report.results)} {status_words(Status.PASS).tally}"
    tail += "".join(f", {counts[s]} {status_words(s).tally}" for s in Status if s != Status.PASS and counts[s])
    tail += f" ({report.seconds:.1f} s)"
    return "\n".join(body + [tail])


CODE_SPAN = re.compile(r"`([^`\n]+)`")
CODE_STYLE = "bold cyan"


def code_spans(text: str):
    """``text`` as a rich Text, each `code` span styled (its backticks dropped: the style marks it)."""
    from rich.text import Text
    out, at = Text(), 0
    for match in CODE_SPAN.finditer(text):
        out.append(text[at:match.start()])
        out.append(match.group(1), style=CODE_STYLE)
        at = match.end()
    out.append(text[at:])
    return out


def show(text: str, console=None) -> None:
    """Print a report or a hint: on a terminal with colour, code styled as code; elsewhere (a pipe,
    a file, NO_COLOR) the text as it is, code between its backticks."""
    from rich.console import Console
    console = console or Console(highlight=False, soft_wrap=True)
    if console.is_terminal and console.color_system is not None:
        console.print(code_spans(text), highlight=False, soft_wrap=True)
    else:
        console.file.write(text + "\n")
        console.file.flush()
