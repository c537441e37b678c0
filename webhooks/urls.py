from django.urls import path

from webhooks import views

app_name = "webhooks"

urlpatterns = [
    path("", views.webhook_list, name="list"),
    path("<id:webhook_id>/", views.webhook_detail, name="detail"),
    path("<id:webhook_id>/active/", views.webhook_active, name="active"),
    path("<id:webhook_id>/delete/", views.webhook_delete, name="delete"),
    path("deliveries/<id:delivery_id>/replay/", views.delivery_replay, name="replay"),
]
