"""Pairwise campaigns through their doors: the pair page (blind, the shown order recorded, a
second submit changes nothing), the pairs page (progress, cases, Bradley-Terry scores, refused
while a pair is held blind), the case page, and the API by token."""

import pytest
from django.urls import reverse

from annotation.models import PairItem, PairJudgement, PairStatus
from tests.annotation.pair_factories import pairwise_campaign
from tests.factories import UserFactory

pytestmark = pytest.mark.django_db


def _judge_all(client, campaign, expert, shown_for):
    """Walk the expert's pairs by the page: `shown_for(judgement)` says what they press."""
    client.force_login(expert)
    response = client.post(reverse("annotation:pair-next", args=[campaign.slug]))
    while response.status_code == 303:
        pair_id = int(response["Location"].rstrip("/").split("/")[-1])
        judgement = PairJudgement.objects.get(pair_id=pair_id, expert=expert)
        response = client.post(
            reverse("annotation:pair", args=[pair_id]), {"choice": shown_for(judgement)}
        )
    assert response.status_code == 200 and b"No pairs left" in response.content


def test_the_pair_page_is_blind_and_a_second_submit_changes_nothing(client):
    campaign, proofs, (one, _two) = pairwise_campaign(generators=("gen-zqmark-a", "gen-zqmark-b"))
    client.force_login(one)
    start = client.get(reverse("annotation:campaign", args=[campaign.slug]), follow=True)
    assert b"Compare next" in start.content
    response = client.post(reverse("annotation:next", args=[campaign.slug]))
    assert response.status_code == 303
    page = client.get(response["Location"])
    text = page.content.decode()
    assert "zqmark" not in text and "Proof A" in text and "Proof B" in text
    assert page["Cache-Control"].startswith("max-age=0") or "no-cache" in page["Cache-Control"]
    pair = PairItem.objects.get(campaign=campaign)
    judgement = PairJudgement.objects.get(pair=pair, expert=one)
    left = proofs[0, "gen-zqmark-a"] if judgement.a_on_left else proofs[0, "gen-zqmark-b"]
    assert text.index("Proof A") < text.index(left.text.split()[-1]) < text.index("Proof B")
    url = reverse("annotation:pair", args=[pair.pk])
    first = client.post(url, {"choice": "left", "reason": "A is complete"})
    second = client.post(url, {"choice": "left", "reason": "A is complete"})
    assert first.status_code == 200 and second.status_code == 200  # no work left, both times
    judgement.refresh_from_db()
    assert judgement.choice == ("a" if judgement.a_on_left else "b")
    assert PairItem.objects.get(pk=pair.pk).submitted_count == 1
    back = client.get(url).content.decode()
    assert "You judged this pair: A is better" in back and "zqmark" not in back
    bad = client.post(url, {"choice": "sideways"})
    assert bad.status_code == 400 and b"not one of left, right, tie" in bad.content


def test_a_stranger_gets_no_pair_and_skip_frees_it(client):
    campaign, _, (one, two) = pairwise_campaign(generators=("model-a", "model-b"))
    pair = PairItem.objects.get(campaign=campaign)
    client.force_login(UserFactory(roles=["expert"]))
    assert client.get(reverse("annotation:pair", args=[pair.pk])).status_code == 403
    client.force_login(one)
    client.post(reverse("annotation:pair-next", args=[campaign.slug]))
    skipped = client.post(reverse("annotation:pair-skip", args=[pair.pk]))
    assert skipped.status_code == 200 and b"No pairs left" in skipped.content
    assert PairJudgement.objects.get(pair=pair, expert=one).status == "released"


