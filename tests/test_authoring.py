"""What an author writes twice must agree: a puzzle's stub and its reference solution declare
the same kernel (or autograd function), parameter for parameter."""
from __future__ import annotations

import ast

import pytest

from conftest import COURSE, PUZZLE_IDS


def _signature(path, name: str) -> list[str]:
    """The kernel's parameters (with their annotations), or an autograd class's methods'."""
    for node in ast.parse(path.read_text()).body:
        if isinstance(node, ast.FunctionDef) and node.name == name:
            return [a.arg + (f": {ast.unparse(a.annotation)}" if a.annotation else "") for a in node.args.args]
        if isinstance(node, ast.ClassDef) and node.name == name:
            return [f"{f.name}({', '.join(a.arg for a in f.args.args)})" for f in node.body
                    if isinstance(f, ast.FunctionDef)]
    raise AssertionError(f"{path.name} defines no {name}")


@pytest.mark.parametrize("puzzle_id", PUZZLE_IDS)
def test_stub_and_solution_declare_the_same_kernel(puzzle_id):
    kernel = COURSE.puzzle(puzzle_id).kernel
    stub = _signature(COURSE.puzzle_file(puzzle_id), kernel)
    solution = _signature(COURSE.solution_file(puzzle_id), kernel)
    assert stub == solution, f"{puzzle_id}: puzzles/ says {stub}, solutions/ says {solution}"


@pytest.mark.parametrize("puzzle_id", PUZZLE_IDS)
def test_every_puzzle_file_names_its_track(puzzle_id):
    """``track`` has a default, so that a forgotten one would pass unseen: each file says it."""
    text = COURSE.puzzle_file(puzzle_id).read_text()
    assert f'    track="{COURSE.puzzle(puzzle_id).track}",\n' in text, f"{puzzle_id}: set track=... in its Puzzle(...)"


def test_every_track_has_a_notebook():
    """One table of tracks (grader.course.kinds.tracks), which the puzzle's check and the notebooks read."""
    from grader.course.kinds import tracks
    from grader.course.puzzle import TRACKS
    assert [track.notebook for track in tracks()] == ["01_classic", "02_cs336", "03_transformer", "04_helion"]
    assert TRACKS == tuple(track.name for track in tracks())


@pytest.mark.parametrize("puzzle_id", PUZZLE_IDS)
def test_the_your_part_markers_hold_the_kernel(puzzle_id):
    """The notebooks take the learner's part from between the markers: one pair per file, and
    the kernel (or autograd class) the puzzle names is inside it."""
    from grader.app.notebook_build import learner_part
    from grader.source.source_lines import CLOSING, OPENING
    path = COURSE.puzzle_file(puzzle_id)
    lines = path.read_text().splitlines()
    assert sum(bool(OPENING.match(line)) for line in lines) == 1, f"{path.name}: one `# ---- your part` line"
    assert sum(bool(CLOSING.match(line)) for line in lines) == 1, f"{path.name}: one closing `# ------` line"
    kernel = COURSE.puzzle(puzzle_id).kernel
    defined = {node.name for node in ast.parse(learner_part(path)).body
               if isinstance(node, (ast.FunctionDef, ast.ClassDef))}
    assert kernel in defined, f"{path.name}: {kernel} is not between the markers"


def test_a_puzzle_file_without_its_markers_is_named(tmp_path):
    from grader.app.notebook_build import learner_part
    from grader.course.loader import PuzzleLoadError
    path = tmp_path / "puzzle99_example.py"
    path.write_text("# ---- your part: finish the kernel ----\ndef kernel():\n    pass\n")
    with pytest.raises(PuzzleLoadError, match="puzzle99_example.py: .*line 1"):
        learner_part(path)


@pytest.mark.parametrize("puzzle_id", PUZZLE_IDS)
def test_notes_stay_silent_on_a_puzzle_file_holding_a_wrong_kernel_without_the_mistake(puzzle_id):
    """A learner works in the puzzle file, whose statement and spec name the very mistakes the
    notes look for: a kernel that is wrong some other way (the solution, its output scaled)
    gets no note, in the puzzle file as in a file of its own."""
    from grader.app.notebook_build import learner_part
    from grader.source.source_lines import learner_code
    path = COURSE.puzzle_file(puzzle_id)
    text, solution = path.read_text(), COURSE.solution_file(puzzle_id).read_text()
    in_place = text.replace(learner_part(path), solution)
    assert in_place != text
    for source in (in_place, solution):
        code = learner_code(source)
        noted = [m.note for m in COURSE.puzzle(puzzle_id).mistakes if m.seen_in(code)]
        assert not noted, f"{puzzle_id}: {noted}"


def test_a_note_still_finds_the_mistake_in_the_learners_part_and_not_in_comments():
    from grader.source.source_lines import learner_code
    part = ("# ---- your part: the kernel ----\nx = tl.load(p, mask=m, other=0)  # not other=0.0\n"
            "# ----------------------------------------\n")
    statement = '"""A load with other=0 breaks the maximum."""\n# other=0 is wrong here\n'
    code = learner_code(statement + part + "def spec(x):\n    return x  # other=0\n")
    assert code.count("other=0") == 1 and "x = tl.load(p, mask=m, other=0)" in code
    assert learner_code('s = f"other=0 {x}"\n').count("other=0") == 0
