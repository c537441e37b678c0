"""Reading a request the same way in every view.

One view, two answers: the whole page, or only the fragment htmx asks for. Every view that
serves both answers through page_or_fragment, which always sets `Vary: HX-Request`, so that no
cache (the browser's back button included) serves one answer for the other.

Query flags (`?revise=true`, `?next=1`, ...) read as booleans, the same way by every view and
API: 1/true/yes/on mean true, 0/false/no/off (and an absent or empty flag) false; anything else
is a 400 naming the flag."""

from __future__ import annotations

from collections.abc import Mapping

from django.http import HttpRequest, HttpResponse
from django.shortcuts import render
from django.utils.cache import patch_vary_headers
from rest_framework.exceptions import ValidationError

# The API: every path under /api/ (its operations, /api/v1/, and their schema, /api/schema/) but
# its reference page, which is a page of the site. Its answers, errors included, are JSON; the
# middleware only pages need skips it (core.middleware.PagesOnly).
API_ROOT = "/api/"
API_DOCS = "/api/docs/"


def is_api_path(path: str) -> bool:
    """Whether `path` is the API's (JSON answers), not a page's."""
    return path.startswith(API_ROOT) and not path.startswith(API_DOCS)


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


TRUE = frozenset({"1", "true", "yes", "on"})
FALSE = frozenset({"", "0", "false", "no", "off"})


class FlagError(ValidationError):
    """A flag that is neither true nor false. A DRF ValidationError (a 400 with the flag's name
    as the field) in an API; pages catch it and answer 400 with its message."""

    def __init__(self, name: str, value: str):
        self.message = f"{name}: {value!r} is not a flag; use true or false (1/0, yes/no, on/off)"
        super().__init__({name: [self.message]})


def query_flag(params: Mapping[str, str], name: str) -> bool:
    """The flag `name` of a query string (request.GET or request.query_params)."""
    raw = params.get(name, "")
    value = raw.strip().lower()
    if value in TRUE:
        return True
    if value in FALSE:
        return False
    raise FlagError(name, raw)
