"""An autograd puzzle's large case runs a sample of every launch's programs (grader.sandbox.kinds.function.chain_sampling):
a value is used only where the whole run would give the same; a split grid's sample stands
(grader.judge.sampled.writers)."""
from __future__ import annotations

import numpy as np
import pytest
import torch

from grader.channel import wire
from grader.channel.kinds import function as function_wire
from grader.judge import failures
from grader.judge.fence import Buffer
from grader.judge.kinds.function.chain import chain_stands
from grader.judge.sampled import Stands, stands
from grader.sandbox.kinds.function.chain_sampling import ChainLog, SampleFalls


def _addresses(tensor: torch.Tensor, elements) -> tuple[np.ndarray, np.ndarray]:
    """The lanes of an access to ``elements`` of ``tensor``: their addresses, all active."""
    index = np.asarray(list(elements), dtype=np.uint64)
    return np.uint64(tensor.data_ptr()) + index * np.uint64(tensor.element_size()), np.ones(index.size, dtype=bool)


def _where():
    return 7, "y = tl.load(o_ptr + offs)"


def _chain(*known: torch.Tensor, empty=()) -> ChainLog:
    chain = ChainLog()
    for tensor in known:
        chain.add(tensor, True, "`q`")
    for tensor in empty:
        chain.add(tensor, False, "a tensor your code allocated")
    return chain


def test_what_a_program_that_ran_stored_is_known_to_the_next_launch():
    q, o = torch.randn(8), torch.empty(8)
    chain = _chain(q, empty=[o])
    chain.begin("fwd")
    chain.load(0, *_addresses(q, range(4)), 4, _where)
    chain.store(0, *_addresses(o, range(4)), 4, False)
    chain.end()
    chain.begin("bwd")
    chain.load(3, *_addresses(o, range(4)), 4, _where)  # a later launch reads what ran before it
    with pytest.raises(SampleFalls, match="where programs that did not run would store"):
        chain.load(3, *_addresses(o, [4]), 4, _where)  # what the forward's programs not run would store
    assert chain.fell and chain.foreign is None


def test_a_load_of_another_programs_store_in_the_same_launch_is_a_race():
    o = torch.empty(8)
    chain = _chain(empty=[o])
    chain.begin("bwd")
    chain.store(0, *_addresses(o, range(4)), 4, False)
    chain.load(0, *_addresses(o, range(4)), 4, _where)  # its own store: fine
    with pytest.raises(SampleFalls):
        chain.load(1, *_addresses(o, [2]), 4, _where)
    assert chain.foreign["program"] == [1, 0, 0] and chain.foreign["index"] == 2 and chain.foreign["line"] == 7
    text = failures.word(failures.ReadAcrossLaunch("a tensor your code allocated", (1, 0, 0), 2, 7, "y = tl.load(o)"))
    assert text.startswith("a race: program (1, 0, 0) loaded element 2 of a tensor your code allocated at line 7")
    assert "which another program of the same launch had stored" in text


def test_a_load_where_the_launch_stores_elsewhere_ends_the_sample():
    """Zeros are known, but the programs not run may store there before this one loads: on a GPU, a race."""
    acc = torch.zeros(8)
    chain = _chain(acc)
    chain.begin("bwd")
    chain.load(1, *_addresses(acc, [5]), 4, _where)
    chain.store(0, *_addresses(acc, [0]), 4, False)
    with pytest.raises(SampleFalls, match="where other programs of its launch store"):
        chain.end()


def test_an_atomic_ends_the_sample():
    acc = torch.zeros(8)
    chain = _chain(acc)
    chain.begin("bwd")
    with pytest.raises(SampleFalls, match="an atomic"):
        chain.store(0, *_addresses(acc, [0]), 4, True)


