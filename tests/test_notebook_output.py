"""What check() shows in a notebook: the table at full width, the failures' messages under it,
the picture large enough to read; and line numbers the learner can find in their own cell."""
import json
import linecache
import re
import struct
import subprocess
import sys
import zlib
from dataclasses import replace
from html.parser import HTMLParser

import pytest

from grader.judge.results import CaseResult, CheckResult, PuzzleResult, Report
from grader.report.html import picture_width, render
from grader.source.capture import LineMap, captured, notebook_module, relabel_report
from pristine import PRISTINE

# A learner's cell: two lines before the kernel, the unmasked load on line 7.
CELL = """# Puzzle 2, my attempt
BLOCK = 32
@triton.jit
def add_mask2_kernel(x_ptr, z_ptr, N0, B0: tl.constexpr):
    offsets = tl.program_id(0) * B0 + tl.arange(0, B0)
    # no mask: the last program reads past the end
    x = tl.load(x_ptr + offsets)
    tl.store(z_ptr + offsets, x + 10.0)
"""
OUT_OF_BOUNDS = ("case classic[seed=0] (N0=200, B0=32): out-of-bounds load of `x` in program (6, 0, 0) at {where}: "
                 "`x = tl.load(x_ptr + offsets)`: 24 of 32 active lanes fall outside `x` (shape (200,), 200 elements); "
                 "the first is flat index 200, past its end. "
                 "Fix: mask the load: `tl.load(x_ptr + offsets, mask=offsets < N0, other=0.0)`.")


def _png(width: int, height: int) -> bytes:
    """A valid grey PNG of that size."""
    def chunk(kind: bytes, data: bytes) -> bytes:
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))
    rows = b"".join(b"\x00" + b"\x80" * width for _ in range(height))
    return (b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", width, height, 8, 0, 0, 0, 0))
            + chunk(b"IDAT", zlib.compress(rows)) + chunk(b"IEND", b""))


def _case(name, passed, message="", kind=None, seed=0):
    return CaseResult(name=name, sizes={"N0": 200}, blocks={"B0": 32}, seed=seed, grid=(7,), passed=passed,
                      kind=kind, message=message, max_abs_err=None if passed else 1.0)


def _failing_result() -> PuzzleResult:
    long = OUT_OF_BOUNDS.format(where="line 7 of the cell defining `add_mask2_kernel`")
    return PuzzleResult(
        puzzle="puzzle02", title="Constant add, blocked", status="fail", source="x.py", device="cpu",
        cases=(_case("classic", False, long, "out_of_bounds"), _case("small", True),
               _case("ragged", False, long.replace("classic[seed=0]", "ragged[seed=3]"), "out_of_bounds", seed=3)),
        checks={"GPU compile check": CheckResult(True)})


class _Tags(HTMLParser):
    """Start tags in order, each with its attributes, and a check that every tag closes."""

    VOID = {"img", "br", "hr", "meta", "input"}

    def __init__(self):
        super().__init__()
        self.tags, self.open = [], []

    def handle_starttag(self, tag, attrs):
        self.tags.append((tag, dict(attrs)))
        if tag not in self.VOID:
            self.open.append(tag)

    def handle_startendtag(self, tag, attrs):
        self.tags.append((tag, dict(attrs)))

    def handle_endtag(self, tag):
        assert self.open and self.open[-1] == tag, f"</{tag}> closes <{self.open[-1] if self.open else None}>"
        self.open.pop()


def _parse(html: str) -> _Tags:
    tags = _Tags()
    tags.feed(html)
    tags.close()
    assert not tags.open, f"unclosed: {tags.open}"
    return tags


def test_the_table_takes_the_full_width_and_the_messages_sit_under_it(tmp_path):
    picture = tmp_path / "accesses.png"
    picture.write_bytes(_png(2134, 1001))
    html = render(_failing_result(), picture)
    tags = _parse(html)
    table = next(attrs for tag, attrs in tags.tags if tag == "table")
    assert "width:100%" in table["style"] and "table-layout:auto" in table["style"]
    # the message is a block of its own under the table, not a column of it
    assert html.index("</table>") < html.index("class='tp-message'") < html.index("<img")
    table_html = html[html.index("<table"):html.index("</table>")]
    assert "out-of-bounds load" not in table_html and "max-width:38em" not in html
    assert "out of bounds" in table_html  # the row says what kind of failure, in short
    first = html[html.index("class='tp-message'"):html.index("</div>", html.index("class='tp-message'"))]
    assert "<b>classic[seed=0] (N0=200, B0=32)</b>" in first
    assert "at line 7 of the cell defining <code>add_mask2_kernel</code>" in first
    assert "<code>x = tl.load(x_ptr + offsets)</code>" in first
    # the second failure is there, folded, under the first
    assert html.index("class='tp-more'") > html.index("class='tp-message'")
    assert "ragged[seed=3] (N0=200, B0=32)" in html
    # nothing scrolls in a box of fixed height, and no flex row squeezes the table beside the picture
    assert "max-height" not in html and "overflow:auto" not in html and "overflow:scroll" not in html
    assert "display:flex" not in html and not re.search(r"(?<![-\w])height:(?!auto)", html)


