from django.urls import path

from annotation.apis import assignment, campaigns, grading, items, pairs, review, second_opinion

urlpatterns = [
    path("campaigns/", campaigns.CampaignCreateApi.as_view(), name="api-campaign-create"),
    path("campaigns/<slug:slug>/next/", assignment.NextItemApi.as_view(), name="api-next-item"),
    path("campaigns/<slug:slug>/items/", items.ItemsCreateApi.as_view(), name="api-items-create"),
    path("campaigns/<slug:slug>/assignments/", assignment.AssignApi.as_view(), name="api-assign"),
    path("items/<id:item_id>/", items.ItemDetailApi.as_view(), name="api-item-detail"),
    path("items/<id:item_id>/draft/", grading.DraftSaveApi.as_view(), name="api-item-draft"),
    path("items/<id:item_id>/submit/", grading.GradeSubmitApi.as_view(), name="api-item-submit"),
    path("items/<id:item_id>/score/", grading.ScorePreviewApi.as_view(), name="api-item-score"),
    path("items/<id:item_id>/lease/", assignment.LeaseRenewApi.as_view(), name="api-item-lease"),
    path("grades/", grading.OwnGradeListApi.as_view(), name="api-own-grades"),
    path(
        "items/<id:item_id>/second-opinion/",
        second_opinion.SecondOpinionDetailApi.as_view(),
        name="api-second-opinion",
    ),
    path(
        "items/<id:item_id>/second-opinion/revise/",
        second_opinion.SecondOpinionReviseApi.as_view(),
        name="api-second-opinion-revise",
    ),
    path(
        "items/<id:item_id>/review/draft/",
        review.MetaReviewDraftApi.as_view(),
        name="api-review-draft",
    ),
    path(
        "items/<id:item_id>/review/",
        review.MetaReviewSubmitApi.as_view(),
        name="api-review-submit",
    ),
    path("meta-reviews/", review.MetaReviewListApi.as_view(), name="api-meta-reviews"),
    path("campaigns/<slug:slug>/pairs/", pairs.PairsCreateApi.as_view(), name="api-pairs-create"),
    path("campaigns/<slug:slug>/pairs/next/", pairs.PairNextApi.as_view(), name="api-pair-next"),
    path(
        "campaigns/<slug:slug>/pairs/assignments/",
        pairs.PairAssignApi.as_view(),
        name="api-pair-assign",
    ),
    path(
        "campaigns/<slug:slug>/pairs/ratings/",
        pairs.PairRatingsApi.as_view(),
        name="api-pair-ratings",
    ),
    path("pairs/<id:pair_id>/", pairs.PairDetailApi.as_view(), name="api-pair-detail"),
    path(
        "pairs/<id:pair_id>/judgement/",
        pairs.PairJudgementSubmitApi.as_view(),
        name="api-pair-judgement",
    ),
    path("pairs/<id:pair_id>/settle/", pairs.PairSettleApi.as_view(), name="api-pair-settle"),
]
