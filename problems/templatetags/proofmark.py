"""Template filters: `{% load proofmark %}{{ text|markdown }}`."""

from django import template
from django.utils.safestring import SafeString, mark_safe

from problems.rendering import render_markdown

register = template.Library()


@register.filter(name="markdown")
def markdown(text: str | None) -> SafeString:
    """Markdown with LaTeX math as HTML; safe to mark so because render_markdown sanitises it."""
    return mark_safe(render_markdown(text or ""))  # noqa: S308
