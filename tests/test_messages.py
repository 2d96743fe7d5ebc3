"""The exact text a learner reads for the commonest mistakes: what, where, and the fix."""
import pytest

EXPECTED = {
    "puzzle02_missing_mask.py": (
        "case classic[seed=0] (N0=200, B0=32): out-of-bounds load of `x` in program (6, 0, 0) at line 13: "
        "`x = tl.load(x_ptr + offsets)`: 24 of 32 active lanes fall outside `x` (shape (200,), 200 elements); "
        "the first is flat index 200, past its end. "
        "Fix: mask the load: `tl.load(x_ptr + offsets, mask=offsets < N0, other=0.0)`."),
    "puzzle02_missing_store_mask.py": (
        "case classic[seed=0] (N0=200, B0=32): out-of-bounds store of `z` in program (6, 0, 0) at line 14: "
        "`tl.store(z_ptr + offsets, x + 10.0)`: 24 of 32 active lanes fall outside `z` (shape (200,), "
        "200 elements); the first is flat index 200, past its end. "
        "Fix: mask the store: `tl.store(z_ptr + offsets, x + 10.0, mask=offsets < N0)`."),
    "puzzle02_mask_off_by_one.py": (
        "case classic[seed=0] (N0=200, B0=32): out-of-bounds load of `x` in program (6, 0, 0) at line 14: "
        "`x = tl.load(x_ptr + offsets, mask=mask)`: 1 of 9 active lanes fall outside `x` (shape (200,), "
        "200 elements); the first is flat index 200, past its end. "
        "Fix: the mask `mask` lets through lanes outside `x`: it must be False for every lane whose index "
        "reaches `N0`."),
    "puzzle08_no_max_subtraction.py": (
        "case large_magnitude[seed=5] (N0=3, N1=70, T=70, B0=2, B1=32): `z` has 42 NaN/Inf value(s) where "
        "the spec is finite, first at (0, 1): yours nan, expected 0. This case's inputs are large (scaled by "
        "100): exp() of them overflows float32, or underflows to 0 so that a sum of them is 0. Subtract the "
        "row's maximum before exponentiating (exp(x - max) is at most 1): keep a running maximum over every "
        "chunk your loop loads, started at -inf, not 0."),
    "puzzle31_causal_diagonal_off_by_one.py": (
        "case causal_with_tails[seed=1] (B=1, H=2, NQ=40, NK=40, D=64, BQ=16, BK=16, CAUSAL=1): `o` has 128 "
        "NaN/Inf value(s) where the spec is finite, first at (0, 0, 0, 0): yours nan, expected 1.26465. It looks "
        "like the causal mask hiding the diagonal (key < query, where it must be key <= query): query row 0 of "
        "every head then sees no key at all, so its softmax is 0 / 0 (NaN), and every later row misses its own "
        "key. Keep the diagonal visible, a query always sees itself: mask with `keys[None, :] <= rows[:, None]`."),
    "puzzle18_exp_of_fp16.py": (
        "GPU compile check (B1=1024): the kernel does not compile for a GPU (sm_90) at line 19: `e = tl.exp(x)`: "
        "Expected dtype ['fp32', 'fp64'] but got fp16. Fix: `tl.exp` takes fp32 or fp64 only, and case "
        "fp16_rows[seed=7] (N0=8, T=1000, B1=1024) gives it fp16: its `x` and `z` are float16. Upcast with "
        "`.to(tl.float32)` before `tl.exp` (simplest where you load `x`: `tl.load(...).to(tl.float32)`), compute "
        "in fp32, and cast back when storing `z` (`tl.store` converts to float16 itself, or write "
        "`.to(tl.float16)`)."),
    "puzzle01_print_tensor.py": (
        "GPU compile check (B0=32): the kernel does not compile for a GPU "
        "(sm_90) at line 12: `print(x)`: fp32[constexpr[32]] is not string. Fix: `print` of a tensor does "
        "not compile for a GPU: use `tl.device_print(\"x\", x)` (or `tl.static_print` for compile-time "
        "values), or remove the print before submitting."),
    "puzzle01_store_half.py": (
        "case classic[seed=0] (N0=32, B0=32): 16 of 32 elements of `z` were never written (first at (16), "
        "(17), (18)). Every output element must be stored: check that the grid and your offsets cover all "
        "of `z` and that the store's mask is not too strict."),
    "puzzle01_store_nothing.py": (
        "case classic[seed=0] (N0=32, B0=32): no element of `z` was written. Every output element must be "
        "stored: check that the grid and your offsets cover all of `z` and that the store's mask is not "
        "too strict."),
    "puzzle01_writes_input.py": (
        "case classic[seed=0] (N0=32, B0=32): the kernel wrote into input `x`: 32 element(s) changed, first "
        "at (0). Inputs are read-only: store only to the output pointer."),
    "puzzle01_wrong_parameter.py": (
        "case classic[seed=0] (N0=32, B0=32): kernel parameter 'N' is not something this puzzle passes (it "
        "passes N0, B0 by name). If it is a parameter of your own, give it a default (`N: tl.constexpr = ...`) "
        "or compute it with @triton.heuristics.\nExpected signature: add_kernel(x_ptr, z_ptr, N0, B0: tl.constexpr)"),
    "puzzle01_loop_changes_shape.py": (
        "GPU compile check (B0=32): the kernel does not compile for a GPU "
        "(sm_90) at line 12: `for _ in range(0, N0, B0):`: AssertionError(\"Loop-carried variable acc has "
        "initial type fp32 but is re-assigned to <['32'], fp32> in loop! Please make sure that the type "
        "stays consistent.\"). Fix: a variable updated in a loop must keep its shape and dtype: initialise "
        "it as a block of the final shape, e.g. `acc = tl.zeros([B0], dtype=tl.float32)`, not `acc = 0.0`."),
}


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_message_text(name, wrong_results):
    assert wrong_results[name].first_failure.message == EXPECTED[name]


