from django.urls import path

from exports import apis

urlpatterns = [
    path("exports/", apis.ExportCreateApi.as_view(), name="api-export-create"),
    path("exports/<id:job_id>/", apis.ExportDetailApi.as_view(), name="api-export-detail"),
    path(
        "exports/<id:job_id>/download/",
        apis.ExportDownloadApi.as_view(),
        name="api-export-download",
    ),
]