def test_pairs_page_shows_scores_and_cases_and_the_case_is_settled(client):
    campaign, _, (one, two) = pairwise_campaign(generators=("model-a", "model-b", "model-c"))
    _judge_all(client, campaign, one, lambda j: "left")
    _judge_all(client, campaign, two, lambda j: "right")
    # each judged every pair, opposite screens: where the orders differed they agree
    disputed = PairItem.objects.filter(campaign=campaign, status=PairStatus.DISPUTED)
    final = PairItem.objects.filter(campaign=campaign, status=PairStatus.FINAL)
    assert disputed.count() + final.count() == 3
    judge = UserFactory(roles=["adjudicator"])
    client.force_login(judge)
    page = client.get(reverse("annotation:pairs", args=[campaign.slug])).content.decode()
    assert "Generators (Bradley-Terry)" in page and "95% interval" in page
    for pair in disputed:
        case = client.get(reverse("annotation:pair-case", args=[pair.pk])).content.decode()
        assert "model-" in case  # the adjudicator sees the models
        refused = client.post(reverse("annotation:pair-case", args=[pair.pk]), {"choice": "a"})
        assert refused.status_code == 400 and b"reason" in refused.content
        done = client.post(
            reverse("annotation:pair-case", args=[pair.pk]), {"choice": "a", "reason": "A holds"}
        )
        assert done.status_code == 303
    assert not PairItem.objects.filter(campaign=campaign, status=PairStatus.DISPUTED).exists()
    page = client.get(reverse("annotation:pairs", args=[campaign.slug])).content.decode()
    assert "No disagreement to settle" in page and "model-a" in page


def test_an_admin_holding_a_pair_blind_is_refused_the_scores(client):
    campaign, _, _ = pairwise_campaign(generators=("model-a", "model-b"))
    admin = UserFactory(roles=["admin", "expert"])
    campaign.members.create(user=admin, role="expert")
    client.force_login(admin)
    response = client.get(reverse("annotation:pairs", args=[campaign.slug]))
    assert response.status_code == 403 and b"grade blind" in response.content


def test_admin_makes_pairs_by_problem_on_the_page(client):
    campaign, proofs, _ = pairwise_campaign(generators=("model-a", "model-b", "model-c"))
    PairItem.objects.filter(campaign=campaign).delete()
    admin = UserFactory(roles=["admin"])
    client.force_login(admin)
    problem = proofs[0, "model-a"].problem.external_id
    url = reverse("annotation:pairs", args=[campaign.slug])
    dashboard = client.get(reverse("annotation:campaign", args=[campaign.slug]))
    assert dashboard.status_code == 200 and b'id="pairs-link"' in dashboard.content
    made = client.post(url, {"problems": problem, "max_per_problem": "2"})
    assert made.status_code == 303 and PairItem.objects.filter(campaign=campaign).count() == 2
    assert client.post(url, {"problems": ""}).status_code == 400
    assert client.post(url, {"problems": problem, "max_per_problem": "x"}).status_code == 400


def test_the_api_walk(api_client_for):
    campaign, proofs, (one, two) = pairwise_campaign(generators=("model-a", "model-b"))
    api = api_client_for(one)
    body = api.post(f"/api/v1/campaigns/{campaign.slug}/pairs/next/").json()
    assert set(body) >= {"pair", "left", "right", "statement"} and "model-a" not in str(body)
    url = f"/api/v1/pairs/{body['pair']}/judgement/"
    bad = api.post(url, {"choice": "up"}, format="json")
    assert bad.status_code == 400 and "choice" in bad.json()
    ok = api.post(url, {"choice": "tie", "reason": "same"}, format="json")
    assert ok.status_code == 200 and ok.json()["choice"] == "tie"
    done = api.post(f"/api/v1/campaigns/{campaign.slug}/pairs/next/").json()
    assert done == {"detail": "No work left.", "submitted": 1}
    api2 = api_client_for(two)
    second = api2.post(f"/api/v1/campaigns/{campaign.slug}/pairs/next/").json()
    api2.post(f"/api/v1/pairs/{second['pair']}/judgement/", {"choice": "left"}, format="json")
    judge = api_client_for(UserFactory(roles=["adjudicator"]))
    settle = judge.post(
        f"/api/v1/pairs/{second['pair']}/settle/", {"choice": "tie", "reason": "r"}, format="json"
    )
    assert settle.status_code == 200 and settle.json()["final_source"] == "adjudication"
    ratings = judge.get(f"/api/v1/campaigns/{campaign.slug}/pairs/ratings/").json()
    assert ratings["outcomes"] == 1 and {g["key"] for g in ratings["generators"]} == {
        "model-a",
        "model-b",
    }
    assert api.get(f"/api/v1/campaigns/{campaign.slug}/pairs/ratings/").status_code == 403
    admin = api_client_for(UserFactory(roles=["admin"]))
    ids = [p.pk for p in proofs.values()]
    made = admin.post(
        f"/api/v1/campaigns/{campaign.slug}/pairs/", {"proof_ids": ids}, format="json"
    )
    assert made.status_code == 201 and made.json() == {"added": 0}
    wrong = admin.post(
        f"/api/v1/campaigns/{campaign.slug}/pairs/", {"proof_ids": [ids[0], 999999]}, format="json"
    )
    assert wrong.status_code == 400 and "999999" in str(wrong.json())


