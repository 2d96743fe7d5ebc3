"""A variant for each student: a puzzle's free constants (grader.course.variant) drawn from a
batch's secret and the student's id, stated in their statement, graded with their value.

Without a secret every puzzle is today's. With one, each student's own correct file passes and a
file written for another student fails, with a message that names the constant and both values.
"""
import ast
import json
import re
import shutil

import pytest

from conftest import COURSE, ROOT
from grader.app.release import read_roster, stated, stubbed, students_variant
from grader.course.loader import Course, CourseError
from grader.course.variant import VARIANT_FILE, Variant, drawn, shown, student_key
from grader.judge.compare import close_enough
from grader.judge.plan import SpecShapes, make_inputs
from grader.source import variant_code

SOLUTIONS = ROOT / "solutions"
VARIED = [pid for pid in COURSE.ids if COURSE.puzzle(pid).variants]
STUDENTS = [f"student{i:02d}" for i in range(40)]


def own_solution(puzzle_id: str, value) -> str:
    """The course's solution as the student with ``value`` writes it: the constant is theirs."""
    text = COURSE.solution_file(puzzle_id).read_text()
    if value == COURSE.puzzle(puzzle_id).variants[0].default:
        return text
    edits = {
        "puzzle01": lambda t: t.replace("x + 10.0", f"x + {float(value)!r}"),
        "puzzle02": lambda t: t.replace("x + 10.0", f"x + {float(value)!r}"),
        "puzzle12": lambda t: variant_code.rewrite(t, "GROUP", repr(value)),
        "puzzle20": lambda t: variant_code.rewrite(t, "layer_norm_fwd.eps", repr(value)),
        "puzzle22": lambda t: variant_code.rewrite(t, "EPS", repr(value)),
        "puzzle23": lambda t: t.replace("-100", str(value)),
        "puzzle33": lambda t: t.replace("CAUSAL=0", f"CAUSAL={value}"),
        "puzzle34": lambda t: t.replace("-100", str(value)),
    }
    edited = edits[puzzle_id](text)
    assert edited != text, f"{puzzle_id}: the solution holds no constant to change"
    return edited


def test_every_puzzle_with_a_free_constant_declares_it():
    # (Puzzle 27 has none since it is graded by its properties: any correct stream passes, so a Philox
    # offset of one's own could not tell one student's file from another's.)
    assert VARIED == ["puzzle01", "puzzle02", "puzzle12", "puzzle20", "puzzle22", "puzzle23",
                      "puzzle33", "puzzle34"]


# ---- the defaults are today's course ----------------------------------------------------------
@pytest.mark.parametrize("puzzle_id", VARIED)
def test_the_defaults_give_todays_puzzle(puzzle_id):
    """The statement is the file's docstring as written; choosing the defaults rebuilds nothing
    that differs; and no variant look-alike speaks where no student's values were chosen."""
    declared = COURSE.puzzle(puzzle_id)
    docstring = ast.get_docstring(ast.parse(COURSE.puzzle_file(puzzle_id).read_text()), clean=False)
    assert declared.statement == docstring and "{{" not in declared.statement
    assert declared.variant_look_alikes() == () and not declared.chosen
    defaults = {v.name: v.default for v in declared.variants}
    rebuilt = declared.rebuild(defaults) if declared.rebuild else {}
    chosen = declared.with_variant(defaults)
    for name, value in rebuilt.items():
        if name in ("cases", "hints", "mistakes"):
            assert value == getattr(declared, name), name
        elif name == "look_alikes":
            assert [(a.name, a.where) for a in value] == [(a.name, a.where) for a in declared.look_alikes]
    assert chosen.statement == declared.statement and chosen.is_default