@pytest.mark.parametrize("name", ["puzzle05_missing_relu.py"])  # named here, it is graded with the others
def test_mismatch_lists_the_first_wrong_elements(name, wrong_results):
    message = wrong_results[name].first_failure.message
    assert message.startswith("case classic[seed=0] (N0=100, N1=90, B0=32, B1=32): wrong values in `z`: ")
    assert "elements differ (max abs err" in message and "tolerance atol=1e-06, rtol=1e-06)" in message
    assert "(0, 0): yours -0.226567, expected 0;" in message


def test_plain_output_shows_the_reason_under_the_puzzle(wrong_results):
    from grader.report.text import render_puzzle
    text = render_puzzle(wrong_results["puzzle02_missing_store_mask.py"])
    lines = text.splitlines()
    assert lines[0] == "✗ puzzle02 Constant add, blocked: 1/9 cases pass"
    assert lines[1].startswith("    case classic[seed=0] (N0=200, B0=32): out-of-bounds store of `z`")
    assert lines[2].startswith("    (7 more failing case(s): classic[seed=1], classic[seed=2]")


def test_the_most_telling_case_is_shown_by_default(wrong_results):
    """Puzzle 7's loop one chunk short: the classic case only has sums that differ; the case where
    T is two chunks has the sum of the first alone, which a look-alike names, with the fix."""
    from grader.report.text import render_puzzle
    result = wrong_results["puzzle07_one_chunk_short.py"]
    assert result.first_failure.name == "classic"
    assert result.telling_failure.name == "exact_multiple"
    assert result.message.startswith("case exact_multiple[seed=4] (N0=8, N1=128, T=128, B0=2, B1=64): wrong values "
                                     "in `z`: 8 of 8 elements differ")
    assert result.message.endswith("It looks like a sum of the first chunk only (B1 columns per row): loop over "
                                   "the row, `for start in range(0, T, B1):`, adding each chunk's "
                                   "`tl.sum(tile, axis=1)` to the accumulator.")
    lines = render_puzzle(result).splitlines()
    assert lines[0] == "✗ puzzle07 Long sum: 0/8 cases pass"
    assert lines[1] == f"    {result.message}"
    assert lines[2] == ("    (7 more failing case(s): classic[seed=0], classic[seed=1], classic[seed=2], "
                        "row_blocks_with_tails[seed=3], row_shorter_than_block[seed=5], tail_of_one[seed=6], ...; "
                        "--verbose shows them)")
    verbose = render_puzzle(result, verbose=True).splitlines()
    assert verbose[1] == lines[1] and len(verbose) == 2 + 7  # the headline, then every other failing case
    assert any(line.startswith("    - case row_shorter_than_block[seed=5]") and "(0): yours 0, expected" in line
               for line in verbose)


def test_two_full_stops_become_one():
    from grader.judge.messages import tidy
    assert tidy("the mask is wrong.. Fix: x.") == "the mask is wrong. Fix: x."
    assert tidy("rows 0 .. 3 and `a[...]` stay") == "rows 0 .. 3 and `a[...]` stay"