def test_pytorch_may_view_and_allocate_but_computes_only_on_known_values():
    q, partial = torch.randn(4, 3), torch.empty(4, 3)
    chain = _chain(q, empty=[partial])
    chain.operator("aten::view.default", [partial], [partial.view(12)])  # reads no value
    copy = q.clone()
    chain.add(copy, False, "a copy")
    chain.operator("aten::clone.default", [q], [copy])
    assert chain.is_known(copy)
    chain.begin("fwd")
    chain.store(0, *_addresses(partial, range(3)), 4, False)  # one row of partial sums of four
    chain.end()
    assert chain.is_known(partial[0]) and not chain.is_known(partial)
    with pytest.raises(SampleFalls, match="PyTorch's `sum` reads what programs that did not run would store"):
        chain.operator("aten::sum.dim_IntList", [partial], [])


# ---- whether the sample stands -----------------------------------------------------------
X = Buffer.plan("x", "input", "float32", (6, 8), 0)
DK = Buffer.plan("dk", "output", "float32", (4, 8), 1)
DQ = Buffer.plan("dq", "output", "float32", (6, 8), 2)


def _row(program: int, buffer: int, row: int) -> wire.ProgramWrites:
    return wire.ProgramWrites(program=(program, 0, 0), buffer=buffer, count=8, runs=(row * 8, 8))


def _split(key_blocks: int, ran=(0, 1, 3, 9)) -> wire.SampledRun:
    """FlashAttention's backward in small: programs below ``key_blocks`` store a row of dk, the
    rest a row of dq; programs ``ran`` of 10 ran."""
    writes = [_row(j, 1, j) if j < key_blocks else _row(j, 2, j - key_blocks) for j in ran]
    return wire.SampledRun(programs=10, ran=len(ran), writes=tuple(writes), grid=(10, 1, 1),
                           along=(tuple(ran), (0,), (0,)))


def test_a_split_grids_sample_stands_where_each_side_has_as_many_cells_as_programs():
    judged = stands((X, DK, DQ), 1, _split(4))
    assert isinstance(judged, Stands) and judged.masks["dk"][[0, 1, 3]].all() and judged.masks["dq"][5].all()


def test_a_split_grid_whose_cells_disagree_with_the_cut_does_not_stand():
    """Two key blocks' programs for four rows of dk (program 3 stores dq): the sample puts the cut
    at 2 or 3 programs, which cannot store four cells."""
    dq = Buffer.plan("dq", "output", "float32", (8, 8), 2)
    assert "4 cells of [1, 8] for the 2 of 4 programs run that stored" in stands((X, DK, dq), 1, _split(2))


def test_an_autograd_replays_sample_compares_its_known_elements():
    launch = function_wire.SampledLaunch(kernel="fwd", grid=(6, 1, 1), along=((0, 1, 5), (0,), (0,)),
                                writes=tuple(_row(j, 0, j) for j in (0, 1, 5)))
    chain = function_wire.SampledChain(axes=(0, 1, 2), launches=(launch,), known=((0, 16, 40, 8), ()))
    judged = chain_stands(["o", ""], [(6, 8), ()], chain)
    assert isinstance(judged, Stands) and judged.ran == 3 and judged.programs == 6
    assert judged.masks["o"][[0, 1, 5]].all() and judged.masks["o"].sum() == 24
    nothing = function_wire.SampledChain(axes=(0, 1, 2), launches=(launch,), known=((), ()))
    assert chain_stands(["o", ""], [(6, 8), ()], nothing) == "no element of `o` is known from the programs that ran"
    halves = function_wire.SampledLaunch(kernel="fwd", grid=(6, 1, 1), along=((0, 1, 5), (0,), (0,)),
                                writes=tuple(wire.ProgramWrites((j, 0, 0), 0, 4, (j * 8, 4)) for j in (0, 1, 5)))
    short = function_wire.SampledChain(axes=(0, 1, 2), launches=(halves,), known=((0, 4),))
    assert "`o` as `fwd` stores it: 12 cells of [1, 4] for 6 programs" in chain_stands(["o"], [(6, 8)], short)
