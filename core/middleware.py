import logging
import re
import time
import uuid

from csp.middleware import CSPMiddleware
from django.contrib.messages.middleware import MessageMiddleware
from django_htmx.middleware import HtmxMiddleware

from core.errors import outage_response
from core.http import is_api_path
from core.logging import log_context
from core.proxies import client_address

logger = logging.getLogger("proofmark.request")
# A request id given by a proxy is kept when it looks like one (no spaces, no control characters).
_GIVEN_ID = re.compile(r"[A-Za-z0-9._:-]{1,64}")


class RequestLogMiddleware:
    """One log line per request (method, path, status, duration, user, client address as the
    trusted proxies give it, request id); the id comes from the proxy's `X-Request-ID` or is made
    here, is on every line logged while the request is served, and goes back in the response's
    `X-Request-ID`."""

    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request):
        given = request.headers.get("X-Request-ID", "")
        request_id = given if _GIVEN_ID.fullmatch(given) else uuid.uuid4().hex
        token = log_context.set({"request_id": request_id})
        started = time.perf_counter()
        try:
            response = self.get_response(request)
            response["X-Request-ID"] = request_id
            if logger.isEnabledFor(logging.INFO):
                user = getattr(request, "user", None)
                logger.info(
                    "%s %s %s",
                    request.method,
                    request.path,
                    response.status_code,
                    extra={
                        "method": request.method,
                        "path": request.path,
                        "status": response.status_code,
                        "duration_ms": round((time.perf_counter() - started) * 1000, 2),
                        "user_id": user.pk if user is not None and user.is_authenticated else None,
                        "client": client_address(request),
                    },
                )
            return response
        finally:
            log_context.reset(token)


# --- Outages: a dropped database connection, an unreachable job queue -------------------------

IDEMPOTENT = frozenset({"GET", "HEAD", "OPTIONS"})


class UnavailableMiddleware:
    """A database connection dropped during a request (a restarted or failed-over server, a
    killed backend) is no 500: a read (GET, HEAD, OPTIONS) is run once more on a new connection;
    anything else, or a read failing again, answers 503 with `Retry-After`. A job queue that
    cannot be reached answers 503 with the reason too (core.broker)."""

    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request):
        response = self.get_response(request)
        if getattr(response, "retryable", False) and request.method in IDEMPOTENT:
            logger.warning(
                "database connection lost: %s %s run again", request.method, request.path
            )
            response = self.get_response(request)
        return response

    def process_exception(self, request, exception):
        return outage_response(request, exception)


# --- What only pages need, off for the API ----------------------------------------------------


class PagesOnly:
    """Mixed into a library's middleware that only pages use: a request to the API
    (`core.http.is_api_path`: JSON only, REST_FRAMEWORK's DEFAULT_RENDERER_CLASSES and the
    schema) skips it, by token or from the grading page alike. The library's class is otherwise as shipped (and the system checks that look
    for it still find it). Measured (benchmarks/profile_judgement.py, 2026-12-04, rounds
    against the code before, RESULTS.md): the three below cost 395 of the ~2,000 Python calls
    a request pays outside its view (django-csp builds its policy on every response, even one
    it sends without the header): 6.3% of a `submit?next=1` judgement's calls (6,283 -> 5,888)
    and 9.4% of a `next` + `submit` one (8,413 -> 7,623); the CPU, which swings 2x on that
    machine, did not tell the rounds apart."""

    def __call__(self, request):
        if is_api_path(request.path_info):
            return self.get_response(request)
        return super().__call__(request)


class PageMessageMiddleware(PagesOnly, MessageMiddleware):
    """Django's flash messages, for pages."""


class PageHtmxMiddleware(PagesOnly, HtmxMiddleware):
    """django-htmx's `request.htmx`, for pages."""


class PageCSPMiddleware(PagesOnly, CSPMiddleware):
    """django-csp's Content-Security-Policy, for pages (the API's JSON is never a document a
    browser runs; it keeps `nosniff` and `X-Frame-Options`)."""
