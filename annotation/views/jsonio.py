"""The JSON bodies and error answers shared by the grading and review endpoints."""

import json

from django.http import JsonResponse


def json_payload(request) -> dict:
    """The request's JSON object body; anything else reads as an empty object."""
    try:
        data = json.loads(request.body or b"{}")
    except ValueError:
        return {}
    return data if isinstance(data, dict) else {}


def problems_response(exc: Exception) -> JsonResponse:
    problems = getattr(exc, "problems", None) or [str(exc)]
    return JsonResponse({"ok": False, "problems": problems}, status=400)
