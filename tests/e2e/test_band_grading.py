"""Browser flow of grading against a band scheme (IMO-ProofBench guidelines): the expert picks
the band with its key, which sets the score; the band's guideline lines are shown as its
guide; a revision moves to another band."""

import csv
from decimal import Decimal

import pytest
from playwright.sync_api import expect

from annotation.models import Grade
from rubrics.models import SchemeMethod
from rubrics.services import scheme_approve, scheme_version_create
from tests.annotation.factories import CampaignFactory, ItemFactory, expert_in
from tests.conftest import wait_for
from tests.factories import UserFactory
from tests.problems.page_factories import ProblemFactory

pytestmark = [pytest.mark.e2e, pytest.mark.django_db(transaction=True)]


@pytest.fixture
def band_setup(transactional_db, real_fixtures):
    with (real_fixtures / "imobench" / "proofbench_v2.csv").open(newline="") as handle:
        row = next(r for r in csv.DictReader(handle) if r["Problem ID"] == "PB-Basic-001")
    problem = ProblemFactory(external_id=row["Problem ID"], statement=row["Problem"])
    scheme = scheme_version_create(
        problem=problem,
        text=row["Grading guidelines"],
        method=SchemeMethod.IMPORTED,
        fmt="imobench_guidelines",
    )
    scheme = scheme_approve(scheme=scheme, user=UserFactory(roles=["admin"]))
    campaign = CampaignFactory(name="Band round")
    item = ItemFactory(
        campaign=campaign,
        proof__problem=problem,
        proof__text="Put $x = 0$: then $f(f(y)) = 2f(y) + f(0)$, so $f(y) = 2y + c$ works.",
        scheme=scheme,
    )
    return campaign, item, expert_in(campaign, "band-grader")


def test_pick_a_band_with_its_key_then_revise_it(
    page, live_server, login, band_setup, screenshot_dir
):
    campaign, item, expert = band_setup
    login(page, expert)
    page.goto(f"{live_server.url}/annotation/{campaign.slug}/")
    page.click("button:has-text('Grade next')")
    page.wait_for_selector("#proof-text .katex")
    expect(page.locator("#computed-score")).not_to_have_text("\u2013")
    partial = page.locator('.cp-row.band[data-id="partial"]')
    assert "Guessed the solution correctly" in partial.inner_text()
    assert page.locator(".cp-row.band").count() == 4
    # 1 is the Partial band's key: it picks the band and sets the score
    page.keyboard.press("1")
    assert partial.locator("input[name=band]").is_checked()
    assert page.locator("input[name=score][value='1']").is_checked()
    expect(page.locator("#computed-score")).to_have_text("1")
    page.screenshot(path=str(screenshot_dir / "grading-bands.png"), full_page=True)
    # another band's key moves the pick (one band at a time)
    page.keyboard.press("6")
    assert page.locator('.cp-row.band[data-id="almost"] input').is_checked()
    assert not partial.locator("input[name=band]").is_checked()
    expect(page.locator("#computed-score")).to_have_text("6")
    page.keyboard.press("1")
    expect(page.locator("#computed-score")).to_have_text("1")
    page.keyboard.press("Enter")
    page.wait_for_selector("text=No work left in Band round")
    grade = Grade.objects.get(item=item, expert=expert)
    assert grade.status == "submitted"
    assert grade.awards == {"partial": "1"}
    assert grade.score == Decimal(1) and grade.computed_score == Decimal(1)

    # back on the item (revising), the pick is restored; clicking Almost and saving revises it
    page.goto(f"{live_server.url}/annotation/items/{item.pk}/?revise=1")
    page.wait_for_selector("#proof-text .katex")
    assert partial.locator("input[name=band]").is_checked()
    page.locator('.cp-row.band[data-id="almost"] label').click()
    assert page.locator("input[name=score][value='6']").is_checked()
    page.click("#submit-button")
    wait_for(lambda: Grade.objects.get(pk=grade.pk).score == Decimal(6))
    grade.refresh_from_db()
    assert grade.awards == {"almost": "6"} and grade.revisions.count() == 1
