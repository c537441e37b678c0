"""The routing queue, the scores page and the rater-model fit, mounted by config/urls.py under
/exports/ in the `exports` namespace (their paths and names from before the app was split from
exports)."""

from django.urls import path

from estimation import views
from estimation.routing import views as routing

urlpatterns = [
    path("routing/<slug:slug>/", routing.campaign_routing, name="routing"),
    path("scores/<slug:slug>/", views.campaign_scores, name="scores"),
    path("scores/<slug:slug>.csv", views.campaign_scores_csv, name="scores_csv"),
    path("rater-model/<slug:slug>/", views.rater_model_fit, name="rater_model_fit"),
]
