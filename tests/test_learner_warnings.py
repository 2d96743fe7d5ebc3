"""Warnings raised while learner code runs (numpy's RuntimeWarning of an overflow, in Triton's
interpreter) reach the learner as the warning, their own line that led to it and the library that
raised it by name: never an absolute path of the machine that graded it."""
from __future__ import annotations

import sys
import textwrap

from conftest import COURSE, ROOT
from grader.judge.options import Options
from grader.judge.results import Status
from grader.source.capture import LineMap

KERNEL = textwrap.dedent('''\
    import triton
    import triton.language as tl


    @triton.jit
    def add_kernel(x_ptr, z_ptr, N0, B0: tl.constexpr):
        offsets = tl.program_id(0) * B0 + tl.arange(0, B0)
        x = tl.load(x_ptr + offsets, mask=offsets < N0)
        big = tl.exp(x * 1000.0)
        tl.store(z_ptr + offsets, x + 10.0 + tl.where(big < 0.0, big, 0.0), mask=offsets < N0)
''')
SAID = ("RuntimeWarning: overflow encountered in exp, at line 9 of puzzle01_warns.py: `big = tl.exp(x * 1000.0)` "
        "(raised inside triton)\n")


def test_an_overflow_in_the_interpreter_names_the_learners_line_and_no_path(tmp_path):
    """exp() overflows for the lanes `tl.where` then drops: the kernel passes, every case (the
    large one too, run by the batched engine) says the warning in the learner's terms."""
    from grader.judge.session import grade_many
    path = tmp_path / "puzzle01_warns.py"
    path.write_text(KERNEL)
    result = grade_many(COURSE, [("puzzle01", path)], Options(device="cpu")).results[0]
    assert result.status == Status.PASS, result.message
    assert {c.printed for c in result.cases} == {SAID}
    for case in result.cases:
        assert "/" not in case.printed and str(ROOT) not in case.printed and sys.prefix not in case.printed


def test_a_warning_from_the_learners_own_file_says_only_its_line(tmp_path):
    import importlib.util

    from grader.sandbox.learner_code import captured_output
    path = tmp_path / "mine.py"
    path.write_text("import warnings\n\n\ndef f():\n    warnings.warn('slow path', UserWarning)\n")
    spec = importlib.util.spec_from_file_location("mine", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    with captured_output() as printed:
        module.f()
    assert printed == ["UserWarning: slow path, at line 5 of mine.py: `warnings.warn('slow path', UserWarning)`\n"]


def test_a_library_path_in_a_warnings_own_words_is_cut_to_the_package():
    import warnings

    from grader.sandbox.learner_code import captured_output
    with captured_output() as printed:
        warnings.warn(f"see {sys.prefix}/lib/some/file.py", RuntimeWarning)
    assert sys.prefix not in printed[0] and "see lib/some/file.py" in printed[0]


def test_a_notebooks_check_says_the_cells_line():
    lines = LineMap({9: ("the cell defining `add_kernel`", 3)}, module="puzzle01_notebook.py")
    said = SAID.replace("puzzle01_warns.py", "puzzle01_notebook.py")
    assert lines.relabel(said) == ("RuntimeWarning: overflow encountered in exp, at line 3 of the cell defining "
                                   "`add_kernel`: `big = tl.exp(x * 1000.0)` (raised inside triton)\n")
    assert lines.relabel("at line 9 of helpers.py") == "at line 9 of helpers.py"  # another file's line stays
