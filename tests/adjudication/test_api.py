"""API: cases for adjudicators only, resolving (409 once resolved), final labels, figures."""

from decimal import Decimal

import pytest

from adjudication.models import AdjudicationCase
from tests.adjudication.factories import CampaignFactory, ItemFactory, judge
from tests.factories import UserFactory

pytestmark = pytest.mark.django_db


def disputed(**kwargs):
    item = ItemFactory(**kwargs)
    grades = judge(item, 2, 7)
    return AdjudicationCase.objects.get(item=item), grades


def test_case_list_and_detail_for_adjudicators(api_client_for, django_assert_max_num_queries):
    case, (a, b) = disputed()
    api = api_client_for(UserFactory(roles=["adjudicator"]))
    with django_assert_max_num_queries(8):
        listing = api.get("/api/v1/adjudication/cases/").json()
    assert [row["id"] for row in listing["results"]] == [case.pk]
    assert listing["results"][0]["disagreement"] == "5.00"
    detail = api.get(f"/api/v1/adjudication/cases/{case.pk}/").json()
    assert [j["expert"] for j in detail["judgements"]] == ["Expert A", "Expert B"]
    assert [j["score"] for j in detail["judgements"]] == ["2.00", "7.00"]
    assert a.expert.username not in str(detail)


def test_cases_refuse_experts_and_researchers(api_client_for):
    case, (a, _) = disputed()
    for user in (UserFactory(roles=["expert"]), UserFactory(roles=["researcher"]), a.expert):
        api = api_client_for(user)
        assert api.get("/api/v1/adjudication/cases/").status_code == 403
        assert api.get(f"/api/v1/adjudication/cases/{case.pk}/").status_code == 403


def test_resolve_by_api_then_conflict(api_client_for):
    case, (a, b) = disputed()
    api = api_client_for(UserFactory(roles=["adjudicator"]))
    url = f"/api/v1/adjudication/cases/{case.pk}/resolve/"
    response = api.post(url, {"action": "new_score", "score": "5"}, format="json")
    assert response.status_code == 400 and "rationale" in response.json()["detail"]
    response = api.post(
        url,
        {"action": "new_score", "score": "5", "rationale": "Both miss the base case."},
        format="json",
    )
    assert response.status_code == 200
    assert (response.json()["status"], response.json()["score"]) == ("resolved", "5.00")
    again = api.post(url, {"action": "accept", "grade_id": a.pk}, format="json")
    assert again.status_code == 409


def test_return_by_api(api_client_for):
    case, _ = disputed()
    api = api_client_for(UserFactory(roles=["adjudicator"]))
    response = api.post(
        f"/api/v1/adjudication/cases/{case.pk}/resolve/",
        {"action": "return", "question": "Why 7?"},
        format="json",
    )
    assert response.json()["status"] == "returned"
    assert response.json()["events"][-1]["text"] == "Why 7?"


def test_final_labels_for_researchers(api_client_for):
    campaign = CampaignFactory()
    item = ItemFactory(campaign=campaign)
    judge(item, 5, 6)
    judge(ItemFactory(), 3, 3)
    api = api_client_for(UserFactory(roles=["researcher"]))
    rows = api.get(f"/api/v1/final-labels/?campaign={campaign.slug}").json()["results"]
    assert [(r["item_id"], r["value"], r["source"]) for r in rows] == [
        (item.pk, "5.00", "agreement")
    ]
    assert (
        api_client_for(UserFactory(roles=["expert"])).get("/api/v1/final-labels/").status_code
        == 403
    )


def test_agreement_figures(api_client_for):
    campaign = CampaignFactory()
    experts = [UserFactory(roles=["expert"]) for _ in range(2)]
    for scores in [(7, 7), (3, 4), (0, 0), (6, 2)]:
        judge(ItemFactory(campaign=campaign), *scores, experts=experts)
    api = api_client_for(UserFactory(roles=["admin"]))
    data = api.get(f"/api/v1/adjudication/campaigns/{campaign.slug}/agreement/").json()
    assert data["overall"]["n"] == 4
    assert data["overall"]["exact"] == 0.5
    assert data["overall"]["within"] == 0.75
    assert data["overall"]["mad"] == pytest.approx(5 / 4)
    assert len(data["pairs"]) == 1 and data["pairs"][0]["n"] == 4
    assert sum(map(sum, data["confusion_matrix"])) == 8
    assert data["overall"]["ci"]["kappa"][0] <= data["overall"]["kappa"]
    assert Decimal(data["tolerance"]) == 1


def agreed(**kwargs):
    judge(ItemFactory(**kwargs), 5, 6)


@pytest.mark.parametrize(
    ("url", "roles", "make"),
    [
        ("/api/v1/adjudication/cases/", ["adjudicator"], disputed),
        ("/api/v1/final-labels/", ["researcher"], agreed),
    ],
    ids=["cases", "final-labels"],
)
def test_case_and_label_lists_filter_by_campaign_and_page_alike(api_client_for, url, roles, make):
    campaign = CampaignFactory()
    make(campaign=campaign)
    make()
    api = api_client_for(UserFactory(roles=roles))
    listing = api.get(url).json()
    assert (listing["count"], listing["next"], listing["previous"]) == (2, None, None)
    filtered = api.get(f"{url}?campaign={campaign.slug}").json()
    assert [row["campaign"] for row in filtered["results"]] == [campaign.slug]
    assert api.get(f"{url}?campaign=no-such-campaign").status_code == 404
    assert "campaign" in api.get(f"{url}?campaign=not a slug").json()
    assert api.get(f"{url}?page=2").status_code == 404
