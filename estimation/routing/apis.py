"""Routing API (admins): set a campaign's item order and budget (ranking it), rank it again,
read its ranked queue."""

from drf_spectacular.utils import extend_schema
from rest_framework import serializers, status
from rest_framework.response import Response
from rest_framework.views import APIView

from annotation.models import ItemOrder
from annotation.selectors import campaign_for_user
from core.roles import Role, api_permission
from estimation.routing import selectors
from estimation.routing.services import (
    RoutingError,
    campaign_rank,
    campaign_routing_set,
    parse_budget,
    parse_uniform_share,
)

Admins = api_permission(Role.ADMIN)
QUEUE_LIMIT = 1000


class RoutingRankOutput(serializers.Serializer):
    ranked = serializers.IntegerField()
    served = serializers.IntegerField()
    held = serializers.IntegerField()
    auto_labelled = serializers.IntegerField()
    allowance = serializers.IntegerField(allow_null=True)
    already_given = serializers.IntegerField()


class RoutingSetInput(serializers.Serializer):
    item_order = serializers.ChoiceField(choices=ItemOrder.values)
    budget = serializers.CharField(
        required=False,
        allow_blank=True,
        allow_null=True,
        default=None,
        help_text="A share (0.3) or a percentage (30%) of the items for experts; empty: all.",
    )
    uniform_share = serializers.CharField(
        required=False,
        allow_blank=True,
        allow_null=True,
        default=None,
        help_text="Part of the budget drawn uniformly at random (0.25 or 25%; the rest "
        "proportional to uncertainty); empty: keep the campaign's (default 25%). 0: the most "
        "uncertain only, and no valid score interval.",
    )


class RoutingSetOutput(serializers.Serializer):
    campaign = serializers.CharField()
    item_order = serializers.CharField()
    budget = serializers.DecimalField(max_digits=4, decimal_places=3, allow_null=True)
    uniform_share = serializers.DecimalField(max_digits=4, decimal_places=3)
    rank_pass = RoutingRankOutput(allow_null=True)


def _rank_body(result) -> dict | None:
    return None if result is None else RoutingRankOutput(result).data


class RoutingSetApi(APIView):
    permission_classes = [Admins]

    @extend_schema(request=RoutingSetInput, responses={200: RoutingSetOutput}, tags=["routing"])
    def post(self, request, slug):
        campaign = campaign_for_user(slug=slug, user=request.user, admin=True)
        data = RoutingSetInput(data=request.data)
        data.is_valid(raise_exception=True)
        try:
            budget = parse_budget(data.validated_data["budget"])
            share = parse_uniform_share(data.validated_data["uniform_share"])
            result = campaign_routing_set(
                campaign=campaign,
                item_order=data.validated_data["item_order"],
                budget=budget,
                uniform_share=share,
            )
        except RoutingError as exc:
            return Response({"detail": str(exc)}, status=status.HTTP_400_BAD_REQUEST)
        campaign.refresh_from_db(fields=["routing_uniform_share"])
        body = {
            "campaign": campaign.slug,
            "item_order": data.validated_data["item_order"],
            "budget": budget,
            "uniform_share": campaign.routing_uniform_share,
            "rank_pass": _rank_body(result),
        }
        return Response(RoutingSetOutput(body).data)


class RoutingRankApi(APIView):
    permission_classes = [Admins]

    @extend_schema(request=None, responses={200: RoutingRankOutput}, tags=["routing"])
    def post(self, request, slug):
        campaign = campaign_for_user(slug=slug, user=request.user, admin=True)
        try:
            result = campaign_rank(campaign=campaign)
        except RoutingError as exc:
            return Response({"detail": str(exc)}, status=status.HTTP_400_BAD_REQUEST)
        return Response(_rank_body(result))


class RoutingQueueItemOutput(serializers.Serializer):
    item = serializers.IntegerField(source="pk")
    proof = serializers.IntegerField(source="proof_id")
    problem = serializers.CharField(source="proof.problem.external_id")
    rank = serializers.IntegerField(source="route_rank")
    uncertainty = serializers.FloatField(source="route_uncertainty")
    components = serializers.JSONField(source="route_components")
    ranked_at = serializers.DateTimeField(source="route_ranked_at")
    held = serializers.BooleanField(source="route_held")
    design = serializers.CharField(help_text="How the item was chosen for experts.")
    inclusion_probability = serializers.FloatField(
        allow_null=True, help_text="P(experts grade it) under its design; null: not known."
    )
    is_final = serializers.BooleanField()
    label_source = serializers.SerializerMethodField()

    def get_label_source(self, item) -> str | None:
        label = getattr(item, "final_label", None)
        return None if label is None else label.source


class RoutingQueueOutput(serializers.Serializer):
    campaign = serializers.CharField()
    item_order = serializers.CharField()
    budget = serializers.DecimalField(max_digits=4, decimal_places=3, allow_null=True)
    uniform_share = serializers.DecimalField(max_digits=4, decimal_places=3)
    count = serializers.IntegerField()
    items = RoutingQueueItemOutput(many=True)


class RoutingQueueApi(APIView):
    permission_classes = [Admins]

    @extend_schema(responses={200: RoutingQueueOutput}, tags=["routing"])
    def get(self, request, slug):
        campaign = campaign_for_user(slug=slug, user=request.user, admin=True)
        queue = selectors.routing_queue(campaign)
        body = {
            "campaign": campaign.slug,
            "item_order": campaign.item_order,
            "budget": campaign.routing_budget,
            "uniform_share": campaign.routing_uniform_share,
            "count": queue.count(),
            "items": list(queue[:QUEUE_LIMIT]),
        }
        return Response(RoutingQueueOutput(body).data)
