"""benchmarks/golden_run.py's normaliser: it removes what varies between two runs of the same code
(time, scratch paths, progress order) and nothing else."""
import importlib.util
import sys

from paths import ROOT

spec = importlib.util.spec_from_file_location("golden_run", ROOT / "benchmarks" / "golden_run.py")
golden = sys.modules["golden_run"] = importlib.util.module_from_spec(spec)  # dataclasses look it up
spec.loader.exec_module(golden)

PLACES = {"/work/course": "<ROOT>", "/work/course/.venv": "<VENV>", "/tmp/golden-ab12cd34": "<WORK>",
          "31415926": "<SLEEP>"}


def test_times_become_placeholders_and_verdicts_stay():
    text = ('{\n "seconds": 0.4748370569996041,\n "max_abs_err": 0.25,\n "message": "within 30 s"\n}\n'
            '✓ puzzle01 Constant add: 5/5 cases pass + GPU compile check (0.5 s)\n0/1 passed, 1 failed (12.3 s)\n'
            '<testcase classname="alice" name="puzzle01" time="0.47">\n'
            '3 students graded in 95 s; reports in /tmp/golden-ab12cd34/batch-out/\n')
    assert golden.normalise(text, PLACES) == (
        '{\n "seconds": "<s>",\n "max_abs_err": 0.25,\n "message": "within 30 s"\n}\n'
        '✓ puzzle01 Constant add: 5/5 cases pass + GPU compile check (<s> s)\n0/1 passed, 1 failed (<s> s)\n'
        '<testcase classname="alice" name="puzzle01" time="<s>">\n'
        '3 students graded in <s> s; reports in <WORK>/batch-out/\n')


def test_paths_longest_first_and_random_temporary_names():
    text = ("/work/course/.venv/lib/x.py /work/course/solutions/p.py sleep 31415926 "
            "`/tmp/triton-puzzles-batch-x1y2z3_q/alice/p.py` /tmp/fixed.json")
    assert golden.normalise(text, PLACES) == ("<VENV>/lib/x.py <ROOT>/solutions/p.py sleep <SLEEP> "
                                              "`/tmp/triton-puzzles-batch-<RANDOM>/alice/p.py` /tmp/fixed.json")


def test_progress_lines_lose_count_and_timing_and_are_sorted_in_place():
    text = ("warning: first\n[1/3] puzzle02 pass (4 s, about 8 s left)\n[2/3] puzzle01 fail (6 s, about 3 s left)\n"
            "[3/3] carol (10 s)\nlast\n")
    assert golden.normalise(text, {}) == ("warning: first\n[*/3] carol\n[*/3] puzzle01 fail\n[*/3] puzzle02 pass\n"
                                          "last\n")


def test_the_class_pages_time_and_a_learner_modules_path_hash_become_placeholders():
    text = ("<p class='tp-note'>3 submissions, graded in 83 s. <a href='#summary'>"
            "import _learner_d8da2d793776 as _source_module\\n_learner_d8da2d79377 _learner_d8da2d7937761")
    assert golden.normalise(text, PLACES) == (
        "<p class='tp-note'>3 submissions, graded in <s> s. <a href='#summary'>"
        "import _learner_<PATH> as _source_module\\n_learner_d8da2d79377 _learner_d8da2d7937761")
