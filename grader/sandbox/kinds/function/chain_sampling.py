"""A sample of the programs of every launch an autograd wrapper makes (inside a worker).

A replay (:mod:`.function_replay`) runs the wrapper's launches one after another, and a later
launch may read what an earlier one wrote: FlashAttention's backward reads every row of the
forward's ``o`` and ``lse``. So a sample of each launch's programs stands only where every value
a program that ran reads is the value the whole run would give it. This log keeps, per element
of every memory the replay holds, whether its value is *known*: the grader's inputs are; memory
the wrapper allocates empty is not, until a program that ran stores to it (once its launch is
over) or a PyTorch operator computes it from known values.

The sample falls (the grader then samples fewer axes, or runs every program) where a program
loads an element not known (what a program that did not run would write, or nobody), where a
program loads an element of memory its own launch stores to that it did not store itself (on a
GPU it could read another program's store: the programs that did not run may hold one), where
an atomic runs (its result sums programs that did not all run), and where PyTorch computes on
memory not wholly known. A program that loads what another program of its launch stored fails,
as in a kernel puzzle (:class:`grader.sandbox.bounds.WriteLog`).
"""
from __future__ import annotations

import numpy as np

# Operators that read no values of their tensors: memory made empty, views (sharing memory).
EMPTY = {"empty", "empty_like", "empty_strided", "empty_permuted", "new_empty", "new_empty_strided"}
VIEWS = {"view", "_unsafe_view", "expand", "t", "transpose", "permute", "detach", "alias", "as_strided", "select",
         "slice", "squeeze", "unsqueeze", "split", "split_with_sizes", "chunk", "unbind", "_reshape_alias",
         "view_as", "expand_as", "movedim", "narrow", "diagonal", "unflatten"}
FILLS = {"fill_", "zero_"}  # write their first argument without reading it


class SampleFalls(Exception):
    """Raised inside the replay: the sample along these axes does not stand; the text says where."""


