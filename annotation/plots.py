"""Small inline SVGs of the judgements, drawn on the server (no chart library): scores per
generator (a dot per submitted score, stacked where scores repeat, the mean marked), a rater's
confusion matrix, and an expert's bias and mean absolute error over time (used by the agreement
page and the calibration report, apps above this one)."""

from __future__ import annotations

from collections import Counter
from decimal import Decimal

from django.utils.html import escape
from django.utils.safestring import SafeString, mark_safe

ROW = 34
LEFT = 190
WIDTH = 640
RIGHT = 24


def scores_svg(scores: dict[str, list[Decimal]], *, low: Decimal, high: Decimal) -> SafeString:
    if not scores:
        return mark_safe("")
    span = float(high - low) or 1.0
    plot = WIDTH - LEFT - RIGHT
    height = ROW * len(scores) + 40

    def x(value: float) -> float:
        return LEFT + (value - float(low)) / span * plot

    parts = [
        f'<svg class="score-plot" role="img" viewBox="0 0 {WIDTH} {height}" width="100%" '
        f'xmlns="http://www.w3.org/2000/svg"><title>Submitted scores per generator</title>'
    ]
    ticks = [low + (high - low) * Decimal(i) / 7 for i in range(8)] if high - low == 7 else None
    tick_values = ticks or sorted({low, (low + high) / 2, high})
    for value in tick_values:
        tx = x(float(value))
        parts.append(
            f'<line x1="{tx:.1f}" y1="10" x2="{tx:.1f}" y2="{height - 24}" stroke="#e3e6ee"/>'
            f'<text x="{tx:.1f}" y="{height - 8}" font-size="11" text-anchor="middle" '
            f'fill="#5b6473">{value.normalize():f}</text>'
        )
    for row, (generator, values) in enumerate(scores.items()):
        cy = 10 + ROW * row + ROW / 2
        label = escape(generator if len(generator) <= 26 else generator[:25] + "\u2026")
        mean = sum(float(v) for v in values) / len(values)
        parts.append(
            f'<text x="{LEFT - 10}" y="{cy + 4:.1f}" font-size="12" text-anchor="end" '
            f'fill="#1d2330">{label} <tspan fill="#5b6473">({len(values)})</tspan></text>'
        )
        stacked: Counter = Counter()
        for value in values:
            offset = stacked[value]
            stacked[value] += 1
            cx = x(float(value)) + (offset % 5) * 3.2 - 6.4
            dy = (offset // 5) * 3.2
            parts.append(
                f'<circle cx="{cx:.1f}" cy="{cy - 4 + dy:.1f}" r="3" fill="#2d5bd1" '
                'fill-opacity="0.55"/>'
            )
        mx = x(mean)
        parts.append(
            f'<line x1="{mx:.1f}" y1="{cy - 12:.1f}" x2="{mx:.1f}" y2="{cy + 10:.1f}" '
            f'stroke="#b3261e" stroke-width="2"><title>mean {mean:.2f}</title></line>'
        )
    parts.append("</svg>")
    return mark_safe("".join(parts))  # noqa: S308 (every text above is escaped)


def rater_confusion_svg(
    confusion: list[list[float]],
    classes: list[str],
    *,
    title: str,
    support: list[float] | None = None,
) -> SafeString:
    """One rater's estimated confusion matrix as a heat map: rows the true class, columns the
    class the rater gives, each cell P(gives | true) in percent, darker for more; the diagonal
    (right) outlined. `support[i]`: the expected number of items of true class i; a row under
    one item says nothing and is drawn empty ("no item of this class")."""
    k = len(classes)
    cell, left, top = 34, 46, 34
    width, height = left + k * cell + 8, top + k * cell + 8
    parts = [
        f'<svg class="chart heatmap rater-confusion" role="img" viewBox="0 0 {width} {height}" '
        f'width="{width}" height="{height}" xmlns="http://www.w3.org/2000/svg">'
        f"<title>{escape(title)}: true class (rows) against the class given (columns), "
        "percent of the row</title>",
        f'<text x="{left + k * cell / 2}" y="11" font-size="11" text-anchor="middle" '
        'fill="#5b6473">gives</text>',
        f'<text x="10" y="{top + k * cell / 2}" font-size="11" text-anchor="middle" '
        f'fill="#5b6473" transform="rotate(-90 10 {top + k * cell / 2})">true</text>',
    ]
    for j, name in enumerate(classes):
        parts.append(
            f'<text x="{left + j * cell + cell / 2}" y="{top - 6}" font-size="11" '
            f'text-anchor="middle" fill="#1d2330">{escape(name)}</text>'
            f'<text x="{left - 6}" y="{top + j * cell + cell / 2 + 4}" font-size="11" '
            f'text-anchor="end" fill="#1d2330">{escape(name)}</text>'
        )
    for i, row in enumerate(confusion):
        if support is not None and support[i] < 1:
            y = top + i * cell
            parts.append(
                f'<rect x="{left}" y="{y}" width="{k * cell - 2}" height="{cell - 2}" rx="3" '
                f'fill="#f1f2f5"><title>no item of this class</title></rect>'
                f'<text x="{left + k * cell / 2}" y="{y + cell / 2 + 4}" font-size="10" '
                'text-anchor="middle" fill="#5b6473">no item</text>'
            )
            continue
        for j, share in enumerate(row):
            light = 97 - int(share * 60)
            ink = "#fff" if share > 0.5 else "#1d2330"
            x, y = left + j * cell, top + i * cell
            edge = ' stroke="#1f7a4d" stroke-width="2"' if i == j else ""
            parts.append(
                f'<rect x="{x}" y="{y}" width="{cell - 2}" height="{cell - 2}" rx="3" '
                f'fill="hsl(222, 64%, {light}%)"{edge}/>'
                f'<text x="{x + cell / 2 - 1}" y="{y + cell / 2 + 4}" font-size="10" '
                f'text-anchor="middle" fill="{ink}">{round(share * 100)}</text>'
            )
    parts.append("</svg>")
    return mark_safe("".join(parts))  # noqa: S308 (every text above is escaped)


ERROR_SERIES = (
    ("mae", "#a86200", "Mean absolute error"),
    ("bias", "#2d5bd1", "Bias (mean signed)"),
)


def error_series_chart(points: list[dict], title: str) -> SafeString:
    """Bias and mean absolute error against a reference over successive groups (calibration:
    an expert against gold, by block of submissions or by week). `points`: dicts with `key`
    (the x label), `bias` and `mae` (None where the group is empty); a dashed line at 0."""
    width, height, left, bottom, top, right = 560, 260, 50, 46, 20, 170
    plot_w, plot_h = width - left - right, height - top - bottom
    values = [abs(p[k]) for p in points for k in ("bias", "mae") if p.get(k) is not None]
    span = max([1.0, *values])
    span = float(int(span) + (0 if span == int(span) else 1))

    def x(i: int) -> float:
        return left + (plot_w / 2 if len(points) <= 1 else i / (len(points) - 1) * plot_w)

    def y(v: float) -> float:
        return top + plot_h / 2 - v / span * plot_h / 2

    parts = [
        f'<svg class="chart errors" role="img" viewBox="0 0 {width} {height}" width="{width}" '
        f'height="{height}" xmlns="http://www.w3.org/2000/svg"><title>{escape(title)}</title>',
        f'<line x1="{left}" y1="{top}" x2="{left}" y2="{top + plot_h}" stroke="#5b6473"/>',
        f'<line x1="{left}" y1="{y(0):.1f}" x2="{left + plot_w}" y2="{y(0):.1f}" '
        'stroke="#5b6473" stroke-dasharray="4 3"/>',
    ]
    for step in (-span, -span / 2, 0.0, span / 2, span):
        parts.append(
            f'<text x="{left - 6}" y="{y(step) + 4:.1f}" text-anchor="end">{f"{step:g}"}</text>'
        )
    every = max(1, len(points) // 8)
    for i, p in enumerate(points):
        if i % every == 0:
            parts.append(
                f'<text x="{x(i):.1f}" y="{top + plot_h + 16}" text-anchor="middle">'
                f"{escape(p['key'])}</text>"
            )
    for index, (key, colour, label) in enumerate(ERROR_SERIES):
        known = [(i, p[key]) for i, p in enumerate(points) if p.get(key) is not None]
        coords = " ".join(f"{x(i):.1f},{y(v):.1f}" for i, v in known)
        parts.append(
            f'<polyline points="{coords}" fill="none" stroke="{colour}" stroke-width="2" '
            f'class="series-{key}"/>'
        )
        parts.extend(
            f'<circle cx="{x(i):.1f}" cy="{y(v):.1f}" r="3" fill="{colour}"/>' for i, v in known
        )
        ly = top + 14 + index * 18
        parts.append(
            f'<line x1="{left + plot_w + 14}" y1="{ly - 4}" x2="{left + plot_w + 34}" '
            f'y2="{ly - 4}" stroke="{colour}" stroke-width="2"/>'
            f'<text x="{left + plot_w + 40}" y="{ly}">{escape(label)}</text>'
        )
    parts.append("</svg>")
    return mark_safe("".join(parts))  # noqa: S308 (every text escaped above)


def reliability_svg(rows: list[dict], *, title: str) -> SafeString:
    """A reliability diagram: per bin of stated confidence (`rows`: {low, high, n, confidence,
    accuracy}), the share that came (y) against the mean stated confidence (x), a dot whose area
    follows the bin's cases; the diagonal (dashed) is perfect calibration; the bins' cases as
    bars along the bottom."""
    size, left, bottom, top, right = 300, 46, 70, 14, 14
    width, height = left + size + right, top + size + bottom
    most = max([1, *(r["n"] for r in rows)])

    def x(value: float) -> float:
        return left + value * size

    def y(value: float) -> float:
        return top + (1 - value) * size

    parts = [
        f'<svg class="chart reliability" role="img" viewBox="0 0 {width} {height}" '
        f'width="{width}" height="{height}" xmlns="http://www.w3.org/2000/svg">'
        f"<title>{escape(title)}</title>",
        f'<rect x="{left}" y="{top}" width="{size}" height="{size}" fill="none" stroke="#c9ced8"/>',
    ]
    for n in range(0, 11, 2):
        v = n / 10
        parts.append(
            f'<line x1="{x(v):.1f}" y1="{top}" x2="{x(v):.1f}" y2="{top + size}" '
            f'stroke="#eef0f4"/><line x1="{left}" y1="{y(v):.1f}" x2="{left + size}" '
            f'y2="{y(v):.1f}" stroke="#eef0f4"/>'
            f'<text x="{x(v):.1f}" y="{top + size + 14}" font-size="10" text-anchor="middle" '
            f'fill="#5b6473">{v:.1f}</text><text x="{left - 6}" y="{y(v) + 3:.1f}" '
            f'font-size="10" text-anchor="end" fill="#5b6473">{v:.1f}</text>'
        )
    parts.append(
        f'<line x1="{x(0)}" y1="{y(0)}" x2="{x(1)}" y2="{y(1)}" stroke="#5b6473" '
        'stroke-dasharray="4 3"><title>perfect calibration</title></line>'
    )
    bar_top = top + size + 22
    for row in rows:
        cx, cy = x(row["confidence"]), y(row["accuracy"])
        radius = 3 + 7 * (row["n"] / most) ** 0.5
        words = (
            f"stated {row['low']:.1f}-{row['high']:.1f}: {row['n']} cases, mean stated "
            f"{row['confidence']:.3f}, came {row['accuracy']:.3f}"
        )
        parts.append(
            f'<line x1="{cx:.1f}" y1="{y(row["confidence"]):.1f}" x2="{cx:.1f}" y2="{cy:.1f}" '
            f'stroke="#b3261e" stroke-width="1.5"/><circle class="bin" cx="{cx:.1f}" '
            f'cy="{cy:.1f}" r="{radius:.1f}" fill="#2d5bd1" fill-opacity="0.7">'
            f"<title>{words}</title></circle>"
        )
        bar = 24 * row["n"] / most
        parts.append(
            f'<rect x="{x(row["low"]) + 1:.1f}" y="{bar_top + 24 - bar:.1f}" '
            f'width="{size / 10 - 2:.1f}" height="{bar:.1f}" fill="#c9ced8">'
            f"<title>{row['n']} cases</title></rect>"
        )
    parts.append(
        f'<text x="{left + size / 2}" y="{height - 6}" font-size="11" text-anchor="middle" '
        'fill="#5b6473">stated confidence (bars: cases)</text>'
        f'<text x="12" y="{top + size / 2}" font-size="11" text-anchor="middle" fill="#5b6473" '
        f'transform="rotate(-90 12 {top + size / 2})">share that came</text></svg>'
    )
    return mark_safe("".join(parts))  # noqa: S308 (every text above is escaped or ours)
