"""A newcomer's first hour: the log-in page names the demo accounts (demo loaded, DEBUG on) and
one of them logs in as shown; a form whose required choice has one option starts on it; a form
the browser refuses says why on the page, beside the field."""

import pytest

from problems.demo.loader import demo_accounts_ensure
from tests.factories import UserFactory
from tests.rubrics.generation_factories import LLMEndpointFactory

pytestmark = [pytest.mark.e2e, pytest.mark.django_db(transaction=True)]


def test_the_log_in_page_names_the_demo_accounts(
    page, live_server, settings, screenshot_dir, assert_accessible
):
    settings.DEBUG = True
    page.goto(f"{live_server.url}/accounts/login/")
    assert not page.locator("#demo-accounts").count()  # no demo loaded: nothing to name
    demo_accounts_ensure()
    page.reload()
    row = page.locator("#demo-accounts tr", has_text="adjudicator")
    name, password = (row.locator("code").nth(i).inner_text() for i in (0, 1))
    page.screenshot(path=str(screenshot_dir / "login-demo-accounts.png"), full_page=True)
    card, table = (page.locator(f"#demo-accounts{s}").bounding_box() for s in ("", " table"))
    assert table["x"] + table["width"] <= card["x"] + card["width"]  # the table fits its card
    assert_accessible(page)
    page.fill("#id_username", name)
    page.fill("#id_password", password)
    page.press("#id_password", "Enter")
    page.wait_for_url(f"{live_server.url}/")
    assert page.inner_text(".whoami") == "adjudicator"

    settings.DEBUG = False  # published passwords are not advertised outside development
    page.context.clear_cookies()
    page.goto(f"{live_server.url}/accounts/login/")
    assert not page.locator("#demo-accounts").count()


def test_one_endpoint_is_preselected_and_a_refusal_says_why(
    page, live_server, login, screenshot_dir, assert_accessible
):
    only = LLMEndpointFactory(name="the-only-one")
    login(page, UserFactory(username="first-hour-admin", roles=["admin"]))
    page.goto(f"{live_server.url}/adjudication/verification/")
    assert page.input_value("#verifier-form #run_endpoint") == str(only.pk)
    assert page.locator("#verifier-form #run_endpoint option").count() == 1  # no empty choice

    LLMEndpointFactory(name="a-second-one")
    page.reload()
    assert page.input_value("#verifier-form #run_endpoint") == ""
    page.click("#verifier-form >> text=Start the run")  # the browser refuses: the page says why
    note = page.locator("#verifier-form .field-refusal")
    assert note.is_visible() and note.inner_text().startswith("Endpoint:")
    assert page.url.endswith("/adjudication/verification/")
    page.screenshot(path=str(screenshot_dir / "verification-refused.png"), full_page=True)
    assert_accessible(page)
    page.select_option("#verifier-form #run_endpoint", label="a-second-one (fake-model)")
    assert not note.count()
