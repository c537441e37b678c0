"""The JSON bodies and error answers shared by the grading and review endpoints. A body is
checked by the API's serializer for the same operation: one validation path for both doors."""

import json

from django.core.exceptions import RequestDataTooBig
from django.http import JsonResponse
from rest_framework import serializers

from config.parsers import NUL_REFUSED, contains_nul


class PayloadError(Exception):
    def __init__(self, problems: list[str], status: int = 400):
        super().__init__("; ".join(problems))
        self.problems = problems
        self.status = status


def _prefix(prefix: str, key) -> str:
    if key == "non_field_errors":
        return prefix
    return f"{prefix}{key + 1 if isinstance(key, int) else key}."


def _messages(errors, prefix: str = "") -> list[str]:
    """DRF's nested errors as `field: message` lines (`spans.2.end: ...`, counting from 1)."""
    if isinstance(errors, dict):
        return [
            line for key, value in errors.items() for line in _messages(value, _prefix(prefix, key))
        ]
    if isinstance(errors, list):
        if all(isinstance(e, str) for e in errors):
            return [f"{prefix.rstrip('.')}: {e}" if prefix else str(e) for e in errors]
        return [
            line
            for index, value in enumerate(errors, start=1)
            if value
            for line in _messages(value, f"{prefix}{index}.")
        ]
    return [f"{prefix.rstrip('.')}: {errors}" if prefix else str(errors)]


def json_payload(request) -> dict:
    """The request's JSON object body (PayloadError if it is not one)."""
    try:
        data = json.loads(request.body or b"{}")
    except RequestDataTooBig as exc:
        raise PayloadError(["The body is over the size limit."], status=413) from exc
    except ValueError as exc:
        raise PayloadError(["The body is not JSON."]) from exc
    if not isinstance(data, dict):
        raise PayloadError(["The body must be a JSON object."])
    if contains_nul(data):
        raise PayloadError([NUL_REFUSED])
    return data


def validated(payload: dict, serializer: type[serializers.Serializer]) -> dict:
    """`payload` checked by `serializer` (the API's); PayloadError naming each bad field."""
    checked = serializer(data=payload)
    if not checked.is_valid():
        raise PayloadError(_messages(checked.errors))
    return dict(checked.validated_data)


def problems_response(exc: Exception) -> JsonResponse:
    problems = getattr(exc, "problems", None) or [str(exc)]
    return JsonResponse(
        {"ok": False, "problems": problems}, status=getattr(exc, "status", None) or 400
    )
