"""Template filters: `{% load proofmark %}{{ text|markdown }}`, and small corpus formatters."""

from decimal import Decimal, InvalidOperation

from django import template
from django.utils.safestring import SafeString, mark_safe

from core.values import shown
from problems.rendering import preview_markdown, render_markdown

register = template.Library()


@register.filter(name="markdown")
def markdown(text: str | None) -> SafeString:
    """Markdown with LaTeX math as HTML; safe to mark so because render_markdown sanitises it."""
    return mark_safe(render_markdown(text or ""))  # noqa: S308


@register.filter
def preview(text: str | None, limit: int = 160) -> SafeString:
    """The start of a Markdown text, on one line, rendered (math included) and sanitised."""
    return mark_safe(preview_markdown(text or "", int(limit)))  # noqa: S308


def _number(value) -> str:
    try:
        return shown(value)
    except (InvalidOperation, ValueError):
        return str(value)


@register.filter
def ratings(metadata) -> list[dict]:
    """The well-formed entries of `metadata["ratings"]` (see the importer's contract), each
    with a `label` such as "7/7" and a `grade` of ok/warn/bad for its share of the maximum."""
    entries = metadata.get("ratings") if isinstance(metadata, dict) else None
    shown = []
    for entry in entries if isinstance(entries, list) else []:
        if not isinstance(entry, dict) or "value" not in entry:
            continue
        value, maximum = entry.get("value"), entry.get("max")
        label = _number(value) + (f"/{_number(maximum)}" if maximum not in (None, "") else "")
        try:
            share = float(value) / float(maximum)
        except (TypeError, ValueError, ZeroDivisionError):
            share = None
        grade = "" if share is None else "ok" if share >= 0.99 else "warn" if share > 0 else "bad"
        shown.append(
            {
                "kind": str(entry.get("kind", "")),
                "source": str(entry.get("source", "")),
                "label": label,
                "grade": grade,
            }
        )
    return shown


@register.filter
def score_grade(score) -> str:
    """ok / warn / bad for a verifier score of 1 / 0.5 / 0; empty when there is none."""
    if score is None:
        return ""
    return {Decimal("1"): "ok", Decimal("0.5"): "warn"}.get(Decimal(str(score)), "bad")


@register.filter
def number(value) -> str:
    """A score without trailing zeros: 1, 0.5, 0 (core.values.shown)."""
    return "" if value is None else _number(value)


@register.filter
def percent(value) -> str:
    """A share (0-1) as a percentage: 0.4 -> "40%", 0.125 -> "12.5%"; "" for no value."""
    if value is None or value == "":
        return ""
    try:
        share = Decimal(str(value)) * 100
    except (InvalidOperation, ValueError):
        return str(value)
    return f"{_number(share.quantize(Decimal('0.1')))}%"
