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


# --- The design-space report (graders/services/grid_report.py) ------------------------------

ENSEMBLE_COLOURS = ("#2d5bd1", "#1f7a4d", "#a86200", "#8a3ffc", "#b3261e", "#00796b")


def grid_tables(report: dict) -> dict:
    """The grid report laid out for its page: one ranking table per metric (best first, each
    other cell's paired difference from the best), the probes, the alternative annotator test
    and the ensemble curves of the cells with k > 1 runs."""
    cells = {c["id"]: c for c in report["cells"]}
    rankings = []
    for metric in report["metrics"]:
        ranking = report["rankings"][metric["key"]]
        versus = {c["cell"]: c for c in ranking["comparisons"]}
        rows = []
        for place, cell_id in enumerate(ranking["order"], start=1):
            cell = cells[cell_id]
            rows.append(
                {
                    "place": place,
                    "cell": cell,
                    "value": cell["metrics"][metric["key"]],
                    "interval": cell["intervals"][metric["key"]],
                    "versus": versus.get(cell_id),
                }
            )
        rankings.append({**metric, "rows": rows})
    scored = [c for c in report["cells"] if "metrics" in c]
    curves = [c for c in scored if c.get("ensemble")]
    return {
        "rankings": rankings,
        "scored_cells": scored,
        "skipped_cells": [c for c in report["cells"] if "skipped" in c],
        "ensemble_cells": curves,
        "ensemble_chart": ensemble_chart(curves) if curves else "",
    }


def ensemble_chart(cells: list[dict], key: str = "mae") -> SafeString:
    """MAE against the number of runs aggregated, one line per cell (at most six drawn)."""
    width, height, left, bottom, top, right = 560, 240, 50, 36, 16, 200
    plot_w, plot_h = width - left - right, height - top - bottom
    drawn = cells[: len(ENSEMBLE_COLOURS)]
    k = max(len(c["ensemble"]) for c in drawn)
    values = [row[key] for c in drawn for row in c["ensemble"] if row[key] is not None]
    top_value = max(values, default=1) or 1

    def x(m: int) -> float:
        return left + (0 if k == 1 else (m - 1) / (k - 1) * plot_w)

    def y(v: float) -> float:
        return top + plot_h - v / top_value * plot_h

    parts = [
        f'<svg class="chart ensemble" role="img" viewBox="0 0 {width} {height}" '
        f'width="{width}" height="{height}" xmlns="http://www.w3.org/2000/svg">',
        "<title>MAE of each cell against the number of runs it aggregates</title>",
        f'<line x1="{left}" y1="{top + plot_h}" x2="{left + plot_w}" y2="{top + plot_h}" '
        'stroke="#5b6473"/>',
        f'<line x1="{left}" y1="{top}" x2="{left}" y2="{top + plot_h}" stroke="#5b6473"/>',
        f'<text x="{left + plot_w / 2}" y="{height - 4}" text-anchor="middle" class="axis">'
        "runs aggregated</text>",
    ]
    for step in range(3):
        value = top_value * step / 2
        parts.append(
            f'<text x="{left - 6}" y="{y(value) + 4:.1f}" text-anchor="end">'
            f"{_label(round(value, 2))}</text>"
        )
    for m in range(1, k + 1):
        parts.append(
            f'<text x="{x(m):.1f}" y="{top + plot_h + 16}" text-anchor="middle">{m}</text>'
        )
    for index, (cell, colour) in enumerate(zip(drawn, ENSEMBLE_COLOURS, strict=False)):
        points = [(row["runs"], row[key]) for row in cell["ensemble"] if row[key] is not None]
        coords = " ".join(f"{x(m):.1f},{y(v):.1f}" for m, v in points)
        parts.append(
            f'<polyline points="{coords}" fill="none" stroke="{colour}" stroke-width="2"/>'
        )
        ly = top + 12 + index * 18
        parts.append(
            f'<line x1="{left + plot_w + 12}" y1="{ly - 4}" x2="{left + plot_w + 30}" '
            f'y2="{ly - 4}" stroke="{colour}" stroke-width="2"/>'
            f'<text x="{left + plot_w + 36}" y="{ly}">{escape(cell["label"])}</text>'
        )
    parts.append("</svg>")
    return mark_safe("".join(parts))  # noqa: S308 (every text escaped above)