class Memory:
    """One storage the replay holds: which elements are known, and who stored what this launch."""

    def __init__(self, start: int, nbytes: int, itemsize: int, known: bool, label: str) -> None:
        self.start, self.itemsize, self.label = start, itemsize, label
        self.known = np.full(nbytes // itemsize, known, dtype=bool)
        self.writer: np.ndarray | None = None  # the program that stored each element this launch, or -1
        self.read_others = False  # this launch loaded an element here that the loading program did not store

    def index(self, addresses: np.ndarray, itemsize: int) -> np.ndarray:
        """The elements an access of ``itemsize`` bytes per lane covers (an access of another
        size than the memory's elements, but a multiple, covers several)."""
        first = (addresses - self.start) // self.itemsize
        per = max(itemsize // self.itemsize, 1)
        return (first[:, None] + np.arange(per)).reshape(-1) if per > 1 else first


class ChainLog:
    """The known elements of every storage of a sampled replay, kept through its launches."""

    def __init__(self) -> None:
        self.memories: list[Memory] = []
        self.launch = -1
        self.stores: list[dict[tuple[int, int], list[np.ndarray]]] = []  # per launch: (program, memory) -> elements
        self.kernels: list[str] = []  # per launch
        self.foreign: dict | None = None  # the first load of another program's store, as a ForeignRead
        self.fell: str | None = None  # why the sample fell, once it has (raised inside the learner's run)
        self.counted: list[dict] = []  # the launches the grid loop counted (grader.sandbox.sampling)
        self.decode = lambda program: [program, 0, 0]

    def fall(self, why: str):
        """End the replay: the sample does not stand (kept here: the interpreter may wrap what is raised)."""
        self.fell = self.fell or why
        raise SampleFalls(why)

    # ---- memories ----------------------------------------------------------------------------
    def add(self, tensor, known: bool, label: str) -> None:
        storage = tensor.untyped_storage()
        start = storage.data_ptr()
        if storage.nbytes() and not any(m.start == start for m in self.memories):
            self.memories.append(Memory(start, storage.nbytes(), tensor.element_size(), known, label))

    def memory(self, tensor) -> Memory | None:
        start = tensor.untyped_storage().data_ptr()
        return next((m for m in self.memories if m.start == start), None)

    def elements(self, tensor, memory: Memory) -> np.ndarray:
        """The elements of ``memory`` that ``tensor`` (a view of it) covers."""
        import torch
        size = tensor.element_size()
        numbers = torch.arange(tensor.untyped_storage().nbytes() // size, dtype=torch.int64)
        first = numbers.as_strided(tensor.shape, tensor.stride(), tensor.storage_offset()).reshape(-1).numpy()
        return memory.index(memory.start + first * size, size)

    def is_known(self, tensor) -> bool:
        memory = self.memory(tensor)
        return memory is None or tensor.numel() == 0 or bool(memory.known[self.elements(tensor, memory)].all())

    def mark_known(self, tensor) -> None:
        memory = self.memory(tensor)
        if memory is not None and tensor.numel() and tensor.element_size() >= memory.itemsize:
            memory.known[self.elements(tensor, memory)] = True  # (a narrower view leaves its elements unknown)

    # ---- PyTorch's operators, between launches -----------------------------------------------
    def operator(self, name: str, tensors: list, made: list) -> None:
        """Before ``made`` (the operator's results) are used: an operator that reads values must
        read known ones; what it makes from them is known."""
        base = name.partition("::")[2].partition(".")[0]
        if base in EMPTY or base in VIEWS:
            return
        if base in FILLS:
            made = made or tensors[:1]
        elif base == "copy_":  # reads its source only
            if not all(self.is_known(t) for t in tensors[1:]):
                self.fall(f"`{base}` copies what programs that did not run would store")
            made = tensors[:1]
        elif not all(self.is_known(t) for t in tensors):
            self.fall(f"PyTorch's `{base}` reads what programs that did not run would store")
        for tensor in made:
            self.mark_known(tensor)

    # ---- launches ----------------------------------------------------------------------------
    def begin(self, kernel: str) -> None:
        self.launch += 1
        self.stores.append({})
        self.kernels.append(kernel)

    def end(self) -> None:
        for memory in self.memories:
            if memory.writer is not None and memory.read_others:
                self.fall(f"a program loaded {memory.label} where other programs of its launch store")
            if memory.writer is not None:
                memory.known |= memory.writer >= 0
            memory.writer, memory.read_others = None, False

    def _lanes(self, addresses: np.ndarray, mask: np.ndarray, itemsize: int):
        active = addresses.reshape(-1)[mask.reshape(-1)].astype(np.int64)
        if active.size == 0:
            return
        for number, memory in enumerate(self.memories):
            inside = (active >= memory.start) & (active < memory.start + memory.known.size * memory.itemsize)
            if inside.any():
                if itemsize < memory.itemsize:
                    self.fall(f"an access of {itemsize} bytes to {memory.label}, of {memory.itemsize}")
                yield number, memory, memory.index(active[inside], itemsize)

    def load(self, program: int, addresses, mask, itemsize: int, where) -> None:
        for _, memory, index in self._lanes(addresses, mask, itemsize):
            mine = np.zeros(index.size, dtype=bool)
            if memory.writer is not None:
                writer = memory.writer[index]
                theirs = (writer >= 0) & (writer != program)
                if theirs.any():
                    line, source = where()
                    k = int(np.flatnonzero(theirs)[0])
                    self.foreign = {"tensor": memory.label, "index": int(index[k]), "shape": [memory.known.size],
                                    "program": self.decode(program), "written": True, "line": line,
                                    "source": source}
                    self.fall("a program read another's store")
                mine = writer == program
            if not (memory.known[index] | mine).all():
                self.fall(f"a program loaded {memory.label} where programs that did not run would store")
            memory.read_others |= not mine.all()

    def store(self, program: int, addresses, mask, itemsize: int, atomic: bool) -> None:
        for number, memory, index in self._lanes(addresses, mask, itemsize):
            if atomic:
                self.fall(f"an atomic on {memory.label}: its result sums programs that did not all run")
            if memory.writer is None:
                memory.writer = np.full(memory.known.size, -1, dtype=np.int64)
            memory.writer[index] = program
            self.stores[self.launch].setdefault((program, number), []).append(index)

    # ---- what the grader is told ---------------------------------------------------------------
    def outcome(self, returned: list, launches: list[dict]) -> dict:
        """A replay whose sample held to its end, as ``wire.SampledChain``: per launch its grid,
        the indices run along each axis and what each program stored in each tensor returned (as
        runs of the tensor's elements in row-major order); per tensor returned, its known elements."""
        import torch
        if len(launches) != len(self.kernels):
            self.fall(f"{len(launches)} launches counted for {len(self.kernels)} made")
        known, where = [], {}
        for number, tensor in enumerate(returned):
            if not isinstance(tensor, torch.Tensor):
                known.append([])
                continue
            memory = self.memory(tensor)
            if memory is None or tensor.element_size() != memory.itemsize:
                known.append(_runs(np.arange(tensor.numel())) if memory is None else [])
                continue
            elements = self.elements(tensor, memory)
            position = np.full(memory.known.size, -1, dtype=np.int64)
            position[elements] = np.arange(elements.size)
            where[self.memories.index(memory)] = (number, position)
            known.append(_runs(np.flatnonzero(memory.known[elements])))
        out = []
        for kernel, launch, stores in zip(self.kernels, launches, self.stores):
            gx, gy = (list(launch["grid"]) + [1, 1])[:2]
            writes = []
            for (program, memory), parts in sorted(stores.items()):
                if memory not in where:
                    continue
                number, position = where[memory]
                mine = np.unique(position[np.concatenate(parts)])
                mine = mine[mine >= 0]
                if mine.size:
                    writes.append({"program": [program % gx, program // gx % gy, program // (gx * gy)],
                                   "buffer": number, "count": int(mine.size), "runs": _runs(mine)})
            out.append({"kernel": kernel, "grid": list(launch["grid"]), "along": launch["along"], "writes": writes})
        return {"launches": out, "known": known}


def _runs(sorted_positions: np.ndarray) -> list[int]:
    """Sorted distinct positions as (start, length) pairs, flattened."""
    if sorted_positions.size == 0:
        return []
    breaks = np.flatnonzero(np.diff(sorted_positions) != 1) + 1
    starts = sorted_positions[np.concatenate(([0], breaks))]
    lengths = np.diff(np.concatenate(([0], breaks, [sorted_positions.size])))
    return [int(v) for v in np.stack([starts, lengths], axis=1).reshape(-1)]
