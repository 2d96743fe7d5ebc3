"""Intake of a class's submissions: what is read, what is refused, and where each copy goes.
Fast: nothing is graded."""
import os
import shutil
import threading
from pathlib import Path

import pytest

from grader.course.imports import import_file
from grader.course.loader import Course
from grader.source import submission_walk
from grader.source.intake import prepare_class
from grader.source.submission_walk import clean_name
from paths import ROOT
from pristine import PRISTINE

COURSE = Course(PRISTINE)  # as committed, whatever a learner solved
SOLUTION = ROOT / "solutions" / "puzzle01_constant_add.py"


def _intake(subs: Path, tmp_path: Path) -> dict:
    return {s.name: s for s in prepare_class(subs, COURSE, tmp_path / "work")}


def _copied_text(student) -> str:
    return "".join(p.read_text() for p in student.folder.rglob("*") if p.is_file())


@pytest.fixture
def subs(tmp_path):
    folder = tmp_path / "subs"
    folder.mkdir()
    return folder


def test_links_to_a_solution_and_to_etc_passwd_are_reported_not_read(subs, tmp_path):
    puzzles = subs / "mallory" / "puzzles"
    puzzles.mkdir(parents=True)
    (puzzles / "puzzle01_constant_add.py").symlink_to(SOLUTION)
    (puzzles / "passwd.py").symlink_to("/etc/passwd")
    shutil.copy(ROOT / "solutions" / "puzzle02_constant_add_blocked.py", puzzles)
    mallory = _intake(subs, tmp_path)["mallory"]
    assert set(mallory.files) == {"puzzle02"}
    assert "puzzles/puzzle01_constant_add.py is a symbolic link: not read (submit the file itself)" in mallory.problems
    assert "puzzles/passwd.py is a symbolic link: not read (submit the file itself)" in mallory.problems
    copied = _copied_text(mallory)
    assert "root:" not in copied and "add_kernel" not in copied


def test_linked_submissions_and_linked_folders_are_not_followed(subs, tmp_path):
    (subs / "eve.py").symlink_to(SOLUTION)
    (subs / "trent").symlink_to(ROOT / "solutions", target_is_directory=True)
    (subs / "oscar").mkdir()
    (subs / "oscar" / "puzzles").symlink_to(ROOT / "solutions", target_is_directory=True)
    students = _intake(subs, tmp_path)
    # a link handed in as the submission is a row refused; a link inside one is a problem of its student's
    assert students["eve.py"].refused == ("`eve.py` is a symbolic link, never followed: copy the file itself into "
                                          "the submissions folder and run again")
    assert students["trent"].refused == ("`trent` is a symbolic link, never followed: copy the folder itself into "
                                         "the submissions folder and run again")
    assert students["oscar"].problems == ("puzzles is a symbolic link: not read (submit the folder itself)",)
    for student in students.values():
        assert student.files == {} and (not student.folder.exists() or _copied_text(student) == "")


def test_a_fifo_does_not_hang_intake(subs, tmp_path):
    os.mkfifo(subs / "fifo.py")
    (subs / "walt" / "puzzles").mkdir(parents=True)
    os.mkfifo(subs / "walt" / "puzzles" / "puzzle01_constant_add.py")
    done = {}
    thread = threading.Thread(target=lambda: done.update(_intake(subs, tmp_path)), daemon=True)
    thread.start()
    thread.join(timeout=30)
    assert not thread.is_alive(), "intake blocked on a fifo"
    assert done["fifo.py"].refused == "`fifo.py` is not a regular file (a fifo): hand in the file itself and run again"
    assert done["walt"].problems == ("puzzles/puzzle01_constant_add.py is not a regular file (a fifo): not read",)


def test_a_fifo_swapped_in_after_the_walk_is_refused_without_blocking(tmp_path):
    os.mkfifo(tmp_path / "late.py")
    with pytest.raises(submission_walk.Refused, match="not a regular file"):
        submission_walk._read_capped(str(tmp_path / "late.py"), None, 1 << 20)
    (tmp_path / "late_link.py").symlink_to(SOLUTION)
    with pytest.raises(submission_walk.Refused, match="symbolic link"):
        submission_walk._read_capped(str(tmp_path / "late_link.py"), None, 1 << 20)


