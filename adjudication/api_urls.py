from django.urls import path

from adjudication import apis

urlpatterns = [
    path("adjudication/cases/", apis.CaseListApi.as_view(), name="api-case-list"),
    path("adjudication/cases/<int:case_id>/", apis.CaseDetailApi.as_view(), name="api-case-detail"),
    path(
        "adjudication/cases/<int:case_id>/resolve/",
        apis.CaseResolveApi.as_view(),
        name="api-case-resolve",
    ),
    path("final-labels/", apis.FinalLabelListApi.as_view(), name="api-final-labels"),
    path(
        "adjudication/campaigns/<slug:slug>/agreement/",
        apis.AgreementApi.as_view(),
        name="api-campaign-agreement",
    ),
]
