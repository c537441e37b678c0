"""Template filters for the scheme pages: `{% load rubrics_tags %}`."""

from decimal import ROUND_HALF_UP, Decimal

from django import template

from rubrics.structure import Chain, Checkpoint, Rule, format_points

register = template.Library()
CENT = Decimal("0.01")


@register.filter
def rule_words(item: Checkpoint | Chain) -> str:
    """How a group or chain combines its items, as the scheme writes it."""
    if item.rule is Rule.MAX and item.cap is not None:
        return f"[max {format_points(item.cap)}]"
    if item.rule is Rule.LARGER:
        return "award the larger only"
    return "[additive]"


@register.filter
def points(value) -> str:
    """2 for Decimal('2.00'), 1.5 for Decimal('1.5')."""
    return format_points(value) if value is not None else ""


@register.filter
def rating_grade(mean) -> str:
    """ok / warn / bad for a mean rating (>= 2 / >= 1 / below)."""
    if mean is None:
        return ""
    return "ok" if mean >= 2 else "warn" if mean >= 1 else "bad"


@register.filter
def usd(amount: Decimal | None) -> str:
    """$1,234.57 for an amount of US dollars, to the cent; "< $0.01" for less than a cent."""
    if amount is None:
        return ""
    if 0 < amount < CENT:
        return "< $0.01"
    return f"${amount.quantize(CENT, rounding=ROUND_HALF_UP):,}"
