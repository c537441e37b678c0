from django.urls import path

from annotation.views import campaigns, grading, pairs, second_opinion

app_name = "annotation"

urlpatterns = [
    path("", campaigns.campaign_list, name="campaigns"),
    path("new/", campaigns.campaign_create_view, name="campaign-create"),
    path("items/<id:item_id>/", grading.item_page, name="item"),
    path("items/<id:item_id>/skip/", grading.item_skip, name="item-skip"),
    path(
        "items/<id:item_id>/second-opinion/",
        second_opinion.second_opinion,
        name="second-opinion",
    ),
    path("pairs/<id:pair_id>/", pairs.pair_page, name="pair"),
    path("pairs/<id:pair_id>/skip/", pairs.pair_skip, name="pair-skip"),
    path("pairs/<id:pair_id>/case/", pairs.pair_case, name="pair-case"),
    path("<slug:slug>/", campaigns.campaign_detail, name="campaign"),
    path("<slug:slug>/pairs/", pairs.pairs_campaign, name="pairs"),
    path("<slug:slug>/pairs/next/", pairs.pair_next, name="pair-next"),
    path("<slug:slug>/edit/", campaigns.campaign_edit, name="campaign-edit"),
    path("<slug:slug>/next/", campaigns.next_item, name="next"),
    path("<slug:slug>/members/", campaigns.member_add, name="member-add"),
    path(
        "<slug:slug>/members/<id:member_id>/remove/",
        campaigns.member_remove,
        name="member-remove",
    ),
    path("<slug:slug>/items/new/", campaigns.items_create, name="items-create"),
    path("<slug:slug>/assign/", campaigns.assign, name="assign"),
    path("<slug:slug>/move/", campaigns.move, name="move"),
]
