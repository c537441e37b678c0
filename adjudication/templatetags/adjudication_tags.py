"""Formatting for the adjudication pages: figures, intervals, heat-map shades, bar widths."""

from django import template

register = template.Library()


@register.filter
def fig(value, digits: int = 2) -> str:
    """A figure, or an en dash where it is undefined."""
    if value is None:
        return "–"
    return f"{value:.{int(digits)}f}"


@register.filter
def pct(value) -> str:
    return "–" if value is None else f"{100 * value:.0f}%"


@register.filter
def ci(interval, digits: int = 2) -> str:
    if not interval:
        return ""
    low, high = interval
    return f"[{low:.{int(digits)}f}, {high:.{int(digits)}f}]"


@register.filter
def heat_rows(matrix: list[list[int]]) -> list[list[dict]]:
    """Cells with a shade proportional to the count (the largest cell fully coloured)."""
    top = max((n for row in matrix for n in row), default=0) or 1
    return [
        [{"n": n, "shade": round(n / top, 3), "dark": n / top > 0.55} for n in row]
        for row in matrix
    ]


@register.filter
def bar(count: int, top: int) -> int:
    return round(100 * count / top) if top else 0


@register.filter
def label(value: float) -> str:
    return f"{value:g}"


@register.filter
def index(sequence, position: int):
    return sequence[int(position)]