# ---- every choice is well-posed, and says so -------------------------------------------------
@pytest.mark.parametrize("puzzle_id", VARIED)
def test_every_choice_gives_a_well_posed_puzzle_whose_statement_says_it(puzzle_id):
    declared = COURSE.puzzle(puzzle_id)
    for variant in declared.variants:
        for value in variant.choices:
            puzzle = declared.with_variant({variant.name: value})  # its grids are checked as it is made
            if value != variant.default:
                assert puzzle.statement != declared.statement
                assert variant.texts(value)[variant.name] in puzzle.statement
            for case in puzzle.cases:
                sizes = {**puzzle.sizes(case), **case.blocks}
                if puzzle_id == "puzzle12":  # whole groups, at most 8 a row, chunks of whole groups
                    assert sizes["MID"] % value == 0 and sizes["MID"] <= 8 * value and sizes["B_MID"] % value == 0
                if puzzle_id == "puzzle33" and value:
                    assert sizes["NQ"] == sizes["NK"], case.label
                if puzzle_id in ("puzzle23", "puzzle34") and value >= 0 and "target" in puzzle.ranges:
                    assert puzzle.ranges["target"](sizes)[0] > value  # only the edge's rows are ignored


def test_a_causal_variant_draws_one_length_for_queries_and_keys():
    causal = COURSE.puzzle("puzzle33").with_variant({"CAUSAL": 1})
    from grader.course.case import draw
    for secret in (3, 7, 11):
        for case in causal.cases:
            sizes = causal.sizes(draw(case, causal.id, secret))
            assert sizes["NQ"] == sizes["NK"]


# ---- the draw ---------------------------------------------------------------------------------
def test_the_draw_is_deterministic_differs_across_students_and_needs_the_secret():
    for puzzle_id in VARIED:
        variants = COURSE.puzzle(puzzle_id).variants
        first = [drawn(variants, puzzle_id, 1234, s) for s in STUDENTS]
        assert first == [drawn(variants, puzzle_id, 1234, s) for s in STUDENTS]
        for variant in variants:
            values = {d[variant.name] for d in first}
            assert len(values) >= min(3, len(variant.choices)), (puzzle_id, values)
        other_secret = [drawn(variants, puzzle_id, 4321, s) for s in STUDENTS]
        assert other_secret != first
        assert drawn(variants, puzzle_id, 0, "anyone") == {v.name: v.default for v in variants}
    assert student_key(" Alice ") == student_key("alice")
    with pytest.raises(ValueError, match="must not be empty"):
        student_key("  ")


def test_puzzle_34_takes_puzzle_23s_ignore_index_whose_kernel_it_launches():
    for student in STUDENTS:
        assert (COURSE.puzzle_for("puzzle34", 99, student).variant_values
                == COURSE.puzzle_for("puzzle23", 99, student).variant_values)


def test_a_value_that_is_no_choice_is_refused():
    with pytest.raises(ValueError, match="not one of the choices of ADD"):
        COURSE.puzzle("puzzle01").with_variant({"ADD": 10.5})
    with pytest.raises(ValueError, match="default 2 is not one of its choices"):
        Variant("X", choices=(1, 3), default=2, what="x")


# ---- any two values tell apart --------------------------------------------------------------
def _pairs(choices):
    """Every pair where there are few choices; else each with its neighbour and with the first."""
    if len(choices) <= 17:
        return [(a, b) for a in choices for b in choices if a != b]
    return [(a, b) for i, b in enumerate(choices) for a in {choices[i - 1], choices[0]} if a != b]


