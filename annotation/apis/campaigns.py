"""The campaign API (admins): create a campaign with its experts."""

from decimal import Decimal

from django.contrib.auth import get_user_model
from drf_spectacular.utils import extend_schema
from rest_framework import serializers, status
from rest_framework.exceptions import ValidationError
from rest_framework.response import Response
from rest_framework.views import APIView

from annotation import services
from annotation.apis import Admin
from annotation.models import (
    DoubleDesign,
    LabelPolicy,
    Scale,
    SecondOpinionSource,
    TaskKind,
)
from annotation.scales import RANGE_MAX, is_scale
from core.values import INT_MAX, INT_MIN, LEASE_MINUTES_MAX

User = get_user_model()


def _scale(value: str) -> str:
    if not is_scale(value):
        raise serializers.ValidationError(
            f"{value!r} is not a scale: use one of {', '.join(Scale.values)} or an integer range "
            f"a-b within 0-{RANGE_MAX}, such as 0-20."
        )
    return value


class CampaignCreateInput(serializers.Serializer):
    name = serializers.CharField(max_length=200)
    slug = serializers.SlugField(max_length=80, required=False, allow_blank=True)
    task_kind = serializers.ChoiceField(choices=TaskKind.choices, required=False)
    scale = serializers.CharField(
        required=False,
        max_length=10,
        help_text="0-7, 0-0.5-1, 1-4, 0-10, 0-21, or any integer range a-b within 0-50.",
    )
    double_share = serializers.DecimalField(
        max_digits=4, decimal_places=3, required=False, min_value=0, max_value=1
    )
    sample_seed = serializers.IntegerField(required=False, min_value=INT_MIN, max_value=INT_MAX)
    double_design = serializers.ChoiceField(choices=DoubleDesign.choices, required=False)
    double_uniform_share = serializers.DecimalField(
        max_digits=4, decimal_places=3, required=False, min_value=Decimal("0.001"), max_value=1
    )
    tolerance = serializers.DecimalField(
        max_digits=4, decimal_places=2, required=False, min_value=0, max_value=RANGE_MAX
    )
    label_policy = serializers.ChoiceField(choices=LabelPolicy.choices, required=False)
    error_taxonomy = serializers.ListField(child=serializers.DictField(), required=False)
    guidelines = serializers.CharField(required=False, allow_blank=True)
    lease_minutes = serializers.IntegerField(
        required=False, min_value=1, max_value=LEASE_MINUTES_MAX
    )
    gold_rate = serializers.DecimalField(
        max_digits=4, decimal_places=3, required=False, min_value=0, max_value=1
    )
    fast_seconds = serializers.IntegerField(required=False, min_value=0, max_value=INT_MAX)
    second_opinion = serializers.ChoiceField(
        choices=SecondOpinionSource.choices, required=False, allow_blank=True
    )
    second_opinion_from = serializers.CharField(required=False, allow_blank=True, max_length=200)
    experts = serializers.ListField(child=serializers.CharField(), required=False)

    def validate_scale(self, value: str) -> str:
        return _scale(value)


class CampaignOutput(serializers.Serializer):
    id = serializers.IntegerField()
    slug = serializers.CharField()
    name = serializers.CharField()
    task_kind = serializers.CharField()
    scale = serializers.CharField()
    double_share = serializers.DecimalField(max_digits=4, decimal_places=3)
    double_design = serializers.CharField()
    double_uniform_share = serializers.DecimalField(max_digits=4, decimal_places=3)
    sample_seed = serializers.IntegerField()
    tolerance = serializers.DecimalField(max_digits=4, decimal_places=2)
    label_policy = serializers.CharField()
    error_taxonomy = serializers.JSONField()
    status = serializers.CharField()
    lease_minutes = serializers.IntegerField()
    gold_rate = serializers.DecimalField(max_digits=4, decimal_places=3)
    second_opinion = serializers.CharField()
    second_opinion_from = serializers.CharField()


class CampaignCreateApi(APIView):
    permission_classes = [Admin]

    @extend_schema(
        tags=["annotation"], request=CampaignCreateInput, responses={201: CampaignOutput}
    )
    def post(self, request):
        params = CampaignCreateInput(data=request.data)
        params.is_valid(raise_exception=True)
        data = dict(params.validated_data)
        experts = data.pop("experts", [])
        users = list(User.objects.filter(username__in=experts))
        missing = set(experts) - {u.username for u in users}
        if missing:
            raise ValidationError({"experts": [f"no such user: {', '.join(sorted(missing))}"]})
        try:
            campaign = services.campaign_create(created_by=request.user, **data)
        except services.CampaignError as exc:
            raise ValidationError({"detail": str(exc)}) from exc
        for user in users:
            services.campaign_member_add(campaign=campaign, user=user, role="expert")
        return Response(CampaignOutput(campaign).data, status=status.HTTP_201_CREATED)
