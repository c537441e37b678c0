"""Output serializers that several apps' APIs share, and SharedFields for the hot ones."""

import threading

from rest_framework import serializers
from rest_framework.utils.serializer_helpers import BindingDict

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
