"""Output serializers that several apps' APIs share."""

from rest_framework import serializers


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
