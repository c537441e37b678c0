from django.urls import include, path

urlpatterns = [
    path("", include("problems.api_urls")),
    path("", include("rubrics.api_urls")),
    path("", include("annotation.api_urls")),
    path("", include("adjudication.api_urls")),
    path("", include("exports.api_urls")),
    path("", include("calibration.api_urls")),
]
