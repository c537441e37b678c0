"""Output serializers that several apps' APIs share."""

from rest_framework import serializers


class RunStatusOutput(serializers.Serializer):
    """Where a run of language-model calls stands (verifier, labelling and generation runs):
    its status, how many units it has, the tokens spent so far, when it began and ended."""

    status = serializers.CharField()
    total = serializers.IntegerField()
    prompt_tokens = serializers.IntegerField()
    completion_tokens = serializers.IntegerField()
    created_at = serializers.DateTimeField()
    finished_at = serializers.DateTimeField(allow_null=True)
