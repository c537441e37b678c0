from django.urls import include, path

# The grading API first (no path of the others starts as one of its paths does): a judgement is
# the busiest request, and each pattern before its own is one more match tried on every call.
urlpatterns = [
    path("", include("annotation.api_urls")),
    path("", include("problems.api_urls")),
    path("", include("rubrics.api_urls")),
    path("", include("adjudication.api_urls")),
    path("", include("exports.api_urls")),
    path("", include("estimation.api_urls")),
    path("", include("graders.api_urls")),
    path("", include("calibration.api_urls")),
    path("", include("webhooks.api_urls")),
]
