"""Every reference solution passes every case and compiles for a GPU; every stub is 'not attempted'."""
import pytest

from conftest import PUZZLE_IDS, slow_beyond_puzzle01


def test_there_are_twelve_classic_puzzles(course):
    assert PUZZLE_IDS[:12] == [f"puzzle{n:02d}" for n in range(1, 13)]


@pytest.mark.parametrize("puzzle_id", slow_beyond_puzzle01(PUZZLE_IDS))
def test_solution_passes(puzzle_id, solution_results):
    result = solution_results[puzzle_id]
    assert result.status == "pass", result.message
    assert result.cases and all(case.passed for case in result.cases)
    if result_puzzle(puzzle_id).kind == "kernel":  # a function puzzle's kernels are checked in their own puzzles
        assert result.checks["gpu_compile"].passed, result.checks["gpu_compile"].message


@pytest.mark.parametrize("puzzle_id", slow_beyond_puzzle01(PUZZLE_IDS))
def test_stub_is_not_attempted(puzzle_id, stub_results):
    result = stub_results[puzzle_id]
    assert result.status == "not_attempted", result.message
    assert result.message == (f"not attempted: `{result_kernel(puzzle_id)}` is still the stub as shipped "
                              "(comments, docstrings and `pass` aside)")


def result_puzzle(puzzle_id):
    from conftest import COURSE
    return COURSE.puzzle(puzzle_id)


def result_kernel(puzzle_id):
    return result_puzzle(puzzle_id).kernel


@pytest.mark.parametrize("puzzle_id", PUZZLE_IDS)
def test_cases_harden_the_classic_configuration(puzzle_id, course):
    puzzle = course.puzzle(puzzle_id)
    assert puzzle.cases[0].name == "classic"
    assert len({c.seed for c in puzzle.cases}) >= 3, "at least three seeds"
    assert len({c.name for c in puzzle.cases}) >= 2, "hardening cases beyond the classic one"
