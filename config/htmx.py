"""One view, two answers: the whole page, or only the fragment htmx asks for. Every view that
serves both answers through page_or_fragment, which always sets `Vary: HX-Request`, so that no
cache (the browser's back button included) serves one answer for the other."""

from __future__ import annotations

from django.http import HttpRequest, HttpResponse
from django.shortcuts import render
from django.utils.cache import patch_vary_headers


def wants_fragment(request: HttpRequest) -> bool:
    """htmx asks for a fragment (a history restore after Back asks for the whole page)."""
    return bool(getattr(request, "htmx", False)) and not request.htmx.history_restore_request


def page_or_fragment(
    request: HttpRequest,
    *,
    page: str,
    fragment: str,
    context: dict,
    status: int = 200,
    as_fragment: bool | None = None,
) -> HttpResponse:
    """Renders `fragment` when htmx asks for it (or as `as_fragment` decides), else `page`."""
    chosen = wants_fragment(request) if as_fragment is None else as_fragment
    response = render(request, fragment if chosen else page, context, status=status)
    patch_vary_headers(response, ["HX-Request"])
    return response