def test_a_plain_int_constant_gets_its_own_name_in_the_fix():
    from grader.judge.messages import usual_fix
    fix = usual_fix("NameError(\"Cannot access global variable GROUP from within @jit'ed function.\")")
    assert "`GROUP = tl.constexpr(...)`" in fix and "`FPINT = tl.constexpr(8)`" in fix


def test_one_element_is_one_element():
    from grader.channel.wire import OutOfBoundsAccess
    from grader.judge.messages import out_of_bounds
    text = out_of_bounds(OutOfBoundsAccess(op="load", tensor="rstd", program=(0,), line=None, source="", bad_lanes=3,
                                           lanes=4, shape=(1,), numel=1, first_index=1))
    assert "(shape (1,), 1 element); the first is flat index 1, past its end." in text


def test_a_math_function_given_half_precision_is_told_to_upcast():
    from grader.judge.messages import compile_failure
    error = "at 10:17:\n    rstd = 1.0 / tl.sqrt(var)\n                 ^\nExpected dtype ['fp32', 'fp64'] but got bf16"
    # On a GPU, or for an autograd wrapper's kernel, the case and its tensors are not at hand.
    assert compile_failure(error, 10, "rstd = 1.0 / tl.sqrt(var)", on_gpu=True) == (
        "the kernel does not compile for this GPU at line 10: `rstd = 1.0 / tl.sqrt(var)`: Expected dtype "
        "['fp32', 'fp64'] but got bf16. Fix: `tl.sqrt` takes fp32 or fp64 only, and it is given bf16 here. Upcast "
        "with `.to(tl.float32)` before `tl.sqrt`, compute in fp32, and cast back when storing.")
    named = compile_failure(error.replace("tl.sqrt(var)", "s.exp()"), 10, "p = s.exp()", case="case bf16_rows[seed=8] (N0=8, T=300, B1=512)",
                            inputs={"x": "bfloat16", "w": "float32"}, outputs={"y": "bfloat16"})
    assert ("Fix: `tl.exp` takes fp32 or fp64 only, and case bf16_rows[seed=8] (N0=8, T=300, B1=512) gives it "
            "bf16: its `x` and `y` are bfloat16. Upcast with `.to(tl.float32)` before `tl.exp` (simplest where you "
            "load `x`: `tl.load(...).to(tl.float32)`), compute in fp32, and cast back when storing `y` (`tl.store` "
            "converts to bfloat16 itself, or write `.to(tl.bfloat16)`).") in named


def test_an_integer_function_gets_no_upcast():
    from grader.judge.messages import dtype_fix
    assert dtype_fix("Expected dtype ['int32', 'int64', 'uint32', 'uint64'] but got fp32", "tl.umulhi(a, b)") is None
    assert dtype_fix("incompatible dimensions", "tl.exp(x)") is None
    assert dtype_fix("Expected dtype ['fp32', 'fp64'] but got fp16", "y = f(x)").startswith(
        "this function takes fp32 or fp64 only")


def _failed(name, kind, message="", seed=0):
    from grader.judge.results import CaseResult
    return CaseResult(name=name, sizes={}, blocks={}, seed=seed, grid=(1,), passed=False, kind=kind,
                      message=f"case {name}[seed={seed}]: {message}")


def test_most_telling_ranks_the_cause_above_its_symptom():
    from grader.judge.results import CheckResult, most_telling
    plain = _failed("classic", "mismatch", "(0): yours 2.5, expected 3")
    zero = _failed("short_row", "mismatch", "(0): yours 0, expected 3; (1): yours -0, expected 1")
    half = _failed("tail", "mismatch", "(0): yours 0.5, expected 3")  # 0.5 is not a 0 left behind
    unwritten = _failed("tail", "unwritten", "2 of 4 elements of `z` were never written")
    stray = _failed("tails", "out_of_bounds", "out-of-bounds load of `x`")
    named = _failed("exact", "mismatch", "(0): yours 1, expected 3. It looks like a sum of the first chunk only: ...")
    early = _failed("exact", "nonfinite", "loaded `z` before storing to it: ...")
    skipped = _failed("big", "skipped", "not run: tails crashed")
    assert most_telling([]) is None
    assert most_telling([plain, half]) is plain  # equals: the first in the grader's order
    assert most_telling([plain, half, zero]) is zero
    assert most_telling([plain, zero, unwritten]) is unwritten
    assert most_telling([plain, zero, unwritten, named]) is named
    assert most_telling([plain, stray, named]) is stray
    assert most_telling([plain, early]) is early
    assert most_telling([skipped, plain]) is plain
    assert most_telling([plain, CheckResult(False, "does not compile", "compile")]).kind == "compile"


