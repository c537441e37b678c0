"""Blind through every door, whatever else the expert is: a user holding an ungraded item walks
every URL pattern of the site (the admin's pages too, when an admin) and every operation of the
API schema, and finds nothing of what grading blind hides (the verifier's analyses and scores,
imported ratings, the gold label, final labels of other campaigns, the model that wrote the proof
and its source file); once they have submitted, the doors their roles open show it again
(core.visibility)."""

import re
from decimal import Decimal
from itertools import combinations

import pytest
from django.contrib.auth.models import Group
from django.urls import URLPattern, URLResolver, get_resolver

from adjudication.models import AdjudicationCase, FinalLabel, LabelSource
from adjudication.services.imported import imported_ratings_materialise
from annotation import services
from annotation.services.grade_checks import GradeInput
from tests.adjudication.factories import judge
from tests.annotation.factories import CampaignFactory, ItemFactory, expert_in
from tests.problems.page_factories import ProofFactory, VerifierAnalysisFactory

pytestmark = pytest.mark.django_db

MARKERS = {
    "generator": "gen-zqmark",
    "source": "src-zqmark",
    "rating": "rating-zqmark",
    "automatic rating": "autorater-zqmark",
    "analysis": "analysis-zqmark",
    "verifier": "verifier-zqmark",
    "gold label": "gold-zqmark",
    "imported span": "span-zqmark",
}
SEEN = "proof-text-visible"
OTHER_ROLES = ("adjudicator", "researcher", "admin")
# every combination: the expert alone, with one other role, with two, with all three
ROLE_SETS = [("expert", *extra) for size in range(4) for extra in combinations(OTHER_ROLES, size)]
# the walk of every door: the expert alone, with each other role, and with all three (a pair of
# roles opens no door that all three do not: the walk with all three covers them)
WALK_ROLE_SETS = [roles for roles in ROLE_SETS if len(roles) in (1, 2, 4)]


