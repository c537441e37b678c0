"""Browser flow of the rater model's measured calibration on the agreement page: a campaign
double-scored on 40% of its proofs shows the model chosen by held-out calibration, the
reliability diagram (inline SVG) and the calibration error with its interval; a campaign with
one expert and six gold items says in words that there is too little evidence, after its fit
button queued the refit (the page polls the refit's state and reloads when it lands)."""

import pytest

from estimation.models import RaterModelFit, RaterModelRefit
from estimation.services.confidence import campaign_rater_model_fit
from estimation.services.refit import rater_model_refit_run
from tests.estimation.factories import simulated_campaign
from tests.exports.factories import graded_by_experts_and_graders

pytestmark = [pytest.mark.e2e, pytest.mark.django_db(transaction=True)]


def test_the_agreement_page_draws_the_reliability_diagram_and_states_the_error(
    page, live_server, login, admin_user, screenshot_dir, assert_accessible
):
    campaign = simulated_campaign(labels=110, experts=3, seed=2)
    fit = campaign_rater_model_fit(campaign_id=campaign.pk)
    assert fit.calibration["enough"]
    login(page, admin_user)
    page.goto(f"{live_server.url}/adjudication/campaigns/{campaign.slug}/agreement/")
    page.wait_for_selector("#reliability svg.reliability")
    words = page.inner_text("#calibration-words")
    assert "Expected calibration error" in words
    assert f"over {fit.calibration['cases']} held-out cases" in words
    assert f"{fit.calibration['ece']:.3f}" in words
    dots = page.locator("#reliability svg.reliability circle.bin")
    assert dots.count() == len(fit.calibration["rows"])
    assert "chosen by held-out log loss" in page.inner_text("#rater-model-choice")
    assert page.locator("text=Too little evidence").count() == 0
    page.locator("#calibration").scroll_into_view_if_needed()
    page.screenshot(path=str(screenshot_dir / "agreement-calibration.png"), full_page=True)
    assert_accessible(page)


def test_the_fit_button_queues_the_refit_and_the_page_reloads_when_it_lands(
    page, live_server, login, admin_user, assert_accessible
):
    campaign = graded_by_experts_and_graders()
    RaterModelRefit.objects.filter(campaign=campaign).delete()  # the factory's own changes
    login(page, admin_user)
    page.goto(f"{live_server.url}/adjudication/campaigns/{campaign.slug}/agreement/")
    page.click("button:has-text('Fit the rater model')")
    # htmx swaps the fit's state in: queued, the button disabled; the request fitted nothing
    page.wait_for_selector("#fit-status[data-state='queued'] button[disabled]")
    assert "refit queued" in page.inner_text("#fit-age")
    assert not RaterModelFit.objects.filter(campaign=campaign).exists()
    assert_accessible(page)
    # the worker runs the refit; the page's poll sees it land and reloads with the new fit
    refit = RaterModelRefit.objects.get(campaign=campaign, status="pending")
    rater_model_refit_run(refit_id=refit.pk)
    page.wait_for_selector("#calibration-words", timeout=15_000)
    assert RaterModelFit.objects.filter(campaign=campaign).count() == 1
    assert page.locator("#fit-status[data-state='current']").count() == 1
    words = page.inner_text("#calibration-words")
    assert "Too little evidence to state a calibration error: 6 held-out cases" in words
    assert page.locator("#reliability").count() == 0
    assert "Expected calibration error" not in page.inner_text("#calibration")
    assert_accessible(page)
