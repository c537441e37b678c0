"""The annotation API by token: next, read (blindness), draft, submit (idempotent), own grades,
admin endpoints."""

import pytest

from annotation.models import Grade, Item
from tests.annotation.factories import CampaignFactory, ItemFactory, expert_in
from tests.factories import UserFactory
from tests.problems.page_factories import ProblemFactory, ProofFactory

pytestmark = pytest.mark.django_db


def test_expert_flow_next_draft_submit_list(api_client_for):
    campaign = CampaignFactory()
    item = ItemFactory(campaign=campaign, proof__text="Hence it is trivially true.")
    expert = expert_in(campaign)
    api = api_client_for(expert)
    body = api.post(f"/api/v1/campaigns/{campaign.slug}/next/").json()
    assert body["item"]["id"] == item.pk and body["grade"] is None
    assert body["item"]["scheme_structure"]["chains"]
    draft = api.put(
        f"/api/v1/items/{item.pk}/draft/",
        {
            "awards": {"c1": "2"},
            "spans": [{"start": 0, "end": 5, "quote": "Hence", "category": "skipped_steps"}],
        },
        format="json",
    )
    assert draft.status_code == 200, draft.json()
    assert draft.json()["computed_score"] == "2.00"
    url = f"/api/v1/items/{item.pk}/submit/"
    payload = {"score": 2, "awards": {"c1": "2"}}
    first = api.post(url, payload, format="json", HTTP_IDEMPOTENCY_KEY="k1")
    second = api.post(url, payload, format="json", HTTP_IDEMPOTENCY_KEY="k1")
    assert first.status_code == second.status_code == 200
    assert first.json()["id"] == second.json()["id"]
    assert Grade.objects.filter(item=item).count() == 1
    mine = api.get("/api/v1/grades/").json()
    assert mine["count"] == 1 and mine["results"][0]["status"] == "submitted"
    done = api.post(f"/api/v1/campaigns/{campaign.slug}/next/").json()
    assert done["detail"] == "No work left." and done["submitted"] == 1


def test_submit_errors_are_listed(api_client_for):
    campaign = CampaignFactory()
    item = ItemFactory(campaign=campaign)
    api = api_client_for(expert_in(campaign))
    api.post(f"/api/v1/campaigns/{campaign.slug}/next/")
    response = api.post(f"/api/v1/items/{item.pk}/submit/", {"score": 9}, format="json")
    assert response.status_code == 400
    assert "not on the 0-7" in str(response.json()["problems"])
    empty = api.post(f"/api/v1/items/{item.pk}/submit/", {"comment": "later"}, format="json")
    assert empty.status_code == 400
    assert empty.json()["problems"][0].startswith("Not graded yet: give a checkpoint its points")
    assert not Grade.objects.filter(item=item, status="submitted").exists()


def test_api_blindness(api_client_for):
    campaign = CampaignFactory()
    item = ItemFactory(campaign=campaign, required_judgements=2)
    a, b, c = expert_in(campaign), expert_in(campaign), expert_in(campaign)
    api_a, api_b, api_c = api_client_for(a), api_client_for(b), api_client_for(c)
    api_a.post(f"/api/v1/campaigns/{campaign.slug}/next/")
    api_b.post(f"/api/v1/campaigns/{campaign.slug}/next/")
    api_a.post(
        f"/api/v1/items/{item.pk}/submit/",
        {"score": 7, "comment": "HIDDEN-A"},
        format="json",
    )
    seen_by_b = api_b.get(f"/api/v1/items/{item.pk}/").json()
    assert seen_by_b["other_grades"] == [] and "HIDDEN-A" not in str(seen_by_b)
    assert api_c.get(f"/api/v1/items/{item.pk}/").status_code == 404
    assert api_c.put(f"/api/v1/items/{item.pk}/draft/", {}, format="json").status_code == 404
    assert "HIDDEN-A" not in str(api_b.get("/api/v1/grades/").json())
    Item.objects.filter(pk=item.pk).update(is_final=True)
    assert "HIDDEN-A" in str(api_b.get(f"/api/v1/items/{item.pk}/").json())


def test_admin_endpoints(api_client_for, admin_user):
    api = api_client_for(admin_user)
    UserFactory(username="zoe", roles=["expert"])
    created = api.post(
        "/api/v1/campaigns/",
        {"name": "API round", "scale": "1-4", "double_share": "1", "experts": ["zoe"]},
        format="json",
    )
    assert created.status_code == 201, created.json()
    slug = created.json()["slug"]
    problem = ProblemFactory(external_id="API-P1")
    proofs = ProofFactory.create_batch(2, problem=problem)
    items = api.post(
        f"/api/v1/campaigns/{slug}/items/", {"problem": "API-P1"}, format="json"
    ).json()
    assert len(items["created"]) == 2 and items["double_scored"] == 2
    assert items["without_scheme"] == ["API-P1"]
    assigned = api.post(
        f"/api/v1/campaigns/{slug}/assignments/",
        {"item": items["created"][0], "expert": "zoe"},
        format="json",
    )
    assert assigned.status_code == 201 and assigned.json()["expert"] == "zoe"
    assert proofs


def test_experts_cannot_use_admin_endpoints(api_client_for):
    campaign = CampaignFactory()
    api = api_client_for(expert_in(campaign))
    assert api.post("/api/v1/campaigns/", {"name": "x"}, format="json").status_code == 403
    assert (
        api.post(f"/api/v1/campaigns/{campaign.slug}/items/", {}, format="json").status_code == 403
    )


