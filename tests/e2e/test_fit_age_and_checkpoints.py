"""Browser flows of issue 33's items 2 and 6: the agreement and labels pages say how old the
rater model's fit is and how many changes it predates ("fitted 3 min ago, before the 2 latest
changes; refit queued"), a changed label's confidence shows stale until the refit lands; the
checkpoints page shows each checkpoint's agreement and discrimination, says where there are too
few double-scored proofs, and downloads its CSV."""

import csv
from datetime import timedelta
from decimal import Decimal

import pytest
from django.utils import timezone

from adjudication.models import FinalLabel
from adjudication.services.labels import final_label_set
from estimation.models import RaterModelFit, RaterModelRefit
from estimation.services.refit import rater_model_refit_run
from tests.adjudication.test_checkpoints import checkpoint_campaign
from tests.exports.factories import graded_by_experts_and_graders

pytestmark = [pytest.mark.e2e, pytest.mark.django_db(transaction=True)]


def test_the_pages_say_the_fits_age_and_a_changed_label_shows_stale(
    page, live_server, login, admin_user, screenshot_dir, assert_accessible
):
    campaign = graded_by_experts_and_graders()
    # the factory's adjudicated labels queued a refit: the worker runs it
    rater_model_refit_run(refit_id=RaterModelRefit.objects.get(campaign=campaign).pk)
    # as if fitted three minutes ago, over labels set before it
    now = timezone.now()
    FinalLabel.objects.filter(item__campaign=campaign).update(updated_at=now - timedelta(minutes=4))
    RaterModelFit.objects.filter(campaign=campaign).update(
        fitted_at=now - timedelta(minutes=3, seconds=5)
    )
    changed = list(
        FinalLabel.objects.filter(item__campaign=campaign, source="single").order_by("item_id")[:2]
    )
    for label in changed:  # an adjudicator settles two labels: each commit queues the refit
        final_label_set(
            item=label.item, value=Decimal(1) - label.value, source="adjudication",
            policy="e2e", grade_ids=[],
        )  # fmt: skip
    refit = RaterModelRefit.objects.get(campaign=campaign, status="pending")
    assert refit.changes == 2  # debounced: one refit for both

    login(page, admin_user)
    page.goto(f"{live_server.url}/adjudication/campaigns/{campaign.slug}/agreement/")
    age = page.inner_text("#fit-age")
    assert "fitted 3 min ago, before the 2 latest changes; refit queued" in age
    assert "2 changed since the fit: confidence stale" in page.inner_text("#confidence-summary")
    page.locator("#fit-age").scroll_into_view_if_needed()
    page.screenshot(path=str(screenshot_dir / "fit-age-queued.png"), full_page=True)
    assert_accessible(page)

    page.goto(f"{live_server.url}/adjudication/campaigns/{campaign.slug}/labels/")
    assert "before the 2 latest changes; refit queued" in page.inner_text("#fit-age")
    for label in changed:  # the old confidence, marked stale, not a blank
        row = page.locator("#labels tbody tr", has_text=f"{label.item_id}").first
        assert f"{label.confidence:.3f}" in row.inner_text() and "stale" in row.inner_text()
    assert page.locator("#labels .tag.warn", has_text="stale").count() == 2
    assert_accessible(page)

    # the worker's refit lands: the pages say so, nothing stale
    rater_model_refit_run(refit_id=refit.pk)
    page.reload()
    assert "fitted less than a minute ago" in page.inner_text("#fit-age")
    assert "refit queued" not in page.inner_text("#fit-age")
    assert page.locator("#labels .tag.warn", has_text="stale").count() == 0
    page.goto(f"{live_server.url}/adjudication/campaigns/{campaign.slug}/agreement/")
    assert page.inner_text("#fit-age").strip().endswith("fitted less than a minute ago")
    assert "stale" not in page.inner_text("#confidence-summary")


def test_admin_reads_the_checkpoints_page_and_downloads_its_csv(
    page, live_server, login, admin_user, screenshot_dir, assert_accessible
):
    campaign = checkpoint_campaign()
    login(page, admin_user)
    page.goto(f"{live_server.url}/adjudication/campaigns/{campaign.slug}/agreement/")
    with page.expect_navigation():
        page.click("a:has-text('Checkpoints')")
    first = page.locator("section.scheme-checkpoints").first
    assert "CP-1" in first.inner_text() and "8 double-scored" in first.inner_text()
    c1 = first.locator("tr[data-checkpoint='c1']")
    assert "100%" in c1.inner_text() and "1.00" in c1.inner_text()
    c2 = first.locator("tr[data-checkpoint='c2']")
    assert "ambiguous" in c2.inner_text() and "[" in c2.inner_text()  # a flag, an interval
    thin = page.locator("section.scheme-checkpoints").nth(1)
    assert "CP-2" in thin.inner_text()
    assert thin.locator("td.too-few", has_text="too few double-scored proofs to say").count() == 3
    assert "percent_agreement" in page.inner_text("#checkpoint-columns")
    page.screenshot(path=str(screenshot_dir / "checkpoints.png"), full_page=True)
    assert_accessible(page)

    with page.expect_download() as info:
        page.click("a:has-text('Export checkpoints (CSV)')")
    path = info.value.path()
    with open(path, newline="", encoding="utf-8") as handle:
        rows = list(csv.DictReader(handle))
    assert len(rows) == 6 and {r["problem"] for r in rows} == {"CP-1", "CP-2"}
