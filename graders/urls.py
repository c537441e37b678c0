"""The grader evaluation pages, mounted by config/urls.py under /exports/ in the `exports`
namespace (their paths and names from before the app was split from exports)."""

from django.urls import path

from graders import pairwise, views

urlpatterns = [
    path("evaluations/", views.evaluation_list, name="evaluations"),
    path("evaluations/run/", views.evaluation_run_view, name="evaluation_run"),
    path("evaluations/<id:evaluation_id>/", views.evaluation_detail, name="evaluation"),
    path(
        "evaluations/<id:evaluation_id>/retry/",
        views.evaluation_retry,
        name="evaluation_retry",
    ),
    path(
        "evaluations/<id:evaluation_id>/report.json",
        views.evaluation_report_json,
        name="evaluation_json",
    ),
    path("pairs/<slug:slug>/selection/", pairwise.pairwise_selection, name="pairwise-selection"),
]
