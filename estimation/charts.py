"""The score-interval chart of the scores page: server-side inline SVG (no JavaScript chart
library). Every text that reaches the SVG goes through `escape`; numbers are formatted by us.
"""

from __future__ import annotations

from django.utils.html import escape
from django.utils.safestring import SafeString, mark_safe


def score_intervals_chart(rows: list[dict], low: float, high: float) -> SafeString:
    """Each generator's mean score with its 95% intervals: experts only (bootstrap, orange)
    and prediction-powered (blue), one row per generator."""
    row_h, left, right, top = 46, 180, 24, 26
    width = 640
    plot = width - left - right
    height = top + row_h * len(rows) + 44
    span = (high - low) or 1.0

    def x(value: float) -> float:
        return left + (min(high, max(low, value)) - low) / span * plot

    parts = [
        f'<svg class="chart intervals" role="img" viewBox="0 0 {width} {height}" width="100%" '
        f'xmlns="http://www.w3.org/2000/svg"><title>Mean score per generator with 95% '
        "intervals: experts only (bootstrap) and prediction-powered</title>",
    ]
    for n in range(6):
        value = low + span * n / 5
        tx = x(value)
        parts.append(
            f'<line x1="{tx:.1f}" y1="{top - 6}" x2="{tx:.1f}" y2="{height - 38}" '
            f'stroke="#e3e6ee"/><text x="{tx:.1f}" y="{height - 24}" text-anchor="middle" '
            f'font-size="11" fill="#5b6473">{value:g}</text>'
        )
    kinds = (("human", "#a86200", "experts only"), ("ppi", "#2d5bd1", "prediction-powered"))
    for r, row in enumerate(rows):
        cy = top + r * row_h + row_h / 2
        name = row["generator"] if len(row["generator"]) <= 24 else row["generator"][:23] + "…"
        parts.append(
            f'<text x="{left - 10}" y="{cy + 4:.1f}" text-anchor="end" font-size="12" '
            f'fill="#1d2330">{escape(name)}</text>'
        )
        for k, (key, colour, words) in enumerate(kinds):
            found = row.get(key)
            if not found:
                continue
            y = cy - 7 + k * 14
            parts.append(
                f'<line x1="{x(found["low"]):.1f}" y1="{y:.1f}" x2="{x(found["high"]):.1f}" '
                f'y2="{y:.1f}" stroke="{colour}" stroke-width="3"><title>{words}: '
                f"{found['mean']:.2f} [{found['low']:.2f}, {found['high']:.2f}], n = "
                f'{found["n"]}</title></line><circle cx="{x(found["mean"]):.1f}" cy="{y:.1f}" '
                f'r="4" fill="{colour}"/>'
            )
    for k, (_, colour, words) in enumerate(kinds):
        lx = left + k * 200
        parts.append(
            f'<line x1="{lx}" y1="{height - 8}" x2="{lx + 22}" y2="{height - 8}" '
            f'stroke="{colour}" stroke-width="3"/><text x="{lx + 28}" y="{height - 4}" '
            f'font-size="11" fill="#1d2330">{words}</text>'
        )
    parts.append("</svg>")
    return mark_safe("".join(parts))  # noqa: S308 (every text escaped above)
