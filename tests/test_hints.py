"""Every hint read against the rest of its puzzle (issue 21): what a hint names as a kernel
parameter or constexpr exists, every puzzle has a hint, and the hints quote some of the
solution but never most of it. The files are read, nothing is graded, so all of this is fast.

What is checked, precisely:

* The code a hint puts in backticks is read for names that look like a kernel's parameters:
  ``*_ptr``, any ``*stride*`` name, and UPPER_CASE constexprs and sizes (``BLOCK_M``, ``N0``,
  ``D``). A pointer or stride name must be a word of the learner's stub or of the solution,
  the only places code lives; an UPPER name may also come from the spec or the statement,
  which name derived sizes such as ``NW``. Lower-case locals (``m_new``, ``acc``) are the
  hint's own to introduce and are not checked.
* A hint quotes a solution's line when one of its backticked snippets parses to the same
  statement (``ast.unparse`` on both sides, so quotes and spacing do not matter). The
  solution's own lines are those that neither the stub nor the statement already shows. The
  course's hints deliberately quote a few key lines, such as the online-softmax update; at
  most half of a solution's own lines may be quoted across all its hints.
* Hints go from a nudge to the algorithm, never the algorithm first (issue 44): every puzzle has
  two hints or more; the first is a short nudge in words, whose code in backticks only names
  things (`tl.program_id`, `B0`, `hl.tile`): no call with arguments, no statement, no operator,
  no index, so no line of the solution; and a later hint shows code that computes.
"""
from __future__ import annotations

import ast
import re
from dataclasses import dataclass, replace

import pytest

from conftest import COURSE, PUZZLE_IDS
from grader.source.source_lines import marker_lines

CODE = re.compile(r"`([^`]+)`")
FENCED = re.compile(r"```[a-z]*\n(.*?)```", re.DOTALL)
NAME = re.compile(r"(?<![\w.])[A-Za-z_]\w*")  # not after a dot: `tl.float32` names no parameter
WORD = re.compile(r"\w+")
CONSTEXPR = re.compile(r"[A-Z][A-Z0-9]*(?:_[A-Z0-9]+)*")
# Why a half: less would fail the course's deliberate quotes (puzzle 26's hints quote 4 of its 9
# own lines, puzzle 9's 8 of 20); more would let the hints reproduce the solution.
MOST_QUOTED = 0.5


@dataclass(frozen=True)
class PuzzleText:
    """What a puzzle's hints are read against, as text."""

    id: str
    hints: tuple[str, ...]
    stub: str        # the learner's part of the puzzle file
    spec: str        # the spec function's source
    statement: str
    solution: str


def read(puzzle_id: str) -> PuzzleText:
    text = COURSE.puzzle_file(puzzle_id).read_text()
    lines = text.splitlines()
    (opening,), (closing,) = marker_lines(lines)
    spec = next(ast.get_source_segment(text, node) for node in ast.parse(text).body
                if isinstance(node, ast.FunctionDef) and node.name == "spec")
    puzzle = COURSE.puzzle(puzzle_id)  # imported, not parsed: puzzle 30 builds a hint with an f-string
    return PuzzleText(puzzle_id, puzzle.hints, "\n".join(lines[opening + 1:closing]), spec,
                      puzzle.statement, COURSE.solution_file(puzzle_id).read_text())


def looks_like_pointer(name: str) -> bool:
    return name.endswith("_ptr") or "stride" in name.split("_")


def unknown_names(puzzle: PuzzleText) -> list[str]:
    """Parameter-like names in the hints' code that the puzzle does not have."""
    in_code = set(WORD.findall(puzzle.stub + puzzle.solution))
    anywhere = in_code | set(WORD.findall(puzzle.spec + puzzle.statement))
    unknown = []
    for hint in puzzle.hints:
        for span in CODE.findall(hint):
            for name in NAME.findall(span):
                if looks_like_pointer(name) and name not in in_code:
                    unknown.append(name)
                elif CONSTEXPR.fullmatch(name) and name not in anywhere:
                    unknown.append(name)
    return sorted(set(unknown))


def simple_statements(tree: ast.AST) -> set[str]:
    """Every assignment, expression statement and return in a tree, each unparsed on its own."""
    kinds = (ast.Assign, ast.AugAssign, ast.AnnAssign, ast.Expr, ast.Return)
    return {ast.unparse(node) for node in ast.walk(tree)
            if isinstance(node, kinds) and not (isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant))}


def snippet_statements(snippets: list[str]) -> set[str]:
    """The statements among snippets of code; a snippet that is no Python (`[:, None]`) adds none."""
    found = set()
    for snippet in snippets:
        source = snippet + " pass" if snippet.rstrip().endswith(":") else snippet  # a loop's header
        try:
            found |= simple_statements(ast.parse(source))
        except SyntaxError:
            continue
    return found


def quoted_lines(puzzle: PuzzleText) -> tuple[list[str], list[str]]:
    """(the solution's own lines the hints quote, all its own lines)."""
    shown = (simple_statements(ast.parse(puzzle.stub))
             | snippet_statements(FENCED.findall(puzzle.statement) + CODE.findall(puzzle.statement)))
    own = sorted(simple_statements(ast.parse(puzzle.solution)) - shown)
    quoted = snippet_statements([span for hint in puzzle.hints for span in CODE.findall(hint)])
    return [line for line in own if line in quoted], own


