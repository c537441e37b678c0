"""API of webhooks (admins only): list, create, read, change and delete hooks, a hook's
deliveries with their tries, replay a delivery. One APIView per operation."""

from __future__ import annotations

from drf_spectacular.utils import OpenApiParameter, extend_schema
from rest_framework import serializers, status
from rest_framework.exceptions import ValidationError
from rest_framework.response import Response
from rest_framework.views import APIView

from core.api import ListApi
from core.roles import Role, api_permission
from webhooks import selectors, services
from webhooks.models import Delivery, DeliveryAttempt, Event, Webhook

Admin = api_permission(Role.ADMIN)
TAGS = ["webhooks"]
WEBHOOK_ID = OpenApiParameter("webhook_id", int, OpenApiParameter.PATH)
DELIVERY_ID = OpenApiParameter("delivery_id", int, OpenApiParameter.PATH)


def _refused(exc: services.WebhookError) -> ValidationError:
    return ValidationError({exc.field: [exc.message]})


class WebhookOutput(serializers.ModelSerializer):
    owner = serializers.CharField(
        source="owner.username",
        default=None,
        allow_null=True,
        help_text="The admin who last set the URL or the events: an event about a proof is sent "
        "only while they may see it.",
    )

    class Meta:
        model = Webhook
        fields = ["id", "url", "events", "active", "description", "owner", "created_at"]


class WebhookDetailOutput(WebhookOutput):
    """A hook with its signing secret (admins only, as every operation here)."""

    class Meta(WebhookOutput.Meta):
        fields = [*WebhookOutput.Meta.fields, "secret"]


class WebhookListApi(ListApi):
    permission_classes = [Admin]

    @extend_schema(responses=WebhookOutput(many=True), tags=TAGS)
    def get(self, request):
        return self.page(selectors.webhook_list(), WebhookOutput)


class WebhookCreateInput(serializers.Serializer):
    # checked by webhooks.services (http or https, a host), whose refusals name the field
    url = serializers.CharField(max_length=2000)
    events = serializers.ListField(
        child=serializers.CharField(max_length=40), min_length=1, max_length=len(Event.values)
    )
    active = serializers.BooleanField(required=False, default=True)
    description = serializers.CharField(
        max_length=200, required=False, default="", allow_blank=True
    )


class WebhookCreateApi(APIView):
    permission_classes = [Admin]

    @extend_schema(request=WebhookCreateInput, responses={201: WebhookDetailOutput}, tags=TAGS)
    def post(self, request):
        data = WebhookCreateInput(data=request.data)
        data.is_valid(raise_exception=True)
        try:
            hook = services.webhook_create(**data.validated_data, owner=request.user)
        except services.WebhookError as exc:
            raise _refused(exc) from exc
        return Response(WebhookDetailOutput(hook).data, status=status.HTTP_201_CREATED)


class WebhookDetailApi(APIView):
    permission_classes = [Admin]

    @extend_schema(parameters=[WEBHOOK_ID], responses=WebhookDetailOutput, tags=TAGS)
    def get(self, request, webhook_id: int):
        return Response(WebhookDetailOutput(selectors.webhook_get(webhook_id=webhook_id)).data)


class WebhookUpdateInput(serializers.Serializer):
    url = serializers.CharField(max_length=2000, required=False)
    events = serializers.ListField(
        child=serializers.CharField(max_length=40),
        min_length=1,
        max_length=len(Event.values),
        required=False,
    )
    active = serializers.BooleanField(required=False)


class WebhookUpdateApi(APIView):
    """Changes what is given: activate or deactivate, other events, another URL."""

    permission_classes = [Admin]

    @extend_schema(
        parameters=[WEBHOOK_ID],
        request=WebhookUpdateInput,
        responses=WebhookDetailOutput,
        tags=TAGS,
    )
    def post(self, request, webhook_id: int):
        hook = selectors.webhook_get(webhook_id=webhook_id)
        data = WebhookUpdateInput(data=request.data)
        data.is_valid(raise_exception=True)
        try:
            hook = services.webhook_update(webhook=hook, **data.validated_data, by=request.user)
        except services.WebhookError as exc:
            raise _refused(exc) from exc
        return Response(WebhookDetailOutput(hook).data)


class WebhookDeleteApi(APIView):
    permission_classes = [Admin]

    @extend_schema(parameters=[WEBHOOK_ID], request=None, responses={204: None}, tags=TAGS)
    def post(self, request, webhook_id: int):
        services.webhook_delete(webhook=selectors.webhook_get(webhook_id=webhook_id))
        return Response(status=status.HTTP_204_NO_CONTENT)


class DeliveryAttemptOutput(serializers.ModelSerializer):
    class Meta:
        model = DeliveryAttempt
        fields = ["number", "at", "status_code", "response_excerpt", "error", "duration_ms"]


class DeliveryOutput(serializers.ModelSerializer):
    tries = DeliveryAttemptOutput(many=True, read_only=True)

    class Meta:
        model = Delivery
        fields = [
            "id",
            "webhook",
            "event",
            "message_id",
            "status",
            "attempts",
            "error",
            "replay_of",
            "created_at",
            "finished_at",
            "tries",
        ]


class WebhookDeliveryListApi(ListApi):
    permission_classes = [Admin]

    @extend_schema(parameters=[WEBHOOK_ID], responses=DeliveryOutput(many=True), tags=TAGS)
    def get(self, request, webhook_id: int):
        hook = selectors.webhook_get(webhook_id=webhook_id)
        rows = hook.deliveries.prefetch_related("tries")
        return self.page(rows, DeliveryOutput)


class DeliveryDetailApi(APIView):
    permission_classes = [Admin]

    @extend_schema(parameters=[DELIVERY_ID], responses=DeliveryOutput, tags=TAGS)
    def get(self, request, delivery_id: int):
        return Response(DeliveryOutput(selectors.delivery_get(delivery_id=delivery_id)).data)


class DeliveryReplayApi(APIView):
    """Queues the delivery again, as a new delivery (the same body and message id)."""

    permission_classes = [Admin]

    @extend_schema(
        parameters=[DELIVERY_ID], request=None, responses={202: DeliveryOutput}, tags=TAGS
    )
    def post(self, request, delivery_id: int):
        delivery = selectors.delivery_get(delivery_id=delivery_id)
        try:
            replay = services.delivery_replay(delivery=delivery)
        except services.WebhookError as exc:
            raise _refused(exc) from exc
        return Response(DeliveryOutput(replay).data, status=status.HTTP_202_ACCEPTED)
