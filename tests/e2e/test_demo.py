"""Browser flow over the demo (`manage.py demo_setup` into the live server's database): each
role logs in with its published password and finds the demo's work on its main page."""

from io import StringIO

import pytest
from django.core.management import call_command
from django.test import override_settings

from annotation.demo import GRADING_SLUG

pytestmark = [pytest.mark.e2e, pytest.mark.worker, pytest.mark.django_db(transaction=True)]


@pytest.fixture
def demo():
    with override_settings(DEBUG=True):
        call_command("demo_setup", stdout=StringIO())


@pytest.fixture
def as_role(browser, live_server):
    """as_role(username): a fresh browser page logged in as that demo account."""
    contexts = []

    def open_page(username: str):
        context = browser.new_context(viewport={"width": 1366, "height": 900})
        context.set_default_timeout(20_000)
        contexts.append(context)
        page = context.new_page()
        page.goto(f"{live_server.url}/accounts/login/")
        page.fill("#id_username", username)
        page.fill("#id_password", f"{username}-demo-pass")
        page.click("button[type=submit]")
        page.wait_for_url(f"{live_server.url}/")
        return page

    yield open_page
    for context in contexts:
        context.close()


def test_each_demo_role_finds_work_on_its_main_page(
    demo, as_role, live_server, screenshot_dir, celery_worker_process, assert_accessible
):
    url = live_server.url

    admin = as_role("admin")
    admin.click("nav.mainnav >> text=Campaigns")
    admin.click("text=Demo: grading the demo proofs")
    admin.wait_for_selector("h1:has-text('Demo: grading the demo proofs')")
    assert admin.locator("#items-done").inner_text() == "8"
    assert "14/25" in admin.locator(".progress-stats").inner_text()
    admin.screenshot(path=str(screenshot_dir / "demo-admin-campaign.png"), full_page=True)
    assert_accessible(admin)
    admin.goto(f"{url}/rubrics/")
    in_use = admin.locator(".tag.status-approved, .tag.status-frozen")
    # the latest version of each problem: five in use, and C1's later draft
    assert in_use.count() == 5
    assert admin.locator(".tag.status-draft").count() == 1
    admin.screenshot(path=str(screenshot_dir / "demo-admin-schemes.png"), full_page=True)
    assert_accessible(admin)

    expert1 = as_role("expert1")
    expert1.click("nav.mainnav >> text=Grading")
    assert expert1.locator("table.campaigns tbody tr").count() == 2
    expert1.screenshot(path=str(screenshot_dir / "demo-expert1-campaigns.png"), full_page=True)
    assert_accessible(expert1)
    expert1.click(f"form[action='/annotation/{GRADING_SLUG}/next/'] button")
    expert1.wait_for_selector("h1:has-text('DEMO-')")
    expert1.locator(".katex").first.wait_for()  # KaTeX typesets after the deferred scripts run
    expert1.screenshot(path=str(screenshot_dir / "demo-expert1-grading.png"), full_page=True)
    assert_accessible(expert1)

    expert2 = as_role("expert2")
    expert2.goto(f"{url}/annotation/{GRADING_SLUG}/")
    expert2.click("button:has-text('Grade next')")
    expert2.wait_for_selector("h1:has-text('DEMO-')")
    expert2.screenshot(path=str(screenshot_dir / "demo-expert2-grading.png"), full_page=True)
    assert_accessible(expert2)

    adjudicator = as_role("adjudicator")
    adjudicator.click("nav.mainnav >> text=Adjudication")
    rows = adjudicator.locator("#case-queue tbody tr")
    assert rows.count() == 1 and "Demo: grading the demo proofs" in rows.inner_text()
    adjudicator.screenshot(path=str(screenshot_dir / "demo-adjudicator-queue.png"), full_page=True)
    assert_accessible(adjudicator)
    rows.locator("a").click()
    adjudicator.wait_for_selector("h1")
    adjudicator.screenshot(path=str(screenshot_dir / "demo-adjudicator-case.png"), full_page=True)
    assert_accessible(adjudicator)

    researcher = as_role("researcher")
    researcher.click("nav.mainnav >> text=Exports")
    researcher.select_option("#id_campaign", GRADING_SLUG)
    researcher.select_option("#id_format", "proofbench")
    researcher.select_option("#id_file_type", "jsonl")
    researcher.click("button:has-text('Export')")
    researcher.wait_for_selector("#job-status .job-status:has-text('Done')", timeout=60_000)
    researcher.screenshot(path=str(screenshot_dir / "demo-researcher-export.png"), full_page=True)
    assert_accessible(researcher)