def test_a_researcher_holding_a_pair_is_blind_on_every_pairwise_door(client, api_client_for):
    campaign, proofs, _ = pairwise_campaign(generators=("gen-zqmark-a", "gen-zqmark-b"))
    holder = UserFactory(roles=["researcher", "adjudicator", "expert"])
    campaign.members.create(user=holder, role="expert")
    client.force_login(holder)
    proof = proofs[0, "gen-zqmark-a"]
    page = client.get(reverse("problems:proof", args=[proof.pk]))
    assert page.status_code == 200 and b"zqmark" not in page.content
    pair = PairItem.objects.get(campaign=campaign)
    for url in (
        reverse("annotation:pairs", args=[campaign.slug]),
        reverse("annotation:pair-case", args=[pair.pk]),
        reverse("exports:pairwise-selection", args=[campaign.slug]),
    ):
        response = client.get(url)
        assert response.status_code == 403 and b"zqmark" not in response.content, url
    api = api_client_for(holder)
    ratings = api.get(f"/api/v1/campaigns/{campaign.slug}/pairs/ratings/")
    assert ratings.status_code == 403 and "zqmark" not in ratings.content.decode()
    # once judged, the proofs are theirs to see again
    body = api.post(f"/api/v1/campaigns/{campaign.slug}/pairs/next/").json()
    api.post(f"/api/v1/pairs/{body['pair']}/judgement/", {"choice": "tie"}, format="json")
    assert b"zqmark" in client.get(reverse("problems:proof", args=[proof.pk])).content
    assert client.get(reverse("annotation:pairs", args=[campaign.slug])).status_code == 200


def test_a_pairwise_campaign_is_created_by_the_api(api_client_for):
    admin = api_client_for(UserFactory(roles=["admin"]))
    made = admin.post(
        "/api/v1/campaigns/",
        {"slug": "pairs-by-api", "name": "Pairs", "task_kind": "pairwise"},
        format="json",
    )
    assert made.status_code == 201, made.content
    assert made.json()["task_kind"] == "pairwise"


def test_an_admin_assigns_a_pair_by_hand_and_next_serves_it_first(api_client_for):
    campaign, _, (one, two) = pairwise_campaign(generators=("model-a", "model-b", "model-c"))
    last = PairItem.objects.filter(campaign=campaign).order_by("-id").first()
    admin = api_client_for(UserFactory(roles=["admin"]))
    url = f"/api/v1/campaigns/{campaign.slug}/pairs/assignments/"
    given = admin.post(url, {"pair": last.pk, "expert": one.username}, format="json")
    assert given.status_code == 201 and given.json()["status"] == "active"
    assert PairJudgement.objects.get(pair=last, expert=one).assigned_by is not None
    body = api_client_for(one).post(f"/api/v1/campaigns/{campaign.slug}/pairs/next/").json()
    assert body["pair"] == last.pk
    api_client_for(one).post(
        f"/api/v1/pairs/{last.pk}/judgement/", {"choice": "tie"}, format="json"
    )
    again = admin.post(url, {"pair": last.pk, "expert": one.username}, format="json")
    assert again.status_code == 400 and "has judged this pair" in str(again.json())
    stranger = UserFactory(roles=["expert"])
    refused = admin.post(url, {"pair": last.pk, "expert": stranger.username}, format="json")
    assert refused.status_code == 400 and "not an expert of this campaign" in str(refused.json())
    unknown = admin.post(url, {"pair": 999999, "expert": two.username}, format="json")
    assert unknown.status_code == 400 and "No such pair" in str(unknown.json())
