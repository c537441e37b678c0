from django.urls import path

from graders import apis

urlpatterns = [
    path(
        "campaigns/<slug:slug>/pairwise-picks/",
        apis.PickRunCreateApi.as_view(),
        name="api-pick-run-create",
    ),
    path(
        "pick-runs/<id:run_id>/retry/",
        apis.PickRunRetryApi.as_view(),
        name="api-pick-run-retry",
    ),
]
