"""Browser flow: a researcher exports every judgement of a campaign (the `judgements` format) as
CSV, submitting with Enter from a filter field, watches the real worker finish, downloads the
file and goes back to the form (no new job)."""

import csv

import pytest

from tests.exports.factories import labelled_campaign
from tests.factories import UserFactory

pytestmark = [pytest.mark.e2e, pytest.mark.worker, pytest.mark.django_db(transaction=True)]


def test_researcher_exports_every_judgement(
    page, live_server, login, screenshot_dir, celery_worker_process, tmp_path, assert_accessible
):
    corpus = labelled_campaign(slug="e2e-judged")
    login(page, UserFactory(username="researcher-judged", roles=["researcher"]))
    page.goto(f"{live_server.url}/exports/")
    page.select_option("#id_campaign", corpus.campaign.slug)
    page.select_option("#id_format", "judgements")
    page.select_option("#id_file_type", "csv")
    page.click("details summary")
    page.fill("#id_generator", "model-a")
    page.press("#id_generator", "Enter")  # slip: Enter in a filter submits the form once
    page.wait_for_selector("#job-status .job-status:has-text('Done')", timeout=60_000)
    page.screenshot(path=str(screenshot_dir / "exports-judgements-done.png"), full_page=True)
    assert_accessible(page)

    with page.expect_download() as info:
        page.click("a.download")
    path = tmp_path / info.value.suggested_filename
    info.value.save_as(path)
    assert path.name == "e2e-judged-judgements.csv"
    rows = list(csv.DictReader(path.open(newline="")))
    # model-a's two proofs: three expert grades, pseudonymised
    assert [(r["generator"], r["judge_kind"], r["value"]) for r in rows] == [
        ("model-a", "expert", "6.0"),
        ("model-a", "expert", "5.0"),
        ("model-a", "expert", "7.0"),
    ]
    assert all(r["judge"].startswith("expert-") for r in rows)

    page.go_back()  # slip: back to the form makes no second job
    page.goto(f"{live_server.url}/exports/")
    assert page.locator("table.exports tbody tr").count() == 1
