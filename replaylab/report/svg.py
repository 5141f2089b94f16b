"""Inline SVG bar charts for the HTML report.

Why hand-written SVG instead of a charting library: the report must be one self-contained file
that opens offline (no CDN, no script needed to draw), and two horizontal bar charts are a few
dozen lines. Every label goes through `markupsafe.escape`; the caller passes scrubbed text.
"""

from __future__ import annotations

from dataclasses import dataclass

from markupsafe import Markup, escape

#: geometry (px); the viewBox scales to the container width
WIDTH = 760
LABEL_WIDTH = 340
VALUE_WIDTH = 110
ROW_HEIGHT = 18
BAR_HEIGHT = 12
TOP = 26
LABEL_CHARS = 52


@dataclass(frozen=True)
class Bar:
    label: str
    value: float
    css_class: str = "bar"
    value_text: str | None = None  # shown right of the bar; defaults to the value
    href: str | None = None  # in-page link (e.g. "#item-3-..."), never external


def bar_chart(svg_id: str, title: str, bars: list[Bar], *, note: str = "") -> Markup:
    """A horizontal bar chart; bars keep the caller's order. Negative values draw no bar."""
    height = TOP + max(len(bars), 1) * ROW_HEIGHT + 8
    peak = max((b.value for b in bars), default=0) or 1
    bar_room = WIDTH - LABEL_WIDTH - VALUE_WIDTH
    parts = [
        f'<svg id="{escape(svg_id)}" class="chart" data-testid="{escape(svg_id)}" '
        f'xmlns="http://www.w3.org/2000/svg" viewBox="0 0 {WIDTH} {height}" '
        f'width="100%" role="img" aria-label="{escape(title)}">',
        f"<title>{escape(title)}</title>",
        f'<text class="chart-title" x="0" y="14">{escape(title)}'
        + (f' <tspan class="chart-note">{escape(note)}</tspan>' if note else "")
        + "</text>",
    ]
    if not bars:
        parts.append(f'<text class="chart-empty" x="0" y="{TOP + 12}">nothing to show</text>')
    for index, bar in enumerate(bars):
        y = TOP + index * ROW_HEIGHT
        label = shortened(bar.label)
        width = max(0.0, bar.value) / peak * bar_room
        value_text = bar.value_text if bar.value_text is not None else _number(bar.value)
        row = (
            f'<g class="chart-row" data-label="{escape(bar.label)}" data-value="{escape(_number(bar.value))}">'
            f"<title>{escape(bar.label)}: {escape(value_text)}</title>"
            f'<text class="chart-label" x="{LABEL_WIDTH - 6}" y="{y + BAR_HEIGHT - 2}" '
            f'text-anchor="end">{escape(label)}</text>'
            f'<rect class="{escape(bar.css_class)}" x="{LABEL_WIDTH}" y="{y}" '
            f'width="{width:.1f}" height="{BAR_HEIGHT}"></rect>'
            f'<text class="chart-value" x="{LABEL_WIDTH + width + 4:.1f}" y="{y + BAR_HEIGHT - 2}">'
            f"{escape(value_text)}</text></g>"
        )
        if bar.href and bar.href.startswith("#"):
            row = f'<a href="{escape(bar.href)}">{row}</a>'
        parts.append(row)
    parts.append("</svg>")
    return Markup("".join(parts))


def shortened(label: str, limit: int = LABEL_CHARS) -> str:
    """A label cut in the middle: an item id's start names its suite and its end the scenario,
    and a cut from either side would hide one of them (the full label is the bar's tooltip)."""
    if len(label) <= limit:
        return label
    head = (limit - 1) // 2
    return label[:head] + "…" + label[len(label) - (limit - 1 - head) :]


def _number(value: float) -> str:
    return f"{int(value):,}" if float(value).is_integer() else f"{value:,.2f}"
