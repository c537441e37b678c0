"""The export pages, under /exports/ in the `exports` namespace; config/urls.py mounts the grader
evaluation pages (graders/urls.py) and the estimation pages (estimation/urls.py) under the same
prefix and namespace, where they were before those apps were split from this one."""

from django.urls import path

from exports.views import jobs

urlpatterns = [
    path("", jobs.export_list, name="list"),
    path("<id:job_id>/", jobs.export_detail, name="detail"),
    path("<id:job_id>/download/", jobs.export_download, name="download"),
    path("<id:job_id>/download/<str:part>/", jobs.export_download, name="download_part"),
]
