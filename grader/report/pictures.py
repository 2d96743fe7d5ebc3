"""Memory-access pictures: per program, which elements of each tensor were read or written.

Drawn with matplotlib into a static PNG or SVG, offline and headless, from the access trace
the interpreter run records (every load and store our bounds check sees). Masked-off lanes
are grey, out-of-bounds lanes red, drawn past the tensor's outline where they fell. A lane out
of bounds is the subtlest mask bug, and one cell of a 200-element row is thinner than the
outline beside it: each is also marked by a red triangle over its cell, its program's label is
red, and the first is drawn again enlarged under the grid, with its indices and the tensor's end.

Only the drawing lives here: :mod:`grader.judge.pictures` runs the kernels in a worker and hands
their traces to :func:`draw_case`.
"""
from __future__ import annotations

import math
import tempfile
import textwrap
from dataclasses import dataclass
from pathlib import Path

import numpy as np

UNTOUCHED, MASKED, READ, WRITTEN, READ_WRITTEN, OOB = range(6)
COLORS = ["#f3f3f3", "#c9c9c9", "#4c78a8", "#54a24b", "#f58518", "#e45756"]
LABELS = ["untouched", "masked off", "read", "written", "read and written", "out of bounds"]
MAX_PROGRAMS = 12
WIDTH_INCHES = 10.0  # widest figure; wider pictures are drawn smaller at a higher dpi
DPI = 110
MAX_OVERHANG_ROWS = 6
MAX_OVERHANG_CELLS = 64


@dataclass(frozen=True)
class Panel:
    """One tensor as a grid of cells, with room around it for accesses past its ends.

    A vector is one row; stray lanes extend it left and right. Higher-rank tensors are
    drawn as (everything but the last dim) x (last dim), and stray lanes add rows above or
    below. Masked-off lanes are drawn only where they fall outside the tensor: inside it they
    alias other elements, which they did not touch.
    """

    shape: tuple[int, ...]

    @property
    def width(self) -> int:
        return self.shape[-1] if len(self.shape) >= 2 else 0

    @property
    def numel(self) -> int:
        return math.prod(self.shape) if self.shape else 1

    def grid(self, cells: dict[int, int]) -> tuple[np.ndarray, tuple[float, float, float, float]]:
        """The category image, and the tensor's outline (x, y, width, height) in image coordinates."""
        stray = [i for i in cells if not 0 <= i < self.numel]
        if not self.width:  # a vector: one row
            left = min(MAX_OVERHANG_CELLS, max([-i for i in stray if i < 0], default=0))
            right = min(MAX_OVERHANG_CELLS, max([i - self.numel + 1 for i in stray if i >= self.numel], default=0))
            image = np.full((1, left + self.numel + right), np.nan)
            image[0, left:left + self.numel] = UNTOUCHED
            for index, category in cells.items():
                column = index + left
                if 0 <= column < image.shape[1]:
                    image[0, column] = category
            return image, (left - 0.5, -0.5, self.numel, 1)
        rows = self.numel // self.width
        above = min(MAX_OVERHANG_ROWS, math.ceil(max([-i for i in stray if i < 0], default=0) / self.width))
        below = min(MAX_OVERHANG_ROWS, math.ceil(max([i - self.numel + 1 for i in stray if i >= self.numel],
                                                     default=0) / self.width))
        image = np.full((above + rows + below, self.width), np.nan)
        image[above:above + rows] = UNTOUCHED
        for index, category in cells.items():
            row = index // self.width + above
            if 0 <= row < image.shape[0]:
                image[row, index % self.width] = category
        return image, (-0.5, above - 0.5, self.width, rows)


def cells_by_program(trace: dict) -> dict[tuple, dict[str, dict[int, int]]]:
    """program -> tensor -> {flat index: category}."""
    out: dict[tuple, dict[str, dict[int, int]]] = {}
    for rec in trace["records"]:
        cells = out.setdefault(tuple(rec["program"]), {}).setdefault(rec["tensor"], {})
        for index in rec["indices"]:
            old = cells.get(index, UNTOUCHED)
            if rec["kind"] == "oob":
                new = OOB
            elif rec["kind"] == "masked":
                if 0 <= index < rec.get("numel", 0):
                    continue  # a masked lane aliasing another element did not touch it
                new = max(old, MASKED)
            elif rec["op"] == "load":
                new = READ_WRITTEN if old in (WRITTEN, READ_WRITTEN) else max(old, READ)
            else:
                new = READ_WRITTEN if old in (READ, READ_WRITTEN) else max(old, WRITTEN)
            cells[index] = OOB if OOB in (old, new) else new
    return out


