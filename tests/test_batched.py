"""The batched engine (grader.sandbox.batched): every program of a launch run together, with the
serial interpreter's results, bit for bit. tests/engine_kernels.py has a kernel for each form the
engine must handle; tests/engine_runner.py runs each both ways, in order and reversed, in a
subprocess set up as a cpu worker is."""
from __future__ import annotations

import json
import subprocess
import sys

import numpy as np
import pytest

from grader.sandbox.batched.control import _trips
from grader.sandbox.batched.engine import _halves, _split
from grader.sandbox.batched.lanes import Divergence, Group, one_value
from grader.sandbox.batched.memory import Conflict, LaunchMemory
from paths import ROOT


@pytest.fixture(scope="module")
def runs() -> dict:
    done = subprocess.run([sys.executable, str(ROOT / "tests" / "engine_runner.py")], capture_output=True,
                          text=True, timeout=900, cwd=ROOT)
    assert done.returncode == 0, done.stderr[-3000:]
    found = {}
    for line in done.stdout.splitlines():
        if line.startswith("{"):
            run = json.loads(line)
            found[(run["case"], run["reverse"], run["budget"])] = run
    return found


def ran(runs, name, reverse=False, budget=None) -> dict:
    return runs[(name, reverse, budget)]


CASES = ["rows_softmax", "triangle_sums", "rows_per_program", "grid_stride", "early_exit", "halving_while",
         "count_then_branch", "histogram", "chunked_histogram", "float_accumulate", "ticket", "locked_sum",
         "reads_neighbour", "reads_previous", "same_element", "reads_unwritten", "strays_in_one_program", "prints", "shapes",
         "reductions", "dots", "randoms", "block_pointers", "descriptors", "uniform_store", "three_axes",
         "writes_input"]


@pytest.mark.slow
@pytest.mark.parametrize("reverse", [False, True], ids=["in order", "reversed"])
@pytest.mark.parametrize("name", CASES)
def test_every_form_gives_the_serial_interpreters_bytes_prints_errors_and_findings(runs, name, reverse):
    run = ran(runs, name, reverse)
    assert all(run["same"].values()), f"{name}: {run['same']}"


@pytest.mark.slow
@pytest.mark.parametrize("name", ["rows_softmax", "histogram", "chunked_histogram", "shapes", "reductions", "dots",
                                  "randoms", "block_pointers", "descriptors", "three_axes", "same_element",
                                  "uniform_store"])
def test_programs_that_take_one_path_run_as_one_group(runs, name):
    launch = ran(runs, name)["launches"][0]
    assert launch["runs"] == 1 and launch["serial"] is None


@pytest.mark.slow
def test_a_loop_whose_trip_count_differs_splits_the_programs_by_it(runs):
    """300 rows summed over row + 1 columns in blocks of 16: 19 trip counts, each split once more
    by `row % 3`; far fewer runs than programs."""
    launch = ran(runs, "triangle_sums")["launches"][0]
    assert launch["serial"] is None and 19 < launch["runs"] < 100


@pytest.mark.slow
@pytest.mark.parametrize("name", ["rows_per_program", "grid_stride"])
def test_a_loop_from_each_programs_own_row_keeps_them_together(runs, name):
    """The loop variable differs between programs, its trip count only at the last: three runs
    (all, then the two trip counts)."""
    assert ran(runs, name)["launches"][0]["runs"] == 3


@pytest.mark.slow
def test_an_atomic_before_a_split_is_made_once_per_program(runs):
    run = ran(runs, "count_then_branch")
    assert run["launches"][0]["runs"] == 3 and run["same"]["bytes"]


@pytest.mark.slow
@pytest.mark.parametrize("name, why", [
    ("float_accumulate", "programs of one launch met at an element updated atomically, out of the serial order"),
    ("ticket", "atomics met out of the serial order, and a program read what one returned"),
    ("reads_neighbour", "programs of one launch loaded and stored one element, with no atomic to order them"),
    ("writes_input", "a store into one of the case's inputs"),
])
def test_what_the_batch_cannot_order_as_the_serial_run_does_runs_serially_and_says_why(runs, name, why):
    assert ran(runs, name)["launches"][0]["serial"] == why


@pytest.mark.slow
def test_a_lock_taken_in_turn_runs_batched(runs):
    launch = ran(runs, "locked_sum")["launches"][0]
    assert launch["serial"] is None and launch["runs"] <= 2 * launch["programs"]