def _held_gold_item(*, roles=("expert",)):
    campaign = CampaignFactory(gold_rate=Decimal("1"))
    expert = expert_in(campaign)
    for name in roles:
        expert.groups.add(Group.objects.get_or_create(name=name)[0])
    if "admin" in roles:  # a lab's lead: the Django admin's pages too
        expert.is_staff = expert.is_superuser = True
        expert.save(update_fields=["is_staff", "is_superuser"])
    graded = ItemFactory(
        campaign=campaign, required_judgements=2, proof=ProofFactory(generator="gen-other-2")
    )
    proof = ProofFactory(
        generator=MARKERS["generator"],
        source=f"deepseek {MARKERS['source']}_outputs_sample.jsonl",
        text=f"The {SEEN} argument.",
        metadata={
            "ratings": [
                {"kind": "human", "value": 5, "max": 7, "source": MARKERS["rating"]},
                {"kind": "automatic", "value": 1, "max": 1, "source": MARKERS["automatic rating"]},
            ],
            "imported_ratings": [
                {"source": "imo-bench", "kind": "expert", "value": 6, "max": 7, "raw": 6}
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
    # the imported human rating: a closed campaign of its own, an item and a final label there
    assert imported_ratings_materialise(proofs=[proof]).labels == 1
    # the same proof in a campaign of others, where two experts disagree: a case is open
    elsewhere = ItemFactory(campaign=CampaignFactory(), proof=proof, required_judgements=2)
    judge(elsewhere, 1, 7)
    assert AdjudicationCase.objects.filter(item=elsewhere).exists()
    campaign.gold_rate = Decimal("0")
    campaign.save(update_fields=["gold_rate"])
    first = services.assignment_next(campaign=campaign, expert=expert)
    assert first.item_id == graded.pk
    services.grade_submit(item=graded, expert=expert, data=GradeInput(score=Decimal("3")))
    campaign.gold_rate = Decimal("1")
    campaign.save(update_fields=["gold_rate"])
    held = services.assignment_next(campaign=campaign, expert=expert)
    assert held.item_id == gold.pk
    expert.refresh_from_db()
    return campaign, expert, gold


def _imported_campaign(proof):
    return FinalLabel.objects.get(
        item__proof=proof, source=LabelSource.IMPORTED, item__is_gold=False
    ).item.campaign


def _patterns(patterns, prefix="", *, admin=False):
    for pattern in patterns:
        if isinstance(pattern, URLResolver):
            if str(pattern.pattern).startswith("admin/") and not admin:
                continue  # the Django admin is for admins only (tested in test_permissions)
            yield from _patterns(pattern.url_patterns, prefix + str(pattern.pattern), admin=admin)
        elif isinstance(pattern, URLPattern):
            yield prefix + str(pattern.pattern)


def _fill(route: str, values: dict) -> str:
    def value(match):
        return str(values.get(match.group(2), 1))

    return "/" + re.sub(r"<(?:(\w+):)?(\w+)>", value, route)


def _admin_urls(item) -> tuple[list[str], list[str]]:
    """The admin's changelists, and the change pages of the held proof, its analysis and item."""
    analysis = item.proof.analyses.get()
    lists = [
        "/admin/problems/proof/", "/admin/problems/verifieranalysis/", "/admin/annotation/item/",
        "/admin/annotation/grade/", "/admin/annotation/assignment/", "/admin/annotation/campaign/",
    ]  # fmt: skip
    pages = [
        f"/admin/problems/proof/{item.proof_id}/change/",
        f"/admin/problems/verifieranalysis/{analysis.pk}/change/",
        f"/admin/annotation/item/{item.pk}/change/",
    ]
    return lists, pages


_SCHEMA: list[dict] = []


def _api_schema(admin_api) -> dict:
    """The API schema as an admin fetches it, once for the module's walks: it is made from the
    URL configuration and the serializers, not from the rows (0.7 s a fetch)."""
    if not _SCHEMA:
        _SCHEMA.append(admin_api.get("/api/schema/?format=json").json())
    return _SCHEMA[0]


def _leaks(body: str) -> list[str]:
    lowered = body.lower()
    return [name for name, marker in MARKERS.items() if marker in lowered]


def _body(response) -> str:
    if response.streaming:
        return b"".join(response.streaming_content).decode(errors="replace")
    return response.content.decode(errors="replace")


def _walk(client, api, schema, urls, values) -> tuple[list, set]:
    leaks, reached = [], set()
    for url in urls:
        for headers in ({}, {"HX-Request": "true"}):  # whole pages and their htmx fragments
            response = client.get(url, headers=headers)
            body = _body(response)
            if response.status_code == 200:
                reached.add(url)
            leaks += [(url, name) for name in _leaks(body)]
            if SEEN in body:
                reached.add(SEEN)
    for path, operations in schema["paths"].items():
        url = _fill(path.lstrip("/").replace("{", "<").replace("}", ">"), values)
        for method in operations:
            if method not in {"get", "post", "put", "patch"}:
                continue
            response = getattr(api, method)(url, {}, format="json")
            body = _body(response)
            leaks += [(f"{method.upper()} {url}", name) for name in _leaks(body)]
            if SEEN in body:
                reached.add(SEEN)
    return leaks, reached


@pytest.mark.parametrize("roles", WALK_ROLE_SETS, ids="+".join)
def test_a_user_holding_an_item_sees_nothing_blindness_hides_whatever_their_roles(
    roles, client, api_client_for, admin_user
):
    campaign, expert, item = _held_gold_item(roles=roles)
    imported = _imported_campaign(item.proof)
    values = {
        "proof_id": item.proof_id, "item_id": item.pk, "pk": item.pk, "slug": campaign.slug,
        "external_id": item.proof.problem.external_id, "username": expert.username,
        "fmt": "json", "part": "1",
    }  # fmt: skip
    client.force_login(expert)
    urls = [_fill(route, values) for route in _patterns(get_resolver().url_patterns)]
    # the doors of the imported ratings' closed campaign: its agreement, scores and labels
    urls += [
        url.replace(f"/{campaign.slug}/", f"/{imported.slug}/")
        for url in urls
        if campaign.slug in url
    ]
    case = AdjudicationCase.objects.get(item__proof=item.proof)
    urls += [f"/adjudication/cases/{case.pk}/", f"/api/v1/adjudication/cases/{case.pk}/"]
    if "admin" in roles:
        admin_lists, admin_pages = _admin_urls(item)
        urls += admin_lists + admin_pages
    api = api_client_for(expert)
    schema = _api_schema(api_client_for(admin_user))
    leaks, reached = _walk(client, api, schema, urls, values)
    for query in (f"campaign={imported.slug}", "", f"source={LabelSource.IMPORTED}"):
        body = api.get(f"/api/v1/final-labels/?{query}").json()
        rows = body.get("results", []) if isinstance(body, dict) else []
        leaks += [
            ("GET /api/v1/final-labels/", "final label")
            for row in rows
            if row["proof_id"] == item.proof_id
        ]
    cases = api.get("/api/v1/adjudication/cases/")
    if cases.status_code == 200 and case.pk in [row["id"] for row in cases.json()["results"]]:
        leaks.append(("GET /api/v1/adjudication/cases/", "case on the held proof"))
    for url in (f"/adjudication/cases/{case.pk}/", f"/api/v1/adjudication/cases/{case.pk}/"):
        answer = api.get(url) if url.startswith("/api/") else client.get(url)
        if answer.status_code not in {403, 404}:
            leaks.append((url, f"answered {answer.status_code}"))
    for url in (
        f"/api/v1/verification/analyses/?proof={item.proof_id}",
        "/api/v1/verification/analyses/",
    ):
        leaks += [(url, name) for name in _leaks(_body(api.get(url)))]
    for url in (
        f"/api/v1/adjudication/campaigns/{imported.slug}/agreement/",
        f"/api/v1/campaigns/{imported.slug}/scores/",
        f"/adjudication/campaigns/{imported.slug}/agreement/",
        f"/exports/scores/{imported.slug}/",
        f"/exports/scores/{imported.slug}.csv",
    ):
        answer = api.get(url) if url.startswith("/api/") else client.get(url)
        if answer.status_code not in {403, 404}:
            leaks.append((url, f"answered {answer.status_code}"))
    export = api.post(
        "/api/v1/exports/",
        {"campaign": imported.slug, "format": "proofbench", "file_type": "jsonl"},
        format="json",
    )
    if export.status_code != 403 or (
        {"researcher", "admin"} & set(roles) and "grade blind" not in export.json()["detail"]
    ):
        leaks.append(("POST /api/v1/exports/", f"answered {export.status_code}"))
    # the search door: a proof's model or source file finds nothing (the page echoes the query)
    for query in (MARKERS["generator"], MARKERS["source"]):
        found = client.get(f"/problems/?q={query}").content.decode()
        assert item.proof.problem.external_id not in found
    assert leaks == [], "\n".join(sorted({f"{u}: {n}" for u, n in leaks}))
    assert SEEN in reached  # the walk did reach the item the expert holds
    assert f"/annotation/items/{item.pk}/" in reached
    if "admin" in roles:  # the admin's lists open without the held rows, and say why
        assert set(admin_lists) <= reached
        listed = client.get("/admin/problems/proof/").content.decode()
        assert "you are grading their proofs blind" in listed
        for url in admin_pages:
            refused = client.get(url)
            assert refused.status_code == 403 and "You grade blind" in refused.content.decode()


@pytest.mark.parametrize("roles", ROLE_SETS, ids="+".join)
def test_after_submitting_the_doors_of_the_users_roles_show_what_blindness_hid(
    roles, client, api_client_for
):
    campaign, expert, item = _held_gold_item(roles=roles)
    services.grade_submit(item=item, expert=expert, data=GradeInput(score=Decimal("4")))
    api = api_client_for(expert)
    proof = api.get(f"/api/v1/proofs/{item.proof_id}/").json()
    page = client
    page.force_login(expert)
    shown = page.get(f"/problems/proofs/{item.proof_id}/").content.decode()
    if roles == ("expert",):  # an expert alone stays blind on the corpus
        assert "generator" not in proof and "source" not in proof
        assert MARKERS["source"] not in shown and MARKERS["generator"] not in shown
        return
    assert proof["generator"] == MARKERS["generator"]
    assert (
        MARKERS["source"] in proof["source"] and MARKERS["analysis"] in proof["analyses"][0]["text"]
    )
    assert MARKERS["source"] in shown and MARKERS["generator"] in shown
    labels = [row["proof_id"] for row in api.get("/api/v1/final-labels/").json()["results"]]
    assert item.proof_id in labels
    if {"adjudicator", "admin"} & set(roles):
        case = AdjudicationCase.objects.get(item__proof=item.proof)
        assert case.pk in [
            row["id"] for row in api.get("/api/v1/adjudication/cases/").json()["results"]
        ]
        assert api.get(f"/api/v1/adjudication/cases/{case.pk}/").status_code == 200
    if {"researcher", "admin"} & set(roles):
        analyses = api.get(f"/api/v1/verification/analyses/?proof={item.proof_id}")
        assert MARKERS["analysis"] in analyses.content.decode()
        imported = _imported_campaign(item.proof)
        assert (
            api.get(f"/api/v1/adjudication/campaigns/{imported.slug}/agreement/").status_code == 200
        )


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
    assert MARKERS["source"] in found[0]["source"]
