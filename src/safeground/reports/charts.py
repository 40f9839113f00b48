"""Charts drawn on the server as SVG, for printed reports (a PDF runs no JavaScript).

Pages draw the same series with the vendored Chart.js (static/safeground/reports-1.js); both take
their colours from PALETTE, so a category looks the same on the screen and on paper. Every text
is escaped here: labels come from users (club names, categories).
"""

from collections.abc import Sequence
from html import escape

from django.utils.safestring import SafeString, mark_safe

# Okabe-Ito's colour-blind-safe eight, then Kelly's colours of maximum contrast picked one by one
# as far as possible from those already taken: every two at least 25 apart (CIE76 delta E), so no
# two categories share a green (tests/reports/test_charts.py holds it).
PALETTE = (
    "#0072B2",
    "#E69F00",
    "#009E73",
    "#D55E00",
    "#CC79A7",
    "#56B4E9",
    "#F0E442",
    "#000000",
    "#C2B280",
    "#BE0032",
    "#654522",
    "#CF1C90",
    "#F99379",
    "#80BA5A",
    "#7F3C8D",
    "#848482",
    "#008695",
    "#882D17",
    "#2B3D26",
    "#8DB600",
)
WIDTH, HEIGHT = 640, 270
LEFT, RIGHT, TOP, BOTTOM = 40, 10, 10, 75
LABEL_CHARS = 18  # an x label longer than this is cut (they are rotated under the axis)
NICE = (1, 1.5, 2, 2.5, 3, 4, 5, 6, 8)


def colour(n: int) -> str:
    return PALETTE[n % len(PALETTE)]


def _scale(most: float) -> float:
    """A round top for the axis: the smallest of 1, 1.5, 2, 2.5, 3, 4, 5, 6, 8 times a power of
    ten that holds the highest value."""
    power = 1.0
    while True:
        for nice in NICE:
            if nice * power >= most:
                return nice * power
        power *= 10


def _frame(title: str, top: float, body: list[str], legend: Sequence[tuple[str, str]]) -> str:
    plot_h = HEIGHT - TOP - BOTTOM
    parts = [
        f'<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 {WIDTH} {HEIGHT + 16 * len(legend)}"'
        f' class="chart" role="img" aria-label="{escape(title)}">',
        f"<title>{escape(title)}</title>",
        f'<line x1="{LEFT}" y1="{TOP + plot_h}" x2="{WIDTH - RIGHT}" y2="{TOP + plot_h}"'
        ' stroke="#333" stroke-width="1"/>',
    ]
    for frac in (0, 0.5, 1):
        y = TOP + plot_h - frac * plot_h
        value = top * frac
        text = f"{value:g}" if value != int(value) else f"{int(value)}"
        parts.append(
            f'<text x="{LEFT - 4}" y="{y + 3:.1f}" font-size="9" text-anchor="end">{text}</text>'
        )
        if frac:
            parts.append(
                f'<line x1="{LEFT}" y1="{y:.1f}" x2="{WIDTH - RIGHT}" y2="{y:.1f}"'
                ' stroke="#ddd" stroke-width="0.5"/>'
            )
    parts += body
    for n, (name, fill) in enumerate(legend):
        y = HEIGHT + 4 + 16 * n
        parts.append(f'<rect x="{LEFT}" y="{y - 9}" width="10" height="10" fill="{fill}"/>')
        parts.append(f'<text x="{LEFT + 14}" y="{y}" font-size="10">{escape(name)}</text>')
    parts.append("</svg>")
    return "".join(parts)


def _cut(label: str) -> str:
    return label if len(label) <= LABEL_CHARS else label[: LABEL_CHARS - 1] + "…"


def _x_labels(labels: Sequence[str], slot: float, every: int = 1) -> list[str]:
    y = HEIGHT - BOTTOM + 10
    out = []
    for n, label in enumerate(labels):
        if n % every:
            continue
        x = LEFT + slot * (n + 0.5)
        out.append(
            f'<text x="{x:.1f}" y="{y}" font-size="8" text-anchor="end"'
            f' transform="rotate(-45 {x:.1f} {y})">{escape(_cut(label))}</text>'
        )
    return out


