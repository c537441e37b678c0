"""What every app's API shares: one page of a list, documented as paginated; the output
serializers several apps use, and SharedFields for the hot ones; the errors every operation
documents in the schema (`document_errors`, drf-spectacular's postprocessing hook)."""

import threading

from rest_framework import serializers
from rest_framework.pagination import PageNumberPagination as DrfPageNumberPagination
from rest_framework.response import Response
from rest_framework.utils.serializer_helpers import BindingDict
from rest_framework.views import APIView

PAGE_SIZE_MAX = 500


class PageNumberPagination(DrfPageNumberPagination):
    """`?page=N`, 50 rows a page unless `?page_size=` asks for another number (1 to
    PAGE_SIZE_MAX; more is PAGE_SIZE_MAX, anything else the default)."""

    page_size_query_param = "page_size"
    max_page_size = PAGE_SIZE_MAX


class ListApi(APIView):
    """An APIView answering one page of a list (`?page=N`, `?page_size=`, 50 a page). Its `pagination_class`
    makes the schema document the answer as a page (count, next, previous, results)."""

    pagination_class = PageNumberPagination

    def page(self, rows, output: type, **kwargs) -> Response:
        """One page of `rows` written by the `output` serializer (`kwargs` go to it)."""
        paginator = self.pagination_class()
        page = paginator.paginate_queryset(rows, self.request, view=self)
        return paginator.get_paginated_response(output(page, many=True, **kwargs).data)


# --- Shared serializers ----------------------------------------------------------------------

_shared = threading.local()


class SharedFields:
    """Mixed into a serializer whose fields read nothing from its context: its fields are built
    once per thread and kept, instead of deep-copied on every instance (and, for a nested
    serializer, on every use), which DRF does and which cost about half a millisecond a
    judgement on the grading API's path. Per thread, so a threaded server shares nothing
    between concurrent requests; the instance, data and errors stay each serializer's own."""

    @property
    def fields(self):
        cache = _shared.__dict__
        fields = cache.get(type(self))
        if fields is None:
            blank = type(self)()  # the fields' parent: no instance, no data, no context
            fields = BindingDict(blank)
            for name, field in blank.get_fields().items():
                fields[name] = field
            cache[type(self)] = fields
        return fields


class DecimalInput(serializers.DecimalField):
    """A decimal sent by a client, with `-0` read as 0 (a score is never negative zero)."""

    def to_internal_value(self, data):
        value = super().to_internal_value(data)
        return value + 0 if value is not None and value.is_zero() else value


class RunStatusOutput(serializers.Serializer):
    """Where a run of language-model calls stands (verifier, labelling and generation runs):
    its status, how many units it has, the tokens spent so far and their cost, when it began and
    ended."""

    status = serializers.CharField()
    total = serializers.IntegerField()
    prompt_tokens = serializers.IntegerField()
    completion_tokens = serializers.IntegerField()
    cost_usd = serializers.DecimalField(
        source="spend.cost",
        max_digits=20,
        decimal_places=6,
        allow_null=True,
        help_text="The tokens at the endpoints' current prices, in US dollars; null without prices.",
    )
    created_at = serializers.DateTimeField()
    finished_at = serializers.DateTimeField(allow_null=True)


# --- The errors every operation documents ---------------------------------------------------

ERROR_SCHEMA = {
    "type": "object",
    "description": "`detail` says why; a refused body names each bad field with its messages.",
    "properties": {"detail": {"type": "string"}},
    "additionalProperties": True,
}
ERRORS = {
    "400": "The input is invalid: each bad field with its messages.",
    "401": "No credentials, or wrong ones.",
    "403": "Your role does not allow this operation.",
    "404": "No such object (or not one you may see).",
    "405": "This method is not allowed here.",
    "409": "The object is not in a state that allows this.",
    "413": "The body is over the size limit.",
    "415": "This media type is not accepted.",
    "429": "Too many requests: wait as `Retry-After` says.",
    "503": "A service the operation needs (database, job queue) is away: retry after `Retry-After`.",
}


def document_errors(result, generator, request, public):
    """drf-spectacular postprocessing hook: adds the `Error` component and, to each
    operation, the error answers it does not document itself."""
    result.setdefault("components", {}).setdefault("schemas", {})["Error"] = ERROR_SCHEMA
    ref = {"$ref": "#/components/schemas/Error"}
    for operations in result.get("paths", {}).values():
        for operation in operations.values():
            responses = operation.setdefault("responses", {})
            for code, description in ERRORS.items():
                responses.setdefault(
                    code,
                    {"description": description, "content": {"application/json": {"schema": ref}}},
                )
    return result
