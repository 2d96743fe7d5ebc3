"""Look-alikes: known mistakes recognised in the values a failing case wrote.

A puzzle declares ``LookAlike(name, spec, where)``: a small spec computing what the wrong
kernel would produce. When a case's values are wrong and match it, the message adds
"It looks like <name>: <where>." These tests check each look-alike both ways: a corpus kernel
making the mistake is named, and the spec's own output never is.
"""
import pytest

from conftest import COURSE, PUZZLE_IDS, WRONG, slow_beyond_puzzle01, wrong_kernel_files
from grader.app.selftest import declared
from grader.course.puzzle_parts import LookAlike
from grader.judge.compare import close_enough, look_alike_note, recognise
from grader.judge.plan import SpecShapes

# Every corpus file whose wrong values a look-alike names, and that look-alike's name.
RECOGNISED = {
    "puzzle03_transposed_output": "the output stored transposed (an N0 x N1 matrix, x along the rows)",
    "puzzle04_swapped_strides": "z's strides swapped (column-major: rows and columns exchanged)",
    "puzzle05_missing_relu": "the ReLU missing",
    "puzzle05_relu_before_mul": "the ReLU applied to x before the product",
    "puzzle05_relu_on_y": "the ReLU applied to y before the product",
    "puzzle06_missing_relu_mask": "the ReLU's gate missing (dx = dz * y everywhere)",
    "puzzle06_gate_on_x_only": "the gate taken from x alone (x > 0 instead of x * y > 0)",
    "puzzle06_relu_gate_ge": "the gate taken with >= (relu'(0) taken as 1)",
    "puzzle06_x_as_vector": "the gate taken from x's first row (x read as a vector)",
    "puzzle07_first_chunk_only": "a sum of the first chunk only (B1 columns per row)",
    "puzzle07_acc_overwritten": "a sum of the last chunk only (the accumulator overwritten in the loop)",
    # One chunk short: where T is two chunks, the loop sums the first alone (exact_multiple).
    "puzzle07_one_chunk_short": "a sum of the first chunk only (B1 columns per row)",
    "puzzle08_single_block": "a softmax of each B1-wide chunk on its own",
    "puzzle18_padding_as_zero": "a softmax over the padded row (masked lanes loaded as 0, not -inf)",
    "puzzle31_no_rescale": "the running maximum raised without rescaling the running sum and output",
    "puzzle31_causal_diagonal_off_by_one": "the causal mask hiding the diagonal (key < query, where it must be "
                                           "key <= query)",
    "puzzle32_no_d_term": "the softmax's D term left out (dS = P * dP)",
    "puzzle08_no_normalisation": "exp(x - max) without the division by the row's sum",
    "puzzle08_never_rescaled": "an online sum never rescaled when the maximum grows",
    "puzzle09_softmax_over_all": "one softmax over the whole score matrix (every query and key together)",
    "puzzle09_no_division": "the weighted sum of values without the division by the softmax's sum",
    "puzzle10_flipped_kernel": "a convolution with the filter flipped",
    "puzzle11_no_mid_loop": "a product of the first MID chunk only (no loop over MID)",
    "puzzle11_ignores_batch": "every batch computed from batch 0 (the batch offset missing from the loads)",
    "puzzle12_group_is_fpint": "groups of FPINT = 8 columns instead of GROUP = 16",
    "puzzle12_misordered_nibble": "the nibbles of a weight word read from the top down",
    "puzzle12_offset_not_unpacked": "every group's offset taken from nibble 0 of the offset word",
    "puzzle13_weight_ignored": "the weight ignored (plain row sums of x)",
    "puzzle13_ignores_strides": "x read as if row-major (its strides ignored)",
    "puzzle14_grad_w_without_grad_output": "grad_weight without grad_output (plain column sums of x)",
    "puzzle14_grad_x_without_grad_output": "grad_x without grad_output (every row the weight itself)",
    "puzzle14_grad_x_with_x_strides": "grad_x stored with x's strides",
    "puzzle16_weight_ignored": "the weight ignored (plain row sums of x)",
    "puzzle16_tile_index_as_coordinate":
        "the program id used as a row coordinate (a tile index, not an element index)",
    "puzzle17_grad_w_without_grad_output": "grad_weight without grad_output (plain column sums of x)",
    "puzzle17_grad_x_without_grad_output": "grad_x without grad_output (every row the weight itself)",
    # Puzzles 20 to 22: layer norm and RMS norm.
    "puzzle20_padded_row": "a layer norm of the row padded with zeros to BLOCK_D (mean and variance divided by "
                           "BLOCK_D, padding lanes counted)",
    "puzzle20_variance_counts_padding": "a variance that counts the padding lanes' (0 - mean)^2",
    "puzzle20_unbiased_variance": "the unbiased variance (divided by D - 1)",
    "puzzle20_std_saved": "the standard deviation stored in rstd",
    "puzzle21_dw_wrong_axis": "dw summed along each row (over the columns) instead of down the rows",
    "puzzle21_dx_missing_xhat_term": "dx without the xhat * mean(w * dy * xhat) term",
    "puzzle21_dx_missing_mean_term": "dx without the mean(w * dy) term",
    # Puzzles 19 (online softmax) and 23 (cross-entropy).
    "puzzle19_no_rescale": "an online sum never rescaled when the maximum grows",
    "puzzle19_per_chunk_softmax": "a softmax of each B1-wide chunk on its own",
    "puzzle23_no_minus_one": "the gradient without the -1 at the target (softmax times dloss)",
    "puzzle23_not_scaled": "the gradient not scaled by dloss (softmax minus one-hot)",
    "puzzle23_ignore_not_honoured": "the ignore index not honoured (a target of -100 treated as a column no logit has)",
    # Puzzles 24 to 27: scans, histogram, dropout (whose correct other streams are notes: test_dropout.py).
    "puzzle24_no_carry": "a scan that restarts at 0 in every chunk (no carry between chunks)",
    "puzzle24_carry_never_updated": "a scan that restarts at 0 in every chunk (no carry between chunks)",
    "puzzle24_carry_overwritten": "a carry that holds only the previous chunk's total (overwritten, not accumulated)",
    "puzzle24_exclusive_scan": "an exclusive scan (each element's own value left out)",
    "puzzle25_plain_cumsum": "an ordinary cumulative sum (the segment starts ignored)",
    "puzzle25_flags_nonzero": "a segment start wherever f != 0 (not where f & 1 is 1)",
    "puzzle26_load_add_store":
        "each bin counted at most once per block (a load, +1 and store: colliding lanes lose updates)",
    "puzzle26_atomic_unmasked": "the tail's padding lanes counted in bin 0",
    "puzzle27_seed_ignored": "the mask drawn with seed 0 (SEED ignored)",
    "puzzle27_mask_per_column": "one mask for every row (the random counters come from the column alone)",
    "puzzle27_offsets_per_block": "one mask for every block (the random counters restart at 0 in each block)",
    "puzzle27_no_scale": "the kept values not scaled by 1 / (1 - p)",
    "puzzle27_inverted": "the mask inverted (kept where the random number is below p)",
    # Puzzles 28 to 30: the matmuls.
    "puzzle28_k_tail_dropped": "a product that drops the last, partial K chunk (a loop over K // BLOCK_K chunks)",
    "puzzle28_strides_ignored": "a and b read as if row-major (their strides ignored)",
    "puzzle30_erf_gelu": "the exact GELU, with erf, instead of the tanh form",
    "puzzle30_gelu_before_bias": "GELU(a b) + bias (the activation before the bias)",
    "puzzle30_bias_per_row": "the bias added per row (bias[i] on row i) instead of per column",
    "puzzle30_epilogue_in_k_loop": "the bias and GELU applied to the partial sum after every K chunk",
    # Puzzles 36 to 42: the same mistakes, in Helion.
    "puzzle36_helion_missing_relu": "the ReLU missing",
    "puzzle36_helion_relu_on_x": "the ReLU applied to x before the product",
    "puzzle36_helion_relu_on_y": "the ReLU applied to y before the product",
    "puzzle38_helion_no_rescale": "an online sum never rescaled when the maximum grows",
    "puzzle38_helion_per_chunk_softmax": "a softmax of each chunk on its own",
    "puzzle39_helion_unbiased_variance": "the unbiased variance (divided by D - 1)",
    "puzzle39_helion_std_saved": "the standard deviation returned as rstd",
    "puzzle40_helion_dot_without_acc": "a product of the last K chunk alone (the accumulator replaced, not added "
                                       "to, in every chunk)",
    "puzzle41_helion_erf_gelu": "the exact GELU, with erf, instead of the tanh form",
    "puzzle41_helion_gelu_before_bias": "GELU(a b) + bias (the activation before the bias)",
    "puzzle41_helion_epilogue_in_k_loop": "the bias and GELU applied to the partial sum after every K chunk",
    "puzzle42_helion_no_rescale": "the running maximum raised without rescaling the running sum and output",
    "puzzle42_helion_diagonal_hidden": "the causal mask hiding the diagonal (key < query, where it must be "
                                       "key <= query)",
}

