"""Blind by the work held, in the browser: an expert who is also a researcher sees nothing of the
proof they hold (its model, its source file, its analyses, its imported rating) on the grading
page, the proof page, the imported campaign's agreement page or the final labels; once they have
submitted their grade, the doors their research role opens show it (core.visibility)."""

import json

import pytest
from django.contrib.auth.models import Group
from playwright.sync_api import expect

from adjudication.services.imported import imported_ratings_materialise
from annotation.models import Campaign, Grade
from tests.annotation.factories import CampaignFactory, ItemFactory, expert_in
from tests.problems.page_factories import (
    ProofFactory,
    ReferenceSolutionFactory,
    VerifierAnalysisFactory,
)

pytestmark = [pytest.mark.e2e, pytest.mark.django_db(transaction=True)]

MODEL = "model-e2e-secret"
SOURCE = "deepseek secret_outputs_sample.jsonl"
ANALYSIS = "verifier-e2e-analysis found a gap"
HIDDEN = (MODEL, "secret_outputs", "deepseek", "verifier-e2e-analysis")


@pytest.fixture
def two_roles(transactional_db):
    campaign = CampaignFactory(name="Blind round")
    proof = ProofFactory(
        generator=MODEL,
        source=SOURCE,
        text="Since $x^2 \\ge 0$ for every real $x$, the claim follows.",
        metadata={
            "imported_ratings": [{"source": "imo-bench", "kind": "expert", "value": 6, "max": 7}]
        },
    )
    item = ItemFactory(campaign=campaign, proof=proof)
    ReferenceSolutionFactory(problem=proof.problem)
    VerifierAnalysisFactory(proof=proof, text=ANALYSIS)
    imported_ratings_materialise(proofs=[proof])  # the imported rating's closed campaign
    imported = Campaign.objects.exclude(pk=campaign.pk).get()
    user = expert_in(campaign, "lead-e2e")
    user.groups.add(Group.objects.get_or_create(name="researcher")[0])
    return campaign, imported, item, user


def _labels(page, live_server) -> list[int]:
    page.goto(f"{live_server.url}/api/v1/final-labels/?format=json")
    return [row["proof_id"] for row in json.loads(page.inner_text("body"))["results"]]


def test_an_expert_who_researches_sees_the_model_only_after_submitting(
    page, live_server, login, two_roles, screenshot_dir
):
    campaign, imported, item, user = two_roles
    login(page, user)
    page.goto(f"{live_server.url}/annotation/{campaign.slug}/")
    page.click("button:has-text('Grade next')")
    page.wait_for_selector("#proof-text .katex")
    assert not [word for word in HIDDEN if word in page.content()]
    page.screenshot(path=str(screenshot_dir / "blind-two-roles-grading.png"))

    page.goto(f"{live_server.url}/problems/proofs/{item.proof_id}/")
    expect(page.locator("#blind-note")).to_contain_text("You are grading this proof")
    assert not [word for word in HIDDEN if word in page.content()]
    agreement = page.goto(f"{live_server.url}/adjudication/campaigns/{imported.slug}/agreement/")
    assert agreement.status == 403
    expect(page.locator(".error-reason")).to_contain_text("You grade blind")
    assert item.proof_id not in _labels(page, live_server)

    page.goto(f"{live_server.url}/annotation/items/{item.pk}/")
    page.wait_for_selector("#proof-text .katex")
    page.keyboard.press("=")  # full marks on every checkpoint
    expect(page.locator("#computed-score")).to_have_text("7")
    page.keyboard.press("Enter")
    page.wait_for_selector("text=No work left in Blind round")
    assert Grade.objects.get(item=item, expert=user).status == "submitted"

    page.goto(f"{live_server.url}/problems/proofs/{item.proof_id}/")
    facts = page.locator(".facts")
    expect(facts).to_contain_text(MODEL)
    expect(facts).to_contain_text(SOURCE)
    expect(page.locator(".analysis").first).to_contain_text("verifier-e2e-analysis")
    assert page.locator("#blind-note").count() == 0
    agreement = page.goto(f"{live_server.url}/adjudication/campaigns/{imported.slug}/agreement/")
    assert agreement.status == 200
    assert item.proof_id in _labels(page, live_server)
