from django.urls import path

from exports.routing import views as routing
from exports.views import evaluations, jobs, scores

app_name = "exports"
urlpatterns = [
    path("", jobs.export_list, name="list"),
    path("<id:job_id>/", jobs.export_detail, name="detail"),
    path("<id:job_id>/download/", jobs.export_download, name="download"),
    path("<id:job_id>/download/<str:part>/", jobs.export_download, name="download_part"),
    path("evaluations/", evaluations.evaluation_list, name="evaluations"),
    path("evaluations/run/", evaluations.evaluation_run, name="evaluation_run"),
    path("evaluations/<id:evaluation_id>/", evaluations.evaluation_detail, name="evaluation"),
    path(
        "evaluations/<id:evaluation_id>/retry/",
        evaluations.evaluation_retry,
        name="evaluation_retry",
    ),
    path(
        "evaluations/<id:evaluation_id>/report.json",
        evaluations.evaluation_report_json,
        name="evaluation_json",
    ),
    path("routing/<slug:slug>/", routing.campaign_routing, name="routing"),
    path("scores/<slug:slug>/", scores.campaign_scores, name="scores"),
    path("scores/<slug:slug>.csv", scores.campaign_scores_csv, name="scores_csv"),
    path("rater-model/<slug:slug>/", scores.rater_model_fit, name="rater_model_fit"),
]
