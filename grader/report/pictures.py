"""Memory-access pictures: per program, which elements of each tensor were read or written.

Drawn with matplotlib into a static PNG or SVG, offline and headless, from the access trace
the interpreter run records (every load and store our bounds check sees). Masked-off lanes
are grey, out-of-bounds lanes red, drawn past the tensor's outline where they fell.

Only the drawing lives here: :mod:`grader.judge.pictures` runs the kernels in a worker and hands
their traces to :func:`draw_case`.
"""
from __future__ import annotations

import math
import textwrap
import tempfile
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


def _programs(grid: tuple[int, ...]) -> list[tuple[int, int, int]]:
    full = tuple(grid) + (1,) * (3 - len(grid))
    every = [(x, y, z) for z in range(full[2]) for y in range(full[1]) for x in range(full[0])]
    if len(every) <= MAX_PROGRAMS:
        return every
    half = MAX_PROGRAMS // 2
    return every[:half] + every[-half:]


def draw(path: Path, title: str, tensors: list[tuple[str, tuple[int, ...]]], grid: tuple[int, ...],
         traces: list[tuple[str, dict | None, str]]) -> Path:
    """Write the picture. ``traces`` are (label, trace or None, note) columns, e.g. yours and reference."""
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    from matplotlib.colors import ListedColormap
    from matplotlib.patches import Patch, Rectangle

    programs = _programs(grid)
    panels = [Panel(shape) for _, shape in tensors]
    columns = [(label, trace, note, name, panel) for label, trace, note in traces
               for (name, _), panel in zip(tensors, panels)]
    by_label = {label: cells_by_program(trace) if trace else {} for label, trace, _ in traces}
    widths = [max(1.0, min(4.0, (p.width or p.numel) / 12)) for *_, p in columns]
    natural = (sum(widths) * 1.15 + 1.0, 1.1 * len(programs) + 1.4)
    # A notebook shows the picture about 1000 px wide: draw a wide one at most WIDTH_INCHES wide
    # at a higher dpi, so its labels keep their size on screen and its cells their pixels.
    shrink = min(1.0, WIDTH_INCHES / natural[0])
    fig, axes = plt.subplots(len(programs), len(columns), squeeze=False,
                             figsize=(natural[0] * shrink, natural[1] * max(shrink, 0.6)),
                             gridspec_kw={"width_ratios": widths})
    cmap = ListedColormap(COLORS).with_extremes(bad="white")
    for r, program in enumerate(programs):
        for c, (label, trace, note, name, panel) in enumerate(columns):
            ax = axes[r][c]
            image, (x0, y0, w, h) = panel.grid(by_label[label].get(program, {}).get(name, {}))
            ax.imshow(np.ma.masked_invalid(image), cmap=cmap, vmin=0, vmax=len(COLORS) - 1,
                      interpolation="nearest", aspect="auto")
            ax.add_patch(Rectangle((x0, y0), w, h, fill=False, lw=1.0, ec="#333333"))
            ax.set_xticks([])
            ax.set_yticks([])
            if r == 0:
                head = f"{label}\n{name} {tuple(panel.shape)}"
                if trace is None and note:
                    head += f"\n({note})"
                ax.set_title(head, fontsize=9)
            if c == 0:
                ax.set_ylabel(f"pid {program[:len(grid)]}", fontsize=8, rotation=0, ha="right", va="center")
    shown = "" if len(programs) == math.prod(grid) else f" (first and last {MAX_PROGRAMS // 2} of {math.prod(grid)} programs)"
    fig.suptitle("\n".join(textwrap.wrap(title + shown, int(fig.get_figwidth() * 10))), fontsize=11)
    fig.legend(handles=[Patch(color=col, label=lab) for col, lab in zip(COLORS, LABELS)],
               loc="lower center", ncol=len(COLORS), fontsize=8, frameon=False)
    fig.tight_layout(rect=(0, 0.05, 1, 0.93))
    path = Path(path)
    fig.savefig(path, dpi=min(DPI / shrink, 2.5 * DPI))
    plt.close(fig)
    return path


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
