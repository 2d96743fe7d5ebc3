"""The README reads for a newcomer: no prose sentence longer than 35 words (issue 34: its Helion
paragraph was one sentence of 90). Code blocks, tables, headings and images are not prose;
an inline code span or a link counts as one word. A learner's steps come first, every link
resolves, every figure is dated and measured by a script, every command it gives exists (issue 44)."""
import re
from pathlib import Path

import pytest

from paths import ROOT

MOST_WORDS = 35


def prose_sentences(markdown: str) -> list[str]:
    text = re.sub(r"^```.*?^```", "", markdown, flags=re.MULTILINE | re.DOTALL)  # code blocks
    kept = [line for line in text.splitlines() if not line.lstrip().startswith(("|", "#", "!["))]
    # a list item starts a sentence of its own
    paragraphs = re.split(r"\n\n|\n(?=\s*(?:[*-]|\d+\.) )", "\n".join(kept))
    sentences = []
    for paragraph in paragraphs:
        flat = " ".join(paragraph.split())
        flat = re.sub(r"`[^`]+`", "CODE", flat)
        flat = re.sub(r"\[([^\]]+)\]\([^)]+\)", lambda m: m.group(1).replace(" ", "_"), flat)
        for short in ("e.g.", "i.e.", "vs.", "etc."):
            flat = flat.replace(short, short.replace(".", "_"))
        sentences += [s for s in re.split(r"(?<=[.!?])\s+", flat) if s.strip()]
    return sentences


def test_readme_sentences_are_short():
    long = [f"{len(s.split())} words: {s}" for s in prose_sentences((ROOT / "README.md").read_text())
            if len(s.split()) > MOST_WORDS]
    assert not long, "\n".join(long)


def test_the_counter_sees_a_long_sentence_and_skips_code():
    text = ("A short one. " + " ".join(["word"] * 40) + ".\n\n```bash\n" + " ".join(["x"] * 50) + "\n```\n"
            "| " + " | ".join(["cell"] * 50) + " |\n")
    assert [len(s.split()) for s in prose_sentences(text)] == [3, 40]


# ---- a learner first (issue 44): set-up, the first puzzle and the loop, near the top ----------

FIRST_LINES = 120
README = ROOT / "README.md"


def _readme() -> str:
    return README.read_text()


def test_the_first_lines_set_up_start_a_puzzle_and_give_the_loop():
    top = "\n".join(_readme().splitlines()[:FIRST_LINES])
    for wanted, what in [("## Set up", "set-up"), ("make check    #", "the set-up command"),
                         ("source .venv/bin/activate", "activating .venv"),
                         ("docs/container.md", "the container path for macOS and Windows"),
                         ("## Your first puzzle", "the first puzzle"), ("puzzles/puzzle01_constant_add.py", "its file"),
                         ("make check PUZZLE=puzzle01", "how to grade it"),
                         ("python -m grader watch puzzle07", "the loop"), ("make notebooks", "the notebooks")]:
        assert wanted in top, f"the README's first {FIRST_LINES} lines lack {what} ({wanted!r})"


def _links(markdown: str) -> list[str]:
    return re.findall(r"\]\(([^)\s]+)\)", markdown)


def _anchors(markdown: str) -> set[str]:
    """GitHub's ids for the headings: lower case, punctuation dropped, spaces as dashes."""
    headings = re.findall(r"^#+ (.+)$", re.sub(r"^```.*?^```", "", markdown, flags=re.M | re.S), flags=re.M)
    return {re.sub(r"[^\w\- ]", "", h.strip().lower()).replace(" ", "-") for h in headings}


def _broken_links(page: Path) -> list[str]:
    broken = []
    text = page.read_text()
    for link in _links(text):
        if re.match(r"[a-z]+:", link):  # https:, mailto:: not this repository's
            continue
        target, _, anchor = link.partition("#")
        path = (page.parent / target).resolve() if target else page
        if not path.exists():
            broken.append(f"{link}: no {path.relative_to(ROOT) if path.is_relative_to(ROOT) else path}")
        elif anchor and path.suffix == ".md" and anchor not in _anchors(path.read_text()):
            broken.append(f"{link}: no heading #{anchor} in {path.name}")
    return broken


@pytest.mark.parametrize("page", ["README.md", "docs/instructors.md", "docs/internals.md"])
def test_every_relative_link_resolves(page):
    assert not _broken_links(ROOT / page)


