"""Small inline SVG charts for the class page: no script, no font or file fetched, readable
when printed. Each bar has a ``<title>`` (its exact figure shows on hover) and the figure
written beside it, so nothing depends on reading a bar's length."""
from __future__ import annotations

from html import escape

FONT = "font-family:system-ui,sans-serif;font-size:12px"


def column_chart(values: list[int], labels: list[str], caption: str, colour: str = "#1565c0",
                 height: int = 160) -> str:
    """Vertical bars, one per label (a distribution: how many students have each total)."""
    width_each = max(14, min(40, 720 // max(1, len(values))))
    top = max(values, default=0) or 1
    chart_h, left, bottom = height, 28, 34
    width = left + width_each * len(values) + 8
    parts = [f"<svg class='tp-chart' role='img' aria-label='{escape(caption)}' width='{width}' "
             f"height='{chart_h + bottom + 14}' viewBox='0 0 {width} {chart_h + bottom + 14}' "
             f"xmlns='http://www.w3.org/2000/svg' style='{FONT}'>",
             f"<line x1='{left}' y1='{chart_h + 14}' x2='{width - 4}' y2='{chart_h + 14}' stroke='#9e9e9e'/>"]
    for i, (value, label) in enumerate(zip(values, labels)):
        bar = round(chart_h * value / top)
        x = left + i * width_each
        parts.append(f"<rect x='{x + 2}' y='{chart_h + 14 - bar}' width='{width_each - 4}' height='{bar}' "
                     f"fill='{colour}'><title>{escape(label)}: {value}</title></rect>")
        if value:
            parts.append(f"<text x='{x + width_each / 2}' y='{chart_h + 10 - bar}' text-anchor='middle'>{value}</text>")
        parts.append(f"<text x='{x + width_each / 2}' y='{chart_h + 30}' text-anchor='middle'>{escape(label)}</text>")
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
