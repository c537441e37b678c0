"""The pages work under the site's Content-Security-Policy (no inline script): the grading page
renders its mathematics, computes its score and saves, with nothing blocked."""

import pytest

from tests.e2e.test_grading_page import graded_setup  # noqa: F401 (a fixture)

pytestmark = [pytest.mark.e2e, pytest.mark.django_db(transaction=True)]


def test_the_grading_page_runs_under_the_policy(strict_page, live_server, login, graded_setup):  # noqa: F811
    campaign, item, expert = graded_setup
    page = strict_page
    login(page, expert)
    response = page.goto(f"{live_server.url}/annotation/{campaign.slug}/")
    assert "script-src 'self'" in response.headers["content-security-policy"]
    page.click("button:has-text('Grade next')")
    page.wait_for_selector("#proof-text .katex")
    page.locator("#computed-score").filter(has_not_text="\u2013").wait_for()
    page.fill("#comment", "Checked under the policy.")
    page.locator("#save-status").filter(has_text="Saved").wait_for()
    assert page.csp_errors == []
