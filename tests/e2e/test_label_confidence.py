"""Browser flow of label confidence and scores with intervals: the admin opens the agreement page
(no model yet), queues the rater model's refit with a double click (one refit, run by the
worker; the page reloads when it lands), reads each rater's confusion
heat map, opens the labels page; then the scores page: a bad width with Enter is named, a good
one shows the intervals and their plot, back returns to the agreement page."""

import pytest

from adjudication.models import FinalLabel
from estimation.models import RaterModelFit, RaterModelRefit
from estimation.services.refit import rater_model_refit_run
from tests.exports.factories import graded_by_experts_and_graders

pytestmark = [pytest.mark.e2e, pytest.mark.django_db(transaction=True)]


def test_admin_fits_the_rater_model_and_reads_scores_with_intervals(
    page, live_server, login, admin_user, screenshot_dir, assert_accessible
):
    campaign = graded_by_experts_and_graders()
    RaterModelRefit.objects.filter(campaign=campaign).delete()  # the factory's own changes
    login(page, admin_user)
    page.goto(f"{live_server.url}/adjudication/campaigns/{campaign.slug}/agreement/")
    page.wait_for_selector("text=No rater model fitted yet")
    assert_accessible(page)

    # a double click queues one refit (the second press joins it); the worker fits and the
    # page, polling the refit's state, reloads with the model
    page.dblclick("button:has-text('Fit the rater model')")
    page.wait_for_selector("#fit-status[data-state='queued']")
    (refit,) = RaterModelRefit.objects.filter(campaign=campaign)
    assert not RaterModelFit.objects.filter(campaign=campaign).exists()
    rater_model_refit_run(refit_id=refit.pk)
    page.wait_for_selector("#rater-confusions svg", timeout=15_000)
    page.wait_for_load_state("networkidle")
    assert RaterModelFit.objects.filter(campaign=campaign).count() == 1
    assert page.locator("#rater-confusions .card").count() == 3
    assert "24 of 24 labels with a confidence" in page.inner_text("#confidence-summary")
    raters = page.inner_text("#raters")
    assert "overconfident" in raters and "good grader" in raters
    page.locator("#label-confidence").scroll_into_view_if_needed()
    page.screenshot(path=str(screenshot_dir / "agreement-label-confidence.png"), full_page=True)
    assert_accessible(page)

    page.goto(f"{live_server.url}/adjudication/campaigns/{campaign.slug}/labels/")
    first = FinalLabel.objects.filter(item__campaign=campaign).order_by("item_id").first()
    assert f"{first.confidence:.3f}" in page.inner_text("#labels")
    page.screenshot(path=str(screenshot_dir / "labels-confidence.png"), full_page=True)
    assert_accessible(page)

    # the scores page, from the agreement page's link
    page.goto(f"{live_server.url}/adjudication/campaigns/{campaign.slug}/agreement/")
    with page.expect_navigation():  # until load: htmx is listening
        page.click("a:has-text('Scores with intervals')")
    page.wait_for_selector("#score-intervals")
    page.fill("#width", "wide")
    page.press("#width", "Enter")
    page.wait_for_selector("text=width: 'wide' is not a number")
    assert page.get_attribute("#width", "aria-invalid") == "true"
    assert_accessible(page)
    page.fill("#width", "0.2")
    page.press("#width", "Enter")
    page.wait_for_url("**width=0.2")
    rows = page.locator("#score-intervals tbody tr")
    assert rows.count() == 2 and "model-a" in rows.nth(0).inner_text()
    assert page.locator("svg.intervals line[stroke='#2d5bd1']").count() >= 2
    page.screenshot(path=str(screenshot_dir / "scores-intervals.png"), full_page=True)
    assert_accessible(page)

    # back: the bad width, the scores page, then the agreement page, nothing refitted
    page.go_back()
    page.wait_for_selector("text=width: 'wide' is not a number")
    page.go_back()
    page.go_back()
    page.wait_for_selector("#rater-confusions")
    assert RaterModelFit.objects.filter(campaign=campaign).count() == 1
