"""Hostile input gets a 4xx with a reason, never a server error (PostgreSQL): NUL bytes, numbers
beyond a column's range, wrong JSON types on the grading page's endpoints, bodies over the
size limit (the API answers JSON)."""

import json

import pytest
from django.urls import reverse

from annotation import services
from tests.annotation.factories import CampaignFactory, ItemFactory, expert_in

pytestmark = pytest.mark.django_db


@pytest.fixture
def graded_item():
    campaign = CampaignFactory()
    item = ItemFactory(campaign=campaign)
    expert = expert_in(campaign)
    services.assignment_next(campaign=campaign, expert=expert)
    return item, expert


def test_nul_bytes_in_paths_queries_and_bodies_are_refused(admin_user, api_client_for):
    api = api_client_for(admin_user)
    path = api.get("/api/v1/problems/abc%00def/")
    assert path.status_code == 400 and "NUL" in path.json()["detail"]
    query = api.get("/api/v1/problems/", {"contest": "a\x00b"})
    assert query.status_code == 400 and path["Content-Type"] == "application/json"
    body = api.post(
        "/api/v1/campaigns/",
        data=json.dumps({"name": "N", "error_taxonomy": [{"k\u0000": "v"}]}),
        content_type="application/json",
    )
    assert body.status_code == 400 and "NUL" in body.json()["detail"]


def test_numbers_beyond_a_columns_range_are_refused_by_field(admin_user, api_client_for):
    api = api_client_for(admin_user)
    answer = api.post(
        "/api/v1/campaigns/",
        {"name": "Huge", "sample_seed": 2**40, "lease_minutes": 10**12, "fast_seconds": 2**33},
        format="json",
    )
    assert answer.status_code == 400
    assert {"sample_seed", "lease_minutes", "fast_seconds"} <= set(answer.json())


def test_unknown_api_urls_and_oversized_bodies_answer_json(admin_user, api_client_for, settings):
    api = api_client_for(admin_user)
    missing = api.get("/api/v1/campaigns/not a slug/agreement/")
    assert missing.status_code == 404 and missing.json() == {"detail": "Not found."}
    settings.DATA_UPLOAD_MAX_MEMORY_SIZE = 1000
    big = api.post(
        "/api/v1/campaigns/", data=json.dumps({"name": "x" * 5000}), content_type="application/json"
    )
    assert big.status_code == 413 and "size limit" in big.json()["detail"]


def test_the_api_is_every_path_under_api_but_its_reference_page(admin_user, api_client_for):
    """One rule (core.http.is_api_path) for the JSON errors and the pages' middleware: the
    schema's refusal is JSON and carries no page policy; the reference page's is a page's."""
    api = api_client_for(admin_user)
    schema = api.get("/api/schema/", {"format": "a\x00b"})
    assert schema.status_code == 400 and schema["Content-Type"] == "application/json"
    listing = api.get("/api/v1/problems/")
    assert "Content-Security-Policy" not in listing
    docs = api.get("/api/docs/", {"q": "a\x00b"})
    assert docs.status_code == 400 and docs["Content-Type"].startswith("text/plain")
    assert "Content-Security-Policy" in api.get("/api/docs/")


def test_the_grading_pages_door_checks_types_with_the_api_serializer(client, graded_item):
    """The grading page saves through the API's draft operation, with its session: bad types
    are 400s naming the field, never a 500."""
    item, expert = graded_item
    client.force_login(expert)
    url = reverse("api-item-draft", args=[item.pk])
    for body, field in [
        ({"seconds_spent": 2**40}, "seconds_spent"),
        ({"first_wrong_step": "two"}, "first_wrong_step"),
        ({"awards": ["not", "a", "dict"]}, "awards"),
        ({"spans": [{"start": "x", "end": 3, "category": "other"}]}, "spans"),
        ({"base_version": -1}, "base_version"),
    ]:
        answer = client.put(url, json.dumps(body), content_type="application/json")
        assert answer.status_code == 400, body
        assert field in answer.json(), answer.json()
    for raw in (b"[1, 2]", b"not json", b'{"comment": "a\\u0000b"}'):
        answer = client.put(url, raw, content_type="application/json")
        assert answer.status_code == 400 and answer.json()


def test_a_draft_with_a_score_off_the_scale_is_refused_not_stored_as_null(client, graded_item):
    item, expert = graded_item
    client.force_login(expert)
    url = reverse("api-item-draft", args=[item.pk])
    assert client.put(url, {"score": "3"}, content_type="application/json").status_code == 200
    answer = client.put(url, {"score": "12"}, content_type="application/json")
    assert answer.status_code == 400
    assert any(p.startswith("score:") for p in answer.json()["problems"])
    assert item.grades.get(expert=expert).score == 3


def test_ids_past_the_largest_key_are_unknown_urls_not_database_errors(admin_user, client):
    """PostgreSQL refuses an integer past 2**63 - 1 as a key: such an id (and 0) matches no URL,
    on the API and on pages alike."""
    from rest_framework.test import APIClient

    api = APIClient()
    api.force_authenticate(admin_user)
    client.force_login(admin_user)
    for item_id in ("9223372036854775808", "13348013936055537075486720", "0"):
        answer = api.post(f"/api/v1/items/{item_id}/review/", {}, format="json")
        assert answer.status_code == 404 and answer.json() == {"detail": "Not found."}
        assert api.get(f"/api/v1/items/{item_id}/").status_code == 404
        assert client.get(f"/annotation/items/{item_id}/").status_code == 404
    assert reverse("api-item-detail", args=[2**63 - 1]).endswith(f"/{2**63 - 1}/")


def test_a_token_past_its_rate_is_answered_429_with_retry_after(admin_user, monkeypatch):
    """A script that outruns API_USER_RATE is told when to come back (DRF's throttle, here at
    three requests a minute); other tokens are not slowed down."""
    from django.core.cache import cache
    from rest_framework.test import APIClient
    from rest_framework.throttling import UserRateThrottle

    from tests.factories import UserFactory

    monkeypatch.setitem(UserRateThrottle.THROTTLE_RATES, "user", "3/min")
    cache.clear()
    fast, other = APIClient(), APIClient()
    fast.force_authenticate(admin_user)
    other.force_authenticate(UserFactory(roles=["admin"]))
    answers = [fast.get("/api/v1/problems/") for _ in range(4)]
    assert [a.status_code for a in answers] == [200, 200, 200, 429]
    assert int(answers[-1]["Retry-After"]) > 0
    assert "throttled" in answers[-1].json()["detail"].lower()
    assert other.get("/api/v1/problems/").status_code == 200
    cache.clear()
