from django.urls import path

from calibration import views

app_name = "calibration"

urlpatterns = [
    path("", views.home, name="home"),
    path("download.csv", views.download_all, name="download-all"),
    path("rounds/new/", views.round_create, name="round-create"),
    path("items/<id:item_id>/feedback/", views.feedback, name="feedback"),
    path("report/", views.report_own, name="report-own"),
    path("report/<str:username>/", views.report, name="report"),
    path(
        "report/<str:username>/download.<str:fmt>",
        views.report_download,
        name="report-download",
    ),
    path("campaigns/<slug:slug>/requirement/", views.requirement, name="requirement"),
    path("campaigns/<slug:slug>/standing/", views.standing, name="standing"),
    path(
        "campaigns/<slug:slug>/requirement/retake/<str:username>/",
        views.retake,
        name="retake",
    ),
    path(
        "campaigns/<slug:slug>/requirement/remove/",
        views.requirement_remove,
        name="requirement-remove",
    ),
]
