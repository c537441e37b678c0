from django.urls import path

from problems.apis import corpus, imports

urlpatterns = [
    path("problems/", corpus.ProblemListApi.as_view(), name="api-problem-list"),
    path(
        "problems/<str:external_id>/", corpus.ProblemDetailApi.as_view(), name="api-problem-detail"
    ),
    path("proofs/", corpus.ProofListApi.as_view(), name="api-proof-list"),
    path("proofs/<id:proof_id>/", corpus.ProofDetailApi.as_view(), name="api-proof-detail"),
    path("imports/", imports.ImportCreateApi.as_view(), name="api-import-create"),
    path("imports/<id:job_id>/", imports.ImportDetailApi.as_view(), name="api-import-detail"),
]
