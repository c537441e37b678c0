"""Server-side inline SVG charts for the evaluation report (no JavaScript chart library).

Every text that reaches the SVG goes through `escape`; numbers are formatted by us.
"""

from __future__ import annotations

from django.utils.html import escape
from django.utils.safestring import SafeString, mark_safe

from graders.metrics import BASELINES

SERIES = (("grader", "#2d5bd1"), ("oracle", "#1f7a4d"), ("mean", "#a86200"))
SERIES_LABELS = {
    "first_n": {"grader": "Grader's pick", "oracle": "Oracle, first n", "mean": "Mean, first n"},
    "subsets": {"grader": "Grader's pick", "oracle": "Oracle, subsets", "mean": "Subset mean"},
}


def _label(value: float) -> str:
    return f"{value:g}"


def confusion_heatmap(matrix: list[list[int]], categories: list[float]) -> SafeString:
    """Rows: expert category; columns: predicted. Cell shade by the share of its row."""
    k = len(categories)
    cell, left, top = 44, 70, 40
    width, height = left + k * cell + 10, top + k * cell + 50
    parts = [
        f'<svg class="chart heatmap" role="img" viewBox="0 0 {width} {height}" '
        f'width="{width}" height="{height}" xmlns="http://www.w3.org/2000/svg">',
        "<title>Confusion matrix: expert label (rows) against the grader's prediction "
        "(columns), each cell shaded by its share of its row</title>",
        f'<text x="{left + k * cell / 2}" y="14" text-anchor="middle" class="axis">'
        "predicted</text>",
        f'<text x="14" y="{top + k * cell / 2}" text-anchor="middle" class="axis" '
        f'transform="rotate(-90 14 {top + k * cell / 2})">expert</text>',
    ]
    for j, category in enumerate(categories):
        parts.append(
            f'<text x="{left + j * cell + cell / 2}" y="{top - 6}" text-anchor="middle">'
            f"{escape(_label(category))}</text>"
        )
    for i, row in enumerate(matrix):
        total = sum(row) or 1
        y = top + i * cell
        parts.append(
            f'<text x="{left - 8}" y="{y + cell / 2 + 4}" text-anchor="end">'
            f"{escape(_label(categories[i]))}</text>"
        )
        for j, count in enumerate(row):
            share = count / total
            light = 97 - int(share * 55)
            ink = "#fff" if share > 0.55 else "#1d2330"
            x = left + j * cell
            parts.append(
                f'<rect x="{x}" y="{y}" width="{cell - 2}" height="{cell - 2}" rx="3" '
                f'fill="hsl(222, 64%, {light}%)" data-count="{count}"/>'
            )
            if count:
                parts.append(
                    f'<text x="{x + cell / 2 - 1}" y="{y + cell / 2 + 4}" text-anchor="middle" '
                    f'fill="{ink}">{count}</text>'
                )
    parts.append("</svg>")
    return mark_safe("".join(parts))  # noqa: S308 (every text escaped above)


def best_of_n_chart(points: list[dict], top_value: float, baselines: str = "first_n") -> SafeString:
    """Lines for the grader's pick, the oracle and the mean baseline against n (baselines over
    the first n proofs, or over the grader's random subsets: `metrics.BASELINES`)."""
    labels = SERIES_LABELS[baselines]
    width, height, left, bottom, top, right = 560, 300, 50, 40, 20, 140
    plot_w, plot_h = width - left - right, height - top - bottom
    largest_n = max((p["n"] for p in points), default=1)

    def x(n: float) -> float:
        return left + (0 if largest_n == 1 else (n - 1) / (largest_n - 1) * plot_w)

    def y(v: float) -> float:
        return top + plot_h - (v / top_value * plot_h if top_value else 0)

    parts = [
        f'<svg class="chart bon" role="img" viewBox="0 0 {width} {height}" width="{width}" '
        f'height="{height}" xmlns="http://www.w3.org/2000/svg">',
        "<title>Best-of-n: mean expert score of the proof the grader picks, with the oracle "
        f"and the mean baseline {escape(BASELINES[baselines])}</title>",
        f'<line x1="{left}" y1="{top + plot_h}" x2="{left + plot_w}" y2="{top + plot_h}" '
        'stroke="#5b6473"/>',
        f'<line x1="{left}" y1="{top}" x2="{left}" y2="{top + plot_h}" stroke="#5b6473"/>',
    ]
    for step in range(5):
        value = top_value * step / 4
        parts.append(
            f'<text x="{left - 6}" y="{y(value) + 4:.1f}" text-anchor="end">{_label(round(value, 2))}'
            "</text>"
        )
    for p in points:
        if largest_n <= 16 or p["n"] % 4 == 0:
            parts.append(
                f'<text x="{x(p["n"]):.1f}" y="{top + plot_h + 16}" text-anchor="middle">'
                f"{p['n']}</text>"
            )
    parts.append(
        f'<text x="{left + plot_w / 2}" y="{height - 6}" text-anchor="middle" class="axis">n</text>'
    )
    for index, (key, colour) in reversed(list(enumerate(SERIES))):
        label = labels[key]  # grader on top
        coords = " ".join(f"{x(p['n']):.1f},{y(p[key]):.1f}" for p in points)
        parts.append(
            f'<polyline points="{coords}" fill="none" stroke="{colour}" stroke-width="2" '
            f'class="series-{key}"/>'
        )
        for p in points:
            parts.append(
                f'<circle cx="{x(p["n"]):.1f}" cy="{y(p[key]):.1f}" r="2.5" fill="{colour}"/>'
            )
        ly = top + 14 + index * 18
        parts.append(
            f'<line x1="{left + plot_w + 14}" y1="{ly - 4}" x2="{left + plot_w + 34}" '
            f'y2="{ly - 4}" stroke="{colour}" stroke-width="2"/>'
            f'<text x="{left + plot_w + 40}" y="{ly}">{escape(label)}</text>'
        )
    parts.append("</svg>")
    return mark_safe("".join(parts))  # noqa: S308 (every text escaped above)
