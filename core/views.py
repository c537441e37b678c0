from django.db import connection
from django.http import HttpResponse, JsonResponse
from django.shortcuts import render
from django.utils.http import url_has_allowed_host_and_scheme
from django.views import defaults

from core.broker import broker_problem
from core.visibility import BlindWork


def healthz(request):
    """Liveness: the process answers (nothing else is checked)."""
    return HttpResponse("ok", content_type="text/plain")


# How long readiness waits for a new database connection and for its answer.
READY_DATABASE_SECONDS = 2


def database_problem() -> str | None:
    """What keeps this process from getting a database connection now, or None: a new
    connection (not the one this worker keeps, which may still work while the server refuses
    every other: its connections used up), opened within READY_DATABASE_SECONDS and answering a
    query within as long."""
    import psycopg

    params = connection.get_connection_params()
    for unused in ("cursor_factory", "context"):
        params.pop(unused, None)
    params["connect_timeout"] = READY_DATABASE_SECONDS
    bound = f"-c statement_timeout={READY_DATABASE_SECONDS * 1000}"
    params["options"] = f"{params.get('options', '')} {bound}".strip()
    try:
        with psycopg.connect(**params, autocommit=True) as probe:
            probe.execute("SELECT 1")
    except psycopg.Error as exc:
        return f"{type(exc).__name__}: {str(exc).strip()}"
    return None


def readyz(request):
    """Readiness: a new database connection opens and answers within a short bound, and the
    Celery broker accepts a connection. 200 with each check's "ok", or 503 naming what failed
    (a load balancer stops sending requests here until it is ready again)."""
    checks = {"database": database_problem() or "ok", "broker": broker_problem() or "ok"}
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


def forbidden_page(request, exception=None):
    reason = _reason(exception, "Your role does not allow this page.")
    # refused while the user grades blind (core.visibility): no role would open it
    blind_work = isinstance(exception, BlindWork)
    context = {"reason": reason, "back": _way_back(request), "blind_work": blind_work}
    return render(request, "403.html", context, status=403)


def not_found_page(request, exception=None):
    reason = _reason(exception, f"Nothing lives at {request.path}.")
    context = {"reason": reason, "back": _way_back(request)}
    return render(request, "404.html", context, status=404)


def server_error_page(request):
    """The 500 page in the layout; Django's bare page if even that cannot be drawn (the error
    may be the database the layout reads)."""
    try:
        return render(request, "500.html", {"back": _way_back(request)}, status=500)
    except Exception:  # noqa: BLE001 (the last resort must answer)
        return defaults.server_error(request)