@pytest.mark.parametrize("puzzle_id", [p for p in VARIED if p != "puzzle12"])  # 12: other shapes (a note says so)
def test_a_kernel_written_for_one_value_fails_the_others_cases(puzzle_id):
    """What a file written for student A computes (the spec with A's value) differs, in some case of
    student B's, from what B's cases expect: a pasted file fails."""
    declared = COURSE.puzzle(puzzle_id)
    variant = declared.variants[0]
    planned = {}  # B's value -> its small cases' (case, inputs, values, expected), those with edges first

    def cases_of(b):
        if b not in planned:
            theirs = declared.with_variant({variant.name: b})
            shapes, planned[b] = SpecShapes(theirs), []
            for case in sorted((c for c in theirs.cases if not c.large), key=lambda c: not c.edges):
                inputs = make_inputs(theirs, shapes.inputs, case)
                values = {**theirs.sizes(case), **case.blocks}
                expected = theirs.run_spec([x.clone() for x in inputs], values)
                planned[b].append((theirs, inputs, values, expected if isinstance(expected, tuple) else (expected,)))
        return planned[b]

    mine = {a: declared.with_variant({variant.name: a}) for a in variant.choices}
    for a, b in _pairs(variant.choices):
        for theirs, inputs, values, expected in cases_of(b):
            try:
                written = mine[a].run_spec([x.clone() for x in inputs], values)
            except IndexError:  # B's ignore index -100 is no class of A's: A's kernel reads before the row
                break
            written = written if isinstance(written, tuple) else (written,)
            if not all(close_enough(w.detach(), e.detach(), *theirs.tolerance(str(e.dtype).split(".")[-1]))
                       for w, e in zip(written, expected)):
                break
        else:
            pytest.fail(f"{puzzle_id}: a kernel for {variant.name} = {a} passes every case of {b}")


# ---- where the learner's file writes it --------------------------------------------------------
def test_the_value_a_file_writes_is_found_and_rewritten():
    text = (SOLUTIONS / "puzzle20_layer_norm_forward.py").read_text()
    found = variant_code.find(text, "layer_norm_fwd.eps")
    assert found.value == 1e-5 and "eps: tl.constexpr = 1e-5" in text.splitlines()[found.line - 1]
    assert variant_code.find(variant_code.rewrite(text, "layer_norm_fwd.eps", "0.001"), "layer_norm_fwd.eps").value == 1e-3
    group = (SOLUTIONS / "puzzle12_quantized_matmul.py").read_text()
    assert variant_code.find(group, "GROUP").value == 16
    assert "GROUP = tl.constexpr(32)" in variant_code.rewrite(group, "GROUP", "32")
    assert variant_code.find("GROUP = 4 * FPINT\n", "GROUP") is None  # computed: nothing is claimed
    assert variant_code.find("def f(:\n", "GROUP") is None


# ---- what a student is handed ---------------------------------------------------------------
def test_a_students_stub_states_their_values_in_its_docstring_and_its_constant():
    for puzzle_id, value, says in (("puzzle20", 1e-3, "\\varepsilon = 10^{-3}$$"), ("puzzle12", 64, "`GROUP = 64`"),
                                   ("puzzle01", 7.0, "Add the constant 7 to")):
        path = COURSE.puzzle_file(puzzle_id)
        puzzle = COURSE.puzzle(puzzle_id)
        text = stated(stubbed(path), puzzle.with_variant({puzzle.variants[0].name: value}))
        docstring = ast.get_docstring(ast.parse(text), clean=False)
        assert says in docstring
        if puzzle.variants[0].code:
            assert variant_code.find(text, puzzle.variants[0].code).value == value
        assert stated(stubbed(path), puzzle) == stubbed(path)  # the defaults leave the file alone


def test_a_statement_written_for_a_students_value_is_read_as_theirs():
    """A student's release writes their statement into the file: loaded again, it is restated
    from their words, to theirs (with their variant.json) or to any other value."""
    from grader.course.variant import restate
    declared = COURSE.puzzle("puzzle23")
    theirs = declared.with_variant({"IGNORE_INDEX": 5}).statement
    assert "a target of 5 marks an ignored row" in theirs
    assert restate(theirs, declared.variants, {"IGNORE_INDEX": 5}, "puzzle23") == theirs
    assert restate(theirs, declared.variants, {}, "puzzle23") == declared.statement
    with pytest.raises(ValueError, match=r"the statement does not say \"target is \*\*-100\*\*"):
        restate(theirs.replace("target is **5**", "target is **five**"), declared.variants, {}, "puzzle23")


def test_a_roster_is_read_and_checked(tmp_path):
    roster = tmp_path / "roster.csv"
    roster.write_text("student,email\nalice,a@x\n# a comment\n\nbob , b@x\n")
    assert read_roster(roster) == ["alice", "bob"]
    roster.write_text("alice\nAlice\n")
    with pytest.raises(ValueError, match="in the roster twice"):
        read_roster(roster)
    roster.write_text("../evil\n")
    with pytest.raises(ValueError, match="cannot name a student's folder"):
        read_roster(roster)


