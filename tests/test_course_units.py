"""Unit tests of the author API and the course on disk: annotations, cases, puzzle ids, importing a
file (no worker process)."""
import pytest
import torch
from jaxtyping import Float32, Int32
from torch import Tensor

from grader.course.annotations import AnnotationError, TensorSpec, read_spec
from grader.course.loader import CourseError, normalise_id
from grader.course.puzzle import EDGES, Case, Puzzle
from grader.judge.plan import EDGE_VALUES, make_inputs


def spec(scale: Float32[Tensor, "N0 G"], words: Int32[Tensor, "N0 4"]) -> Float32[Tensor, "N0 N1"]:
    return torch.zeros(scale.shape[0], 3)


def _puzzle(**kw):
    return Puzzle(id="puzzle99", title="t", statement="", spec=spec, kernel="k", grid=lambda s: (1,),
                  cases=(Case("classic", {"N0": 64, "G": 8, "N1": 3}, {"B0": 16}),), **kw)


def test_read_spec_gives_names_dtypes_and_symbolic_dims():
    inputs, output = read_spec(spec, "z")
    assert inputs == (TensorSpec("scale", "float32", ("N0", "G")), TensorSpec("words", "int32", ("N0", "4")))
    assert output == (TensorSpec("z", "float32", ("N0", "N1")),)
    assert inputs[1].shape({"N0": 5}) == (5, 4)


def test_missing_size_and_bad_annotation_are_explained():
    with pytest.raises(AnnotationError, match=r"scale: dim 'G' has no size in this case \(sizes: N0\)"):
        read_spec(spec, "z")[0][0].shape({"N0": 2})

    def unannotated(x) -> Float32[Tensor, "N0"]:
        return x
    with pytest.raises(AnnotationError, match=r'x: annotate it like Float32\[Tensor, "N0"\]'):
        read_spec(unannotated, "z")


def test_case_rejects_a_block_that_is_not_a_power_of_two():
    with pytest.raises(ValueError, match="block B0=200 is not a power of two"):
        Case("classic", {"N0": 200}, {"B0": 200})


def test_case_rejects_an_unknown_edge_and_an_edge_of_no_input():
    with pytest.raises(ValueError, match=r"case 'classic': edge 'zero' of scale is not one of \('zeros'"):
        Case("classic", {"N0": 64}, {"B0": 16}, edges={"scale": "zero"})
    assert set(EDGE_VALUES) == set(EDGES)
    puzzle = _puzzle()
    specs = read_spec(spec, "z")[0]
    typo = Case("classic", {"N0": 64, "G": 8, "N1": 3}, {"B0": 16}, edges={"x": "zeros"})
    with pytest.raises(ValueError, match=r"edges name \['x'\], which are not inputs of the spec \(scale, words\)"):
        make_inputs(puzzle, specs, typo)
    ints = Case("classic", {"N0": 64, "G": 8, "N1": 3}, {"B0": 16}, edges={"words": "all_negative"})
    with pytest.raises(ValueError, match="edge 'all_negative' needs a float input, but words is int32"):
        make_inputs(puzzle, specs, ints)


@pytest.mark.parametrize("text", ["7", "07", "puzzle7", "puzzle07", "PUZZLE07"])
def test_puzzle_ids_normalise(text):
    assert normalise_id(text) == "puzzle07"


def test_bad_puzzle_id():
    with pytest.raises(CourseError, match="'seven' is not a puzzle id"):
        normalise_id("seven")


def test_importing_a_file_leaves_no_neighbour_modules_behind():
    """The course's puzzle15 imports its folder's puzzle13 (a stub); a solutions file imported
    afterwards must get the solutions' puzzle13, not the cached stub."""
    import sys

    from grader.course.imports import import_file
    from grader.course.loader import load_puzzle
    from pristine import PRISTINE
    root = PRISTINE  # the course as committed: puzzle13 is the stub there, whatever a learner solved
    load_puzzle(str(root / "puzzles" / "puzzle15_weighted_sum_autograd.py"))
    assert "puzzle13_weighted_sum_forward" not in sys.modules
    solution = import_file(str(root / "solutions" / "puzzle15_weighted_sum_autograd.py"), "_test_solution15")
    kernel_file = solution.weighted_sum_fwd.fn.__code__.co_filename
    assert kernel_file == str(root / "solutions" / "puzzle13_weighted_sum_forward.py")
