"""Issue 46, "every submission is a row": each entry of a class's submissions folder is a student
graded or an entry refused with its reason, ids map to folders one to one (a hash of the id where
two would meet, never a refusal), and every report names each id as handed in. Nothing here
grades a kernel (the submissions hold none), so each test takes seconds."""
import csv
import errno
import json
import os
import unicodedata
import xml.etree.ElementTree as ET

from grader.app import commands
from grader.app.frontend import run_command
from grader.course.loader import Course
from grader.judge import classroom
from grader.judge.results import ExitCode
from grader.source import intake, submission_walk
from grader.source.intake import id_hash, prepare_class, student_names
from pristine import PRISTINE

COURSE = Course(PRISTINE)
CODE = "x = 1\n"  # a student's file with no kernel: graded, on nothing


def _class(subs):
    """One entry of each kind intake meets; see the expected rows in the test below."""
    subs.mkdir()
    for folder in (".dotted", "...", "🙂", "a b", "a_b", "Ana", "ana", "bob", "x∕y", "x_y", "a_b-c868"):
        (subs / folder).mkdir()
        (subs / folder / "notes.py").write_text(CODE)
    for file in ("😀.py", "bob.py", ".hidden.py"):
        (subs / file).write_text(CODE)
    (subs / "frank.py").write_bytes(b"x = '\xff'\n")          # Latin-1, not UTF-8
    (subs / "alice.zip").write_bytes(b"PK\x03\x04")
    (subs / "notes.txt").write_text("see my folder\n")
    (subs / ".DS_Store").write_bytes(b"\0")
    (subs / "__MACOSX").mkdir()
    (subs / "empty").mkdir()
    (subs / "only_finder").mkdir()
    (subs / "only_finder" / ".DS_Store").write_bytes(b"\0")   # nothing handed in but Finder's file
    (subs / "eve.py").symlink_to(subs / "bob.py")
    (subs / "trent").symlink_to(subs / "bob", target_is_directory=True)
    (subs / "ghost.py").symlink_to(subs / "nowhere.py")       # a link to nothing is listed as well
    os.mkfifo(subs / "pipe.py")
    return subs


def test_every_entry_is_a_row_graded_or_refused_with_its_reason(tmp_path):
    subs = _class(tmp_path / "subs")
    rows = prepare_class(subs, COURSE, tmp_path / "work")
    assert len(rows) == len(os.listdir(subs)) == 25
    assert len({r.name.casefold() for r in rows}) == 25  # one folder and row per entry, on any disk
    graded = {r.id: r.name for r in rows if not r.refused}
    assert graded == {
        ".dotted": "_dotted", ".hidden": "_hidden", "...": "unnamed",
        "🙂": f"_-{id_hash('🙂')}", "😀": f"_-{id_hash('😀')}",               # only an emoji: `_` and a hash each
        "a b": f"a_b-{id_hash('a b', 8)}", "a_b": "a_b", "a_b-c868": "a_b-c868",
        "Ana": f"Ana-{id_hash('Ana')}", "ana": f"ana-{id_hash('ana')}",       # a case-insensitive disk merges these
        "x∕y": f"x_y-{id_hash('x∕y')}", "x_y": "x_y",                        # U+2215, a slash look-alike
        "bob": "bob"}
    assert id_hash("a b") == "c868"  # the one id named as another's hashed name takes a longer hash of its own
    refused = {r.id: r.refused for r in rows if r.refused}
    assert refused == {
        "bob.py": "`bob.py` is a second submission of the id `bob` (`bob` is graded): one submission per student; "
                  "put both in one folder `bob/`, or rename `bob.py` to its own student's id, and run again",
        "frank": "`frank.py` could not be read (not UTF-8 text: byte 0xff at offset 5): save it as UTF-8 and hand it "
                 "in again",
        "alice.zip": "`alice.zip` is an archive, not a folder, a .py or an .ipynb file: unpack it into a folder of "
                     "its own and run again",
        "notes.txt": "`notes.txt` is not a folder, a .py or an .ipynb file: a student's work is handed in as one of "
                     "those (or inside their folder)",
        ".DS_Store": "`.DS_Store` is written by macOS's Finder, not a submission: nothing to do (delete it to drop "
                     "this row)",
        "__MACOSX": "`__MACOSX/` is written by macOS's archive utility, not a submission: nothing to do (delete it "
                    "to drop this row)",
        "empty": "`empty/` is an empty folder: nothing was handed in; copy the student's files into it if they sent "
                 "any, and run again",
        "only_finder": "`only_finder/` is an empty folder: nothing was handed in; copy the student's files into it "
                       "if they sent any, and run again",
        "eve.py": "`eve.py` is a symbolic link, never followed: copy the file itself into the submissions folder "
                  "and run again",
        "ghost.py": "`ghost.py` is a symbolic link, never followed: copy the file itself into the submissions folder "
                    "and run again",
        "trent": "`trent` is a symbolic link, never followed: copy the folder itself into the submissions folder and "
                 "run again",
        "pipe.py": "`pipe.py` is not a regular file (a fifo): hand in the file itself and run again"}
    kinds = {r.id: r.refusal.name for r in rows if r.refused}
    assert kinds == {"bob.py": "SAME_ID", "frank": "UNREADABLE", "pipe.py": "UNREADABLE", "alice.zip": "ODD_FILE",
                     "notes.txt": "ODD_FILE", ".DS_Store": "TOOLING", "__MACOSX": "TOOLING", "empty": "EMPTY",
                     "only_finder": "EMPTY", "eve.py": "LINK", "ghost.py": "LINK", "trent": "LINK"}
    assert {r.id for r in rows if r.refused and not r.folder.exists()} >= {"alice.zip", "eve.py", "trent"}