def test_the_text_report_lists_the_others_under_the_telling_case():
    from grader.judge.results import PuzzleResult
    from grader.report.text import render_puzzle
    plain = _failed("classic", "mismatch", "(0): yours 2.5, expected 3")
    zero = _failed("short_row", "mismatch", "(0): yours 0, expected 3", seed=1)
    result = PuzzleResult(puzzle="puzzle07", title="Long sum", status="fail", source="", device="cpu",
                          cases=(plain, zero), message=zero.message)
    assert result.telling_failure is zero and result.first_failure is plain
    assert render_puzzle(result).splitlines()[1:] == [
        f"    {zero.message}", "    (1 more failing case(s): classic[seed=0]; --verbose shows them)"]
    assert render_puzzle(result, verbose=True).splitlines()[1:] == [f"    {zero.message}", f"    - {plain.message}"]


def test_a_wrong_row_stride_is_named_as_one_not_blamed_on_a_correct_mask():
    """`rows[:, None] * B1` where a row of x is T long, with a correct mask (issue 34): the fix names
    the stride; a stride the kernel was given (`stride_x`) is never taken for a wrong one."""
    from grader.channel.wire import OutOfBoundsAccess
    from grader.judge.messages import out_of_bounds

    def access(line: str) -> OutOfBoundsAccess:
        return OutOfBoundsAccess(op="load", tensor="x", shape=(3, 20), numel=60, first_index=64, bad_lanes=20,
                                 lanes=20, program=(1, 0, 0), line=14, source=line)
    text = out_of_bounds(access("tile = tl.load(x_ptr + rows[:, None] * B1 + cols[None, :], mask=mask, other=0.0)"),
                         ("N0", "T"))
    assert text.endswith("Fix: the row stride: `rows[:, None] * B1` steps `B1` elements from one row to the next, "
                         "but a row of `x` is `T` elements long. Row 0 is right and every later row lands in the "
                         "wrong place, and the last rows run past the end. Multiply by `T`.")
    assert "lets through lanes" not in text
    given = out_of_bounds(access("tile = tl.load(x_ptr + rows[:, None] * stride_x + cols[None, :], mask=mask)"),
                          ("N0", "T"))
    assert "the mask `mask` lets through lanes outside `x`" in given and "row stride" not in given


def test_row_zero_right_and_every_later_row_wrong_is_the_signature_of_a_stride_bug():
    import torch

    from grader.judge.compare import compare_tensor
    expected = torch.arange(12, dtype=torch.float32).reshape(4, 3)
    actual = expected.clone()
    actual[1:] += 1.0
    message = compare_tensor("z", actual, expected, 1e-5, 1e-5, filled=False).message
    assert message.endswith("(1, 0): yours 4, expected 3; (1, 1): yours 5, expected 4; (1, 2): yours 6, expected 5. "
                            "Row 0 of `z` is right and every later row is wrong: the signature of a wrong row "
                            "stride. A row's offset is `row * stride`, and the stride is the tensor's row length, "
                            "not a block size.")
    sums = compare_tensor("z", torch.tensor([1.0, 9.0, 9.0]), torch.tensor([1.0, 2.0, 3.0]), 1e-5, 1e-5,
                          filled=False).message
    assert "`z[0]` is right and every later element is wrong: the signature of a wrong row stride." in sums
    one_row = actual.clone()
    one_row[2] = expected[2]  # row 2 right too: no signature
    assert "stride" not in compare_tensor("z", one_row, expected, 1e-5, 1e-5, filled=False).message


def test_a_note_looks_only_at_the_graded_kernel_and_what_it_calls():
    """Puzzle 18's `other=0` note must not fire on puzzle 7's kernel kept in the same file, where 0
    is right (issue 34); it does fire on a helper the graded kernel calls."""
    from grader.course.loader import Course
    from grader.source.source_lines import kernel_code
    from paths import ROOT
    from pristine import PRISTINE
    note = Course(PRISTINE).puzzle("puzzle18").mistakes[0]
    sum_kernel = (ROOT / "solutions" / "puzzle07_long_sum.py").read_text()
    softmax = (ROOT / "solutions" / "puzzle18_fused_softmax.py").read_text()
    both = sum_kernel + "\n\n" + "\n".join(line for line in softmax.splitlines() if not line.startswith("import"))
    assert "other=0.0" in both and note.seen_in(both)
    code = kernel_code(both, "softmax_kernel")
    assert "def softmax_kernel" in code and "def sum_kernel" not in code and not note.seen_in(code)
    assert len(code.splitlines()) == len(both.splitlines())  # line numbers hold
    helper = both.replace('other=float("-inf")', "other=pad()") + (
        "\n\n@triton.jit\ndef pad():\n    return tl.load(p, other=0)\n")
    assert note.seen_in(kernel_code(helper, "softmax_kernel"))
    # a module constant the kernel reads is kept (puzzle 12's `GROUP = 8` note reads it), others not
    constants = "GROUP = tl.constexpr(8)\nOTHER = 3\n\n@triton.jit\ndef k(x):\n    return x * GROUP\n"
    kept = kernel_code(constants, "k")
    assert "GROUP = tl.constexpr(8)" in kept and "OTHER" not in kept


