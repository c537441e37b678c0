"""Errors answered, never crashed on: the API answers every error in JSON (also those raised
before a view runs: no such URL, a body over the size limit), and a NUL byte in a path or a
query string is refused before any view sees it (PostgreSQL cannot store one)."""

import logging
import sys

from django.core.exceptions import RequestDataTooBig, TooManyFieldsSent
from django.db import InterfaceError, OperationalError, connections
from django.http import HttpResponse, HttpResponseBadRequest, JsonResponse
from django.utils.html import escape
from django.views import defaults
from kombu.exceptions import OperationalError as KombuOperationalError
from psycopg.errors import DeadlockDetected, LockNotAvailable, QueryCanceled, SerializationFailure
from rest_framework import status
from rest_framework.response import Response
from rest_framework.views import exception_handler

from core import views as pages
from core.broker import BrokerUnavailable, broker_refusal
from core.files import UploadDiskFull, UploadTooLarge
from core.http import is_api_path
from core.parsers import NUL_REFUSED

logger = logging.getLogger("proofmark.request")
# SQLSTATEs of a connection the server ended or refused: class 08 (connection exception),
# admin_shutdown, crash_shutdown, cannot_connect_now
_LOST_SQLSTATES = ("08", "57P01", "57P02", "57P03")
# what libpq and psycopg say when the connection went away without a SQLSTATE
_LOST_WORDS = (
    "server closed the connection unexpectedly",
    "connection is closed",
    "connection already closed",
    "terminating connection",
    "connection failed",
    "could not connect",
    "consuming input failed",
    "the connection is lost",
)
DATABASE_LOST = "The database connection was lost; nothing was saved: try again."
DATABASE_BUSY = (
    "The database was busy (a statement or a lock wait took longer than this site allows, or "
    "two requests crossed); nothing was saved: try again shortly."
)
# A 503 (a service the request needs is away) says when to try again.
RETRY_AFTER_SECONDS = 5


def _is_api(request) -> bool:
    return is_api_path(request.path)


def api_exception_handler(exc, context):
    """DRF's handler, plus the body-size refusals Django raises while the body is read, and 503
    with `Retry-After` when the job queue is away."""
    if isinstance(exc, BrokerUnavailable | KombuOperationalError):
        return Response(
            {"detail": broker_refusal(exc)},
            status=status.HTTP_503_SERVICE_UNAVAILABLE,
            headers={"Retry-After": str(RETRY_AFTER_SECONDS)},
        )
    if isinstance(exc, UploadTooLarge):
        return Response({"detail": str(exc)}, status=status.HTTP_413_REQUEST_ENTITY_TOO_LARGE)
    if isinstance(exc, RequestDataTooBig):
        return Response(
            {"detail": "The body is over the size limit."},
            status=status.HTTP_413_REQUEST_ENTITY_TOO_LARGE,
        )
    if isinstance(exc, UploadDiskFull):
        return Response({"detail": exc.strerror}, status=status.HTTP_507_INSUFFICIENT_STORAGE)
    if isinstance(exc, TooManyFieldsSent):
        return Response({"detail": "Too many fields."}, status=status.HTTP_400_BAD_REQUEST)
    response = exception_handler(exc, context)
    if response is not None:
        response.data = _detail_as_text(response.data)
    return response


def _detail_as_text(data):
    """The documented error body (core.api.ERROR_SCHEMA): an object whose `detail`, when
    there is one, is a string (a refusal given as a bare list or a list under `detail` is joined)."""
    if isinstance(data, list):
        return {"detail": " ".join(str(message) for message in data)}
    if isinstance(data, dict) and isinstance(data.get("detail"), list):
        return {**data, "detail": " ".join(str(message) for message in data["detail"])}
    return data


def bad_request(request, exception):
    if _is_api(request):
        return JsonResponse({"detail": "Bad request."}, status=400)
    return defaults.bad_request(request, exception)


def permission_denied(request, exception):
    if _is_api(request):
        return JsonResponse({"detail": "Your role does not allow this operation."}, status=403)
    return pages.forbidden_page(request, exception)


def page_not_found(request, exception):
    if _is_api(request):
        return JsonResponse({"detail": "Not found."}, status=404)
    return pages.not_found_page(request, exception)


