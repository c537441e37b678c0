from django.urls import path

from adjudication import apis
from adjudication.verification import apis as apis_loop

urlpatterns = [
    path("adjudication/cases/", apis.CaseListApi.as_view(), name="api-case-list"),
    path("adjudication/cases/<id:case_id>/", apis.CaseDetailApi.as_view(), name="api-case-detail"),
    path(
        "adjudication/cases/<id:case_id>/resolve/",
        apis.CaseResolveApi.as_view(),
        name="api-case-resolve",
    ),
    path("final-labels/", apis.FinalLabelListApi.as_view(), name="api-final-labels"),
    path(
        "adjudication/campaigns/<slug:slug>/agreement/",
        apis.AgreementApi.as_view(),
        name="api-campaign-agreement",
    ),
    path(
        "adjudication/campaigns/<slug:slug>/checkpoints/",
        apis.CheckpointsApi.as_view(),
        name="api-campaign-checkpoints",
    ),
    path(
        "verification/verifier-runs/",
        apis_loop.VerifierRunStartApi.as_view(),
        name="api-verifier-run-start",
    ),
    path(
        "verification/verifier-runs/<id:run_id>/",
        apis_loop.VerifierRunDetailApi.as_view(),
        name="api-verifier-run",
    ),
    path(
        "verification/labelling-runs/",
        apis_loop.LabellingRunStartApi.as_view(),
        name="api-labelling-run-start",
    ),
    path(
        "verification/labelling-runs/<id:run_id>/",
        apis_loop.LabellingRunDetailApi.as_view(),
        name="api-labelling-run",
    ),
    path("verification/analyses/", apis_loop.AnalysisListApi.as_view(), name="api-analyses"),
]
