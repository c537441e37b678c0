from django.urls import path

from calibration import apis

urlpatterns = [
    path(
        "calibration/rounds/",
        apis.CalibrationRoundCreateApi.as_view(),
        name="api-calibration-round-create",
    ),
    path(
        "calibration/items/<id:item_id>/feedback/",
        apis.CalibrationFeedbackApi.as_view(),
        name="api-calibration-feedback",
    ),
    path(
        "calibration/experts/<str:username>/report/",
        apis.CalibrationReportApi.as_view(),
        name="api-calibration-report",
    ),
    path(
        "calibration/campaigns/<slug:slug>/requirement/",
        apis.CalibrationRequirementApi.as_view(),
        name="api-calibration-requirement",
    ),
    path(
        "calibration/campaigns/<slug:slug>/requirement/set/",
        apis.CalibrationRequirementSetApi.as_view(),
        name="api-calibration-requirement-set",
    ),
]