def server_error(request):
    """500, unless what was raised means a service is away (raised in a middleware, where
    UnavailableMiddleware.process_exception does not see it): then 503 as there."""
    outage = outage_response(request, sys.exc_info()[1])
    if outage is not None:
        return outage
    if _is_api(request):
        return JsonResponse({"detail": "Server error."}, status=500)
    return pages.server_error_page(request)


def _close_dead_connections() -> None:
    """Closes each database connection that no longer answers: the next query opens a new one."""
    for connection in connections.all(initialized_only=True):
        if connection.connection is not None and not connection.is_usable():
            connection.close()


def database_lost(exception: BaseException | None) -> bool:
    """Whether `exception` means the database connection is gone (a restarted or failed-over
    server, a killed backend, a server not answering): an InterfaceError, or an
    OperationalError whose SQLSTATE or words say so, or after which a connection is closed
    or broken. Any other OperationalError (psycopg refusing a statement of more than 65,535
    parameters, a full disk) is not: the connection is fine, and the same request on a new one
    would fail the same."""
    if isinstance(exception, InterfaceError):
        return True
    if not isinstance(exception, OperationalError):
        return False
    sqlstate = getattr(exception.__cause__, "sqlstate", None) or ""
    if sqlstate.startswith(_LOST_SQLSTATES):
        return True
    text = str(exception).lower()
    if any(words in text for words in _LOST_WORDS):
        return True
    return any(
        connection.connection is not None
        and (connection.connection.closed or connection.connection.broken)
        for connection in connections.all(initialized_only=True)
    )


def outage_response(request, exception: BaseException | None) -> HttpResponse | None:
    """503 with the reason when `exception` means a service is away, else None: a dropped
    database connection (closed, so the next query opens a new one; the answer is marked
    `retryable` for core.middleware.UnavailableMiddleware) or an unreachable job queue."""
    if isinstance(exception, UploadDiskFull):
        return unavailable(request, exception.strerror, status=507, retry=False)
    if isinstance(exception, OperationalError) and isinstance(
        exception.__cause__,
        QueryCanceled | LockNotAvailable | DeadlockDetected | SerializationFailure,
    ):
        # a bound of DB_STATEMENT_TIMEOUT / DB_LOCK_TIMEOUT, or a deadlock or serialisation
        # failure that rolled the transaction back: the connection is fine, nothing was saved,
        # and the request is not run again here (the client may send it again)
        logger.warning(
            "database bound reached during %s %s: %s", request.method, request.path, exception
        )
        return unavailable(request, DATABASE_BUSY)
    if database_lost(exception):
        _close_dead_connections()
        logger.warning(
            "database connection lost during %s %s: %s", request.method, request.path, exception
        )
        response = unavailable(request, DATABASE_LOST)
        response.retryable = True
        return response
    if isinstance(exception, BrokerUnavailable | KombuOperationalError):
        return unavailable(request, broker_refusal(exception))
    return None


def unavailable(request, reason: str, *, status: int = 503, retry: bool = True) -> HttpResponse:
    """503 (or `status`) with the reason, and `Retry-After` unless `retry` is off: JSON for the
    API (core.http.is_api_path), else a bare page (the site's layout may need what is away)."""
    if _is_api(request):
        response = JsonResponse({"detail": reason}, status=status)
    else:
        response = HttpResponse(
            "<!doctype html><html lang=en><title>Unavailable</title><h1>Unavailable</h1>"
            f"<p>{escape(reason)}</p></html>",
            content_type="text/html; charset=utf-8",
            status=status,
        )
    if retry:
        response["Retry-After"] = str(RETRY_AFTER_SECONDS)
    return response


class RejectNulMiddleware:
    """400 for a NUL byte in the path or the query string (JSON for the API)."""

    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request):
        query = request.META.get("QUERY_STRING", "")
        if "\x00" in request.path or "%00" in query or "\x00" in query:
            if _is_api(request):
                return JsonResponse({"detail": NUL_REFUSED}, status=400)
            return HttpResponseBadRequest(NUL_REFUSED, content_type="text/plain")
        return self.get_response(request)
