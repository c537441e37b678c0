"""Blind through every door: an expert holding an item walks every URL pattern of the site and
every operation of the API schema and finds nothing of what grading blind hides (the verifier's
analyses and scores, imported ratings, the gold label, the model that wrote the proof)."""

import re
from decimal import Decimal

import pytest
from django.urls import URLPattern, URLResolver, get_resolver

from adjudication.models import FinalLabel, LabelSource
from annotation import services
from annotation.services.grade_checks import (
    GradeInput,
)
from tests.annotation.factories import CampaignFactory, ItemFactory, expert_in
from tests.problems.page_factories import ProofFactory, VerifierAnalysisFactory

pytestmark = pytest.mark.django_db

MARKERS = {
    "generator": "gen-zqmark",
    "rating": "rating-zqmark",
    "automatic rating": "autorater-zqmark",
    "analysis": "analysis-zqmark",
    "verifier": "verifier-zqmark",
    "gold label": "gold-zqmark",
    "imported span": "span-zqmark",
}
SEEN = "proof-text-visible"


def _held_gold_item():
    campaign = CampaignFactory(gold_rate=Decimal("1"))
    expert = expert_in(campaign)
    graded = ItemFactory(
        campaign=campaign, required_judgements=2, proof=ProofFactory(generator="gen-zqmark-2")
    )
    proof = ProofFactory(
        generator=MARKERS["generator"],
        text=f"The {SEEN} argument.",
        metadata={
            "ratings": [
                {"kind": "human", "value": 5, "max": 7, "source": MARKERS["rating"]},
                {"kind": "automatic", "value": 1, "max": 1, "source": MARKERS["automatic rating"]},
            ],
            "error_spans": [{"text": "argument", "comment": MARKERS["imported span"]}],
        },
    )
    VerifierAnalysisFactory(
        proof=proof, verifier=MARKERS["verifier"], text=f"{MARKERS['analysis']} found a gap"
    )
    gold = ItemFactory(campaign=campaign, proof=proof, is_gold=True, is_final=True)
    FinalLabel.objects.create(
        item=gold, value=Decimal("5"), scale=campaign.scale, source=LabelSource.IMPORTED,
        policy=f"{MARKERS['gold label']} policy",
    )  # fmt: skip
    campaign.gold_rate = Decimal("0")
    campaign.save(update_fields=["gold_rate"])
    first = services.assignment_next(campaign=campaign, expert=expert)
    assert first.item_id == graded.pk
    services.grade_submit(item=graded, expert=expert, data=GradeInput(score=Decimal("3")))
    campaign.gold_rate = Decimal("1")
    campaign.save(update_fields=["gold_rate"])
    held = services.assignment_next(campaign=campaign, expert=expert)
    assert held.item_id == gold.pk
    return campaign, expert, gold


def _patterns(patterns, prefix=""):
    for pattern in patterns:
        if isinstance(pattern, URLResolver):
            if str(pattern.pattern).startswith("admin/"):
                continue  # the Django admin is for admins only (tested in test_permissions)
            yield from _patterns(pattern.url_patterns, prefix + str(pattern.pattern))
        elif isinstance(pattern, URLPattern):
            yield prefix + str(pattern.pattern)


def _fill(route: str, values: dict) -> str:
    def value(match):
        return str(values.get(match.group(2), 1))

    return "/" + re.sub(r"<(?:(\w+):)?(\w+)>", value, route)


def _leaks(body: str) -> list[str]:
    lowered = body.lower()
    return [name for name, marker in MARKERS.items() if marker in lowered]


def test_an_expert_holding_an_item_sees_nothing_blindness_hides(client, api_client_for, admin_user):
    campaign, expert, item = _held_gold_item()
    values = {
        "proof_id": item.proof_id, "item_id": item.pk, "pk": item.pk, "slug": campaign.slug,
        "external_id": item.proof.problem.external_id, "username": expert.username,
        "fmt": "json", "part": "1",
    }  # fmt: skip
    client.force_login(expert)
    leaks, reached = [], set()
    urls = [_fill(route, values) for route in _patterns(get_resolver().url_patterns)]
    for url in urls:
        for headers in ({}, {"HX-Request": "true"}):  # whole pages and their htmx fragments
            response = client.get(url, headers=headers)
            body = response.content.decode(errors="replace") if not response.streaming else ""
            if response.status_code == 200:
                reached.add(url)
            leaks += [(url, name) for name in _leaks(body)]
            if SEEN in body:
                reached.add(SEEN)
    api = api_client_for(expert)
    schema = api_client_for(admin_user).get("/api/schema/?format=json").json()
    for path, operations in schema["paths"].items():
        url = _fill(path.lstrip("/").replace("{", "<").replace("}", ">"), values)
        for method in operations:
            if method not in {"get", "post", "put", "patch"}:
                continue
            response = getattr(api, method)(url, {}, format="json")
            leaks += [
                (f"{method.upper()} {url}", name) for name in _leaks(response.content.decode())
            ]
            if SEEN in response.content.decode():
                reached.add(SEEN)
    # the search door: a proof's model finds nothing (the page echoes the query, no more)
    found = client.get(f"/problems/?q={MARKERS['generator']}").content.decode()
    assert item.proof.problem.external_id not in found
    assert leaks == [], "\n".join(f"{u}: {n}" for u, n in leaks)
    assert SEEN in reached  # the walk did reach the item the expert holds
    assert f"/annotation/items/{item.pk}/" in reached


def test_proofs_are_not_found_by_model_by_an_expert_but_are_by_a_researcher(
    api_client_for, researcher_user
):
    campaign, expert, item = _held_gold_item()
    url = f"/api/v1/proofs/?generator={MARKERS['generator']}"
    refused = api_client_for(expert).get(url)
    assert refused.status_code == 400 and "generator" in refused.json()
    found = api_client_for(researcher_user).get(url).json()["results"]
    assert [proof["generator"] for proof in found] == [MARKERS["generator"]]
    assert found[0]["metadata"]["ratings"][0]["source"] == MARKERS["rating"]