def test_submit_with_next_returns_the_next_item_in_one_round_trip(
    api_client_for, django_assert_max_num_queries
):
    campaign = CampaignFactory()
    first, second = ItemFactory(campaign=campaign), ItemFactory(campaign=campaign)
    expert = expert_in(campaign)
    api = api_client_for(expert)
    leased = api.post(f"/api/v1/campaigns/{campaign.slug}/next/").json()["item"]["id"]
    # token and roles 1; the item with its campaign, membership and whether the expert holds
    # other open work 1; the submission 14 (in its savepoint: the item's lock, then its read;
    # the expert's progress counter, then the grade; the first grade
    # freezes the scheme: 5 of them; the assignment done; the item's evaluation read with its
    # judgements, then its label's upsert); the lease 4 (no look for open work: the first read
    # said); the next item 1 (its assignment and campaign known).
    with django_assert_max_num_queries(21):
        answer = api.post(f"/api/v1/items/{leased}/submit/?next=1", {"score": 3}, format="json")
    assert answer.status_code == 200, answer.json()
    body = answer.json()
    assert body["status"] == "submitted" and body["item"] == leased
    following = body["next"]["item"]["id"]
    assert {leased, following} == {first.pk, second.pk}
    assert body["next"]["grade"] is None and body["next"]["item"]["proof_text"]
    # The next item is leased: submitting it needs no other call, and then nothing is left.
    last = api.post(f"/api/v1/items/{following}/submit/?next=true", {"score": 5}, format="json")
    assert last.json()["next"] == {"detail": "No work left.", "submitted": 2, "drafts": 0}
    # Without the parameter the answer is the grade alone, as before.
    again = api.post(f"/api/v1/items/{following}/submit/", {"score": 5}, format="json").json()
    assert "next" not in again and again["id"] == last.json()["id"]


def test_submit_with_next_resumes_the_experts_other_open_item_first(api_client_for, admin_user):
    """The submission's first read says whether the expert holds open work on another item of
    the campaign; the next item is then that one (resumed before anything new), as the next/
    endpoint answers, and a new lease only once none is left."""
    from annotation import services

    campaign = CampaignFactory()
    first, second, fresh = (ItemFactory(campaign=campaign) for _ in range(3))
    expert = expert_in(campaign)
    for item in (first, second):  # an admin hands the expert two items
        services.assignment_create_manual(item=item, expert=expert, assigned_by=admin_user)
    api = api_client_for(expert)
    answer = api.post(f"/api/v1/items/{first.pk}/submit/?next=1", {"score": 3}, format="json")
    assert answer.status_code == 200, answer.json()
    assert answer.json()["next"]["item"]["id"] == second.pk
    answer = api.post(f"/api/v1/items/{second.pk}/submit/?next=1", {"score": 4}, format="json")
    assert answer.json()["next"]["item"]["id"] == fresh.pk


def test_submit_with_next_is_refused_before_writing_for_a_non_expert(api_client_for, admin_user):
    campaign = CampaignFactory()
    item = ItemFactory(campaign=campaign)
    api = api_client_for(admin_user)  # an admin may grade any item, but is no expert here
    answer = api.post(f"/api/v1/items/{item.pk}/submit/?next=1", {"score": 3}, format="json")
    assert answer.status_code == 403
    assert not Grade.objects.filter(item=item).exists()


def test_the_api_item_read_keeps_the_pages_rules(api_client_for, admin_user):
    """The API reads an item with its own statement: the same answers as the page's selector
    (admins see every grade, an expert only their own draft until the item is final)."""
    from annotation.selectors import grading_view_for_user, item_view_for_json

    campaign = CampaignFactory()
    item = ItemFactory(campaign=campaign, required_judgements=2)
    a, b = expert_in(campaign), expert_in(campaign)
    api_a, api_b = api_client_for(a), api_client_for(b)
    api_a.post(f"/api/v1/campaigns/{campaign.slug}/next/")
    api_b.post(f"/api/v1/campaigns/{campaign.slug}/next/")
    api_a.post(f"/api/v1/items/{item.pk}/submit/", {"score": 6}, format="json")
    api_b.put(f"/api/v1/items/{item.pk}/draft/", {"comment": "B-DRAFT"}, format="json")
    for user in (a, b, admin_user):
        page, api = (
            grading_view_for_user(item_id=item.pk, user=user),
            item_view_for_json(item_id=item.pk, user=user),
        )
        assert (api.item.pk, api.item.proof.text, api.item.campaign.slug) == (
            page.item.pk,
            page.item.proof.text,
            page.item.campaign.slug,
        )
        assert api.item.scheme.structure == page.item.scheme.structure
        assert getattr(api.grade, "pk", None) == getattr(page.grade, "pk", None)
        assert [g.pk for g in api.others] == [g.pk for g in page.others]
        # read with the campaign the caller holds (not read again), or with another one (the
        # item's own is read): the same item, its own campaign
        held = item_view_for_json(item_id=item.pk, user=user, campaign=campaign)
        assert held.item.campaign is campaign and held.item.proof.text == page.item.proof.text
        other = CampaignFactory()
        mixed = item_view_for_json(item_id=item.pk, user=user, campaign=other)
        assert mixed.item.campaign.slug == campaign.slug
    seen_by_admin = api_client_for(admin_user).get(f"/api/v1/items/{item.pk}/").json()
    assert [g["score"] for g in seen_by_admin["other_grades"]] == ["6.00"]
    assert api_b.get(f"/api/v1/items/{item.pk}/").json()["grade"]["comment"] == "B-DRAFT"
