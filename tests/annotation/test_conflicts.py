"""The key/content rule and the causes of conflicts, on both doors (grades and analysis reviews),
through the API as the pages and token clients call it: an idempotency key stands for one
submission's content (the same key with other content is another submission: 409 with the stored
judgement); every 409 names who wrote the stored version (this page, another tab, another
device); review drafts carry versions like grade drafts."""

import json

import pytest
from django.test import Client
from django.urls import reverse

from annotation import services
from annotation.models import Grade, MetaReview
from tests.annotation.factories import CampaignFactory, ItemFactory, expert_in
from tests.metaverify.factories import ANALYSIS_TEXT, analysis_item, defect

pytestmark = pytest.mark.django_db

GAP = "Step 2 divides by x without checking that x is nonzero."
EVEN = "Step 3 claims the bound for every n but only proves it for even n."
STEP1 = "Step 1 is correct."


def send(client, method: str, url: str, data: dict, **origin):
    """A write as the pages send it: JSON with the session, naming its page load and browser."""
    body = data | {f"origin_{name}": value for name, value in origin.items()}
    return client.generic(method, url, json.dumps(body), content_type="application/json")


def device(user) -> Client:
    """A browser of its own (its own session) logged in as `user`."""
    client = Client()
    client.force_login(user)
    return client


def leased(campaign=None):
    campaign = campaign or CampaignFactory()
    item = ItemFactory(campaign=campaign)
    expert = expert_in(campaign)
    services.assignment_next(campaign=campaign, expert=expert)
    return item, expert


def test_a_submit_key_stands_for_one_content_and_a_conflict_names_its_cause():
    item, expert = leased()
    laptop, phone = device(expert), device(expert)
    url = reverse("api-item-submit", args=[item.pk])
    five = {"score": "5", "submit_key": "key-1", "base_version": 0}
    here = {"page": "page-1", "browser": "laptop"}
    first = send(laptop, "POST", url, five, **here)
    assert first.status_code == 200 and first.json()["score"] == "5.00"
    assert first.json()["submit_key"] == "key-1"

    # the same key with the same content: a repeat, the stored grade
    repeat = send(laptop, "POST", url, five, **here)
    assert repeat.status_code == 200 and repeat.json()["version"] == 1

    # the same key with other content: another submission, refused with the stored grade
    six = five | {"score": "6"}
    changed = send(laptop, "POST", url, six, **here)
    assert changed.status_code == 409
    body = changed.json()
    assert (body["cause"], body["grade"]["score"], body["grade"]["version"]) == (
        "this_page",
        "5.00",
        1,
    )
    assert body["detail"].startswith(
        "Already submitted as 5 by an earlier submission from this page"
    )

    # the cause as the server knows it: another page of the same browser, another device
    tab = send(laptop, "POST", url, six | {"submit_key": "key-2"}, page="page-2", browser="laptop")
    assert (tab.status_code, tab.json()["cause"]) == (409, "another_tab")
    assert "Already submitted as 5 in another tab" in tab.json()["detail"]
    other = send(phone, "POST", url, six | {"submit_key": "key-3"}, page="page-3", browser="phone")
    assert (other.status_code, other.json()["cause"]) == (409, "another_device")
    assert "on another device" in other.json()["detail"]
    # a draft on a submitted grade names its cause too (it cannot change it)
    draft = send(laptop, "PUT", reverse("api-item-draft", args=[item.pk]), six, **here)
    assert (draft.status_code, draft.json()["cause"]) == (409, "this_page")
    assert "a draft cannot change it" in draft.json()["detail"]
    assert Grade.objects.get(item=item).score == 5

    # an explicit revision changes it
    revised = send(laptop, "POST", url + "?revise=true", six | {"base_version": 1}, **here)
    assert revised.status_code == 200 and revised.json()["score"] == "6.00"
    grade = Grade.objects.get(item=item)
    assert (grade.score, grade.version, grade.revisions.count()) == (6, 2, 1)
    assert (grade.origin_page, grade.origin_browser) == ("page-1", "laptop")


def test_a_token_client_s_idempotency_key_with_other_content_is_a_conflict(api_client_for):
    item, expert = leased()
    api = api_client_for(expert)
    url = f"/api/v1/items/{item.pk}/submit/"
    first = api.post(url, {"score": 3}, format="json", HTTP_IDEMPOTENCY_KEY="run-7")
    assert first.status_code == 200
    assert api.post(url, {"score": 3}, format="json", HTTP_IDEMPOTENCY_KEY="run-7").status_code == (
        200
    )
    other = api.post(url, {"score": 4}, format="json", HTTP_IDEMPOTENCY_KEY="run-7")
    assert other.status_code == 409
    assert (other.json()["cause"], other.json()["grade"]["score"]) == ("this_page", "3.00")
    assert "by your earlier request" in other.json()["detail"]
    # the grade's origin keeps a digest of the token, never the token
    token = api._credentials["HTTP_AUTHORIZATION"].split()[1]
    assert token not in Grade.objects.get(item=item).origin_session