# The cases on which a look-alike gives the spec's own values, so that it cannot tell the
# mistake there (the grader passes it over): (puzzle, look-alike) -> case labels. Any other
# coincidence is a look-alike that is wrongly written, or a case that no longer tells.
CONTIGUOUS_13 = ("classic[seed=0]", "classic[seed=1]", "tails[seed=2]", "tails[seed=3]")
COINCIDE = {
    # One column (one row): the transpose of a vector stored flat is the same vector.
    ("puzzle03", "the output stored transposed (an N0 x N1 matrix, x along the rows)"): ("single_column[seed=5]",),
    ("puzzle04", "z's strides swapped (column-major: rows and columns exchanged)"): ("single_row[seed=7]",),
    # x * y is exactly 0 only where the case makes every third x 0.
    ("puzzle06", "the gate taken with >= (relu'(0) taken as 1)"): (
        "classic[seed=0]", "classic[seed=1]", "classic[seed=2]", "exact_multiple[seed=3]",
        "unequal_blocks[seed=4]", "block_larger_than_row[seed=5]", "tall[seed=6]"),
    # Rows shorter than one chunk: the first chunk, the last and the whole row are one.
    ("puzzle07", "a sum of the first chunk only (B1 columns per row)"): ("row_shorter_than_block[seed=5]",),
    ("puzzle07", "a sum of the last chunk only (the accumulator overwritten in the loop)"):
        ("row_shorter_than_block[seed=5]",),
    ("puzzle08", "a softmax of each B1-wide chunk on its own"): ("row_shorter_than_block[seed=4]",),
    # A row within one chunk: the running maximum never grows, so nothing needs rescaling.
    ("puzzle08", "an online sum never rescaled when the maximum grows"): ("row_shorter_than_block[seed=4]",),
    # Large inputs: each row's maximum dominates, the sum of exponentials is 1 to within atol.
    ("puzzle08", "exp(x - max) without the division by the row's sum"):
        ("large_magnitude[seed=5]", "max_in_last_chunk[seed=6]"),
    ("puzzle10", "a convolution with the filter flipped"): ("one_by_one_filter[seed=6]",),
    # Strides matter only where the case stores x column-major.
    # x a slice: these two model a column-major x; reading a slice's gaps is its layout's look-alike.
    ("puzzle13", "x read as if row-major (its strides ignored)"): (*CONTIGUOUS_13, "smaller_than_tiles[seed=5]",
                                                                   "x_a_slice[seed=7]"),
    ("puzzle14", "grad_x stored with x's strides"): (*CONTIGUOUS_13, "many_row_tiles[seed=5]", "x_a_slice[seed=7]"),
    # One program: its tile index 0 is also its first row.
    ("puzzle16", "the program id used as a row coordinate (a tile index, not an element index)"):
        ("smaller_than_tiles[seed=5]",),
    # Puzzles 20 to 22. A row that fills its block has no padding lanes.
    ("puzzle20", "a layer norm of the row padded with zeros to BLOCK_D (mean and variance divided by BLOCK_D, "
                 "padding lanes counted)"): ("row_fills_block[seed=1]",),
    # 8000 columns whose mean is near 0: the 192 padding lanes' (0 - mean)^2 are below the tolerance.
    ("puzzle20", "a variance that counts the padding lanes' (0 - mean)^2"): ("row_fills_block[seed=1]",
                                                                              "model_width[seed=9]"),
    # A constant row's variance is 0 whatever it is divided by.
    ("puzzle20", "the unbiased variance (divided by D - 1)"): ("constant_rows[seed=5]",),
    # Constant rows: xhat is 0, and so is every term it multiplies.
    ("puzzle21", "dw summed along each row (over the columns) instead of down the rows"): ("constant_rows[seed=5]",),
    ("puzzle21", "dx without the xhat * mean(w * dy * xhat) term"): ("constant_rows[seed=5]",),
    # Puzzles 19 and 23. A row within one chunk: the running maximum never grows, and that chunk is the row.
    ("puzzle19", "an online sum never rescaled when the maximum grows"):
        ("row_shorter_than_block[seed=3]", "constant_rows[seed=8]"),
    ("puzzle19", "a softmax of each B1-wide chunk on its own"): ("row_shorter_than_block[seed=3]",),
    # Only two cases have targets of -100.
    ("puzzle23", "the ignore index not honoured (a target of -100 treated as a column no logit has)"): (
        "classic[seed=0]", "vocab_fills_chunks[seed=1]", "one_row[seed=2]",
        "vocab_shorter_than_block[seed=3]", "many_rows[seed=4]", "large_logits[seed=6]",
        "max_in_last_chunk[seed=7]", "all_negative_rows[seed=8]", "constant_rows[seed=9]"),
    # Puzzles 24 to 27. Rows of one chunk have no carry; rows of two only the first chunk's.
    ("puzzle24", "a scan that restarts at 0 in every chunk (no carry between chunks)"):
        ("row_fills_one_block[seed=1]", "rows_shorter_than_block[seed=3]"),
    ("puzzle24", "a carry that holds only the previous chunk's total (overwritten, not accumulated)"):
        ("row_fills_one_block[seed=1]", "rows_shorter_than_block[seed=3]"),
    # N a multiple of the block: no padding lanes.
    ("puzzle26", "the tail's padding lanes counted in bin 0"): ("exact_multiple_of_block[seed=1]",),
    # Sixteen lanes into 256 bins: no two lanes of a block share a bin here.
    ("puzzle26", "each bin counted at most once per block (a load, +1 and store: colliding lanes lose updates)"):
        ("more_bins_than_elements[seed=5]",),
    # One row: its column index is its flat index.
    ("puzzle27", "one mask for every row (the random counters come from the column alone)"): ("one_row[seed=2]",),
    # Puzzles 28 to 30: the matmuls. Where BLOCK_K divides K there is no partial chunk to drop;
    # where both inputs are row-major their strides are what a row-major reading assumes.
    ("puzzle28", "a product that drops the last, partial K chunk (a loop over K // BLOCK_K chunks)"):
        ("single_tile[seed=1]", "long_k[seed=4]", "a_column_major[seed=6]"),
    ("puzzle28", "a and b read as if row-major (their strides ignored)"):
        ("classic[seed=0]", "single_tile[seed=1]", "k_smaller_than_block[seed=2]",
         "short_last_group[seed=3]", "long_k[seed=4]",
         "a_a_slice[seed=9]"),  # models a column-major a or b; a slice's gaps are its layout's look-alike
    # More rows than columns: a bias read per row runs past its end (out of bounds, not wrong values).
    ("puzzle30", "the bias added per row (bias[i] on row i) instead of per column"):
        ("k_smaller_than_block[seed=2]", "short_last_group[seed=3]"),
    # One K chunk: the epilogue inside the loop runs once, on the complete sum.
    ("puzzle30", "the bias and GELU applied to the partial sum after every K chunk"): ("k_smaller_than_block[seed=2]",),
    # Without the causal mask there is no diagonal to hide.
    ("puzzle31", "the causal mask hiding the diagonal (key < query, where it must be key <= query)"):
        ("classic[seed=0]", "keys_longer_than_queries[seed=3]", "large_magnitude[seed=6]", "long_sequences[seed=9]"),
    # Puzzles 38 to 41, in Helion: a row of one chunk, a K of one chunk, a constant row, as above.
    ("puzzle38", "an online sum never rescaled when the maximum grows"): ("row_shorter_than_chunk[seed=2]",),
    ("puzzle38", "a softmax of each chunk on its own"): ("row_shorter_than_chunk[seed=2]",),
    ("puzzle39", "the unbiased variance (divided by D - 1)"): ("constant_rows[seed=4]",),
    ("puzzle40", "a product of the last K chunk alone (the accumulator replaced, not added to, in every chunk)"):
        ("k_smaller_than_tile[seed=1]",),
    ("puzzle41", "the bias and GELU applied to the partial sum after every K chunk"): ("k_smaller_than_tile[seed=1]",),
}

