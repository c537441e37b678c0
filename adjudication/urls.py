from django.urls import path

from adjudication import views
from adjudication.verification import views as views_loop

app_name = "adjudication"
urlpatterns = [
    path("", views.queue, name="queue"),
    path("cases/<id:pk>/", views.case_detail, name="case"),
    path("cases/<id:pk>/assign/", views.case_assign_view, name="assign"),
    path("cases/<id:pk>/resolve/", views.case_resolve_view, name="resolve"),
    path("cases/<id:pk>/comment/", views.case_comment_view, name="comment"),
    path("cases/<id:pk>/discussion/", views.discussion, name="discussion"),
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
    path("campaigns/<slug:slug>/checkpoints/", views.checkpoints, name="checkpoints"),
    path("campaigns/<slug:slug>/checkpoints.csv", views.checkpoints_csv, name="checkpoints_csv"),
    path("items/<id:pk>/send/", views.item_send, name="send"),
    path("items/<id:pk>/gold/", views.item_gold, name="gold"),
    path("verification/", views_loop.verification, name="verification"),
    path("verification/runs/", views_loop.verifier_run_create, name="verifier-run-create"),
    path("verification/runs/<id:run_id>/", views_loop.verifier_run_page, name="verifier-run"),
    path(
        "verification/runs/<id:run_id>/retry/",
        views_loop.verifier_run_retry_view,
        name="verifier-run-retry",
    ),
    path("verification/loops/", views_loop.labelling_run_create, name="labelling-run-create"),
    path("verification/loops/<id:run_id>/", views_loop.labelling_run_page, name="labelling-run"),
    path(
        "verification/loops/<id:run_id>/retry/",
        views_loop.labelling_run_retry,
        name="labelling-run-retry",
    ),
    path(
        "verification/loops/<id:run_id>/audit/",
        views_loop.labelling_audit,
        name="labelling-audit",
    ),
]
