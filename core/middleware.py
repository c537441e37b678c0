import logging
import re
import time
import uuid
from functools import cache

from csp.constants import HEADER
from csp.middleware import CSPMiddleware
from csp.utils import build_policy
from django.conf import settings

from core.errors import outage_response
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


# --- Content-Security-Policy --------------------------------------------------------------------

# what a view may set on its response to change django-csp's policy (its decorators)
_CSP_CHANGES = tuple(
    f"_csp_{name}{suffix}"
    for name in ("config", "update", "replace", "exempt")
    for suffix in ("", "_ro")
)


@cache
def _site_policy() -> str | None:
    """The site's policy as django-csp writes it, when that is the same on every response: no
    report-only policy and no excluded prefixes (None otherwise: django-csp decides each time)."""
    policy = getattr(settings, "CONTENT_SECURITY_POLICY", None) or {}
    if getattr(settings, "CONTENT_SECURITY_POLICY_REPORT_ONLY", None) or policy.get(
        "EXCLUDE_URL_PREFIXES"
    ):
        return None
    return build_policy()


class PolicyMiddleware(CSPMiddleware):
    """django-csp's middleware with the site's policy built once per process instead of on
    every response (a per-cent of a judgement's CPU): a response no view changed the policy of,
    to a request that drew no nonce, gets the policy built once; any other goes through
    django-csp as it is."""

    def process_response(self, request, response):
        policy = _site_policy()
        if (
            policy is None
            or getattr(request, "_csp_nonce", None) is not None
            or any(hasattr(response, name) for name in _CSP_CHANGES)
            or (settings.DEBUG and response.status_code in (404, 500))
        ):
            return super().process_response(request, response)
        if HEADER not in response:
            response[HEADER] = policy
        return response