def stacked_bars(
    title: str, labels: Sequence[str], series: Sequence[tuple[str, Sequence[int], str]]
) -> SafeString:
    """One bar per label, each series stacked on the one before (incidents by category)."""
    totals = [sum(values[n] for _, values, _ in series) for n in range(len(labels))]
    top = _scale(max(totals, default=0) or 1)
    plot_h = HEIGHT - TOP - BOTTOM
    slot = (WIDTH - LEFT - RIGHT) / max(len(labels), 1)
    body = []
    for n in range(len(labels)):
        base = 0
        for name, values, fill in series:
            if not values[n]:
                continue
            h = values[n] / top * plot_h
            y = TOP + plot_h - (base + values[n]) / top * plot_h
            body.append(
                f'<rect x="{LEFT + slot * n + slot * 0.15:.1f}" y="{y:.1f}"'
                f' width="{slot * 0.7:.1f}" height="{h:.1f}" fill="{fill}">'
                f"<title>{escape(labels[n])}: {escape(name)} {values[n]}</title></rect>"
            )
            base += values[n]
    body += _x_labels(labels, slot)
    return mark_safe(_frame(title, top, body, [(name, fill) for name, _, fill in series]))


def bars(
    title: str,
    labels: Sequence[str],
    values: Sequence[int],
    *,
    marks: Sequence[tuple[int, str]] = (),
    fill: str = PALETTE[0],
    every: int = 1,
) -> SafeString:
    """One series of bars; `marks` draws a labelled vertical line before the bar at an index
    (kick-off, half time, full time on the admissions timeline)."""
    top = _scale(max(values, default=0) or 1)
    plot_h = HEIGHT - TOP - BOTTOM
    slot = (WIDTH - LEFT - RIGHT) / max(len(labels), 1)
    body = []
    for n, value in enumerate(values):
        if value:
            h = value / top * plot_h
            body.append(
                f'<rect x="{LEFT + slot * n + slot * 0.1:.1f}" y="{TOP + plot_h - h:.1f}"'
                f' width="{slot * 0.8:.1f}" height="{h:.1f}" fill="{fill}"/>'
            )
    for n, (index, label) in enumerate(marks):
        x = LEFT + slot * index
        # Labels alternate between two lines, so close marks (half time, second half) do not
        # overlap; one near the right edge ends at its line instead of starting there.
        y = TOP + 9 + 11 * (n % 2)
        anchor = ' text-anchor="end"' if x > WIDTH - RIGHT - 60 else ""
        dx = -2 if anchor else 2
        body.append(
            f'<line x1="{x:.1f}" y1="{TOP}" x2="{x:.1f}" y2="{TOP + plot_h}" stroke="#D55E00"'
            ' stroke-dasharray="4 2"/>'
            f'<text x="{x + dx:.1f}" y="{y}" font-size="9" fill="#D55E00"{anchor}>'
            f"{escape(label)}</text>"
        )
    body += _x_labels(labels, slot, every)
    return mark_safe(_frame(title, top, body, []))


def lines(
    title: str, labels: Sequence[str], series: Sequence[tuple[str, Sequence[int], str]]
) -> SafeString:
    """Lines over the labels (bans issued and in force on each match day)."""
    top = _scale(max((max(values, default=0) for _, values, _ in series), default=0) or 1)
    plot_h = HEIGHT - TOP - BOTTOM
    slot = (WIDTH - LEFT - RIGHT) / max(len(labels), 1)
    body = []
    for _name, values, stroke in series:
        points = " ".join(
            f"{LEFT + slot * (n + 0.5):.1f},{TOP + plot_h - value / top * plot_h:.1f}"
            for n, value in enumerate(values)
        )
        body.append(f'<polyline points="{points}" fill="none" stroke="{stroke}" stroke-width="2"/>')
    body += _x_labels(labels, slot)
    return mark_safe(_frame(title, top, body, [(name, stroke) for name, _, stroke in series]))