def test_a_draft_from_the_page_that_wrote_the_stored_version_is_its_later_state():
    """A draft's answer was lost: the page still names the version before it. Its next draft
    is accepted (it wrote the stored one); another tab's draft on that version is not."""
    item, expert = leased()
    client = device(expert)
    url = reverse("api-item-draft", args=[item.pk])
    here = {"page": "page-1", "browser": "laptop"}
    assert send(client, "PUT", url, {"comment": "a", "base_version": 0}, **here).status_code == 200
    later = send(client, "PUT", url, {"comment": "ab", "base_version": 0}, **here)
    assert later.status_code == 200 and later.json()["comment"] == "ab"
    stale = send(
        client, "PUT", url, {"comment": "x", "base_version": 0}, page="p2", browser="laptop"
    )
    assert (stale.status_code, stale.json()["cause"]) == (409, "another_tab")
    assert stale.json()["detail"].startswith("This grade changed in another tab since")
    assert Grade.objects.get(item=item).comment == "ab"


def _review_item():
    item = analysis_item()
    expert = expert_in(item.campaign)
    services.assignment_create_manual(item=item, expert=expert, assigned_by=None)
    return item, expert


def _review(*defects, **fields) -> dict:
    return {"defects": list(defects), "expression_error": False, "score_fits": True} | fields


def test_the_review_door_keeps_the_same_rule():
    item, expert = _review_item()
    client = device(expert)
    url = reverse("api-review-submit", args=[item.pk])
    here = {"page": "page-1", "browser": "laptop"}
    sound = _review(submit_key="k", base_version=0)
    first = send(client, "POST", url, sound, **here)
    assert first.status_code == 200 and first.json()["score"] == "1"
    assert send(client, "POST", url, sound, **here).status_code == 200  # a repeat
    other = sound | {"score_fits": False}  # 0.5, under the same key
    changed = send(client, "POST", url, other, **here)
    assert changed.status_code == 409
    body = changed.json()
    assert (body["cause"], body["grade"]["score"], body["review"]["score"]) == (
        "this_page",
        "1.00",
        "1",
    )
    assert body["review"]["score_fits"] is True
    revised = send(client, "POST", url + "?revise=true", other | {"base_version": 1}, **here)
    assert revised.status_code == 200 and revised.json()["score"] == "0.5"
    assert revised.json()["version"] == 2


def test_review_drafts_carry_versions():
    """Two devices on one review draft: the one loaded earlier is refused (409 with the stored
    review and its defects) and overwrites nothing; based on the stored version it is saved."""
    item, expert = _review_item()
    laptop, phone = device(expert), device(expert)
    url = reverse("api-review-draft", args=[item.pk])
    marked = [defect(ANALYSIS_TEXT, GAP, exists=True), defect(ANALYSIS_TEXT, EVEN, exists=True)]
    first = send(laptop, "PUT", url, _review(*marked, base_version=0), page="a", browser="laptop")
    assert first.status_code == 200 and first.json()["version"] == 1
    mine = defect(ANALYSIS_TEXT, STEP1, exists=False)
    stale = send(phone, "PUT", url, _review(mine, base_version=0), page="b", browser="phone")
    assert stale.status_code == 409
    body = stale.json()
    assert body["cause"] == "another_device" and body["review"]["version"] == 1
    assert [d["quote"] for d in body["review"]["defects"]] == [GAP, EVEN]
    assert body["detail"].startswith("This review changed on another device since")
    assert MetaReview.objects.get(grade__item=item).defects.count() == 2  # nothing overwritten
    # the same draft as stored, sent again on the old version: a repeat, not a conflict
    same = send(phone, "PUT", url, _review(*marked, base_version=0), page="b", browser="phone")
    assert same.status_code == 200 and same.json()["version"] == 1
    merged = send(
        phone, "PUT", url, _review(mine, *marked, base_version=1), page="b", browser="phone"
    )
    assert merged.status_code == 200 and merged.json()["version"] == 2
    assert MetaReview.objects.get(grade__item=item).defects.count() == 3
    # a stale submission of the laptop (loaded at version 1) is refused as well
    stale_submit = send(
        laptop,
        "POST",
        reverse("api-review-submit", args=[item.pk]),
        _review(defect(ANALYSIS_TEXT, GAP, exists=False), base_version=1, submit_key="s"),
        page="c",
        browser="laptop",
    )
    assert (stale_submit.status_code, stale_submit.json()["cause"]) == (409, "another_device")
    assert len(stale_submit.json()["review"]["defects"]) == 3
