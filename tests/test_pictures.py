"""Memory-access pictures: the trace records every access, and --viz writes a picture."""
import subprocess
import sys

import numpy as np
import pytest

from grader.channel.worker_pool import WorkerProcess
from grader.judge.grade import PuzzleGrader
from grader.judge.kinds import kind_of
from grader.judge.options import Options
from grader.judge.pictures import choose_case
from grader.report.pictures import MASKED, OOB, READ, READ_WRITTEN, WRITTEN, Panel, cells_by_program
from grader.sandbox.bounds import AccessTrace, Region
from paths import ROOT
from pristine import PRISTINE


def test_trace_sorts_lanes_into_accessed_masked_and_out_of_bounds():
    region = Region("z", start=4096, nbytes=40, fence_start=0, fence_end=8192, itemsize=4, shape=(10,))
    trace = AccessTrace([region])
    addresses = 4096 + 4 * np.arange(12, dtype=np.uint64)          # elements 0..11 of a 10-element z
    mask = np.arange(12) < 11                                         # lane 11 masked off
    trace.record("store", (2, 0, 0), addresses, mask)
    records = {r["kind"]: r["indices"] for r in trace.to_json()["records"]}
    assert records == {"ok": list(range(10)), "oob": [10], "masked": [11]}

    cells = cells_by_program(trace.to_json())[(2, 0, 0)]["z"]
    assert cells[0] == WRITTEN and cells[10] == OOB and cells[11] == MASKED


def test_read_then_write_of_one_element_is_its_own_colour():
    trace = {"records": [
        {"program": [0, 0, 0], "tensor": "x", "op": "load", "kind": "ok", "numel": 4, "indices": [0, 1]},
        {"program": [0, 0, 0], "tensor": "x", "op": "store", "kind": "ok", "numel": 4, "indices": [1]},
        {"program": [0, 0, 0], "tensor": "x", "op": "load", "kind": "masked", "numel": 4, "indices": [2, 9]},
    ]}
    cells = cells_by_program(trace)[(0, 0, 0)]["x"]
    assert cells == {0: READ, 1: READ_WRITTEN, 9: MASKED}, "a masked lane inside the tensor touched nothing"


def test_panel_draws_strays_outside_the_outline():
    image, outline = Panel((5,)).grid({6: OOB, -1: OOB})
    assert image.shape == (1, 8) and outline == (0.5, -0.5, 5, 1)
    assert image[0, 0] == OOB and image[0, 7] == OOB and np.isnan(image[0, 6])
    image, outline = Panel((2, 3)).grid({7: OOB})
    assert image.shape == (3, 3) and outline == (-0.5, -0.5, 3, 2) and image[2, 1] == OOB


@pytest.mark.slow  # starts a worker of its own
def test_traced_run_of_a_missing_store_mask(course):
    worker = WorkerProcess("cpu")
    try:
        grader = PuzzleGrader(course, "puzzle02", ROOT / "tests/wrong_kernels/puzzle02_missing_store_mask.py",
                              worker, Options(compile_check=False), kind=kind_of(course.puzzle("puzzle02")))
        result, trace, note = grader.traced(course.puzzle("puzzle02").cases[0])
    finally:
        worker.close()
    assert note == "" and result.kind == "out_of_bounds"
    oob = [r for r in trace["records"] if r["kind"] == "oob"]
    assert oob == [{"program": [6, 0, 0], "tensor": "z", "op": "store", "kind": "oob", "numel": 200,
                    "indices": list(range(200, 224))}]


def test_choose_case_prefers_the_name_then_the_first_failure(course):
    cases = course.puzzle("puzzle02").cases
    assert choose_case(cases, None, None).label == "classic[seed=0]"
    assert choose_case(cases, "tail_of_one", None).name == "tail_of_one"


def test_choose_case_draws_the_case_the_report_leads_with(course):
    from grader.judge.results import CaseResult, PuzzleResult
    cases = course.puzzle("puzzle02").cases

    def result(case, message, kind="mismatch"):
        return CaseResult(name=case.name, sizes={}, blocks={}, seed=case.seed, grid=(1,), passed=False, kind=kind,
                          message=message)
    plain = result(cases[0], "wrong values")
    pointed = result(cases[1], "out-of-bounds load of `x`", "out_of_bounds")
    graded = PuzzleResult(puzzle="puzzle02", title="", status="fail", source="x.py", device="cpu",
                          cases=(plain, pointed), message=pointed.message)
    assert graded.telling_failure is pointed and choose_case(cases, None, graded).label == cases[1].label


@pytest.mark.slow  # runs the command line in a subprocess
def test_cli_writes_a_picture(tmp_path):
    out = tmp_path / "p2.png"
    run = subprocess.run([sys.executable, "-m", "grader", "puzzle02", "--file",
                          str(ROOT / "tests/wrong_kernels/puzzle02_missing_store_mask.py"), "--viz", str(out)],
                         cwd=PRISTINE, capture_output=True, text=True, timeout=300)  # the course as committed
    assert run.returncode == 1
    assert f"memory-access picture of case classic[seed=0]: {out}" in run.stderr
    assert out.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


@pytest.mark.slow  # runs the command line in a subprocess
def test_cli_rejects_an_unknown_case():
    run = subprocess.run([sys.executable, "-m", "grader", "puzzle02", "--viz", "x.png", "--viz-case", "nope"],
                         cwd=PRISTINE, capture_output=True, text=True, timeout=300)  # the course as committed
    assert run.returncode == 2
    assert "error: no case 'nope'; the cases are classic, exact_multiple" in run.stderr


