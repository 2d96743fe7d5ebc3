"""Unit tests of renderers: the bench report and the class's CSV (no worker process)."""
import pytest


def _bench_reply(results: list[dict]) -> dict:
    return {"ok": True, "device": "NVIDIA H200", "copy": {"gb_per_s": 4000.0, "cached": True},
            "versions": {"torch": "2.11", "triton": "3.6"},
            "statistic": "fastest of 3 rounds, each the median of do_bench's repeats", "results": results}


def test_bench_report_shows_gpu_only_time_and_flags_a_host_bound_step(course):
    from grader.judge.bench.run import summarise
    from grader.report.bench import render_text
    row = {"sizes": {"batch": [65536], "D": 1024}, "blocks": {}, "correct": True, "max_abs_err": 1e-6,
           "baseline_ms": 0.317}
    host_bound = row | {"ms": 0.35, "gpu_ms": 0.21, "baseline_gpu_ms": 0.31}
    gpu_bound = row | {"ms": 0.22, "gpu_ms": 0.21, "baseline_gpu_ms": 0.31}
    doc = summarise(course.puzzle("puzzle15"), _bench_reply([host_bound, gpu_bound]))
    text = render_text(doc)
    assert "fastest of 3 rounds, each the median of do_bench's repeats" in text
    assert "GPU-only ms" in text and "PyTorch autograd ms" in text
    first, second = [line for line in text.splitlines() if line.startswith("batch=")]
    assert first.split()[2:4] == ["0.3500", "2303"] and "0.2100" in first and "0.3100" in first
    assert first.endswith("host-bound: the GPU works 0.2100 ms of it")
    assert "host-bound" not in second and doc.rows[1].speedup == pytest.approx(0.317 / 0.22)
    assert "the step is host-bound: fewer launches" in text


def test_bench_report_of_a_kernel_has_no_gpu_only_column_and_flags_impossible_speed(course):
    from grader.judge.bench.run import summarise
    from grader.report.bench import render_text
    fast = {"sizes": {"ROWS": 65536, "D": 1024}, "blocks": {}, "correct": True, "max_abs_err": 0.0,
            "ms": 0.02, "baseline_ms": 0.075}
    doc = summarise(course.puzzle("puzzle13"), _bench_reply([fast]))
    text = render_text(doc)
    assert "GPU-only" not in text
    assert "IMPOSSIBLE: far above copy bandwidth" in text and doc.rows[0].fails
    # Where the GPU's physical limit is known and not passed, a mostly-reading kernel may pass a copy
    # (puzzle 13's honest solution at 1.10x of one on an H100): a look, not a failure.
    read_heavy = summarise(course.puzzle("puzzle13"), _bench_reply([fast | {"limit_ms": 0.0044, "ms": 0.0276,
                                                                               "copy_ms": 0.0304}]))
    row = read_heavy.rows[0]
    assert row.copy_fraction > 1.1 and row.flag == "above copy bandwidth: check" and not row.fails
    # No physical limit where the traffic fits the L2; a copy there ran far below the device's
    # bandwidth (puzzle 14's honest kernel at 1.24x of one on an H100, the copy at 58 % of 3006 GB/s):
    # no yardstick for impossible. Near the bandwidth, far above the copy still is.
    small = {"sizes": {"ROWS": 4096, "D": 1024}, "blocks": {}, "correct": True, "max_abs_err": 0.0,
             "baseline_ms": 0.0274, "limit_ms": 0.0}
    in_l2 = summarise(course.puzzle("puzzle14"), _bench_reply([small | {"ms": 0.0155, "copy_ms": 0.0193}])).rows[0]
    assert not in_l2.copy_bound and in_l2.copy_fraction > 1.2
    assert in_l2.flag == "above copy bandwidth: check" and not in_l2.fails
    bound = summarise(course.puzzle("puzzle14"), _bench_reply([small | {"ms": 0.0065, "copy_ms": 0.0084}])).rows[0]
    assert bound.copy_bound and bound.flag.startswith("IMPOSSIBLE") and bound.fails
    failed = summarise(course.puzzle("puzzle15"), _bench_reply([
        {"sizes": {"batch": [4096], "D": 1024}, "blocks": {}, "correct": True, "max_abs_err": 0.0,
         "ms": 0.3, "baseline_ms": 0.1, "gpu_ms": None, "baseline_gpu_ms": None,
         "gpu_note": "not timed as a CUDA graph: RuntimeError: operation not permitted when stream is capturing"}]))
    text = render_text(failed)
    assert "GPU-only" not in text
    assert text.splitlines()[2].endswith("0.33x not timed as a CUDA graph: RuntimeError: operation not permitted "
                                         "when stream is capturing")


def test_grades_csv_cells_never_start_a_formula():
    from grader.judge.results import StudentResult
    from grader.report.batch_files import grades_csv
    text = grades_csv([StudentResult("-mallory", (), ("=HYPERLINK(\"http://x\")",), 0.0)], ["puzzle01"])
    assert "'-mallory" in text and "'=HYPERLINK" in text


def test_a_pass_says_what_it_was_graded_at_from_the_result_not_from_its_message():
    from grader.judge.results import CaseResult, PuzzleResult, Report, Status
    from grader.report.text import render_puzzle
    case = CaseResult(name="exact", sizes={"N": 64}, blocks={}, seed=0, grid=(1,), passed=True)
    graded_at = "the kernel fixes its tile size: `tile` at 64: graded at that size, no case has a tail of it"
    result = PuzzleResult(puzzle="puzzle35", title="Helion add", status=Status.PASS, source="p.py", device="cpu",
                          cases=(case,), message=f"all 1 cases pass ({graded_at})", seconds=1.0, graded_at=graded_at)
    assert render_puzzle(result) == f"✓ puzzle35 Helion add: 1/1 cases pass (1.0 s)\n    {graded_at}"
    noted = PuzzleResult(puzzle="puzzle35", title="Helion add", status=Status.PASS, source="p.py", device="cpu",
                         cases=(case,), message=f"all 1 cases pass\nNote: a sum of squares also passes ({graded_at})",
                         seconds=1.0, graded_at=graded_at)
    assert render_puzzle(noted).splitlines()[1:] == [f"    {graded_at}", "    Note: a sum of squares also passes"]
    plain = PuzzleResult(puzzle="puzzle01", title="Constant add", status=Status.PASS, source="p.py", device="cpu",
                         cases=(case,), message="all 1 cases pass (this is prose, not what it was graded at)")
    assert render_puzzle(plain) == "✓ puzzle01 Constant add: 1/1 cases pass (0.0 s)"
    assert Report((result,)).results[0].graded_at == graded_at