PUZZLES = [COURSE.puzzle(p) for p in PUZZLE_IDS]
LOOKS = [(p, look) for p in PUZZLES for look in p.look_alikes]
# Look-alikes a case's layout makes rather than the puzzle's list: a row-strided input read as contiguous.
BY_LAYOUT = {"puzzle22_reshape_keeps_row_gaps": "`x` read as if its rows were contiguous",
             "puzzle15_x_strides_taken_as_contiguous": "`x` read as if its rows were contiguous",
             "puzzle29_a_taken_as_row_major": "`a` read as if its rows were contiguous"}

# A look-alike may explain wrong values, or a NaN where the spec has a number (a row whose
# softmax is 0 / 0): the corpus kernels failing either way are checked for what they are named.
NAMEABLE = ("mismatch", "nonfinite")
FAILING_VALUES = [f for f in wrong_kernel_files() if declared(f).get("EXPECT_KIND") in NAMEABLE]


def test_enough_look_alikes():
    assert len(LOOKS) >= 15
    assert {p.id for p, _ in LOOKS} >= {f"puzzle{n:02d}" for n in (3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 16, 17)}


@pytest.mark.parametrize("puzzle,look", LOOKS, ids=[f"{p.id}-{look.name[:40]}" for p, look in LOOKS])
def test_every_look_alike_has_a_corpus_kernel(puzzle, look):
    files = [stem for stem, name in RECOGNISED.items() if stem.startswith(puzzle.id) and name == look.name]
    assert files, f"{puzzle.id}: no corpus kernel in tests/wrong_kernels makes the mistake {look.name!r}"
    for stem in files:
        assert (WRONG / f"{stem}.py").is_file(), stem
        assert declared(WRONG / f"{stem}.py")["EXPECT_KIND"] in NAMEABLE, stem


