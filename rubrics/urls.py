from django.urls import path

from rubrics import views

app_name = "rubrics"

urlpatterns = [
    path("", views.scheme_list, name="list"),
    path("ratings/", views.ratings_dashboard, name="ratings"),
    path("new/", views.scheme_new_pick, name="new-pick"),
    path("new/<str:external_id>/", views.scheme_new, name="new"),
    path("<int:scheme_id>/", views.scheme_detail, name="detail"),
    path("<int:scheme_id>/rate/", views.scheme_rate, name="rate"),
    path("<int:scheme_id>/edit/", views.scheme_edit, name="edit"),
    path("<int:scheme_id>/approve/", views.scheme_approve, name="approve"),
]