# ---- a lane out of bounds: marked, enlarged, and the program that made it named ----------------
def _off_by_one_trace(oob: bool = True) -> dict:
    """Puzzle 2's `offsets <= N0` as the interpreter records it (N0=200, B0=32): program 6 reads
    x[192:200], masks off 201..223, and its lane 200 falls one past the end of `x`."""
    records = []
    for p in range(7):
        lanes = [i for i in range(32 * p, 32 * p + 32) if i < 200]
        records.append({"program": [p, 0, 0], "tensor": "x", "op": "load", "kind": "ok", "numel": 200,
                        "indices": lanes})
        if p < 6:
            records.append({"program": [p, 0, 0], "tensor": "z", "op": "store", "kind": "ok", "numel": 200,
                            "indices": lanes})
    records.append({"program": [6, 0, 0], "tensor": "x", "op": "load", "kind": "masked", "numel": 200,
                    "indices": list(range(201, 224))})
    if oob:
        records.append({"program": [6, 0, 0], "tensor": "x", "op": "load", "kind": "oob", "numel": 200,
                        "indices": [200]})
    return {"records": records, "truncated": False}


def _red_pixels(path) -> int:
    """Pixels of the out-of-bounds colour above the legend (whose swatch is always there)."""
    import matplotlib.image

    from grader.report.pictures import COLORS
    image = (matplotlib.image.imread(path)[..., :3] * 255).astype(int)
    red = np.array([int(COLORS[OOB][i:i + 2], 16) for i in (1, 3, 5)])
    above_legend = image[: int(image.shape[0] * 0.9)]
    return int((np.abs(above_legend - red).sum(axis=-1) < 30).sum())


def test_a_stray_is_read_from_the_trace_with_the_program_that_made_it():
    from grader.report.pictures import Stray, strays
    assert strays("yours", _off_by_one_trace()) == [Stray("yours", (6, 0, 0), "x", "load", (200,))]
    assert strays("yours", _off_by_one_trace(oob=False)) == [] and strays("reference", None) == []


def test_the_program_out_of_bounds_is_drawn_wherever_it_is_in_a_long_grid():
    from grader.report.pictures import MAX_PROGRAMS, _programs
    shown = _programs((40,), [(20, 0, 0)])
    assert len(shown) == MAX_PROGRAMS and (20, 0, 0) in shown
    assert shown[0] == (0, 0, 0) and shown[-1] == (39, 0, 0) and shown == sorted(shown)
    assert _programs((40,)) == [(i, 0, 0) for i in (0, 1, 2, 3, 4, 5, 34, 35, 36, 37, 38, 39)]


def test_the_enlarged_view_shows_the_stray_lane_beside_the_tensors_end():
    from grader.report.pictures import Stray, zoom_title, zoom_window
    one_past = Stray("yours", (6, 0, 0), "x", "load", (200,))
    assert zoom_window(one_past, 200) == (192, 202)  # eight elements inside, the end, the stray lane and one more
    assert zoom_window(Stray("yours", (0, 0, 0), "x", "store", (-1,)), 200) == (-2, 8)
    assert zoom_window(Stray("yours", (9, 0, 0), "z", "store", (1000, 1001)), 200) == (997, 1005)  # end too far
    assert zoom_title(one_past, 1, 192, 202) == ("yours: program (6,) loads `x` at index 200, past its end (1 lane "
                                                 "out of bounds); enlarged, flat indices 192 to 201")
    assert zoom_title(Stray("yours", (1, 2, 0), "z", "store", (-3, -2)), 2, -5, 8) == (
        "yours: program (1, 2) stores `z` at indices -3 to -2, before its start (2 lanes out of bounds); "
        "enlarged, flat indices -5 to 7")


def test_an_off_by_one_lane_is_marked_enlarged_and_its_program_named(tmp_path):
    """The lane one past the end was one cell under the outline's end line, a pixel wide: now it is
    marked, drawn again enlarged with its index, and its program's label says so."""
    import matplotlib

    from grader.report.pictures import draw
    tensors, reference = [("x", (200,)), ("z", (200,))], _off_by_one_trace(oob=False)
    draw(tmp_path / "with.png", "puzzle02", tensors, (7,), [("yours", _off_by_one_trace(), ""),
                                                           ("reference", reference, "")])
    draw(tmp_path / "without.png", "puzzle02", tensors, (7,), [("yours", reference, ""), ("reference", reference, "")])
    assert _red_pixels(tmp_path / "without.png") == 0
    assert _red_pixels(tmp_path / "with.png") > 10_000  # the enlarged cell alone is about a hundred pixels square
    with matplotlib.rc_context({"svg.fonttype": "none"}):  # its words as text, to read them back
        draw(tmp_path / "with.svg", "puzzle02", tensors, (7,), [("yours", _off_by_one_trace(), ""),
                                                               ("reference", reference, "")])
    svg = (tmp_path / "with.svg").read_text()
    assert ("yours: program (6,) loads `x` at index 200, past its end (1 lane out of bounds); enlarged, flat "
            "indices 192 to 201") in svg
    assert "end of `x` (200 elements)" in svg and "out of bounds" in svg and ">200<" in svg