@dataclass(frozen=True)
class Stray:
    """The lanes of one access that fell outside their tensor: who made them, and where."""

    label: str                      # the column: "yours", "reference"
    program: tuple[int, int, int]
    tensor: str
    op: str                         # "load", "store", ...
    indices: tuple[int, ...]        # flat indices, outside [0, numel)


def strays(label: str, trace: dict | None) -> list[Stray]:
    """Every out-of-bounds access of a trace, in the order the run made them."""
    return [Stray(label, tuple(rec["program"]), rec["tensor"], rec["op"], tuple(sorted(rec["indices"])))
            for rec in (trace or {}).get("records", ()) if rec["kind"] == "oob" and rec["indices"]]


MAX_ZOOM = 16  # cells the enlarged view shows around the first lane out of bounds


def _programs(grid: tuple[int, ...], must=()) -> list[tuple[int, int, int]]:
    """The programs drawn: all of them, else the first and last of the grid with ``must`` (the
    programs that went out of bounds) among them, in grid order."""
    full = tuple(grid) + (1,) * (3 - len(grid))
    every = [(x, y, z) for z in range(full[2]) for y in range(full[1]) for x in range(full[0])]
    if len(every) <= MAX_PROGRAMS:
        return every
    half = MAX_PROGRAMS // 2
    shown = set(every[:half] + every[-half:])
    for program in list(dict.fromkeys(tuple(p) for p in must))[:half]:
        if program not in shown:  # in place of the middle of the ends: the first program stays, so does the last
            drop = sorted(shown - set(must), key=lambda p: abs(every.index(p) - len(every) // 2))
            if drop:
                shown.discard(drop[0])
            shown.add(program)
    return sorted(shown, key=every.index)


def zoom_window(stray: Stray, numel: int) -> tuple[int, int]:
    """The flat indices [lo, hi) the enlarged view shows: the first stray lane and the tensor's end
    beside it, with a few elements inside for scale; only the lane's neighbours where the end is
    too far away to show at that size."""
    first, last, half = stray.indices[0], stray.indices[-1], MAX_ZOOM // 2
    if first >= numel:
        if first - numel >= half:
            return first - 3, first + 5
        lo = max(numel - half, 0)
        return lo, max(first + 2, min(last + 1, lo + MAX_ZOOM))
    return (first - 1, min(half, numel)) if -first <= half else (first - 3, first + 5)


def draw(path: Path, title: str, tensors: list[tuple[str, tuple[int, ...]]], grid: tuple[int, ...],
         traces: list[tuple[str, dict | None, str]]) -> Path:
    """Write the picture. ``traces`` are (label, trace or None, note) columns, e.g. yours and reference."""
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    from matplotlib.colors import ListedColormap
    from matplotlib.patches import Patch, Rectangle

    stray = [s for label, trace, _ in traces for s in strays(label, trace)]
    programs = _programs(grid, [s.program for s in stray])
    panels = [Panel(shape) for _, shape in tensors]
    columns = [(label, trace, note, name, panel) for label, trace, note in traces
               for (name, _), panel in zip(tensors, panels)]
    by_label = {label: cells_by_program(trace) if trace else {} for label, trace, _ in traces}
    widths = [max(1.0, min(4.0, (p.width or p.numel) / 12)) for *_, p in columns]
    zoomed = stray[0] if stray else None  # yours first: the traces come in that order
    natural = (sum(widths) * 1.15 + 1.0, 1.1 * len(programs) + 1.4 + (ZOOM_INCHES if zoomed else 0.0))
    # A notebook shows the picture about 1000 px wide: draw a wide one at most WIDTH_INCHES wide
    # at a higher dpi, so its labels keep their size on screen and its cells their pixels.
    shrink = min(1.0, WIDTH_INCHES / natural[0])
    fig = plt.figure(figsize=(natural[0] * shrink, natural[1] * max(shrink, 0.6)))
    layout = fig.add_gridspec(len(programs), len(columns), width_ratios=widths)
    cmap = ListedColormap(COLORS).with_extremes(bad="white")
    strayed = {s.program for s in stray}
    for r, program in enumerate(programs):
        for c, (label, trace, note, name, panel) in enumerate(columns):
            ax = fig.add_subplot(layout[r, c])
            cells = by_label[label].get(program, {}).get(name, {})
            image, (x0, y0, w, h) = panel.grid(cells)
            ax.imshow(np.ma.masked_invalid(image), cmap=cmap, vmin=0, vmax=len(COLORS) - 1,
                      interpolation="nearest", aspect="auto")
            ax.add_patch(Rectangle((x0, y0), w, h, fill=False, lw=1.0, ec="#333333"))
            _mark_strays(ax, image, OOB)
            ax.set_xticks([])
            ax.set_yticks([])
            if r == 0:
                head = f"{label}\n{name} {tuple(panel.shape)}"
                if trace is None and note:
                    head += f"\n({note})"
                ax.set_title(head, fontsize=9)
            if c == 0:
                out = program in strayed
                ax.set_ylabel(f"pid {program[:len(grid)]}" + ("\nout of bounds" if out else ""), fontsize=8,
                              rotation=0, ha="right", va="center", color=COLORS[OOB] if out else "black",
                              fontweight="bold" if out else "normal")
    shown = "" if len(programs) == math.prod(grid) else (
        f" (first and last {MAX_PROGRAMS // 2} of {math.prod(grid)} programs"
        + (", and those out of bounds)" if strayed - set(_programs(grid)) else ")"))
    if zoomed is not None and _unreached(zoomed.label, programs, by_label):
        shown += f"; {zoomed.label}: the run stopped at the access out of bounds, and blank programs had not run"
    fig.suptitle("\n".join(textwrap.wrap(title + shown, int(fig.get_figwidth() * 10))), fontsize=11)
    fig.legend(handles=[Patch(color=col, label=lab) for col, lab in zip(COLORS, LABELS)],
               loc="lower center", ncol=len(COLORS), fontsize=8, frameon=False)
    below = ZOOM_INCHES / fig.get_figheight() if zoomed else 0.0
    fig.tight_layout(rect=(0, 0.05 + below, 1, 0.93))
    if zoomed is not None:  # under the grid, as wide as it: placed after the layout, which it would crowd
        first, last = fig.axes[0].get_position(), fig.axes[len(columns) - 1].get_position()
        ax = fig.add_axes((first.x0, 0.05 + 0.2 * below, last.x1 - first.x0, 0.38 * below))
        _draw_zoom(ax, zoomed, Panel(dict(tensors)[zoomed.tensor]),
                   by_label[zoomed.label].get(zoomed.program, {}).get(zoomed.tensor, {}), len(grid), cmap)
    path = Path(path)
    fig.savefig(path, dpi=min(DPI / shrink, 2.5 * DPI))
    plt.close(fig)
    return path


ZOOM_INCHES = 1.6  # the enlarged row of the first lane out of bounds


def _unreached(label: str, programs, by_label: dict) -> bool:
    """Whether a drawn program of ``label`` touched nothing where another column's did: the run was
    stopped before it (the bounds check ends a run at its first access out of bounds)."""
    others = [cells for name, cells in by_label.items() if name != label]
    return any(not by_label[label].get(p) and any(cells.get(p) for cells in others) for p in programs)


def _mark_strays(ax, image: np.ndarray, category: int) -> None:
    """A red triangle over each run of out-of-bounds cells in a row, its size in points, not in
    cells: seen however thin a cell is drawn (one of 200 in a row is narrower than the outline)."""
    rows, cols = np.nonzero(image == category)
    starts = [(r, c) for r, c in zip(rows, cols) if c == 0 or image[r, c - 1] != category]
    if starts:
        ax.scatter([c for _, c in starts], [r - 0.5 for r, _ in starts], marker="v", s=60, c=COLORS[category],
                   edgecolors="black", linewidths=0.6, zorder=5, clip_on=False)


def _draw_zoom(ax, stray: Stray, panel: Panel, cells: dict[int, int], rank: int, cmap) -> None:
    """The first lane out of bounds, enlarged: the cells of its flat indices around the tensor's
    end, each with its index, the end as a thick line, and who made it in the title."""
    from matplotlib.patches import Rectangle
    lo, hi = zoom_window(stray, panel.numel)
    indices = list(range(lo, hi))
    image = np.array([[cells.get(i, UNTOUCHED if 0 <= i < panel.numel else np.nan) for i in indices]],
                     dtype=float)
    ax.imshow(np.ma.masked_invalid(image), cmap=cmap, vmin=0, vmax=len(COLORS) - 1, interpolation="nearest",
              aspect="auto")
    for x, index in enumerate(indices):
        outside = not 0 <= index < panel.numel
        ax.add_patch(Rectangle((x - 0.5, -0.5), 1, 1, fill=False, lw=0.5, ec="#999999"))
        if index in stray.indices:
            ax.add_patch(Rectangle((x - 0.45, -0.45), 0.9, 0.9, fill=False, lw=2.5, ec="black", zorder=4))
        ax.text(x, 0, _index_text(index, panel), ha="center", va="center", fontsize=7,
                color="white" if index in stray.indices else "#555555" if outside else "black")
    for end, side in ((0, "start"), (panel.numel, "end")):
        if lo < end < hi or (end == lo and side == "start") or (end == hi and side == "end"):
            ax.axvline(end - lo - 0.5, color="black", lw=3)
            ax.text(end - lo - 0.5, -0.62, f"{side} of `{stray.tensor}` ({panel.numel} elements)", ha="center",
                    va="bottom", fontsize=8, fontweight="bold")
    ax.set_xticks([])
    ax.set_yticks([])
    ax.set_title(zoom_title(stray, rank, lo, hi), fontsize=9, color=COLORS[OOB], fontweight="bold", pad=20)


def zoom_title(stray: Stray, rank: int, lo: int, hi: int) -> str:
    """Who made the first lane out of bounds, and where: the enlarged view's title."""
    count = len(stray.indices)
    what = f"index {stray.indices[0]}" if count == 1 else f"indices {stray.indices[0]} to {stray.indices[-1]}"
    side = "past its end" if stray.indices[0] >= 0 else "before its start"
    verb = {"load": "loads", "store": "stores"}.get(stray.op, f"{stray.op}s")
    return (f"{stray.label}: program {stray.program[:rank]} {verb} `{stray.tensor}` at {what}, {side} "
            f"({count} lane{'s' if count != 1 else ''} out of bounds); enlarged, flat indices {lo} to {hi - 1}")


def _index_text(index: int, panel: Panel) -> str:
    """A cell's flat index, and its row and column in a tensor of more than one dimension."""
    if not panel.width:
        return str(index)
    return f"{index}\n({index // panel.width}, {index % panel.width})"


@dataclass(frozen=True)
class Picture:
    """A written picture. In a notebook it displays itself."""

    path: Path
    case: str

    def _repr_png_(self) -> bytes | None:
        return self.path.read_bytes() if self.path.suffix == ".png" else None

    def _repr_svg_(self) -> str | None:
        return self.path.read_text() if self.path.suffix == ".svg" else None


def draw_case(path: Path, heading: str, case: str, dims: dict[str, int],
              tensors: list[tuple[str, tuple[int, ...]]], grid: tuple[int, ...],
              traces: list[tuple[str, dict | None, str]], verdict: str) -> Picture:
    """One case's picture: ``heading`` (the puzzle), the case's sizes and blocks ``dims``, and
    ``verdict`` (how the learner's kernel did) make its title; the rest goes to :func:`draw`."""
    sizes = ", ".join(f"{k}={v}" for k, v in dims.items())
    title = f"{heading}: case {case} ({sizes}); yours {verdict}"
    draw(Path(path), title, tensors, grid, traces)
    return Picture(Path(path), case)


def draw_traced(traced, path: Path | None = None) -> Picture:
    """The picture of a traced case (:class:`grader.judge.pictures.Traced`), written to ``path``
    (a fresh temporary file where None)."""
    if path is None:
        path = Path(tempfile.mkdtemp(prefix="triton-puzzles-")) / traced.file_name
    return draw_case(Path(path), traced.heading, traced.case, traced.dims, traced.tensors, traced.grid,
                     traced.traces, traced.verdict)