def test_the_picture_is_shown_large_enough_to_read(tmp_path):
    picture = tmp_path / "accesses.png"
    picture.write_bytes(_png(2134, 1001))
    img = next(attrs for tag, attrs in _parse(render(_failing_result(), picture)).tags if tag == "img")
    style = dict(part.split(":", 1) for part in img["style"].split(";") if part)
    assert int(style["width"].removesuffix("px")) >= 900
    assert style["max-width"] == "100%" and style["height"] == "auto"
    assert img["src"].startswith("data:image/png;base64,")
    assert picture_width(_png(2134, 1001)) == 1067
    assert picture_width(_png(1300, 500)) == 960  # a one-tensor picture: still wide enough to read
    assert picture_width(_png(600, 300)) == 600  # never blown up past its pixels
    assert picture_width(b"not a png") is None


def test_the_most_telling_failure_leads_and_the_others_are_folded_in_order():
    plain = _case("classic", False, "case classic[seed=0] (N0=200, B0=32): (0): yours 2, expected 3", "mismatch")
    zero = _case("short", False, "case short[seed=1] (N0=200, B0=32): (0): yours 0, expected 3", "mismatch", seed=1)
    other = _case("tail", False, "case tail[seed=2] (N0=200, B0=32): (0): yours 1, expected 3", "mismatch", seed=2)
    html = render(PuzzleResult(puzzle="puzzle07", title="Long sum", status="fail", source="x.py", device="cpu",
                               cases=(plain, zero, other), message=zero.message))
    assert html.index("<b>short[seed=1]") < html.index("class='tp-more'") < html.index("<b>classic[seed=0]") \
        < html.index("<b>tail[seed=2]")


def test_one_failure_has_no_folded_rest_and_a_pass_has_no_messages():
    failing = _failing_result()
    one = replace(failing, cases=failing.cases[:2])
    html = render(one)
    assert html.count("class='tp-message'") == 1 and "tp-more" not in html
    passing = PuzzleResult(puzzle="puzzle02", title="Constant add, blocked", status="pass", source="x.py",
                           device="cpu", cases=(_case("classic", True),))
    html = render(passing)
    assert "all 1 cases pass" in html and "tp-message" not in html and "<img" not in html
    _parse(html)


def test_a_failed_load_check_is_a_message_under_the_table():
    message = "importing puzzle02_notebook.py failed: NameError: name 'q' is not defined (line 3 of code cell 2: `q`)"
    result = PuzzleResult(puzzle="puzzle02", title="Constant add, blocked", status="fail", source="x.py",
                          device="cpu", checks={"load": CheckResult(False, message, "exception")}, message=message)
    html = render(result)
    assert html.index("</table>") < html.index("<b>load</b>: importing puzzle02_notebook.py failed")
    assert "(line 3 of code cell 2: <code>q</code>)" in html


# ---- line numbers the learner can find --------------------------------------------------------

def test_line_map_relabels_lines_but_not_quoted_code_or_other_files():
    lines = LineMap({12: ("the cell defining `k`", 5), 13: ("the cell defining `k`", 6)}, module="p_notebook.py")
    assert lines.relabel("a load at line 12: `x = f(line 12)`") == \
        "a load at line 5 of the cell defining `k`: `x = f(line 12)`"
    assert lines.relabel("(line 13: `y`)") == "(line 6 of the cell defining `k`: `y`)"
    assert lines.relabel("at line 40: `z`") == "at line 40: `z`"  # not from the learner: left alone
    assert lines.relabel('File "/usr/lib/triton/core.py", line 12, in f') == \
        'File "/usr/lib/triton/core.py", line 12, in f'
    assert lines.relabel('File "/tmp/abc/p_notebook.py", line 13, in k') == \
        'File "/tmp/abc/p_notebook.py", line 6 of the cell defining `k`, in k'
    assert lines.relabel("deadline 12 and inline 13") == "deadline 12 and inline 13"
    shown = LineMap({7: ("code cell 2", 3)}, module="work_ipynb.py", shown="work.ipynb")
    assert shown.relabel("`k` in work_ipynb.py was not imported: line 7 `@deco`") == \
        "`k` in work.ipynb was not imported: line 3 of code cell 2 `@deco`"