# ---- a student's id: one folder and one draw, whatever the id -------------------------------------
IDS_OF_EVERY_KIND = {"Zoë Ñúñez": "Zoë_Ñúñez", "O'Brien": "O_Brien", "王小明": "王小明", " ana-2.b ": "ana-2.b"}


def test_any_id_maps_to_one_folder_and_one_draw():
    import unicodedata

    from grader.course.variant import student_folder
    from grader.source.submission_walk import clean_name
    for student, folder in IDS_OF_EVERY_KIND.items():
        assert student_folder(student) == folder == clean_name(student.strip())
        # the id, its folder handed back, its case and a Mac's decomposed accents: one student
        for other in (folder, student.upper(), unicodedata.normalize("NFD", student)):
            assert student_key(other) == student_key(student), (student, other)
            assert COURSE.puzzle_for("puzzle01", 8817, other).variant_values == \
                COURSE.puzzle_for("puzzle01", 8817, student).variant_values


def test_a_roster_takes_any_id_and_refuses_two_of_one_folder(tmp_path):
    roster = tmp_path / "roster.csv"
    roster.write_text("student\nZoë Ñúñez\nO'Brien\n王小明\n")
    assert read_roster(roster) == ["Zoë Ñúñez", "O'Brien", "王小明"]
    roster.write_text("O'Brien\nO_Brien\n")
    with pytest.raises(ValueError, match=r"roster.csv:2: 'O_Brien' and \"O'Brien\" \(line 1\) map to one folder, "
                                         r"`O_Brien`, and would get the same constants: give each student their own id"):
        read_roster(roster)
    roster.write_text("Zoë Ñúñez\nzoë_ñúñez\n")
    with pytest.raises(ValueError, match="map to one folder, `zoë_ñúñez`"):
        read_roster(roster)
    roster.write_text("???\n")
    assert read_roster(roster) == ["???"]  # ___: a folder all the same
    roster.write_text("...x\n")
    assert read_roster(roster) == ["...x"]


@pytest.mark.slow  # two releases and a class of two
def test_a_release_and_a_batch_give_an_id_with_a_space_one_constant(tmp_path):
    """Issue 32: the roster's "Zoë Ñúñez" was released with one constant and graded with another.
    Her release's folder, handed back as it is or under her id, is graded with her release's values."""
    from grader.app.release import release_class
    from grader.course.variant import StudentVariant
    secret = 8817
    students = ["Zoë Ñúñez x", "王小明"]
    folders = release_class(COURSE, tmp_path / "releases", secret, students)
    assert [f.name for f in folders] == ["Zoë_Ñúñez_x", "王小明"]
    submitted = tmp_path / "class"
    for folder, name in zip(folders, ("Zoë_Ñúñez_x", "王小明 ")):
        add = StudentVariant.read(folder / VARIANT_FILE).values["puzzle01"]["ADD"]
        assert f"Add the constant {shown(add)} to" in (folder / "puzzles" / "puzzle01_constant_add.py").read_text()
        (submitted / name).mkdir(parents=True)
        (submitted / name / "puzzle01_constant_add.py").write_text(own_solution("puzzle01", add))
    (submitted / "Zoë Ñúñez x").mkdir()  # her id as the folder's name: the same values
    shutil.copy(submitted / "Zoë_Ñúñez_x" / "puzzle01_constant_add.py", submitted / "Zoë Ñúñez x")
    # Both graded (issue 46: never refused), told apart by a hash of the id, each with her release's values.
    results = _grade(submitted, secret)
    # `王小明 `: the id without its space, as release names its folder
    assert set(results) == {"Zoë_Ñúñez_x", "Zoë_Ñúñez_x-f427", "王小明"}
    for student in results.values():
        assert student["puzzle01"].passed, student["puzzle01"].message


