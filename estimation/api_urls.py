from django.urls import path

from estimation import apis
from estimation.routing import apis as apis_routing

urlpatterns = [
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
        apis.ScoreIntervalsApi.as_view(),
        name="api-score-intervals",
    ),
    path(
        "campaigns/<slug:slug>/rater-model/",
        apis.RaterModelFitApi.as_view(),
        name="api-rater-model-fit",
    ),
]
