"""Browser flow of routing by uncertainty: the admin opens the campaign's routing page, orders
the items by uncertainty with a budget (Enter submits), reads the ranked queue, ranks again with
a double click, goes back; a bad budget is named; the expert is then served rank 1 first."""

from decimal import Decimal

import pytest

from annotation.models import Item
from annotation.services.assignment import assignment_next
from tests.annotation.factories import CampaignFactory, ItemFactory, expert_in
from tests.problems.page_factories import VerifierAnalysisFactory

pytestmark = [pytest.mark.e2e, pytest.mark.django_db(transaction=True)]


def test_admin_routes_expert_effort_by_uncertainty(
    page, live_server, login, admin_user, screenshot_dir, assert_accessible
):
    campaign = CampaignFactory(name="Routing pilot", slug="routing-pilot", scale="0-0.5-1")
    sure, split, bare = (ItemFactory(campaign=campaign) for _ in range(3))
    for score in ("1", "1", "1"):
        VerifierAnalysisFactory(proof=sure.proof, score=Decimal(score))
    for score in ("0", "1", "0.5"):
        VerifierAnalysisFactory(proof=split.proof, score=Decimal(score))

    login(page, admin_user)
    page.goto(f"{live_server.url}/annotation/{campaign.slug}/")
    page.click("a:has-text('Routing')")
    page.wait_for_selector("text=Nothing ranked yet")
    assert_accessible(page)

    # a bad budget is named, nothing is saved
    page.select_option("#id_item_order", "uncertainty")
    page.fill("#id_budget", "150%")
    page.press("#id_budget", "Enter")
    page.wait_for_selector("text=a share above 0 and at most 1")
    campaign.refresh_from_db()
    assert campaign.item_order == "created"
    assert_accessible(page)

    # Enter in the budget field saves and ranks; no uniform share: most uncertain first, exactly
    page.fill("#id_uniform_share", "0")
    page.fill("#id_budget", "50%")
    page.press("#id_budget", "Enter")
    page.wait_for_selector("text=Routing saved. Ranked 3 item(s): 2 for experts, 1 held.")
    rows = page.locator("#routing-queue-table tbody tr")
    assert rows.count() == 3
    first = rows.nth(0).inner_text()
    assert first.startswith("1\t") and f"#{bare.pk}" in first and "1.000" in first
    assert "held (beyond budget)" in rows.nth(2).inner_text()
    assert page.input_value("#id_budget") == "50%"
    page.screenshot(path=str(screenshot_dir / "routing-queue.png"), full_page=True)
    assert_accessible(page)

    # double click on "Rank again": one pass after the other, the same ranking
    page.dblclick("button:has-text('Rank again')")
    page.wait_for_selector("text=Ranked 3 item(s): 2 for experts, 1 held.")
    page.wait_for_load_state("networkidle")
    assert [i.route_rank for i in Item.objects.filter(campaign=campaign).order_by("id")] == [
        3,
        2,
        1,
    ]
    assert page.locator(".messages li").count() == 1

    # back: the page again, no resubmission, the queue still there
    page.go_back()
    page.wait_for_selector("#routing-queue-table")
    assert Item.objects.filter(campaign=campaign, route_held=True).count() == 1

    # the expert is served the most uncertain item first, never the held one
    campaign.refresh_from_db()
    experts = [expert_in(campaign) for _ in range(3)]
    served = [assignment_next(campaign=campaign, expert=e) for e in experts]
    assert [a and a.item_id for a in served] == [bare.pk, split.pk, None]