def test_recognised_names_are_declared():
    for stem, name in RECOGNISED.items():
        names = [look.name for look in COURSE.puzzle(stem[:8]).look_alikes]
        assert name in names, f"{stem}: {name!r} is not a look-alike of {stem[:8]} ({names})"


@pytest.mark.parametrize("path", slow_beyond_puzzle01(FAILING_VALUES, lambda path: path.name[:8]),
                         ids=[f.stem for f in FAILING_VALUES])
def test_corpus_mismatch_is_named_when_known(path, wrong_results):
    result = wrong_results[path.name]
    first = result.first_failure
    assert first.kind == declared(path)["EXPECT_KIND"], first.message
    name = RECOGNISED.get(path.stem)
    if path.stem in BY_LAYOUT:  # a look-alike the case's layout makes (grader.judge.plan.row_gaps_look_alike)
        assert f"It looks like {BY_LAYOUT[path.stem]}: " in result.message, result.message
    elif name is None:  # no look-alike for this mistake: nothing may be claimed
        for case in result.cases:
            assert "It looks like" not in case.message, f"{path.name}: {case.message}"
    else:  # named where the learner reads first: the most telling failure, the headline
        shown = result.telling_failure
        assert shown.message == result.message
        assert f"It looks like {name}: " in shown.message, f"{path.name}: {shown.message}"
        where = next(look.where for look in COURSE.puzzle(path.name[:8]).look_alikes if look.name == name)
        assert where.rstrip(".") in shown.message