@pytest.mark.slow
def test_the_first_program_out_of_bounds_is_the_one_reported(runs):
    run = ran(runs, "strays_in_one_program")
    assert run["error"].startswith("OutOfBounds: load out of bounds") and run["same"]["error"]


@pytest.mark.slow
def test_overlapping_stores_and_reads_of_nothing_are_found_as_serially(runs):
    overlap = ran(runs, "same_element")["overlaps"][0]
    assert overlap["programs"] == [[0, 0, 0], [1, 0, 0]] and overlap["index"] == 0
    early = ran(runs, "reads_unwritten")["early_reads"][0]
    assert early["program"] == [0, 0, 0] and early["index"] == 0


@pytest.mark.slow
@pytest.mark.parametrize("name", ["reads_unwritten", "rows_softmax", "histogram", "ticket", "locked_sum",
                                  "reads_previous", "early_exit"])
def test_without_the_bounds_check_reads_of_unwritten_outputs_are_watched_as_serially(runs, name):
    """The watch behind the judge's second fill (grader.sandbox.unwritten_reads) runs in every
    interpreted run: batched or serial, it finds the same first read of each output."""
    run = ran(runs, f"unhooked {name}")
    assert all(run["same"].values()), f"{name}: {run['same']}"


@pytest.mark.slow
def test_the_watch_names_each_output_read_before_a_store_reached_it(runs):
    def reads(name):
        return [(u["tensor"], u["index"], u["program"]) for u in ran(runs, name)["unwritten"]]
    assert reads("unhooked reads_unwritten") == [("t0", 0, [0, 0, 0])]  # the output it loads, never stored
    assert reads("unhooked locked_sum") == [("t1", 0, [0, 0, 0]), ("t2", 0, [0, 0, 0])]  # the row, and the lock's cas
    assert reads("unhooked ticket") == [("t0", 0, [0, 0, 0])]  # an atomic reads what it updates
    assert reads("unhooked rows_softmax") == [] and reads("unhooked reads_previous") == []  # stored before read
    assert reads("reads_unwritten") == reads("unhooked reads_unwritten")  # the bounds check changes nothing


@pytest.mark.slow
def test_a_program_loading_anothers_store_is_a_crossing_found_as_serially(runs):
    """In the serial order (nothing to undo), so still batched; the launch says its programs crossed,
    and the write log names the first program that loaded another's element, as the serial run does."""
    run = ran(runs, "reads_previous")
    assert run["launches"][0]["serial"] is None and run["launches"][0]["crossed"]
    crossing = run["crossings"][0]
    assert crossing["program"] == [1, 0, 0] and crossing["other"] == [0, 0, 0] and crossing["loaded"]
    assert not ran(runs, "rows_softmax")["launches"][0]["crossed"] and not ran(runs, "rows_softmax")["crossings"]


@pytest.mark.slow
def test_without_the_bounds_check_a_race_of_plain_accesses_fails_fast(runs):
    """Each program stores its block, then loads the next program's: program 0 loads what program 1
    already stored in the batch, with no atomic in the launch, a race on any GPU; a large case's
    first run (no bounds check) raises it at once rather than run serially."""
    crossing = ran(runs, "fast_race")["crossing"]
    assert crossing["tensor"] == "y" and crossing["index"] == 8 and crossing["loaded"] is True
    assert crossing["program"] == [0, 0, 0] and crossing["other"] == [1, 0, 0]
    assert crossing["line"] and "tl.load(y_ptr + nxt" in crossing["source"]


@pytest.mark.slow
@pytest.mark.parametrize("setting", ["all", "0.5"])
def test_the_differential_check_keeps_a_race_the_engine_stops_at(runs, setting):
    """Under TP_DIFFERENTIAL the race is still raised (CI's Triton 3.9 selftest once passed a kernel
    adding dQ without atomics: the check ran the launch serially instead, where nothing races)."""
    crossing = ran(runs, f"fast_race_differential_{setting}")["crossing"]
    assert isinstance(crossing, dict) and crossing["program"] == [0, 0, 0] and crossing["other"] == [1, 0, 0]


@pytest.mark.parametrize("setting, seconds, programs, compared", [
    ("all", 30.0, 65_600, True), ("0.5", 0.4, 4096, True), ("0.5", 0.6, 10, False),
    ("0.5", 0.1, 4097, False), ("", 0.0, 1, False), ("yes", 0.0, 1, False)])