def test_names_colliding_after_cleaning_get_distinct_folders_and_a_note(subs, tmp_path):
    for name in ("bob smith", "bob_smith", "Bob_Smith"):
        (subs / name).mkdir()
        shutil.copy(SOLUTION, subs / name)
    shutil.copy(SOLUTION, subs / "bob smith.py")  # the id `bob smith` again: its folder is graded
    students = prepare_class(subs, COURSE, tmp_path / "work")
    # In entry order. Two ids are their folder's name exactly (case-blind, Bob_Smith and bob_smith
    # meet): nobody keeps the bare name, each takes a hash of their id, whatever the order.
    assert [(s.id, s.name) for s in students] == [
        ("Bob_Smith", "Bob_Smith-2c01"), ("bob smith", "bob_smith-7e50"), ("bob smith.py", "bob_smith.py"),
        ("bob_smith", "bob_smith-5631")]
    by_id = {s.id: s for s in students}
    told = ("ids that clean to one folder name, `Bob_Smith`, are told apart: `Bob_Smith` as `Bob_Smith-2c01` and "
            "`bob smith` as `bob_smith-7e50` and `bob_smith` as `bob_smith-5631`; with --variants they draw the "
            "same constants (the draw reads the cleaned id)")
    assert [by_id[i].problems for i in ("Bob_Smith", "bob smith", "bob_smith")] == [(told,)] * 3
    assert by_id["bob smith.py"].refused == (
        "`bob smith.py` is a second submission of the id `bob smith` (`bob smith` is graded): one submission per "
        "student; put both in one folder `bob smith/`, or rename `bob smith.py` to its own student's id, and run again")
    graded = [s for s in students if not s.refused]
    assert len({s.folder for s in graded}) == 3
    assert all(s.files["puzzle01"].is_file() for s in graded)


def test_clean_names_are_safe_path_components():
    assert clean_name("bob smith") == "bob_smith"
    assert clean_name("a/../b") == "a_.._b"
    assert clean_name("..") == clean_name(".") == clean_name("") == "unnamed"
    assert clean_name(".hidden") == "_hidden"
    long = clean_name("x" * 300 + ".py")
    assert long.endswith(".py") and len(long.encode()) <= 120


def test_same_file_name_in_two_folders_kept_apart_and_puzzles_preferred(subs, tmp_path):
    student = subs / "alice"
    for folder in ("old", "puzzles"):
        (student / folder).mkdir(parents=True)
    shutil.copy(ROOT / "solutions" / "puzzle07_long_sum.py", student / "puzzles")
    shutil.copy(PRISTINE / "puzzles" / "puzzle07_long_sum.py", student / "old")  # "old" sorts first
    (student / "scratch.py").write_text((ROOT / "solutions" / "puzzle07_long_sum.py").read_text())
    alice = _intake(subs, tmp_path)["alice"]
    assert alice.files["puzzle07"] == alice.folder / "puzzles" / "puzzle07_long_sum.py"
    assert (alice.folder / "old" / "puzzle07_long_sum.py").read_text() != (
        alice.folder / "puzzles" / "puzzle07_long_sum.py").read_text()
    assert alice.problems == ("puzzle07: graded puzzles/puzzle07_long_sum.py; also found "
                              "old/puzzle07_long_sum.py, scratch.py, not graded",)


def test_puzzles_sharing_a_kernel_name_are_not_claims_on_each_other(subs, tmp_path):
    """Puzzles 8 and 18 both ask for `softmax_kernel`: each file is its own puzzle's."""
    (subs / "bea" / "puzzles").mkdir(parents=True)
    for pid in ("puzzle08", "puzzle18"):
        solution = next((ROOT / "solutions").glob(f"{pid}_*.py"))
        shutil.copy(solution, subs / "bea" / "puzzles" / solution.name)
    bea = _intake(subs, tmp_path)["bea"]
    assert bea.files["puzzle08"].name.startswith("puzzle08") and bea.files["puzzle18"].name.startswith("puzzle18")
    assert bea.problems == ()


def test_a_file_named_after_the_puzzle_beats_another_holding_its_kernel(subs, tmp_path):
    (subs / "ann").mkdir()
    (subs / "ann" / "all.py").write_text(SOLUTION.read_text())
    (subs / "ann" / "work").mkdir()
    shutil.copy(SOLUTION, subs / "ann" / "work")
    ann = _intake(subs, tmp_path)["ann"]
    assert ann.files["puzzle01"] == ann.folder / "work" / "puzzle01_constant_add.py"


def test_names_cleaning_alike_never_overwrite_each_other(subs, tmp_path):
    for folder in ("a b", "a_b"):
        (subs / "cy" / folder).mkdir(parents=True)
        (subs / "cy" / folder / "x.py").write_text(f"WHERE = {folder!r}\n")
    cy = _intake(subs, tmp_path)["cy"]
    assert (cy.folder / "a_b" / "x.py").read_text() == "WHERE = 'a_b'\n"
    assert (cy.folder / "a_b-2" / "x.py").read_text() == "WHERE = 'a b'\n"
    assert cy.problems == ("a b/ copied as a_b-2: a_b was taken by a_b/",)