def test_relabel_report_keys_on_the_graded_file(tmp_path):
    module = tmp_path / "work_ipynb.py"
    result = PuzzleResult(puzzle="puzzle02", title="t", status="fail", source=str(module.resolve()), device="cpu",
                          cases=(_case("classic", False, "case classic[seed=0] (N0=200, B0=32): at line 9", "mismatch"),))
    other = PuzzleResult(puzzle="puzzle01", title="t", status="fail", source="/elsewhere.py", device="cpu",
                         message="at line 9")
    report = relabel_report(Report((result, other)), {str(module): LineMap({9: ("code cell 4", 2)})})
    assert report.results[0].cases[0].message.endswith("at line 2 of code cell 4")
    assert report.results[1].message == "at line 9"


def _cell_kernel(source: str, name: str = "add_mask2_kernel"):
    """Run ``source`` as ipykernel runs a cell: compiled under a cell's file name, its lines in linecache."""
    import triton
    import triton.language as tl
    filename = "/tmp/ipykernel_4242/2718281828.py"
    linecache.cache[filename] = (len(source), None, source.splitlines(True), filename)
    namespace = {"__name__": "__main__", "triton": triton, "tl": tl}
    exec(compile(source, filename, "exec"), namespace)
    return namespace[name]


def test_captured_kernel_maps_its_lines_to_its_cell():
    pytest.importorskip("triton")
    capture = captured(_cell_kernel(CELL))
    module = capture.text.splitlines()
    load = next(i for i, line in enumerate(module, start=1) if "tl.load" in line)
    assert capture.lines.lines[load] == ("the cell defining `add_mask2_kernel`", 7)
    decorator = module.index("@triton.jit") + 1
    assert capture.lines.where(decorator) == "line 3 of the cell defining `add_mask2_kernel`"
    assert load != 7  # the module's own numbering differs: that is why the map exists


def test_notebook_module_maps_lines_to_code_cells_and_keeps_them_across_magics():
    nb = {"cells": [{"cell_type": "code", "source": "import torch\nimport triton"},
                    {"cell_type": "markdown", "source": "# Puzzle 2"},
                    {"cell_type": "code", "source": "%load_ext autoreload\n" + CELL},
                    {"cell_type": "code", "source": 'check(add_mask2_kernel, "puzzle02")'}]}
    written = notebook_module(json.dumps(nb), module="w_ipynb.py", shown="w.ipynb")
    module = written.text.splitlines()
    load = next(i for i, line in enumerate(module, start=1) if "tl.load" in line)
    assert written.lines.where(load) == "line 8 of code cell 2"  # the magic's line is blanked, not removed
    assert written.lines.where(1) is None  # the grader's imports
    assert written.skipped == ['check(add_mask2_kernel, "puzzle02")']


@pytest.fixture
def notebook_folder(tmp_path, monkeypatch):
    pytest.importorskip("triton")
    monkeypatch.chdir(PRISTINE / "notebooks")  # the course found from here: as committed, whatever a learner solved
    return tmp_path


@pytest.mark.slow  # grades on a pool of its own
def test_check_says_the_line_of_the_cell(notebook_folder):
    from grader.app.notebook import ProgressFile, check
    shown = check(_cell_kernel(CELL), "puzzle02", device="cpu", picture=False,
                  progress=ProgressFile(notebook_folder / ".progress.json"))
    failure = shown.result.first_failure
    assert failure.kind == "out_of_bounds"
    assert failure.message == OUT_OF_BOUNDS.format(where="line 7 of the cell defining `add_mask2_kernel`")
    assert "at line 7 of the cell defining <code>add_mask2_kernel</code>" in shown.html


@pytest.mark.slow  # runs the command line in a subprocess
def test_grading_a_notebook_file_says_cell_and_line(tmp_path):
    pytest.importorskip("triton")
    nb = {"nbformat": 4, "nbformat_minor": 5, "metadata": {}, "cells": [
        {"cell_type": "code", "metadata": {}, "outputs": [], "execution_count": None,
         "source": "import triton\nimport triton.language as tl"},
        {"cell_type": "markdown", "metadata": {}, "source": "# Puzzle 2"},
        {"cell_type": "code", "metadata": {}, "outputs": [], "execution_count": None,
         "source": "%load_ext autoreload\n" + CELL}]}
    path = tmp_path / "my_work.ipynb"
    path.write_text(json.dumps(nb))
    run = subprocess.run([sys.executable, "-m", "grader", "puzzle02", "--file", str(path), "--root", str(PRISTINE),
                          "--device", "cpu", "--json"], cwd=tmp_path, capture_output=True, text=True, timeout=300)
    doc = json.loads(run.stdout)
    case = next(c for c in doc["results"][0]["cases"] if not c["passed"])
    assert case["message"] == OUT_OF_BOUNDS.format(where="line 8 of code cell 2")
