"""Browser flow: a researcher exports a campaign, watches it finish (the real Celery worker) and
downloads the file; then imports a grader's predictions and reads the report with its charts."""

import json

import pytest
from playwright.sync_api import expect

from tests.exports.factories import labelled_campaign
from tests.factories import UserFactory

pytestmark = [pytest.mark.e2e, pytest.mark.worker, pytest.mark.django_db(transaction=True)]


def test_researcher_exports_downloads_and_reads_a_grader_report(
    page, live_server, login, screenshot_dir, celery_worker_process, tmp_path, assert_accessible
):
    corpus = labelled_campaign(slug="e2e-pilot")
    login(page, UserFactory(username="researcher-e2e", roles=["researcher"]))
    with page.expect_navigation():  # until load: htmx is listening
        page.click("nav.mainnav >> text=Exports")
    page.wait_for_selector("h1:has-text('Exports')")
    page.select_option("#id_campaign", corpus.campaign.slug)
    page.select_option("#id_format", "proofbench")
    page.select_option("#id_file_type", "jsonl")
    page.click("button:has-text('Export')")
    page.wait_for_selector("#job-status .job-status:has-text('Done')", timeout=60_000)
    assert "3 rows of 3" in page.locator("#job-status").inner_text()
    page.screenshot(path=str(screenshot_dir / "exports-job-done.png"), full_page=True)
    assert_accessible(page)

    with page.expect_download() as info:
        page.click("a.download")
    download = info.value
    path = tmp_path / download.suggested_filename
    download.save_as(path)
    assert download.suggested_filename == "e2e-pilot-proofbench.jsonl"
    rows = [json.loads(line) for line in path.read_text().splitlines()]
    assert [r["expert_rating"] for r in rows] == [5, 2, 7]

    page.goto(f"{live_server.url}/exports/")
    assert page.locator("table.exports tbody tr").count() == 1
    page.screenshot(path=str(screenshot_dir / "exports-list.png"), full_page=True)
    assert_accessible(page)

    predictions = tmp_path / "predictions.jsonl"
    predictions.write_text(
        "\n".join(
            json.dumps({"problem_id": p, "generator": g, "score": s})
            for p, g, s in [
                ("E2E-PILOT-1", "model-a", 6),
                ("E2E-PILOT-1", "model-b", 1),
                ("E2E-PILOT-2", "model-a", 5),
            ]
        )
    )
    page.click("text=Automatic graders against the experts")
    page.fill("#id_name", "judge-e2e")
    page.select_option("#id_campaign", corpus.campaign.slug)
    page.set_input_files("#id_file", str(predictions))
    page.click("button:has-text('Import and report')")
    page.wait_for_selector("svg.heatmap")
    assert page.locator("svg.bon polyline").count() == 3
    assert (
        page.locator("table.proofbench td").first.inner_text() == "1.500 [1.000, 2.000]"
    )  # per problem: (1 + 1) / 2 and 2, averaged; its 95% interval over the problems
    page.screenshot(path=str(screenshot_dir / "exports-grader-report.png"), full_page=True)
    assert_accessible(page)
    assert "Oracle, first n" in page.text_content("svg.bon")  # A.4's baselines by default
    page.click("text=Show them averaged over the grader's random subsets")
    expect(page.locator("svg.bon")).to_contain_text("Subset mean")
    assert "over the first n" in page.inner_text(".bon-baselines >> a")