def test_file_given_a_folder_says_it_is_one_and_what_to_pass(tmp_path):
    from grader.app.targets import resolve
    from grader.course.loader import Course, CourseError
    from pristine import PRISTINE
    (tmp_path / "mine.py").write_text("")
    (tmp_path / "work.ipynb").write_text("")
    with pytest.raises(CourseError) as raised:
        resolve(Course(PRISTINE), ["puzzle07"], file=tmp_path)
    assert str(raised.value) == (f"{tmp_path} is a folder: --file takes one file, a .py or a notebook (.ipynb) "
                                 f"(here: mine.py, work.ipynb). To grade the puzzles in puzzles/, leave --file out")
    with pytest.raises(CourseError, match="no such file"):
        resolve(Course(PRISTINE), ["puzzle07"], file=tmp_path / "absent.py")


def test_the_early_first_failure_is_erased_on_a_terminal_and_absent_elsewhere():
    """The first failing case shows while the others run, then the report, which holds the same
    message, replaces it: each message is printed once (issue 34)."""
    import io
    from types import SimpleNamespace

    from rich.console import Console

    from grader.app.cli import FirstFailure
    case = SimpleNamespace(passed=False, kind="mismatch", message="case classic[seed=0]: wrong values in `z`")
    target = SimpleNamespace(lines=None)
    out = io.StringIO()
    early = FirstFailure(target, Console(file=out, force_terminal=True, width=200))
    early("puzzle01", case)
    assert "✗ puzzle01, first failing case (the report follows): case classic[seed=0]: wrong values in `z`" \
        in out.getvalue()
    early.close()
    assert out.getvalue().endswith("\x1b[2K")  # the line erased: the report takes its place
    piped = io.StringIO()
    quiet = FirstFailure(target, Console(file=piped, width=200))
    quiet("puzzle01", case)
    quiet.close()
    assert piped.getvalue() == ""


def test_code_is_styled_on_a_terminal_and_keeps_its_backticks_elsewhere():
    """A hint or a report on a colour terminal shows code in bold cyan; piped, the code stays between
    its backticks: it never runs into the prose (issue 34)."""
    import io

    from rich.console import Console

    from grader.report.text import show
    text = "Hint 1/2: mask the load: `tl.load(x_ptr + offsets, mask=offsets < N0)`, then store."
    coloured = io.StringIO()
    show(text, Console(file=coloured, force_terminal=True, color_system="standard", width=200))
    assert "\x1b[1;36mtl.load(x_ptr + offsets, mask=offsets < N0)\x1b[0m, then store." in coloured.getvalue()
    assert "`" not in coloured.getvalue()
    piped = io.StringIO()
    show(text, Console(file=piped, width=200))
    assert piped.getvalue() == text + "\n"


def test_a_look_alike_replaces_the_stride_signature():
    """Row 0 right and the rest wrong may be a mistake a look-alike names exactly (puzzle 11's
    batch offset left out): then the look-alike's words replace the general signature."""
    from types import SimpleNamespace

    import torch

    from grader.judge.compare import compare_tensor
    from grader.judge.failures import look_alike_note
    expected = torch.arange(12, dtype=torch.float32).reshape(4, 3)
    actual = expected.clone()
    actual[1:] = expected[0]
    outcome = compare_tensor("z", actual, expected, 1e-5, 1e-5, filled=False)
    assert "signature of a wrong row stride" in outcome.message
    look = SimpleNamespace(name="every batch computed from batch 0", where="add the batch offset")
    noted = look_alike_note(outcome.finding or outcome.message, look)
    assert "stride" not in noted and noted.endswith("It looks like every batch computed from batch 0: "
                                                     "add the batch offset.")
