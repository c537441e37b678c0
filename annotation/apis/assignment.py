"""The assignment API: lease the expert's next item of a campaign (or "No work left."), renew a
lease, and, for admins, give an item to an expert by hand."""

from django.contrib.auth import get_user_model
from drf_spectacular.utils import PolymorphicProxySerializer, extend_schema
from rest_framework import serializers, status
from rest_framework.exceptions import NotFound, PermissionDenied, ValidationError
from rest_framework.response import Response
from rest_framework.views import APIView

from annotation import selectors, services
from annotation.apis import Admin, Anyone
from annotation.apis.items import ItemDetailOutput, _view
from annotation.calibration_gate import CalibrationRequired
from annotation.models import (
    AssignmentStatus,
    Item,
)
from core.api import SharedFields
from core.values import ID_MAX

User = get_user_model()


class NoWorkLeftOutput(SharedFields, serializers.Serializer):
    detail = serializers.CharField()
    submitted = serializers.IntegerField()
    drafts = serializers.IntegerField()


NextItemOutput = PolymorphicProxySerializer(
    component_name="NextItemOutput",
    serializers=[ItemDetailOutput, NoWorkLeftOutput],
    resource_type_field_name=None,
)


def _next_item(request, campaign, *, has_open: bool | None) -> dict:
    """Leases the expert's next item of the campaign: the item as ItemDetailOutput, or "No work
    left." with the expert's totals. `has_open`: whether the expert has open work in the
    campaign, when a read already said (None: looked up)."""
    try:
        assignment = services.assignment_next(
            campaign=campaign, expert=request.user, has_open=has_open
        )
    except CalibrationRequired as exc:
        raise PermissionDenied(str(exc)) from exc
    if assignment is None:
        totals = selectors.expert_totals(campaign=campaign, expert=request.user)
        body = {"detail": "No work left.", "submitted": totals.submitted, "drafts": totals.drafts}
        return NoWorkLeftOutput(body).data
    view = _view(request, assignment.item_id, assignment, campaign)
    return ItemDetailOutput(
        {"item": view.item, "grade": view.grade, "other_grades": view.others}
    ).data


class NextItemApi(APIView):
    permission_classes = [Anyone]

    @extend_schema(tags=["annotation"], request=None, responses={200: NextItemOutput})
    def post(self, request, slug):
        campaign = selectors.expert_campaign(slug=slug, user=request.user)
        return Response(_next_item(request, campaign, has_open=campaign.has_open_work))


class LeaseRenewOutput(SharedFields, serializers.Serializer):
    leased_until = serializers.DateTimeField(
        allow_null=True, help_text="None once the item is done."
    )


class LeaseRenewApi(APIView):
    permission_classes = [Anyone]

    @extend_schema(
        tags=["annotation"],
        request=None,
        responses=LeaseRenewOutput,
        description="Keeps the item leased to you while you work on it (the grading page "
        "calls it every few minutes).",
    )
    def post(self, request, item_id):
        assignment = selectors.assignment_for_expert(item_id=item_id, expert=request.user)
        if assignment is None:
            raise NotFound("Not assigned to you.")
        if assignment.status == AssignmentStatus.DONE:
            return Response(LeaseRenewOutput({"leased_until": None}).data)
        try:
            assignment = services.assignment_heartbeat(assignment=assignment)
        except services.AssignmentError as exc:
            raise ValidationError({"problems": [str(exc)]}) from exc
        return Response(LeaseRenewOutput(assignment).data)


class AssignInput(serializers.Serializer):
    item = serializers.IntegerField(min_value=1, max_value=ID_MAX)
    expert = serializers.CharField(max_length=150)


class AssignOutput(serializers.Serializer):
    id = serializers.IntegerField()
    item = serializers.IntegerField(source="item_id")
    expert = serializers.CharField(source="expert.username")
    status = serializers.CharField()
    leased_until = serializers.DateTimeField()


class AssignApi(APIView):
    permission_classes = [Admin]

    @extend_schema(tags=["annotation"], request=AssignInput, responses={201: AssignOutput})
    def post(self, request, slug):
        campaign = selectors.campaign_for_user(slug=slug, user=request.user, admin=True)
        params = AssignInput(data=request.data)
        params.is_valid(raise_exception=True)
        item = Item.objects.filter(pk=params.validated_data["item"], campaign=campaign).first()
        expert = User.objects.filter(username=params.validated_data["expert"]).first()
        if item is None or expert is None:
            raise ValidationError({"detail": "No such item in this campaign, or no such user."})
        try:
            assignment = services.assignment_create_manual(
                item=item, expert=expert, assigned_by=request.user
            )
        except services.AssignmentError as exc:
            raise ValidationError({"detail": str(exc)}) from exc
        return Response(AssignOutput(assignment).data, status=status.HTTP_201_CREATED)