def problems(puzzle: PuzzleText) -> list[str]:
    """What is wrong with a puzzle's hints, one sentence each."""
    found = []
    if not puzzle.hints:
        found.append("no hint")
    for number, hint in enumerate(puzzle.hints, 1):
        if hint.count("`") % 2:
            found.append(f"hint {number} has an unclosed backtick")
    found += [f"a hint names `{name}`, which the puzzle does not have" for name in unknown_names(puzzle)]
    quoted, own = quoted_lines(puzzle)
    if len(quoted) > MOST_QUOTED * len(own):
        found.append(f"the hints quote {len(quoted)} of the solution's {len(own)} own lines")
    return found


@pytest.mark.parametrize("puzzle_id", PUZZLE_IDS)
def test_hints_agree_with_their_puzzle(puzzle_id):
    assert problems(read(puzzle_id)) == []


def test_a_parameter_the_kernel_lacks_is_caught():
    puzzle = read("puzzle13")
    planted = replace(puzzle, hints=puzzle.hints + (
        "Step along a column with `x_stride_col`, and tile it by `ROWS_TILE_SIZE` and `BLOCK_SIZE`.",))
    assert unknown_names(planted) == ["BLOCK_SIZE", "x_stride_col"]
    assert "a hint names `x_stride_col`, which the puzzle does not have" in problems(planted)


def test_a_pointer_only_the_statement_mentions_is_caught():
    # `weight_block_ptr` is code, so the statement's prose cannot vouch for it.
    puzzle = read("puzzle13")
    planted = replace(puzzle, statement=puzzle.statement + "\nAdvance `weight_block_ptr`.\n",
                      solution=puzzle.solution.replace("weight_block_ptr", "w_ptr"),
                      hints=("Advance `weight_block_ptr` with the others.",))
    assert unknown_names(planted) == ["weight_block_ptr"]


def test_attributes_and_lower_case_locals_are_not_parameters():
    puzzle = replace(read("puzzle19"), hints=("Store `tl.exp(chunk - m_new).to(o.dtype.SOME_ATTR)`.",))
    assert unknown_names(puzzle) == []


def test_hints_that_paste_the_solution_are_caught():
    puzzle = read("puzzle20")
    _, own = quoted_lines(puzzle)
    planted = replace(puzzle, hints=("Write " + ", ".join(f"`{line}`" for line in own) + ".",))
    assert problems(planted) == [f"the hints quote {len(own)} of the solution's {len(own)} own lines"]


def test_quotes_match_whatever_the_quotes_and_spacing():
    puzzle = replace(read("puzzle19"), hints=('`m   =   float("-inf")`',))
    assert quoted_lines(puzzle)[0] == ["m = float('-inf')"]


def test_a_puzzle_without_hints_or_with_a_broken_one_is_caught():
    puzzle = read("puzzle01")
    assert problems(replace(puzzle, hints=())) == ["no hint"]
    assert problems(replace(puzzle, hints=("Load `x_ptr + offsets.",))) == ["hint 1 has an unclosed backtick"]


# ---- from a nudge to the algorithm ----------------------------------------------------------
MAX_NUDGE = 240  # characters: a nudge is a sentence or two, not a recipe


def names_only(span: str) -> bool:
    """Whether backticked code only names something: a name, a dotted name or a constant."""
    try:
        tree = ast.parse(span.strip(), mode="eval")
    except SyntaxError:
        return False  # a statement (`m = 0`), a loop's header, or a fragment such as `[:, None]`
    return all(isinstance(node, (ast.Expression, ast.Name, ast.Attribute, ast.Constant, ast.Load))
               for node in ast.walk(tree))


def computes(hint: str) -> bool:
    return any(not names_only(span) for span in CODE.findall(hint))


def ordering_problems(puzzle: PuzzleText) -> list[str]:
    """How a puzzle's hints fail to go from a nudge to the algorithm, one sentence each."""
    found = []
    if len(puzzle.hints) < 2:
        return [f"{len(puzzle.hints)} hint(s): a nudge first, then the algorithm, needs two or more"]
    first = puzzle.hints[0]
    shown = [span for span in CODE.findall(first) if not names_only(span)]
    if shown:
        found.append(f"the first hint shows code, not names: {', '.join(f'`{s}`' for s in shown)}")
    if len(first) > MAX_NUDGE:
        found.append(f"the first hint is {len(first)} characters, more than a nudge's {MAX_NUDGE}")
    if not any(computes(hint) for hint in puzzle.hints[1:]):
        found.append("no hint after the first shows code that computes: the hints never reach the algorithm")
    return found


def test_the_check_tells_a_nudge_from_code():
    assert names_only("tl.program_id") and names_only("B0") and names_only("0.0")
    assert not names_only("tl.arange(0, B0)") and not names_only("m = m_new") and not names_only("x[tile]")
    assert not names_only("offsets < N0") and not names_only("for start in range(0, T, B1):")
    puzzle = PuzzleText("p", ("Pass 1: `m = tl.full([B0], float('-inf'), tl.float32)`, then rescale.",
                              "Use `tl.maximum`."), "", "", "", "")
    assert ordering_problems(puzzle) == [
        "the first hint shows code, not names: `m = tl.full([B0], float('-inf'), tl.float32)`",
        "no hint after the first shows code that computes: the hints never reach the algorithm"]


@pytest.mark.parametrize("puzzle_id", PUZZLE_IDS)
def test_hints_go_from_a_nudge_to_the_algorithm(puzzle_id):
    assert ordering_problems(read(puzzle_id)) == []