def test_a_puzzle_file_still_imports_its_neighbours_by_module_name(subs, tmp_path):
    puzzles = subs / "dora" / "puzzles"
    puzzles.mkdir(parents=True)
    (puzzles / "puzzle13_weighted_sum_forward.py").write_text("def weighted_sum_fwd():\n    return 13\n")
    (puzzles / "puzzle15_weighted_sum_autograd.py").write_text(
        "from puzzle13_weighted_sum_forward import weighted_sum_fwd\n\n\n"
        "class WeightedSumFunc:\n    @staticmethod\n    def forward():\n        return weighted_sum_fwd()\n")
    dora = _intake(subs, tmp_path)["dora"]
    module = import_file(str(dora.files["puzzle15"]), "_intake_puzzle15")
    assert module.WeightedSumFunc.forward() == 13


def test_caps_are_problems_not_exceptions(subs, tmp_path, monkeypatch):
    monkeypatch.setattr(submission_walk, "MAX_FILES", 5)
    monkeypatch.setattr(submission_walk, "MAX_DEPTH", 3)
    (subs / "huge").mkdir()
    (subs / "huge" / "big.py").write_bytes(b"#" * ((1 << 20) + 1))
    (subs / "many").mkdir()
    for i in range(8):
        (subs / "many" / f"f{i}.py").write_text("X = 1\n")
    deep = subs / "deep" / "a" / "b" / "c" / "d"
    deep.mkdir(parents=True)
    shutil.copy(SOLUTION, deep)
    shutil.copy(SOLUTION, deep.parent)
    students = _intake(subs, tmp_path)
    assert students["huge"].problems == ("big.py is too large (over 1 MiB): not read",)
    assert students["many"].problems == ("more than 5 .py and .ipynb files: stopped at f5.py; the rest was not read",)
    assert sorted(p.name for p in students["many"].folder.iterdir()) == [f"f{i}.py" for i in range(5)]
    assert students["deep"].problems == ("a/b/c/d/ is nested more than 3 folders deep: not read",)
    assert students["deep"].files["puzzle01"] == students["deep"].folder / "a" / "b" / "c" / "puzzle01_constant_add.py"


def test_unreadable_files_and_single_file_submissions(subs, tmp_path):
    (subs / "frank.py").write_bytes(b"\x00\xffnot python")
    shutil.copy(SOLUTION, subs / "gina.py")
    (subs / "empty").mkdir()
    (subs / "notes").mkdir()
    (subs / "notes" / "README.md").write_text("my notes\n")
    students = _intake(subs, tmp_path)
    assert students["frank"].refused == ("`frank.py` could not be read (not UTF-8 text: byte 0xff at offset 1)"
                                         ": save it as UTF-8 and hand it in again")
    assert students["gina"].files == {"puzzle01": students["gina"].folder / "gina.py"}
    assert students["empty"].refused == ("`empty/` is an empty folder: nothing was handed in; copy the student's "
                                         "files into it if they sent any, and run again")
    # a folder holding something, but no code, is a student graded on nothing: they handed that in
    assert students["notes"].problems == ("no .py or .ipynb file found",) and not students["notes"].refused


def test_what_definitions_only_leaves_out_is_listed_with_its_reason(subs, tmp_path):
    student = subs / "mallory" / "puzzles"
    student.mkdir(parents=True)
    (student / "puzzle01_constant_add.py").write_text(
        "import triton\nimport triton.language as tl\n\n\ndef sneaky(f):\n    return triton.jit(f)\n\n\n"
        "@sneaky\ndef add_kernel(x_ptr, z_ptr, N0, B0: tl.constexpr):\n    pass\n\n\nprint('hello')\n")
    problems = _intake(subs, tmp_path)["mallory"].problems
    assert "puzzles/puzzle01_constant_add.py:9 `@sneaky` not kept: decorator `sneaky` is not one of Triton's" \
        in "\n".join(problems)
    assert any(":14 `print('hello')` not kept: a call at module level is not run" in p for p in problems)


def test_the_course_own_lines_are_not_reported(subs, tmp_path):
    """A student who submits the course's puzzle file, solved, keeps its spec and `Puzzle(...)`:
    those are the course's, not theirs to hear about."""
    student = subs / "olive" / "puzzles"
    student.mkdir(parents=True)
    for path in (PRISTINE / "puzzles").glob("puzzle0*.py"):
        shutil.copy(path, student / path.name)
    assert _intake(subs, tmp_path)["olive"].problems == ()


def test_a_long_statement_is_cut_at_a_word_not_in_one():
    from grader.source.submission_walk import clip
    assert clip("print('the weighted sum of every row', rows)", 30) == "print('the weighted sum of …"
    assert clip("short", 30) == "short"
    assert clip("x" * 50, 20) == "x" * 20 + " …"
