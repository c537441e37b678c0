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
    path("evaluations/grids/", views.grid_create, name="grid_create"),
    path("evaluations/grids/<id:grid_id>/", views.grid_detail, name="grid"),
    path("evaluations/grids/<id:grid_id>/retry/", views.grid_retry, name="grid_retry"),
    path("evaluations/grids/<id:grid_id>/report.json", views.grid_report_json, name="grid_json"),
    path("pairs/<slug:slug>/selection/", pairwise.pairwise_selection, name="pairwise-selection"),
    path("pairs/<slug:slug>/selection/picks/", pairwise.pick_run_start, name="pick-run-start"),
    path(
        "pairs/<slug:slug>/selection/picks/<id:run_id>/retry/",
        pairwise.pick_run_retry,
        name="pick-run-retry",
    ),
]
