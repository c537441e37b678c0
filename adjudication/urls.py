from django.urls import path

from adjudication import views

app_name = "adjudication"
urlpatterns = [
    path("", views.queue, name="queue"),
    path("cases/<int:pk>/", views.case_detail, name="case"),
    path("cases/<int:pk>/assign/", views.case_assign_view, name="assign"),
    path("cases/<int:pk>/resolve/", views.case_resolve_view, name="resolve"),
    path("cases/<int:pk>/comment/", views.case_comment_view, name="comment"),
    path("cases/<int:pk>/discussion/", views.discussion, name="discussion"),
    path("returned/", views.returned, name="returned"),
    path("campaigns/", views.campaigns, name="campaigns"),
    path("imported/", views.imported_materialise, name="imported"),
    path("campaigns/<slug:slug>/agreement/", views.dashboard, name="dashboard"),
    path(
        "campaigns/<slug:slug>/disagreements.csv",
        views.disagreements_csv,
        name="disagreements_csv",
    ),
    path("campaigns/<slug:slug>/labels/", views.labels, name="labels"),
    path("items/<int:pk>/send/", views.item_send, name="send"),
    path("items/<int:pk>/gold/", views.item_gold, name="gold"),
]
