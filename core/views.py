from django.db import connection
from django.http import HttpResponse, JsonResponse
from django.shortcuts import render
from django.utils.http import url_has_allowed_host_and_scheme
from django.views import defaults

from core.broker import broker_problem


def healthz(request):
    """Liveness: the process answers (nothing else is checked)."""
    return HttpResponse("ok", content_type="text/plain")


def readyz(request):
    """Readiness: the database answers a query and the Celery broker accepts a connection.
    200 with each check's "ok", or 503 naming what failed (a load balancer stops sending
    requests here until it is ready again)."""
    checks = {}
    try:
        with connection.cursor() as cursor:
            cursor.execute("SELECT 1")
        checks["database"] = "ok"
    except Exception as exc:
        checks["database"] = f"{type(exc).__name__}: {exc}"
    checks["broker"] = broker_problem() or "ok"
    ready = all(value == "ok" for value in checks.values())
    return JsonResponse(checks, status=200 if ready else 503)


# --- Error pages: in the site's layout, with the reason and a way back ------------------------


def _way_back(request) -> str:
    """The page the person came from, when it is one of ours and not this one."""
    referer = request.META.get("HTTP_REFERER", "")
    if (
        referer
        and referer != request.build_absolute_uri()
        and url_has_allowed_host_and_scheme(
            referer, allowed_hosts={request.get_host()}, require_https=request.is_secure()
        )
    ):
        return referer
    return ""


def _reason(exception: Exception | None, default: str) -> str:
    message = exception.args[0] if exception is not None and exception.args else ""
    return message if isinstance(message, str) and message else default


def permission_denied(request, exception=None):
    reason = _reason(exception, "Your role does not allow this page.")
    context = {"reason": reason, "back": _way_back(request)}
    return render(request, "403.html", context, status=403)


def page_not_found(request, exception=None):
    reason = _reason(exception, f"Nothing lives at {request.path}.")
    context = {"reason": reason, "back": _way_back(request)}
    return render(request, "404.html", context, status=404)


def server_error(request):
    """The 500 page in the layout; Django's bare page if even that cannot be drawn (the error
    may be the database the layout reads)."""
    try:
        return render(request, "500.html", {"back": _way_back(request)}, status=500)
    except Exception:  # noqa: BLE001 (the last resort must answer)
        return defaults.server_error(request)
