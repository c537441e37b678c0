from django.urls import path

from annotation import apis
from annotation.apis import review as apis_review
from annotation.apis import second_opinion as apis_second_opinion

urlpatterns = [
    path("campaigns/", apis.CampaignCreateApi.as_view(), name="api-campaign-create"),
    path("campaigns/<slug:slug>/next/", apis.NextItemApi.as_view(), name="api-next-item"),
    path("campaigns/<slug:slug>/items/", apis.ItemsCreateApi.as_view(), name="api-items-create"),
    path("campaigns/<slug:slug>/assignments/", apis.AssignApi.as_view(), name="api-assign"),
    path("items/<id:item_id>/", apis.ItemDetailApi.as_view(), name="api-item-detail"),
    path("items/<id:item_id>/draft/", apis.DraftSaveApi.as_view(), name="api-item-draft"),
    path("items/<id:item_id>/submit/", apis.GradeSubmitApi.as_view(), name="api-item-submit"),
    path("items/<id:item_id>/score/", apis.ScorePreviewApi.as_view(), name="api-item-score"),
    path("items/<id:item_id>/lease/", apis.LeaseRenewApi.as_view(), name="api-item-lease"),
    path("grades/", apis.OwnGradeListApi.as_view(), name="api-own-grades"),
    path(
        "items/<id:item_id>/second-opinion/",
        apis_second_opinion.SecondOpinionDetailApi.as_view(),
        name="api-second-opinion",
    ),
    path(
        "items/<id:item_id>/second-opinion/revise/",
        apis_second_opinion.SecondOpinionReviseApi.as_view(),
        name="api-second-opinion-revise",
    ),
    path(
        "items/<id:item_id>/review/draft/",
        apis_review.MetaReviewDraftApi.as_view(),
        name="api-review-draft",
    ),
    path(
        "items/<id:item_id>/review/",
        apis_review.MetaReviewSubmitApi.as_view(),
        name="api-review-submit",
    ),
    path("meta-reviews/", apis_review.MetaReviewListApi.as_view(), name="api-meta-reviews"),
]