def test_the_link_check_sees_a_missing_file_and_heading(tmp_path):
    page = tmp_path / "p.md"
    page.write_text("# Here\n\n[a](missing.md) [b](#here) [c](#gone) [d](https://example.com/x) [e](p.md#here)\n")
    assert [b.split(":")[0] for b in _broken_links(page)] == ["missing.md", "#gone"]


# A figure: a number with a unit of time, size or screen. Each stands in a paragraph (a code block is
# one) that says when it was measured and by which script of the repository.
FIGURE = re.compile(r"(?<![\w.])\d[\d,]*(?:\.\d+)?\s?(?:ms|s|min|minutes?|seconds?|hours?|[KMG]i?B|kB|px)(?![\w])")
DATE = re.compile(r"\b20\d\d-\d\d-\d\d\b")
SCRIPT = re.compile(r"\b((?:benchmarks|scripts)/[\w/]+\.py)\b")


def _paragraphs(markdown: str) -> list[str]:
    parts = re.split(r"(^```.*?^```\n?)", markdown, flags=re.M | re.S)
    found = []
    for part in parts:
        found += [part] if part.startswith("```") else [p for p in part.split("\n\n") if p.strip()]
    return found


def undated_figures(markdown: str) -> list[str]:
    wrong = []
    for paragraph in _paragraphs(markdown):
        figures = FIGURE.findall(re.sub(r"\]\([^)]*\)", "]", paragraph))  # not in a link's address
        if not figures:
            continue
        scripts = [s for s in SCRIPT.findall(paragraph) if (ROOT / s).is_file()]
        if not DATE.search(paragraph) or not scripts:
            wrong.append(f"{', '.join(figures)}: {'no date' if not DATE.search(paragraph) else 'no script'} in "
                         f"{' '.join(paragraph.split())[:160]!r}")
    return wrong


def test_every_figure_in_the_readme_is_dated_and_measured_by_a_script():
    assert not undated_figures(_readme())


def test_the_figure_check_sees_an_undated_figure_and_passes_a_dated_one():
    assert undated_figures("The fast tier took 41 s on 2 cores.\n\nA 4-bit matmul and 2 puzzles.\n")
    assert undated_figures("It took 41 s (benchmarks/no_such_script.py, 2026-11-29).\n")
    assert not undated_figures("It took 41 s (`python benchmarks/suite_time.py`, 2026-11-29).\n")
    assert not undated_figures("puzzle 1's kernel, sm_90, 65536 x 1024 fp32, Python 3.11 and 5/5 cases.\n")


def _commands(markdown: str) -> list[str]:
    blocks = re.findall(r"^```bash\n(.*?)^```", markdown, flags=re.M | re.S)
    spans = re.findall(r"`((?:python -m grader|make) [^`]*)`", markdown)
    return [line.split("#")[0].strip() for block in blocks for line in block.splitlines()] + spans


def test_every_make_target_the_readme_names_is_in_the_makefile():
    targets = set(re.findall(r"^([\w.-]+):", (ROOT / "Makefile").read_text(), flags=re.M))
    named = {c.split()[1] for c in _commands(_readme()) if c.startswith("make ")}
    assert named and named <= targets, named - targets


def test_every_grader_command_and_option_the_readme_gives_exists(capsys):
    """Each `python -m grader ...` of the README: its subcommand is one, and each --option is in
    that command's --help."""
    from grader.app import cli
    from grader.app.commands import SUBCOMMANDS
    helps = {}
    for line in _commands(_readme()):
        if not line.startswith("python -m grader"):
            continue
        words = line.split()[3:]
        command = words[0] if words and words[0] in SUBCOMMANDS else None
        if command not in helps:
            cli.main([command, "--help"] if command else ["--help"])
            helps[command] = capsys.readouterr().out
        unknown = [w.split("=")[0] for w in words if w.startswith("--") and w.split("=")[0] not in helps[command]]
        assert not unknown, f"{line}: {unknown} not in `python -m grader {command or ''} --help`"


def test_the_start_here_notebook_sets_up_as_the_readme_does():
    """00_start_here's set-up commands (the generator's text) are the README's, word for word."""
    from grader.app.notebook_build import START_HERE
    readme = _readme()
    commands = [line.split("#")[0].strip() for _, text in START_HERE
                for block in re.findall(r"```bash\n(.*?)```", text, flags=re.S) for line in block.splitlines()]
    assert "make notebooks" in commands
    missing = [c for c in commands if c and c not in readme]
    assert not missing, missing
