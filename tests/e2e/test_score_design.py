"""Browser flow of intervals valid by design: the admin routes a campaign with a budget (the
uniform share kept at its default), the experts' labels arrive, and the scores page shows each
interval with its assumption line; the admin then sets no uniform share on the routing page
(Enter submits) and ranks again: the scores page shows no interval and says why."""

from decimal import Decimal

import pytest
from django.urls import reverse

from adjudication.services.labels import final_label_set
from annotation.models import Item
from annotation.services.items import items_create_from_selection
from estimation.routing.services import campaign_routing_set
from tests.annotation.factories import CampaignFactory
from tests.problems.page_factories import ProblemFactory, ProofFactory, VerifierAnalysisFactory

pytestmark = [pytest.mark.e2e, pytest.mark.django_db(transaction=True)]


def routed_campaign():
    campaign = CampaignFactory(scale="0-7", double_share=Decimal("0"))
    proofs = []
    for p in range(6):
        problem = ProblemFactory()
        for s in range(3):
            proof = ProofFactory(problem=problem)
            second = Decimal(0) if (p + s) % 3 == 0 else Decimal(1)
            VerifierAnalysisFactory(proof=proof, score=Decimal(1))
            VerifierAnalysisFactory(proof=proof, score=second)
            proofs.append(proof)
    items_create_from_selection(campaign=campaign, proofs=proofs)
    campaign_routing_set(campaign=campaign, item_order="uncertainty", budget=Decimal("0.5"))
    for n, item in enumerate(Item.objects.filter(campaign=campaign, route_held=False)):
        final_label_set(item=item, value=Decimal(n % 8), source="single", policy="t", grade_ids=[])
    return campaign


def test_scores_say_what_they_assume_and_why_none_is_shown(
    page, live_server, login, admin_user, screenshot_dir, assert_accessible
):
    campaign = routed_campaign()
    login(page, admin_user)
    scores = live_server.url + reverse("exports:scores", args=[campaign.slug])
    page.goto(scores)
    page.wait_for_selector("#score-intervals")
    human = page.inner_text("#score-intervals .interval-human")
    assert "Assumes: the recorded design (each label weighted by 1 / its chance" in human
    assert "clustered" in human
    assert "lambda" in page.inner_text("#score-intervals .interval-ppi")
    page.screenshot(path=str(screenshot_dir / "scores-design.png"), full_page=True)
    assert_accessible(page)

    # no random share: the most uncertain only
    page.goto(live_server.url + reverse("exports:routing", args=[campaign.slug]))
    assert page.input_value("#id_uniform_share") == "25%"
    page.fill("#id_uniform_share", "0")
    page.press("#id_uniform_share", "Enter")
    page.wait_for_selector("text=Routing saved.")
    campaign.refresh_from_db()
    assert campaign.routing_uniform_share == Decimal("0")
    page.goto(scores)
    shown = page.inner_text("#score-intervals .interval-human")
    assert "No interval:" in shown and "no known probability of reaching experts" in shown
    assert page.locator("#score-intervals .interval-assumes").count() == 0
    page.screenshot(path=str(screenshot_dir / "scores-not-shown.png"), full_page=True)
    assert_accessible(page)
