"""API of calibration: rounds from gold items, the gold feedback after a submission, an
expert's report, a campaign's requirement. One APIView per operation."""

from __future__ import annotations

from django.contrib.auth import get_user_model
from django.http import Http404
from drf_spectacular.utils import OpenApiParameter, extend_schema
from rest_framework import serializers, status
from rest_framework.exceptions import NotFound, ValidationError
from rest_framework.response import Response
from rest_framework.views import APIView

from annotation import selectors as annotation_selectors
from annotation.models import Campaign, Item
from calibration import selectors, services
from core.roles import ALL_ROLES, Role, api_permission
from core.values import ID_MAX

Admin = api_permission(Role.ADMIN)
Anyone = api_permission(*ALL_ROLES)
User = get_user_model()


class CalibrationRoundCreateInput(serializers.Serializer):
    name = serializers.CharField(max_length=200)
    slug = serializers.SlugField(max_length=80, required=False, default="")
    guidelines = serializers.CharField(required=False, default="", allow_blank=True)
    gold_items = serializers.ListField(
        child=serializers.IntegerField(min_value=1, max_value=ID_MAX),
        min_length=1,
        max_length=2000,
    )
    experts = serializers.ListField(
        child=serializers.CharField(max_length=150), required=False, default=list
    )


class CalibrationRoundCreateOutput(serializers.Serializer):
    slug = serializers.CharField()
    name = serializers.CharField()
    scale = serializers.CharField()
    items = serializers.IntegerField()


class CalibrationRoundCreateApi(APIView):
    permission_classes = [Admin]

    @extend_schema(
        request=CalibrationRoundCreateInput,
        responses={201: CalibrationRoundCreateOutput},
        tags=["calibration"],
    )
    def post(self, request):
        data = CalibrationRoundCreateInput(data=request.data)
        data.is_valid(raise_exception=True)
        values = data.validated_data
        experts = list(User.objects.filter(username__in=values["experts"]))
        unknown = sorted(set(values["experts"]) - {u.get_username() for u in experts})
        if unknown:
            raise ValidationError({"experts": [f"no such user(s): {', '.join(unknown)}"]})
        try:
            round = services.calibration_round_create(
                name=values["name"],
                slug=values["slug"],
                guidelines=values["guidelines"],
                gold_items=list(Item.objects.filter(pk__in=values["gold_items"])),
                created_by=request.user,
                experts=experts,
            )
        except services.CalibrationError as exc:
            field, _, message = str(exc).partition(": ")
            key = field if field in CalibrationRoundCreateInput().fields else "detail"
            raise ValidationError({key: [message or str(exc)]}) from exc
        body = {
            "slug": round.slug,
            "name": round.name,
            "scale": round.scale,
            "items": round.items.count(),
        }
        return Response(CalibrationRoundCreateOutput(body).data, status=status.HTTP_201_CREATED)


class CalibrationSchemeLineOutput(serializers.Serializer):
    id = serializers.CharField()
    title = serializers.CharField()
    kind = serializers.ChoiceField(choices=["award", "deduction", "band"])
    gold = serializers.CharField(allow_blank=True)
    yours = serializers.CharField(allow_blank=True)


class CalibrationFeedbackOutput(serializers.Serializer):
    item = serializers.IntegerField()
    score = serializers.DecimalField(max_digits=5, decimal_places=2)
    gold = serializers.DecimalField(max_digits=6, decimal_places=2)
    error = serializers.DecimalField(max_digits=6, decimal_places=2)
    source = serializers.CharField()
    rationale = serializers.CharField(allow_blank=True)
    decided_by = serializers.CharField(allow_blank=True)
    scheme_items = CalibrationSchemeLineOutput(many=True)


class CalibrationFeedbackApi(APIView):
    permission_classes = [Anyone]

    @extend_schema(
        parameters=[OpenApiParameter("item_id", int, OpenApiParameter.PATH)],
        responses=CalibrationFeedbackOutput,
        tags=["calibration"],
    )
    def get(self, request, item_id: int):
        try:
            found = selectors.gold_feedback_for_user(item_id=item_id, user=request.user)
        except Http404 as exc:
            raise NotFound(str(exc)) from exc
        return Response(CalibrationFeedbackOutput(found.as_dict()).data)


class CalibrationStatsOutput(serializers.Serializer):
    key = serializers.CharField()
    n = serializers.IntegerField()
    bias = serializers.FloatField(allow_null=True)
    mae = serializers.FloatField(allow_null=True)