def test_ids_that_meet_are_told_apart_by_a_note_on_each(tmp_path):
    rows = {r.id: r for r in prepare_class(_class(tmp_path / "subs"), COURSE, tmp_path / "work")}
    told = (f"ids that clean to one folder name, `Ana`, are told apart: `Ana` as `Ana-{id_hash('Ana')}` and `ana` as "
            f"`ana-{id_hash('ana')}`; with --variants they draw the same constants (the draw reads the cleaned id)")
    assert rows["Ana"].problems == rows["ana"].problems == (told,)
    assert rows["..."].problems == ("name `...` has nothing usable as a folder name: graded as `unnamed`",)
    assert rows[".dotted"].problems == rows["bob"].problems == ()  # cleaned alone: the key says it, no note
    assert rows[".dotted"].files == {} and (rows[".dotted"].folder / "notes.py").read_text() == CODE


def test_names_are_stable_whoever_else_is_in_the_class():
    """A hashed name is the id's own: the same in any order and beside any other id."""
    alone = dict(zip(["a b", "a_b"], student_names(["a b", "a_b"])))
    assert dict(zip(["a_b", "a b"], student_names(["a_b", "a b"]))) == alone
    assert alone["a b"][0] == "a_b-c868" and alone["a_b"][0] == "a_b"
    three = dict(zip(["a_b", "a b", "a  b"], student_names(["a_b", "a b", "a  b"])))
    assert three["a b"][0] == "a_b-c868" and three["a  b"][0] == "a__b"  # `a  b` cleans to its own name
    # one id, however a disk writes it: a Mac's decomposed accent and a trailing space are the same id
    assert student_names(["Zoë"]) == student_names([unicodedata.normalize("NFD", "Zoë ")])


def test_one_id_in_a_macs_form_and_in_linuxs_is_one_submission(tmp_path):
    subs = tmp_path / "subs"
    (subs / unicodedata.normalize("NFD", "Zoë")).mkdir(parents=True)
    (subs / unicodedata.normalize("NFD", "Zoë") / "notes.py").write_text(CODE)
    (subs / "Zoë.py").write_text(CODE)
    rows = prepare_class(subs, COURSE, tmp_path / "work")
    assert [(r.id, r.name, bool(r.refused)) for r in rows] == [("Zoë", "Zoë", False), ("Zoë.py", "Zoë.py", True)]


def test_unreadable_files_and_folders_are_refused_with_the_fix(tmp_path, monkeypatch):
    """No read permission, simulated (the suite may run as root, who reads everything)."""
    subs = tmp_path / "subs"
    (subs / "locked").mkdir(parents=True)
    (subs / "locked" / "notes.py").write_text(CODE)
    (subs / "noperm.py").write_text(CODE)
    (subs / "mixed").mkdir()
    (subs / "mixed" / "noperm.py").write_text(CODE)
    (subs / "mixed" / "ok.py").write_text(CODE)
    real_open, real_scandir = os.open, os.scandir

    def no_read(path, *args, **kwargs):
        if str(path).endswith("noperm.py"):
            raise PermissionError(errno.EACCES, "Permission denied")
        return real_open(path, *args, **kwargs)

    def no_list(path=".", *args):
        if str(path).endswith("locked"):
            raise PermissionError(errno.EACCES, "Permission denied")
        return real_scandir(path, *args)
    monkeypatch.setattr(submission_walk.os, "open", no_read)
    monkeypatch.setattr(intake.os, "scandir", no_list)
    rows = {r.id: r for r in prepare_class(subs, COURSE, tmp_path / "work")}
    assert rows["locked"].refused == ("`locked/` could not be opened (Permission denied): give the grader read and "
                                      "execute permission (chmod -R a+rX) and run again")
    assert rows["noperm"].refused == ("`noperm.py` could not be read (Permission denied): give the grader read "
                                      "permission (chmod a+r) and run again")
    # inside a student's folder, a file not read is one of their problems: the rest is graded
    assert rows["mixed"].problems == ("noperm.py: could not be read (Permission denied): give the grader read "
                                      "permission (chmod a+r) and run again",) and not rows["mixed"].refused


def _batch(subs, out, *extra):
    return run_command(commands.batch_main, [str(subs), "--out", str(out), "--no-sandbox", "--no-similarity",
                                             "--root", str(PRISTINE), *map(str, extra)])


