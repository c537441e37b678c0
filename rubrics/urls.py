from django.urls import path

from rubrics import views
from rubrics.generation import views as generation_views

app_name = "rubrics"

urlpatterns = [
    path("", views.scheme_list_page, name="list"),
    path("ratings/", views.ratings_dashboard, name="ratings"),
    path("new/", views.scheme_new_pick, name="new-pick"),
    path("new/<str:external_id>/", views.scheme_new, name="new"),
    path("generate/", generation_views.generation_page, name="generate"),
    path("generate/runs/<id:run_id>/", generation_views.generation_run, name="generation-run"),
    path(
        "generate/runs/<id:run_id>/retry/",
        generation_views.generation_run_retry,
        name="generation-run-retry",
    ),
    path(
        "generate/tasks/<id:task_id>/retry/",
        generation_views.generation_task_retry_view,
        name="generation-task-retry",
    ),
    path(
        "generate/endpoint-from-settings/",
        generation_views.llm_endpoint_from_settings_view,
        name="llm-endpoint-from-settings",
    ),
    path(
        "generate/configs/<id:config_id>/freeze/",
        generation_views.generator_config_freeze_view,
        name="generator-config-freeze",
    ),
    path("<id:scheme_id>/", views.scheme_detail_page, name="detail"),
    path("<id:scheme_id>/rate/", views.scheme_rate_view, name="rate"),
    path("<id:scheme_id>/edit/", views.scheme_edit_view, name="edit"),
    path("<id:scheme_id>/approve/", views.scheme_approve_view, name="approve"),
]
