"""Small charts for the class page: no script, no font or file fetched, readable when printed.
Each bar is inline SVG with a ``<title>`` (its exact figure shows on hover) and its figure
written beside it, so nothing depends on reading a bar's length. The bar charts are tables:
their labels and figures are HTML, laid out by the browser, so none is cut at an edge."""
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
                     f"fill='{colour}'><title>{escape(x_title)} {escape(label)}: {value} {escape(y_title)}"
                     "</title></rect>")
        if value:
            parts.append(f"<text x='{x + width_each / 2}' y='{base - 4 - bar}' text-anchor='middle'>{value}</text>")
        if i % step == 0:
            parts.append(f"<text class='tp-tick' x='{x + width_each / 2}' y='{base + 16}' "
                         f"text-anchor='middle'>{escape(label)}</text>")
    parts.append(_axis_titles(left + (width - left) / 2, base + 40, x_title, base / 2, y_title))
    parts.append("</svg>")
    return "".join(parts)


# A bar's length in px (a student's total; a puzzle's outcomes, beside its words), and the room
# either side of it that the axis' first and last figures take.
RANKED_W, STACKED_W, PAD = 360, 260, 10
# Labels and figures are HTML beside the bars, never SVG text: the browser lays them out, so a
# long or wide name wraps instead of running past the chart's edge (issue 44: "uzzle22").
STYLE = (".tp-bars td{padding:1px .5em;vertical-align:top;white-space:nowrap;font-size:90%;line-height:1.3}"
         ".tp-bars td.l{white-space:normal;overflow-wrap:anywhere;max-width:30em}.tp-bars.ranked td.l{text-align:right}"
         ".tp-bars.stacked{width:100%}.tp-bars.stacked td.l{white-space:nowrap;max-width:none}"
         ".tp-bars td.w{white-space:normal;width:100%;font-size:85%}"
         ".tp-bars td.w ul{margin:0;padding-left:1.1em}.tp-bars th{font-size:90%;font-weight:600}"
         ".tp-bars svg{display:block;margin-top:2px}")
LABEL_CHARS = 64  # longer labels are cut, whole in their tooltip (a puzzle's title is 56 at most)


def _label(text: str) -> str:
    shown = text if len(text) <= LABEL_CHARS else text[:LABEL_CHARS - 1] + "…"
    return f"<td class='l' title='{escape(text, quote=True)}'>{escape(shown)}</td>"


def _bar(pieces: list[tuple[int, str, str]], scale: float, width: int, track: bool = False) -> str:
    """One bar: a rectangle per part ``(count, colour, its title)``, each titled with its figure."""
    parts = [f"<svg class='tp-bar' width='{width + 2 * PAD}' height='13' xmlns='http://www.w3.org/2000/svg'>"]
    if track:  # the whole scale, faint: a short bar reads as "of 42", not as a short axis
        parts.append(f"<rect x='{PAD}' y='0' width='{width}' height='13' fill='#eeeeee'/>")
    x = float(PAD)
    for count, colour, title in pieces:
        if count:
            parts.append(f"<rect x='{x:.1f}' y='0' width='{scale * count:.1f}' height='13' fill='{colour}'>"
                         f"<title>{escape(title)}</title></rect>")
            x += scale * count
    return "".join(parts) + "</svg>"


def _axis(top: int, scale: float, width: int) -> str:
    """The bars' x axis, 0 to ``top``, with a tick every 1, 2, 5, 10... so that figures never touch."""
    step = next(s for s in (1, 2, 5, 10, 20, 50, 100, 1000) if s * scale >= 24)
    parts = [f"<svg class='tp-axis' width='{width + 2 * PAD}' height='20' xmlns='http://www.w3.org/2000/svg' "
             f"style='{FONT}'><line x1='{PAD}' y1='1' x2='{PAD + width}' y2='1' stroke='#9e9e9e'/>"]
    for tick in range(0, top + 1, step):
        x = PAD + tick * scale
        parts.append(f"<line x1='{x:.1f}' y1='1' x2='{x:.1f}' y2='5' stroke='#9e9e9e'/>"
                     f"<text class='tp-tick' x='{x:.1f}' y='17' text-anchor='middle'>{tick}</text>")
    return "".join(parts) + "</svg>"


def ranked_bars(rows: list[tuple[str, int]], top: int, caption: str, x_title: str, y_title: str,
                colour: str = "#1565c0") -> str:
    """A row per ``(label, value)``, in the order given (sorted by the caller): the label, a bar
    on a scale from 0 to ``top`` and the figure; an x axis with ticks under the bars."""
    scale = RANKED_W / max(1, top)
    bars = [_bar([(value, colour, f"{label}: {value} {x_title}")], scale, RANKED_W, track=True)
            for label, value in rows]
    body = "".join(f"<tr>{_label(label)}<td>{bar}</td><td>{value}</td></tr>" for (label, value), bar in zip(rows, bars))
    return (f"<table class='tp-bars ranked' aria-label='{escape(caption, quote=True)}'><thead><tr>"
            f"<th class='l'>{escape(y_title)}</th><th>{escape(x_title)}, of {top}</th><th></th></tr></thead>"
            f"<tbody>{body}<tr><td></td><td>{_axis(top, scale, RANKED_W)}</td><td></td></tr></tbody></table>")


def stacked_rows(rows: list[tuple[str, list[tuple[int, str, str]], list[str]]], total: int, caption: str,
                 heads: list[str], wide_last: bool = False) -> str:
    """A row per ``(label, parts, cells)``: the label, one bar split into ``(count, colour, what)``
    out of ``total``, then the row's cells (HTML, each its own column, headed by ``heads``);
    ``wide_last``: the last column holds words that wrap (what went wrong)."""
    scale = STACKED_W / max(1, total)
    body = []
    for label, pieces, cells in rows:
        titled = [(count, colour, f"{label}: {count} of {total} {what}") for count, colour, what in pieces]
        body.append(f"<tr>{_label(label)}<td>{_bar(titled, scale, STACKED_W)}</td>"
                    + "".join(f"<td{' class=w' if wide_last and i == len(cells) - 1 else ''}>{cell}</td>"
                              for i, cell in enumerate(cells)) + "</tr>")
    head = "".join(f"<th>{escape(h)}</th>" for h in heads)
    return (f"<table class='tp-bars stacked' aria-label='{escape(caption, quote=True)}'><thead><tr>"
            f"<th class='l'>puzzle</th><th></th>{head}</tr></thead><tbody>{''.join(body)}</tbody></table>")


def legend(items: list[tuple[str, str]]) -> str:
    return "<p class='tp-legend'>" + " ".join(
        f"<span><svg width='12' height='12'><rect width='12' height='12' fill='{colour}'/></svg> {escape(what)}</span>"
        for colour, what in items) + "</p>"
