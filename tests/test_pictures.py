"""Memory-access pictures: the trace records every access, and --viz writes a picture."""
import subprocess
import sys

import numpy as np
import pytest

from grader.sandbox.bounds import AccessTrace, Region
from grader.judge.grade import PuzzleGrader
from grader.judge.kinds import kind_of
from grader.judge.options import Options
from grader.judge.pictures import choose_case
from grader.report.pictures import MASKED, OOB, READ, READ_WRITTEN, WRITTEN, Panel, cells_by_program
from grader.channel.worker_pool import WorkerProcess
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
