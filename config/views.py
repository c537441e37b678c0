from django.db import connection
from django.http import HttpResponse, JsonResponse
from django.shortcuts import render

from config.roles import user_roles
from problems.selectors import corpus_counts


def home(request):
    """The landing page: what each of the user's roles can do from here."""
    return render(
        request,
        "home.html",
        {"held_roles": sorted(user_roles(request.user)), "counts": corpus_counts()},
    )


def healthz(request):
    """Liveness: the process answers (nothing else is checked)."""
    return HttpResponse("ok", content_type="text/plain")


def readyz(request):
    """Readiness: the database answers a query and the Celery broker accepts a connection.
    200 with each check's "ok", or 503 naming what failed (a load balancer stops sending
    requests here until it is ready again)."""
    from config.celery import app

    checks = {}
    try:
        with connection.cursor() as cursor:
            cursor.execute("SELECT 1")
        checks["database"] = "ok"
    except Exception as exc:
        checks["database"] = f"{type(exc).__name__}: {exc}"
    try:
        with app.connection_for_write() as broker:
            broker.ensure_connection(max_retries=1, interval_start=0, timeout=2)
        checks["broker"] = "ok"
    except Exception as exc:
        checks["broker"] = f"{type(exc).__name__}: {exc}"
    ready = all(value == "ok" for value in checks.values())
    return JsonResponse(checks, status=200 if ready else 503)
