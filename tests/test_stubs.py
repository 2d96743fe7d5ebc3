"""'Not attempted' is decided by comparing the learner's kernel with the puzzle's stub as shipped
(grader/source/stubs.py), never by the shape of its loops: a kernel that differs is graded."""
from __future__ import annotations

import json
import shutil
import textwrap

import pytest

from conftest import COURSE, HAVE_HELION, NO_HELION, PUZZLE_IDS
from grader.judge.options import Options
from grader.judge.results import Status
from grader.source import stubs

HELION_STUB = textwrap.dedent('''\
    @helion.kernel(autotune_effort="none")
    def helion_add(x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
        z = torch.empty_like(x)
        for tile in hl.tile(x.size(0)):
            # Your code here.
            pass
        return z
''')


def test_the_committed_prints_are_the_puzzles_stubs():
    kept = json.loads((COURSE.root / "puzzles" / stubs.STUBS_FILE).read_text())["stubs"]
    now = stubs.prints({p: (COURSE.puzzle_file(p).read_text(), COURSE.puzzle(p)) for p in PUZZLE_IDS})["stubs"]
    stale = sorted(p for p in now if kept.get(p) != now[p])
    assert not stale, f"puzzles/{stubs.STUBS_FILE} is stale for {stale}: run `python -m grader.source.stubs`"


def test_comments_docstrings_and_do_nothing_statements_are_not_an_attempt():
    same = HELION_STUB.replace("        # Your code here.\n", "").replace(
        "        pass\n", "        ...\n").replace("    z = torch", '    """Mine."""\n    z = torch')
    assert stubs.stub_print(same, "helion_add") == stubs.stub_print(HELION_STUB, "helion_add")


@pytest.mark.parametrize("changed", [
    HELION_STUB.replace("z = torch.empty_like(x)", "z = x + y"),            # the work on the host, loop left as `pass`
    HELION_STUB.replace("        pass\n", "        z[tile] = x[tile]\n"),  # the loop's body
    HELION_STUB.replace("y: torch.Tensor)", "y: torch.Tensor, n: int)"),    # the signature
    HELION_STUB.replace("hl.tile(x.size(0))", "hl.tile(y.size(0))"),        # the loop's extent
    HELION_STUB + "helion_add = torch.add\n",                               # bound again, to something else
])
def test_any_change_to_what_the_stub_does_is_an_attempt(changed):
    assert stubs.stub_print(changed, "helion_add") != stubs.stub_print(HELION_STUB, "helion_add")


def test_a_students_value_of_a_free_constant_in_the_stub_is_still_the_stub():
    puzzle = COURSE.puzzle("puzzle20")  # eps is the default of a parameter of the stub's kernel
    text = COURSE.puzzle_file("puzzle20").read_text()
    code = stubs.codes_of(puzzle)
    assert code == ("layer_norm_fwd.eps",)
    from grader.source import variant_code
    theirs = variant_code.rewrite(text, code[0], "1e-06")
    assert theirs != text and stubs.is_stub(COURSE.root, puzzle, theirs)


def test_without_prints_a_body_that_does_nothing_is_the_stub(tmp_path):
    puzzle = COURSE.puzzle("puzzle01")
    text = COURSE.puzzle_file("puzzle01").read_text()
    assert stubs.is_stub(tmp_path, puzzle, text)  # tmp_path: a course with no puzzles/.stubs.json
    assert not stubs.is_stub(tmp_path, puzzle, text.replace("    pass\n", "    tl.store(z_ptr, 1.0)\n"))


@pytest.mark.skipif(not HAVE_HELION, reason=NO_HELION)
def test_a_helion_kernel_working_outside_its_pass_loop_in_puzzles_fails_as_pytorchs(tmp_path):
    """The learner's own puzzles/ file (the kernel graded in place, where the course's file is the
    learner's): the sum before a loop of `pass` is PyTorch's work on the host, with its line."""
    from grader.course.loader import Course
    from grader.judge.session import grade_many
    root = tmp_path / "course"
    shutil.copytree(COURSE.root / "puzzles", root / "puzzles", ignore=shutil.ignore_patterns("__pycache__"))
    path = Course(root).puzzle_file("puzzle35")
    path.write_text(path.read_text().replace("    z = torch.empty_like(x)\n    for tile", "    z = x + y\n    for tile"))
    line = path.read_text().splitlines().index("    z = x + y") + 1
    result = grade_many(Course(root), [("puzzle35", path)], Options(device="cpu")).results[0]
    assert result.status == Status.FAIL, result.message
    assert result.first_failure.kind == "torch_compute"
    assert (f"`helion_add` computed with PyTorch outside its `hl.tile` loops (line {line}: `z = x + y`): PyTorch "
            f"ran `add` on `x`, `y` there, on the host." in result.message)


def test_the_stub_as_shipped_says_why_it_is_not_attempted(stub_results):
    result = stub_results["puzzle01"]
    assert result.status == Status.NOT_ATTEMPTED
    assert result.message == ("not attempted: `add_kernel` is still the stub as shipped (comments, docstrings "
                              "and `pass` aside)")
    from grader.report.text import render_puzzle
    assert render_puzzle(result) == "· puzzle01 Constant add: not attempted"
    assert render_puzzle(result, verbose=True).endswith(
        "not attempted\n    `add_kernel` is still the stub as shipped (comments, docstrings and `pass` aside)")


@pytest.mark.skipif(not HAVE_HELION, reason=NO_HELION)
def test_a_release_ships_a_helion_stub_with_its_loop_and_its_print(tmp_path):
    from grader.app.release import _shipped_as_is, stubbed
    path = COURSE.puzzle_file("puzzle35")
    assert _shipped_as_is(COURSE, "puzzle35") == {"helion_add"}
    released = stubbed(path, _shipped_as_is(COURSE, "puzzle35"))
    assert "    for tile in hl.tile(x.size(0)):" in released
    assert stubs.is_stub(COURSE.root, COURSE.puzzle("puzzle35"), released)
