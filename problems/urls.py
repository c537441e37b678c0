from django.urls import path

from problems.views import corpus, imports, pictures

app_name = "problems"

urlpatterns = [
    path("", corpus.problem_list_page, name="list"),
    path("import/", imports.import_upload, name="import"),
    path("import/<id:job_id>/", imports.import_detail, name="import-detail"),
    path("proofs/<id:proof_id>/", corpus.proof_detail_page, name="proof"),
    path("pictures/<str:sha256>/", pictures.picture_show, name="picture"),
    path("<str:external_id>/", corpus.problem_detail_page, name="detail"),
]