def test_the_learners_course_reads_their_values_from_variant_json(tmp_path):
    shutil.copytree(COURSE.root / "puzzles", tmp_path / "puzzles", ignore=shutil.ignore_patterns("__pycache__"))
    mine = students_variant(COURSE, 99, "alice")
    (tmp_path / VARIANT_FILE).write_text(mine.to_json())
    course = Course(tmp_path)
    for puzzle_id in VARIED:
        assert course.puzzle(puzzle_id).variant_values == COURSE.puzzle_for(puzzle_id, 99, "alice").variant_values
    assert "99" not in (tmp_path / VARIANT_FILE).read_text().replace("puzzle", "")  # the secret is not written
    (tmp_path / VARIANT_FILE).write_text(json.dumps({"student": "alice", "puzzles": {"puzzle01": {"ADD": 10.5}}}))
    with pytest.raises(CourseError, match="not one of the choices of ADD"):
        Course(tmp_path).puzzle("puzzle01")
    (tmp_path / VARIANT_FILE).write_text("{")
    with pytest.raises(CourseError, match="is not a student's variant file"):
        Course(tmp_path).puzzle("puzzle01")


def test_release_per_student_and_batch_variants_need_a_secret(tmp_path):
    from grader.app.commands import batch_main, release_main
    from grader.app.frontend import UsageProblem
    with pytest.raises(UsageProblem, match="needs both --seed-secret"):
        release_main([str(tmp_path / "out"), "--student", "alice", "--root", str(COURSE.root)])
    with pytest.raises(UsageProblem, match="--variants draws each student's values from the secret"):
        batch_main([str(tmp_path), "--variants", "--root", str(COURSE.root)])


@pytest.mark.slow  # test_batch's class (--seed-secret, no --variants) holds it for every puzzle
def test_without_variants_a_secret_grades_every_student_with_the_courses_values(tmp_path):
    """A class handed one common release: `batch --seed-secret` alone grades it as it always did."""
    (tmp_path / "class" / "alice").mkdir(parents=True)
    shutil.copy(COURSE.solution_file("puzzle01"), tmp_path / "class" / "alice")
    result = _grade(tmp_path / "class", 12345, variants=False)["alice"]["puzzle01"]
    assert result.passed and result.variant == {}


def test_the_class_page_shows_the_values_a_puzzle_was_graded_with():
    from grader.judge.results import PuzzleResult, Status, StudentResult
    from grader.report.class_page import class_page
    graded = PuzzleResult(puzzle="puzzle20", title="Layer norm, forward", status=Status.FAIL, source="bob/p.py",
                          device="cpu", message="case constant_rows[seed=5]: wrong values", variant={"EPS": "0.001"})
    page = class_page([StudentResult("bob", (graded,), (), 1.0)], ["puzzle20"], 1.0)
    assert "Layer norm, forward <span class='tp-variant'>(their EPS = 0.001)</span>" in page


# ---- grading: a pasted variant fails, each student's own passes --------------------------------
def _class_with_a_paste(tmp_path, puzzle_ids, secret):
    """alice submits her own solutions; bob submits alice's files as they are."""
    for student in ("alice", "bob"):
        (tmp_path / "class" / student).mkdir(parents=True)
    for puzzle_id in puzzle_ids:
        name = COURSE.puzzle_file(puzzle_id).name
        value = COURSE.puzzle_for(puzzle_id, secret, "alice").variant_values
        text = own_solution(puzzle_id, next(iter(value.values()))) if value else COURSE.solution_file(puzzle_id).read_text()
        for student in ("alice", "bob"):
            (tmp_path / "class" / student / name).write_text(text)
    return tmp_path / "class"


def _secret_parting(alice, bob, puzzle_ids):
    """The first secret that gives alice and bob another value in every puzzle named."""
    return next(s for s in range(1, 10_000) if all(
        COURSE.puzzle_for(p, s, alice).variant_values != COURSE.puzzle_for(p, s, bob).variant_values
        for p in puzzle_ids))