def test_every_report_names_each_id_as_submitted_and_counts_no_refused_entry(tmp_path, capsys):
    subs = _class(tmp_path / "subs")
    out = tmp_path / "out"
    assert _batch(subs, out, "--format", "gradescope") == ExitCode.OK
    rows = prepare_class(subs, COURSE, tmp_path / "work")
    ids = sorted(r.id for r in rows)
    refused = sorted(r.id for r in rows if r.refused)
    with open(out / "grades.csv", newline="", encoding="utf-8") as f:
        sheet = list(csv.DictReader(f))
    assert sorted(row["submitted_id"] for row in sheet) == ids
    by_id = {row["submitted_id"]: row for row in sheet}
    assert by_id["alice.zip"]["total"] == "" and by_id["alice.zip"]["problems"].startswith(
        "refused: `alice.zip` is an archive")
    assert by_id["🙂"]["total"] == by_id[".dotted"]["total"] == "0"  # graded, on nothing
    doc = json.loads((out / "results.json").read_text())
    assert sorted(s["submitted_id"] for s in doc["students"]) == ids
    assert sorted(s["submitted_id"] for s in doc["students"] if s["refused"]) == refused
    suites = ET.parse(out / "junit.xml").getroot()
    assert sorted(s.find("properties/property").get("value") for s in suites) == ids
    assert [s.get("skipped") for s in suites if s.find("properties/property").get("value") == "trent"] == ["1"]
    page = (out / "report.html").read_text()
    graded = len(ids) - len(refused)
    assert f"{graded} submissions and {len(refused)} entries of the folder refused (each row says why)" in page
    assert "<b>.dotted</b>: 0 passed of 0 attempted" in page and "<b>notes.txt</b>: refused" in page
    assert f"{graded} students graded ({len(refused)} entries of the folder refused, each a row saying why)" \
        in capsys.readouterr().out
    scope = {p.parent.name: json.loads(p.read_text()) for p in (out / "gradescope").glob("*/results.json")}
    assert sorted(s["extra_data"]["submitted_id"] for s in scope.values()) == sorted(set(ids) - set(refused))
    listed = json.loads((out / "gradescope" / "refused.json").read_text(encoding="utf-8"))
    assert sorted(r["submitted_id"] for r in listed) == refused
    assert all(r["reason"].startswith("refused: `") for r in listed)


def test_ids_that_meet_are_both_graded_with_variants_each_with_their_ids_draw(tmp_path, monkeypatch):
    subs = tmp_path / "subs"
    for student in ("ana🙂", "ana😀", "O'Brien", "O_Brien"):
        (subs / student).mkdir(parents=True)
        (subs / student / "notes.py").write_text(CODE)
    drawn = {}

    def recording(course, student, options, *args, **kwargs):
        drawn[student.name] = (student.variant_id, COURSE.puzzle_for("puzzle01", 8817, student.variant_id)
                               .variant_values)
        return real(course, student, options, *args, **kwargs)
    real = classroom.grade_student
    monkeypatch.setattr(classroom, "grade_student", recording)
    assert _batch(subs, tmp_path / "out", "--seed-secret", 8817, "--variants") == ExitCode.OK
    assert {name: who for name, (who, _) in drawn.items()} == {
        f"ana_-{id_hash('ana🙂')}": "ana🙂", f"ana_-{id_hash('ana😀')}": "ana😀",
        "O_Brien": "O_Brien", "O_Brien-" + id_hash("O'Brien"): "O'Brien"}
    # each draw is their id's, as release gives it: ids that clean alike draw alike (and are told so)
    assert COURSE.puzzle_for("puzzle01", 8817, "O'Brien").variant_values == drawn["O_Brien"][1]


def test_resume_matches_by_the_id_when_a_new_student_moves_a_name(tmp_path, monkeypatch):
    subs = tmp_path / "subs"
    (subs / "a b").mkdir(parents=True)
    (subs / "a b" / "notes.py").write_text(CODE)
    (subs / "frank.py").write_bytes(b"x = '\xff'\n")
    out = tmp_path / "out"
    assert _batch(subs, out) == ExitCode.OK
    first = {s["submitted_id"]: s["student"] for s in json.loads((out / "results.json").read_text())["students"]}
    assert first == {"a b": "a_b", "frank": "frank"}
    (subs / "a_b").mkdir()  # `a_b` takes the bare name now: `a b` is `a_b-c868`, and still graded once
    (subs / "a_b" / "notes.py").write_text(CODE)
    (subs / "frank.py").write_text(CODE)  # saved as UTF-8: graded now, not kept refused
    graded = []

    def recording(course, student, *args, **kwargs):
        graded.append(student.id)
        return real(course, student, *args, **kwargs)
    real = classroom.grade_student
    monkeypatch.setattr(classroom, "grade_student", recording)
    assert _batch(subs, out, "--resume", out) == ExitCode.OK
    assert sorted(graded) == ["a_b", "frank"]
    again = {s["submitted_id"]: (s["student"], s["refused"]) for s in
             json.loads((out / "results.json").read_text())["students"]}
    assert again == {"a b": ("a_b-c868", False), "a_b": ("a_b", False), "frank": ("frank", False)}
