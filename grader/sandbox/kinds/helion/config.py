"""A case's tile sizes as the config of the learner's own Helion kernel, whatever its loops.

A case names its tile sizes (``B0=32``) and, through the puzzle's ``tiles``, the extent each one
tiles (``B0`` tiles ``N0``: 200). A kernel has its own ``hl.tile`` loops and
``hl.register_block_size`` sizes: more or fewer than the reference, nested, some fixed by the
kernel (``block_size=64``). Each of the kernel's tunable sizes takes the case's size for a loop
of the same extent (in order, so two passes over a row take the two chunk sizes the case gives,
and a third pass the last again); one of an extent the case does not tile gets a power of two
below its extent, so that it has a tail, and one over an extent known only at run time (a split-k
tile's inner loop) the case's largest size. A size the kernel fixes is kept. The config is used in
Triton's interpreter on a CPU and compiled on a GPU: never Helion's default config, whose one
block may span the whole row and hide what tiling gets wrong. ``note`` says every choice.
"""
from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Fixed:
    """A tile size the kernel fixes itself (``hl.tile(n, block_size=64)``), over ``extent``."""

    name: str
    extent: int
    size: int


def _below(extent: int) -> int:
    """The largest power of two below ``extent`` (1 for 1 or 2): more than one tile, a tail
    where the extent is not a power of two."""
    return 1 << max(0, (extent - 1).bit_length() - 1)


def _name(info) -> str:
    names = sorted(getattr(info, "debug_names", ()) or ())
    return f"`{names[0]}`" if names else f"tile dim {info.block_id}"


def _int(value) -> int | None:
    try:
        return int(value)
    except (TypeError, ValueError):
        return None


def case_config(bound, blocks: tuple[int, ...], extents: tuple[int, ...], names: tuple[str, ...] = ()):
    """(Helion config, note, fixed sizes) for one case. ``blocks``: the case's tile sizes;
    ``extents``: the size each tiles (0 where the puzzle does not say), ``names`` their names.
    The kernel's own ``config=`` is kept but for its block sizes."""
    import helion
    spec = bound.config_spec
    own = list(getattr(bound.kernel, "configs", ()) or ())
    base = own[0].config if len(own) == 1 else spec.default_config().config
    infos = {info.block_id: info for info in bound.env.block_sizes}
    wanted = list(spec.block_sizes)
    names = names or tuple(f"B{i}" for i in range(len(blocks)))
    sizes, said = [], []
    if extents and any(extents):
        given = list(zip(names, blocks, extents))
        used: dict[int, int] = {}  # extent -> how many of its sizes were taken
        for item in wanted:
            block_id = item.block_ids[0]
            extent = _int(item.size_hint) or 0
            same = [(n, b) for n, b, e in given if e == extent]
            if same:
                n, b = same[min(used.get(extent, 0), len(same) - 1)]
                used[extent] = used.get(extent, 0) + 1
                said.append(f"{_name(infos.get(block_id, item))}: {n}={b}")
            elif not isinstance(getattr(infos.get(block_id), "size", 0), int):
                # an extent known only at run time (a split-k tile's inner loop, `hl.tile(outer.begin,
                # outer.end)`): Helion's hint for it (8192) is no size, so the case's largest tile
                b = max(blocks)
                said.append(f"{_name(infos.get(block_id, item))} (over an extent known only at run time): {b}, "
                            f"the case's largest tile")
            else:
                b = _below(extent)
                said.append(f"{_name(infos.get(block_id, item))} (over {extent}, which the case does not tile): {b}")
            sizes.append(b)
    elif len(blocks) == len(wanted):  # the puzzle does not say what each tiles: in order
        sizes = list(blocks)
        said = [f"{n}={b}" for n, b in zip(names, blocks)]
    else:
        sizes = [_below(_int(item.size_hint) or 1) for item in wanted]
        said = [f"{_name(infos.get(item.block_ids[0], item))}: {b} (the case gives {len(blocks)} tile size(s), "
                f"the kernel has {len(wanted)})" for item, b in zip(wanted, sizes)]
    for index, item in enumerate(wanted):  # Helion's floor (a dot's tiles are at least 16)
        low = int(getattr(item, "min_size", 1) or 1)
        if sizes[index] < low:
            said[index] += f" (raised to {low}, Helion's least for it)"
            sizes[index] = low
    fixed = []
    for info in bound.env.block_sizes:
        value = getattr(getattr(info, "block_size_source", None), "value", None)
        extent = _int(info.size)
        # a size the kernel computes from a tunable (split-k's `k_block`) is known only at run time: not fixed here
        if type(info.block_size_source).__name__ == "FixedBlockSizeSource" and isinstance(value, int) and extent:
            fixed.append(Fixed(_name(info), extent, int(value)))
            said.append(f"{_name(info)}: {int(value)}, fixed by the kernel")
    config = helion.Config(**{**base, "block_sizes": sizes})
    return config, "; ".join(said), tuple(fixed)