def _grade(folder, secret, variants=True):
    from grader.judge.classroom import grade_class
    from grader.judge.options import Options
    run = grade_class(COURSE, folder, Options(device="cpu", secret=secret, variants=variants), jobs=2)
    return {s.student: {r.puzzle: r for r in s.results} for s in run.results}


def _assert_paste_fails(results, puzzle_id, secret):
    puzzle = COURSE.puzzle_for(puzzle_id, secret, "bob")
    variant = puzzle.variants[0]
    mine = shown(puzzle.variant_values[variant.name])
    alices = shown(COURSE.puzzle_for(puzzle_id, secret, "alice").variant_values[variant.name])
    own, pasted = results["alice"][puzzle_id], results["bob"][puzzle_id]
    assert own.passed, own.message
    assert own.variant == {variant.name: alices}
    assert not pasted.passed and pasted.variant == {variant.name: mine}
    # Names the constant and bob's value, and why: another value's results, or the file's constant.
    assert f"{variant.what} is {mine} for you, as your statement says" in pasted.message, pasted.message
    assert re.search(rf"computed with {re.escape(variant.what)} = -?[\d.e-]+|your file sets", pasted.message)


def test_a_pasted_variant_fails_and_each_students_own_passes(tmp_path):
    secret = _secret_parting("alice", "bob", ["puzzle01"])
    results = _grade(_class_with_a_paste(tmp_path, ["puzzle01"], secret), secret)
    _assert_paste_fails(results, "puzzle01", secret)
    alices = shown(COURSE.puzzle_for("puzzle01", secret, "alice").variant_values["ADD"])
    assert f"computed with the constant added = {alices}:" in results["bob"]["puzzle01"].message


@pytest.mark.slow
def test_a_paste_fails_in_every_varied_puzzle(tmp_path):
    """One class: alice's own files for every varied puzzle (and 31, 32, which 33 launches), bob's
    copies of them. Kernel and autograd puzzles, constants in bodies, defaults and module constants."""
    varied = ["puzzle02", "puzzle12", "puzzle20", "puzzle22", "puzzle23", "puzzle33", "puzzle34"]
    secret = _secret_parting("alice", "bob", varied)
    results = _grade(_class_with_a_paste(tmp_path, varied + ["puzzle31", "puzzle32"], secret), secret)
    for puzzle_id in varied:
        _assert_paste_fails(results, puzzle_id, secret)
    note = results["bob"]["puzzle20"].message
    assert re.search(r"your file sets the default of `eps` in `layer_norm_fwd` to [\d.e-]+ \(line \d+\)", note)


@pytest.mark.slow
def test_a_release_per_student_states_their_values_everywhere(tmp_path):
    import subprocess
    import sys

    from pristine import whole_course
    roster = tmp_path / "roster.txt"
    roster.write_text("alice\nbob\n")
    course = whole_course(tmp_path / "course")  # as committed, whatever a learner solved
    run = subprocess.run([sys.executable, "-m", "grader", "release", str(tmp_path / "out"), "--seed-secret", "99",
                          "--roster", str(roster), "--root", str(course)], cwd=ROOT, capture_output=True, text=True,
                         timeout=300)
    assert run.returncode == 0, run.stderr
    for student in ("alice", "bob"):
        out = tmp_path / "out" / student
        saved = json.loads((out / VARIANT_FILE).read_text())
        assert saved["student"] == student and "secret" not in json.dumps(saved)
        released = Course(out)
        for puzzle_id in VARIED:
            want = COURSE.puzzle_for(puzzle_id, 99, student)
            assert released.puzzle(puzzle_id).variant_values == want.variant_values
            assert released.puzzle(puzzle_id).statement == want.statement
        add = shown(COURSE.puzzle_for("puzzle01", 99, student).variant_values["ADD"])
        assert f"Add the constant {add} to" in (out / "puzzles" / "puzzle01_constant_add.py").read_text()
        notebook = (out / "notebooks" / "01_classic.ipynb").read_text()
        assert f"Add the constant {add} to" in notebook and f"# ADD = {add}: the constant added" in notebook
