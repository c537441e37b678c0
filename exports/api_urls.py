from django.urls import path

from exports import apis
from exports.apis import scores as apis_scores
from exports.routing import apis as apis_routing

urlpatterns = [
    path("exports/", apis.ExportCreateApi.as_view(), name="api-export-create"),
    path("exports/<id:job_id>/", apis.ExportDetailApi.as_view(), name="api-export-detail"),
    path(
        "exports/<id:job_id>/download/",
        apis.ExportDownloadApi.as_view(),
        name="api-export-download",
    ),
    path(
        "campaigns/<slug:slug>/routing/",
        apis_routing.RoutingSetApi.as_view(),
        name="api-routing-set",
    ),
    path(
        "campaigns/<slug:slug>/routing/rank/",
        apis_routing.RoutingRankApi.as_view(),
        name="api-routing-rank",
    ),
    path(
        "campaigns/<slug:slug>/routing/queue/",
        apis_routing.RoutingQueueApi.as_view(),
        name="api-routing-queue",
    ),
    path(
        "campaigns/<slug:slug>/scores/",
        apis_scores.ScoreIntervalsApi.as_view(),
        name="api-score-intervals",
    ),
    path(
        "campaigns/<slug:slug>/rater-model/",
        apis_scores.RaterModelFitApi.as_view(),
        name="api-rater-model-fit",
    ),
]