PLANS = [(p, case) for p in PUZZLES if p.look_alikes for case in p.cases]


# A large case (past 16-bit offsets, many chunks) takes seconds per look-alike: the full suite's.
@pytest.mark.parametrize("puzzle,case", [pytest.param(p, c, marks=pytest.mark.slow if c.large else ())
                                         for p, c in PLANS], ids=[f"{p.id}-{c.label}" for p, c in PLANS])
def test_the_spec_output_is_never_labelled(puzzle, case):
    plan = SpecShapes(puzzle).plan(case)
    sizes = {**puzzle.variant_values, **puzzle.sizes(case), **case.blocks}  # as the grader gives them
    for look in puzzle.look_alikes:
        wrong = look.produce(plan.inputs, sizes, case.layouts)
        assert len(wrong) == len(plan.expected), look.name
        for w, e in zip(wrong, plan.expected):  # same space as the spec: shape and dtype
            assert (tuple(w.shape), w.dtype) == (tuple(e.shape), e.dtype), look.name
        telling = not all(close_enough(w, e, puzzle.atol, puzzle.rtol) for w, e in zip(wrong, plan.expected))
        coincides = case.label in COINCIDE.get((puzzle.id, look.name), ())
        assert telling != coincides, (f"{puzzle.id} {case.label}: {look.name!r} "
                                      f"{'gives the spec' if not telling else 'differs'}")
    assert recognise(puzzle.look_alikes, plan.inputs, plan.expected, plan.expected, puzzle.atol, puzzle.rtol,
                     sizes, case.layouts) is None