class CalibrationGradeOutput(serializers.Serializer):
    submitted_at = serializers.DateTimeField()
    item = serializers.IntegerField()
    campaign = serializers.CharField()
    calibration_round = serializers.BooleanField()
    problem = serializers.CharField()
    topic = serializers.CharField(allow_blank=True)
    score = serializers.FloatField()
    gold = serializers.FloatField()
    error = serializers.FloatField()


class CalibrationReportOutput(serializers.Serializer):
    expert = serializers.CharField()
    block_size = serializers.IntegerField()
    overall = CalibrationStatsOutput()
    by_block = CalibrationStatsOutput(many=True)
    by_week = CalibrationStatsOutput(many=True)
    by_topic = CalibrationStatsOutput(many=True)
    grades = CalibrationGradeOutput(many=True)


class CalibrationReportApi(APIView):
    permission_classes = [Anyone]

    @extend_schema(
        parameters=[OpenApiParameter("username", str, OpenApiParameter.PATH)],
        responses=CalibrationReportOutput,
        tags=["calibration"],
    )
    def get(self, request, username: str):
        try:
            found = selectors.report_for_user(username=username, user=request.user)
        except Http404 as exc:
            raise NotFound(str(exc)) from exc
        return Response(CalibrationReportOutput(selectors.report_as_dict(found)).data)


class CalibrationRequirementSetInput(serializers.Serializer):
    round = serializers.SlugField(max_length=80)
    max_mae = serializers.DecimalField(max_digits=4, decimal_places=2, min_value=0)
    min_items = serializers.IntegerField(min_value=1, max_value=1000)


class CalibrationPassOutput(serializers.Serializer):
    expert = serializers.CharField(source="username")
    items = serializers.IntegerField(source="n")
    mae = serializers.FloatField(allow_null=True)
    passed = serializers.BooleanField()
    passed_at = serializers.DateTimeField(allow_null=True)
    checked_on = serializers.CharField(
        source="round.slug", help_text="The round they are checked on (theirs, when given one)."
    )
    left = serializers.IntegerField(help_text="Gold items of that round they have not had yet.")
    blocked = serializers.BooleanField(
        source="stuck", help_text="Not passed, and no gold item left for them: give a new round."
    )
    why = serializers.CharField(help_text="Why they have not passed, in words (empty once passed).")


class CalibrationRequirementOutput(serializers.Serializer):
    campaign = serializers.CharField()
    round = serializers.CharField(allow_null=True)
    max_mae = serializers.DecimalField(max_digits=4, decimal_places=2, allow_null=True)
    min_items = serializers.IntegerField(allow_null=True)
    experts = CalibrationPassOutput(many=True)


def _requirement_body(campaign: Campaign) -> dict:
    current, rows = selectors.requirement_status(campaign)
    return CalibrationRequirementOutput(
        {
            "campaign": campaign.slug,
            "round": current.round.slug if current else None,
            "max_mae": current.max_mae if current else None,
            "min_items": current.min_items if current else None,
            "experts": rows,
        }
    ).data


class CalibrationRequirementApi(APIView):
    permission_classes = [Admin]

    @extend_schema(
        parameters=[OpenApiParameter("slug", str, OpenApiParameter.PATH)],
        responses=CalibrationRequirementOutput,
        tags=["calibration"],
    )
    def get(self, request, slug: str):
        campaign = annotation_selectors.campaign_for_user(slug=slug, user=request.user, admin=True)
        return Response(_requirement_body(campaign))


class CalibrationRequirementSetApi(APIView):
    permission_classes = [Admin]

    @extend_schema(
        parameters=[OpenApiParameter("slug", str, OpenApiParameter.PATH)],
        request=CalibrationRequirementSetInput,
        responses=CalibrationRequirementOutput,
        tags=["calibration"],
    )
    def post(self, request, slug: str):
        campaign = annotation_selectors.campaign_for_user(slug=slug, user=request.user, admin=True)
        data = CalibrationRequirementSetInput(data=request.data)
        data.is_valid(raise_exception=True)
        values = data.validated_data
        round = Campaign.objects.filter(slug=values["round"], is_calibration=True).first()
        if round is None:
            raise ValidationError({"round": [f"{values['round']!r} is not a calibration round"]})
        try:
            services.calibration_requirement_set(
                campaign=campaign,
                round=round,
                max_mae=values["max_mae"],
                min_items=values["min_items"],
                set_by=request.user,
            )
        except services.CalibrationError as exc:
            field, _, message = str(exc).partition(": ")
            key = field if field in CalibrationRequirementSetInput().fields else "detail"
            raise ValidationError({key: [message or str(exc)]}) from exc
        return Response(_requirement_body(campaign))
