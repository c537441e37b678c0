from django.urls import path

from rubrics import apis
from rubrics.generation import apis as generation_apis

urlpatterns = [
    path("schemes/", apis.SchemeListApi.as_view(), name="api-scheme-list"),
    path("schemes/<id:scheme_id>/", apis.SchemeDetailApi.as_view(), name="api-scheme-detail"),
    path(
        "problems/<str:external_id>/schemes/",
        apis.ProblemSchemeVersionsApi.as_view(),
        name="api-problem-scheme-versions",
    ),
    path(
        "generation-runs/",
        generation_apis.GenerationRunCreateApi.as_view(),
        name="api-generation-run-create",
    ),
    path(
        "generation-runs/<id:run_id>/",
        generation_apis.GenerationRunDetailApi.as_view(),
        name="api-generation-run-detail",
    ),
]
