"""Errors answered, never crashed on: the API answers every error in JSON (also those raised
before a view runs: no such URL, a body over the size limit), and a NUL byte in a path or a
query string is refused before any view sees it (PostgreSQL cannot store one)."""

from django.core.exceptions import RequestDataTooBig, TooManyFieldsSent
from django.http import HttpResponseBadRequest, JsonResponse
from django.views import defaults
from rest_framework import status
from rest_framework.response import Response
from rest_framework.views import exception_handler

from config import views as pages
from config.parsers import NUL_REFUSED

API_PREFIX = "/api/"


def _is_api(request) -> bool:
    return request.path.startswith(API_PREFIX)


def api_exception_handler(exc, context):
    """DRF's handler, plus the body-size refusals Django raises while the body is read."""
    if isinstance(exc, RequestDataTooBig):
        return Response(
            {"detail": "The body is over the size limit."},
            status=status.HTTP_413_REQUEST_ENTITY_TOO_LARGE,
        )
    if isinstance(exc, TooManyFieldsSent):
        return Response({"detail": "Too many fields."}, status=status.HTTP_400_BAD_REQUEST)
    return exception_handler(exc, context)


def bad_request(request, exception):
    if _is_api(request):
        return JsonResponse({"detail": "Bad request."}, status=400)
    return defaults.bad_request(request, exception)


def permission_denied(request, exception):
    if _is_api(request):
        return JsonResponse({"detail": "Your role does not allow this operation."}, status=403)
    return pages.permission_denied(request, exception)


def page_not_found(request, exception):
    if _is_api(request):
        return JsonResponse({"detail": "Not found."}, status=404)
    return pages.page_not_found(request, exception)


def server_error(request):
    if _is_api(request):
        return JsonResponse({"detail": "Server error."}, status=500)
    return pages.server_error(request)


class RejectNulMiddleware:
    """400 for a NUL byte in the path or the query string (JSON under /api/)."""

    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request):
        query = request.META.get("QUERY_STRING", "")
        if "\x00" in request.path or "%00" in query or "\x00" in query:
            if _is_api(request):
                return JsonResponse({"detail": NUL_REFUSED}, status=400)
            return HttpResponseBadRequest(NUL_REFUSED, content_type="text/plain")
        return self.get_response(request)