@pytest.mark.parametrize("puzzle,look", LOOKS, ids=[f"{p.id}-{look.name[:40]}" for p, look in LOOKS])
def test_every_look_alike_tells_on_some_case(puzzle, look):
    assert len(COINCIDE.get((puzzle.id, look.name), ())) < len(puzzle.cases)


@pytest.mark.slow  # reads every solution's result
def test_solutions_pass_unlabelled(solution_results):
    for puzzle_id, result in solution_results.items():
        assert result.status == "pass", f"{puzzle_id}: {result.message}"
        assert "looks like" not in result.message
        assert all("looks like" not in c.message for c in result.cases)


def test_the_note_follows_a_full_stop():
    look = LookAlike("a mistake", lambda x: x, "the fix.")
    assert look_alike_note("yours 1, expected 2", look) == "yours 1, expected 2. It looks like a mistake: the fix."
    assert look_alike_note("all wrong. ", look) == "all wrong. It looks like a mistake: the fix."


def test_sizes_and_layouts_only_where_asked():
    import torch
    x = torch.ones(2)
    plain = LookAlike("plain", lambda x: x * 2, "")
    sized = LookAlike("sized", lambda x, *, sizes: x * sizes["B0"], "")
    both = LookAlike("both", lambda x, *, sizes, layouts: (x + sizes["B0"], x * len(layouts)), "")
    assert plain.produce([x], {"B0": 3}, {})[0].tolist() == [2.0, 2.0]
    assert sized.produce([x], {"B0": 3}, {})[0].tolist() == [3.0, 3.0]
    assert [t.tolist() for t in both.produce([x], {"B0": 3}, {"x": "transposed"})] == [[4.0, 4.0], [1.0, 1.0]]
    assert x.tolist() == [1.0, 1.0]  # the inputs are cloned


def test_a_failing_look_alike_is_passed_over():
    import torch
    x = torch.arange(4.0)
    broken = LookAlike("broken", lambda x: 1 / 0, "")
    doubled = LookAlike("doubled", lambda x: x * 2, "")
    assert recognise((broken, doubled), [x], [x], [x * 2], 1e-6, 1e-6, {}, {}) is doubled
    assert recognise((broken, doubled), [x], [x], [x * 3], 1e-6, 1e-6, {}, {}) is None


def test_a_nan_matches_only_where_the_look_alike_has_no_number():
    import torch
    nan, inf = float("nan"), float("inf")
    # A row with no visible key: its softmax is 0 / 0 in the look-alike.
    diagonal = LookAlike("diagonal", lambda x: x.masked_fill(torch.tensor([True, False, False]), nan), "")
    x = torch.tensor([1.0, 2.0, 3.0])
    expected = [x]
    for written in ([nan, 2.0, 3.0], [-inf, 2.0, 3.0]):  # whichever a kernel's order of operations gives
        assert recognise((diagonal,), [x], expected, [torch.tensor(written)], 1e-6, 1e-6, {}, {}) is diagonal
    for written in ([nan, nan, 3.0], [1.0, nan, 3.0], [0.0, 2.0, 3.0], [nan, 2.0, 3.5]):  # NaN elsewhere, or none
        assert recognise((diagonal,), [x], expected, [torch.tensor(written)], 1e-6, 1e-6, {}, {}) is None


def test_a_look_alike_without_a_number_names_nothing():
    """All NaN is how a look-alike says it cannot tell on a case (puzzle 18's padding): a kernel
    that wrote only NaN is not named after it."""
    import torch
    cannot_tell = LookAlike("cannot tell", lambda x: torch.full_like(x, float("nan")), "")
    x = torch.arange(3.0)
    assert recognise((cannot_tell,), [x], [x], [torch.full_like(x, float("nan"))], 1e-6, 1e-6, {}, {}) is None