def test_a_numeric_differential_setting_compares_short_launches_of_few_programs(monkeypatch, setting, seconds,
                                                                                 programs, compared):
    """The serial run costs per program: a numeric setting leaves a large case's launches (65,600
    programs, minutes serially) to CI's ``all`` run of the solutions."""
    from grader.sandbox.batched import differential
    monkeypatch.setenv("TP_DIFFERENTIAL", setting)
    assert differential.compares(seconds, programs) is compared


@pytest.mark.slow
def test_prints_come_program_after_program(runs):
    printed = ran(runs, "prints")["printed"]
    assert printed.index("program [0]") < printed.index("(0, 0, 0)  x:") < printed.index("even") < printed.index("program [1]")
    assert printed.count("even") == 2


@pytest.mark.slow
@pytest.mark.parametrize("name, budget", [("rows_softmax", 8192), ("triangle_sums", 256)])
def test_arrays_past_the_budget_halve_the_group(runs, name, budget):
    run = ran(runs, name, False, budget)
    assert all(run["same"].values()) and run["launches"][0]["runs"] > ran(runs, name)["launches"][0]["runs"]


@pytest.mark.slow
def test_the_differential_check_finds_an_engine_that_computes_otherwise(runs):
    said = ran(runs, "differential")["said"]
    assert said["False"] == "agreed"
    assert said["True"].startswith("EnginesDisagree: the launch of grid 30x1x1: tensor 1 of the launch differs from byte")


# ---- the pieces, without a kernel ----------------------------------------------------------
def _group(n: int) -> Group:
    idx = np.arange(n)
    return Group(idx, idx * 0, idx * 0, idx.astype(np.int64))


def test_one_value_of_a_scalar_the_lanes_agree_on_else_divergence():
    assert one_value(np.array([3, 3, 3]), "x") == 3
    assert np.isnan(one_value(np.array([np.nan, np.nan]), "x"))
    with pytest.raises(Divergence) as raised:
        one_value(np.array([1, 2, 1]), "a loop bound")
    assert raised.value.what == "a loop bound" and raised.value.values.tolist() == [1, 2, 1]


def test_a_split_keeps_lanes_in_rank_order_and_runs_the_lowest_first():
    groups = _split(_group(5), np.array([7, 3, 7, 3, 9]))
    assert [g.ranks.tolist() for g in groups] == [[0, 2], [1, 3], [4]]
    assert [g.ranks.tolist() for g in _halves(_group(5))] == [[0, 1], [2, 3, 4]]


def test_trip_counts_are_pythons_range_lengths():
    for start, end, step in [(0, 10, 3), (5, 5, 1), (9, 0, -2), (3, 1, 1), (-4, 4, 4), (0, 1, 7)]:
        assert int(_trips(np.array([start]), np.array([end]), np.array([step]))[0]) == len(range(start, end, step))


def _memory() -> LaunchMemory:
    return LaunchMemory([(1000, 400, 4)], [])


def _lanes(*elements):
    return np.array([1000 + 4 * e for e in elements], dtype=np.uint64), np.ones(len(elements), bool)


def test_accesses_in_the_serial_order_pass_and_one_against_it_conflicts():
    memory = _memory()
    addresses, on = _lanes(0, 1)
    memory.access("write", addresses, on, lambda: np.array([0, 1]), 4)
    memory.access("read", addresses, on, lambda: np.array([2, 2]), 4)   # a later program reads: as serially
    with pytest.raises(Conflict):
        memory.access("write", addresses[:1], on[:1], lambda: np.array([1]), 4)  # program 1 after program 2's read


def test_commuting_atomics_may_meet_in_any_order_until_a_result_is_read():
    memory = _memory()
    addresses, on = _lanes(3)
    memory.access("atomic", addresses, on, lambda: np.array([5]), 4, commuting=True)
    memory.access("atomic", addresses, on, lambda: np.array([2]), 4, commuting=True)
    memory.settle()
    memory.results_read = True
    with pytest.raises(Conflict, match="read what one returned"):
        memory.settle()
    with pytest.raises(Conflict):
        memory.access("atomic", addresses, on, lambda: np.array([1]), 4, commuting=False)


def test_a_rollback_restores_the_ranks():
    memory = _memory()
    addresses, on = _lanes(7)
    mark = memory.mark()
    memory.access("write", addresses, on, lambda: np.array([9]), 4)
    memory.rollback(mark)
    memory.access("write", addresses, on, lambda: np.array([1]), 4)  # no conflict with the undone write
