"""Small inline SVG charts for the class page: no script, no font or file fetched, readable
when printed. Each bar has a ``<title>`` (its exact figure shows on hover) and the figure
written beside it, so nothing depends on reading a bar's length."""
from __future__ import annotations

from html import escape

FONT = "font-family:system-ui,sans-serif;font-size:12px"


def _axis_titles(x: float, y: float, x_title: str, y_mid: float, y_title: str, y_x: float = 12) -> str:
    """An x axis title centred at (x, y), and a y axis title turned upright at (y_x, y_mid)."""
    return (f"<text x='{x:.0f}' y='{y:.0f}' text-anchor='middle' font-weight='bold'>{escape(x_title)}</text>"
            f"<text transform='translate({y_x:.0f} {y_mid:.0f}) rotate(-90)' text-anchor='middle' "
            f"font-weight='bold'>{escape(y_title)}</text>")


def column_chart(values: list[int], labels: list[str], caption: str, x_title: str, y_title: str,
                 colour: str = "#1565c0", height: int = 160) -> str:
    """Vertical bars, one per label (a distribution: how many students have each total), with
    both axes titled; where the labels would run together, every other one (then every fifth...)
    is written, and each bar's title still names its own."""
    width_each = max(14, min(40, 720 // max(1, len(values))))
    top = max(values, default=0) or 1
    chart_h, left, bottom = height, 44, 50
    widest = max(map(len, labels), default=1)  # about 7 px a character, and a gap
    step = next(s for s in (1, 2, 5, 10, 20, 50, 100, 1000) if width_each * s >= 7 * widest + 8)
    width = left + width_each * len(values) + 8
    base = chart_h + 14
    parts = [f"<svg class='tp-chart' role='img' aria-label='{escape(caption)}' width='{width}' "
             f"height='{base + bottom}' viewBox='0 0 {width} {base + bottom}' "
             f"xmlns='http://www.w3.org/2000/svg' style='{FONT}'>",
             f"<line x1='{left}' y1='{base}' x2='{width - 4}' y2='{base}' stroke='#9e9e9e'/>",
             f"<line x1='{left}' y1='14' x2='{left}' y2='{base}' stroke='#9e9e9e'/>",
             f"<text x='{left - 4}' y='{base + 4}' text-anchor='end'>0</text>",
             f"<text x='{left - 4}' y='18' text-anchor='end'>{top}</text>"]
    for i, (value, label) in enumerate(zip(values, labels)):
        bar = round(chart_h * value / top)
        x = left + i * width_each
        parts.append(f"<rect x='{x + 2}' y='{base - bar}' width='{width_each - 4}' height='{bar}' "
                     f"fill='{colour}'><title>{escape(x_title)} {escape(label)}: {value} {escape(y_title)}</title></rect>")
        if value:
            parts.append(f"<text x='{x + width_each / 2}' y='{base - 4 - bar}' text-anchor='middle'>{value}</text>")
        if i % step == 0:
            parts.append(f"<text class='tp-tick' x='{x + width_each / 2}' y='{base + 16}' "
                         f"text-anchor='middle'>{escape(label)}</text>")
    parts.append(_axis_titles(left + (width - left) / 2, base + 40, x_title, base / 2, y_title))
    parts.append("</svg>")
    return "".join(parts)


def ranked_bars(rows: list[tuple[str, int]], top: int, caption: str, x_title: str, y_title: str,
                colour: str = "#1565c0") -> str:
    """One horizontal bar per row, in the order given (sorted by the caller), its figure written
    at its end, on an x axis from 0 to ``top`` with ticks and a title; the rows' labels on the left."""
    label_w, bar_w, row_h = 220, 420, 18
    height = 8 + row_h * len(rows)
    total_h = height + 44
    parts = [f"<svg class='tp-chart' role='img' aria-label='{escape(caption)}' width='{label_w + bar_w + 60}' "
             f"height='{total_h}' viewBox='0 0 {label_w + bar_w + 60} {total_h}' "
             f"xmlns='http://www.w3.org/2000/svg' style='{FONT}'>"]
    scale = bar_w / max(1, top)
    for i, (label, value) in enumerate(rows):
        y = 4 + i * row_h
        shown = label if len(label) <= 30 else label[:29] + "…"
        parts.append(f"<text x='{label_w - 6}' y='{y + 12}' text-anchor='end'>{escape(shown)}</text>")
        w = scale * value
        parts.append(f"<rect x='{label_w}' y='{y + 2}' width='{w:.1f}' height='{row_h - 5}' fill='{colour}'>"
                     f"<title>{escape(label)}: {value} {escape(x_title)}</title></rect>")
        parts.append(f"<text x='{label_w + w + 4:.1f}' y='{y + 12}'>{value}</text>")
    parts.append(f"<line x1='{label_w}' y1='{height}' x2='{label_w + bar_w}' y2='{height}' stroke='#9e9e9e'/>"
                 f"<line x1='{label_w}' y1='2' x2='{label_w}' y2='{height}' stroke='#9e9e9e'/>")
    step = next(s for s in (1, 2, 5, 10, 20, 50, 100) if s * scale >= 24)
    for tick in range(0, top + 1, step):
        x = label_w + tick * scale
        parts.append(f"<line x1='{x:.1f}' y1='{height}' x2='{x:.1f}' y2='{height + 4}' stroke='#9e9e9e'/>"
                     f"<text class='tp-tick' x='{x:.1f}' y='{height + 16}' text-anchor='middle'>{tick}</text>")
    widest = max((min(len(label), 30) for label, _ in rows), default=0)
    parts.append(_axis_titles(label_w + bar_w / 2, height + 36, x_title, height / 2, y_title,
                              max(12, label_w - 16 - 7 * widest)))
    parts.append("</svg>")
    return "".join(parts)


def stacked_rows(rows: list[tuple[str, list[tuple[int, str, str]]]], total: int, caption: str,
                 note: list[str] | None = None) -> str:
    """One horizontal bar per row, split into parts ``(count, colour, what)`` out of ``total``;
    ``note``: the text written after each bar (its pass rate)."""
    label_w, bar_w, row_h = 300, 420, 20
    height = row_h * len(rows) + 8
    parts = [f"<svg class='tp-chart' role='img' aria-label='{escape(caption)}' width='{label_w + bar_w + 160}' "
             f"height='{height}' viewBox='0 0 {label_w + bar_w + 160} {height}' xmlns='http://www.w3.org/2000/svg' "
             f"style='{FONT}'>"]
    for i, (label, pieces) in enumerate(rows):
        y = 4 + i * row_h
        shown = label if len(label) <= 44 else label[:43] + "…"  # the whole label is the bar's title
        parts.append(f"<text x='{label_w - 6}' y='{y + 13}' text-anchor='end'>{escape(shown)}</text>")
        x = float(label_w)
        for count, colour, what in pieces:
            if not count:
                continue
            w = bar_w * count / max(1, total)
            parts.append(f"<rect x='{x:.1f}' y='{y + 2}' width='{w:.1f}' height='{row_h - 5}' fill='{colour}'>"
                         f"<title>{escape(label)}: {count} of {total} {escape(what)}</title></rect>")
            x += w
        if note:
            parts.append(f"<text x='{label_w + bar_w + 8}' y='{y + 13}'>{escape(note[i])}</text>")
    parts.append("</svg>")
    return "".join(parts)


def legend(items: list[tuple[str, str]]) -> str:
    return "<p class='tp-legend'>" + " ".join(
        f"<span><svg width='12' height='12'><rect width='12' height='12' fill='{colour}'/></svg> {escape(what)}</span>"
        for colour, what in items) + "</p>"
