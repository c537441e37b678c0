from django.urls import path

from webhooks import apis

urlpatterns = [
    path("webhooks/", apis.WebhookListApi.as_view(), name="api-webhook-list"),
    path("webhooks/new/", apis.WebhookCreateApi.as_view(), name="api-webhook-create"),
    path("webhooks/<id:webhook_id>/", apis.WebhookDetailApi.as_view(), name="api-webhook-detail"),
    path(
        "webhooks/<id:webhook_id>/update/",
        apis.WebhookUpdateApi.as_view(),
        name="api-webhook-update",
    ),
    path(
        "webhooks/<id:webhook_id>/delete/",
        apis.WebhookDeleteApi.as_view(),
        name="api-webhook-delete",
    ),
    path(
        "webhooks/<id:webhook_id>/deliveries/",
        apis.WebhookDeliveryListApi.as_view(),
        name="api-webhook-deliveries",
    ),
    path(
        "webhooks/deliveries/<id:delivery_id>/",
        apis.DeliveryDetailApi.as_view(),
        name="api-delivery-detail",
    ),
    path(
        "webhooks/deliveries/<id:delivery_id>/replay/",
        apis.DeliveryReplayApi.as_view(),
        name="api-delivery-replay",
    ),
]
