"""Scores with intervals and label confidence, over the API: each generator's mean with its
experts-only and prediction-powered intervals (admins and researchers), and queueing a refit of
the campaign's rater model (admins; the fit itself is read with the agreement figures)."""

from drf_spectacular.utils import OpenApiParameter, extend_schema
from rest_framework import serializers, status
from rest_framework.response import Response
from rest_framework.views import APIView

from adjudication.selectors import (
    AGREEMENT_READERS,
    agreement_campaign_for_user,
    campaign_blind_check,
)
from annotation.selectors import campaign_for_user
from core.roles import Role, api_permission
from estimation.selectors import rater_model_freshness
from estimation.services.intervals import (
    CONFIDENCE,
    IntervalError,
    campaign_score_intervals,
    parse_width,
)
from estimation.services.refit import rater_model_refit_ask

Admins = api_permission(Role.ADMIN)
Readers = api_permission(*AGREEMENT_READERS)


class ScoreIntervalOutput(serializers.Serializer):
    mean = serializers.FloatField()
    low = serializers.FloatField()
    high = serializers.FloatField()
    width = serializers.FloatField()
    n = serializers.IntegerField(help_text="Expert labels the interval rests on.")
    clusters = serializers.IntegerField(help_text="Problems (independent clusters) it rests on.")
    lam = serializers.FloatField(
        required=False, help_text="Active PPI: the weight on the automatic scores (0-1)."
    )
    clipped = serializers.BooleanField(
        help_text="Cut to the scale's range (it reached past an end; the cut keeps coverage)."
    )


class GeneratorScoreOutput(serializers.Serializer):
    generator = serializers.CharField()
    items = serializers.IntegerField()
    expert_labels = serializers.IntegerField()
    automatic_only = serializers.IntegerField()
    paired = serializers.IntegerField(help_text="Items with an expert label and automatic score.")
    human = ScoreIntervalOutput(
        allow_null=True, help_text="Experts only: inverse-probability-weighted, clustered."
    )
    ppi = ScoreIntervalOutput(
        allow_null=True, help_text="Active prediction-powered (IPW-PPI, power-tuned), clustered."
    )
    human_labels_needed = serializers.IntegerField(allow_null=True)
    ppi_labels_needed = serializers.IntegerField(allow_null=True)
    human_assumes = serializers.CharField(help_text="What the experts-only interval assumes.")
    ppi_assumes = serializers.CharField(help_text="What the PPI interval assumes.")
    human_not_shown_because = serializers.CharField(
        help_text="Why there is no experts-only interval (empty when there is one)."
    )
    ppi_not_shown_because = serializers.CharField(
        help_text="Why there is no PPI interval (empty when there is one)."
    )
    designs = serializers.DictField(
        child=serializers.IntegerField(), help_text="The generator's items by design."
    )


class ScoreIntervalsOutput(serializers.Serializer):
    campaign = serializers.CharField()
    scale = serializers.CharField()
    confidence = serializers.FloatField()
    width = serializers.FloatField(help_text="The width the labels-needed figures are for.")
    generators = GeneratorScoreOutput(many=True)


class ScoreIntervalsApi(APIView):
    permission_classes = [Readers]

    @extend_schema(
        parameters=[
            OpenApiParameter(
                "width",
                float,
                description="Interval width on the campaign scale (default: a tenth of its range).",
            )
        ],
        responses={200: ScoreIntervalsOutput},
        tags=["exports"],
    )
    def get(self, request, slug):
        campaign = agreement_campaign_for_user(request.user, slug, "this campaign's scores")
        try:
            width = parse_width(request.query_params.get("width"), campaign.scale)
        except IntervalError as exc:
            return Response({"width": [str(exc)]}, status=status.HTTP_400_BAD_REQUEST)
        rows = campaign_score_intervals(campaign=campaign, width=width)
        body = {
            "campaign": campaign.slug,
            "scale": campaign.scale,
            "confidence": CONFIDENCE,
            "width": width,
            "generators": [row.as_dict() for row in rows],
        }
        return Response(ScoreIntervalsOutput(body).data)


class RaterModelRefitOutput(serializers.Serializer):
    refit = serializers.IntegerField(
        allow_null=True,
        help_text="The refit queued; null when a waiting refit of the campaign took the request.",
    )
    state = serializers.CharField(
        help_text="queued or running (fitted where jobs run in the request, "
        "CELERY_TASK_ALWAYS_EAGER; failed when the last refit failed).",
    )
    fit_age = serializers.CharField(help_text="How current the fit is, in words.")
    changes_since_fit = serializers.IntegerField()


class RaterModelFitApi(APIView):
    """Queues a refit of the campaign's rater model (the debounced job every change of a label
    queues; never a fit in the request): 202 with the refit's state. The fit is read, once it
    lands, with the agreement figures (`rater_model`, `fit_age`)."""

    permission_classes = [Admins]

    @extend_schema(request=None, responses={202: RaterModelRefitOutput}, tags=["exports"])
    def post(self, request, slug):
        campaign = campaign_for_user(slug=slug, user=request.user, admin=True)
        campaign_blind_check(request.user, campaign, "this campaign's rater model")
        refit = rater_model_refit_ask(campaign_id=campaign.pk)
        freshness = rater_model_freshness(campaign)
        body = {
            "refit": refit,
            "state": freshness["state"] or "fitted",
            "fit_age": freshness["words"],
            "changes_since_fit": freshness["changes"],
        }
        return Response(RaterModelRefitOutput(body).data, status=status.HTTP_202_ACCEPTED)
