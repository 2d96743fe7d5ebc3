"""The wrong-kernel corpus: each plausible mistake fails, for the right reason, with a message
that says what happened and how to fix it."""
import pytest

from conftest import slow_beyond_puzzle01, wrong_kernel_files
from grader.app.selftest import declared

# What every message of a kind must say: the finding, and the way to a fix.
MESSAGE_MUST_SAY = {
    "mismatch": ["wrong values in", "yours", "expected"],
    "unwritten": ["written", "Every output element must be stored"],
    "out_of_bounds": ["out-of-bounds", "in program", "at line", "Fix: "],
    "nonfinite": ["NaN/Inf", "where the spec is finite"],
    "input_modified": ["wrote into input", "Inputs are read-only"],
    "compile": ["does not compile for a GPU (sm_90)", "Fix:"],
    "exception": ["raised", "at line"],
    "signature": ["Expected signature:"],
    "torch_compute": ["Triton kernel"],
    "saved": ["save"],
    "shape": ["expected"],
}

# An output loaded before anything stored to it explains the NaN or wrong values that follow:
# the message says that instead, whatever the kind of the values' failure.
READ_BEFORE_WRITE = ["before storing to it", "which no program had stored yet", "Fix:"]

FILES = wrong_kernel_files()


def test_corpus_covers_the_usual_mistakes():
    names = {f.stem for f in FILES}
    for must in ["missing_mask", "swapped_strides", "off_by_one", "transposed_output", "missing_relu",
                 "no_max_subtraction", "no_mid_loop", "misordered_nibble", "store_nothing", "store_half",
                 "runtime_arange", "lambda", "print", "loop_changes_shape"]:
        assert any(must in n for n in names), f"no wrong kernel for {must}"


@pytest.mark.parametrize("path", slow_beyond_puzzle01(FILES, lambda path: path.name[:8]),
                         ids=[f.stem for f in FILES])
def test_wrong_kernel_fails_with_reason(path, wrong_results):
    expect = declared(path)
    result = wrong_results[path.name]
    assert result.status == "fail", f"{path.name} was graded {result.status}: {result.message}"
    first = result.first_failure
    assert first.kind == expect["EXPECT_KIND"], f"{path.name}: {first.kind}: {first.message}"
    early = "before storing to it" in first.message
    for phrase in READ_BEFORE_WRITE if early else MESSAGE_MUST_SAY.get(first.kind, []):
        assert phrase in first.message, f"{path.name}: {phrase!r} not in {first.message!r}"
    if "EXPECT_SAYS" in expect:  # in the headline, which the learner reads first: the most telling failure
        assert expect["EXPECT_SAYS"] in result.message, f"{path.name}: {result.message!r}"
    if "EXPECT_CASE" in expect:
        failing = {c.name for c in result.cases if not c.passed}
        assert expect["EXPECT_CASE"] in failing, f"{path.name}: failing cases are {failing}"
    if "EXPECT_CHECK" in expect:
        check = result.checks[expect["EXPECT_CHECK"]]
        assert not check.passed and check.kind == "compile", check.message
