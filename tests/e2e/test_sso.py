"""Single sign-on in the browser: the log-in page's "Sign in with Lab Login", the provider's own
log-in page (tests/oidc_provider/, a real OpenID Connect provider on a loopback port), and back
in Proofmark logged in with the roles the provider's groups map to; with password log-in
switched off the page offers the provider alone."""

import pytest
from django.contrib.auth import get_user_model
from playwright.sync_api import expect

from core.roles import Role, user_roles
from tests.oidc_provider.harness import PASSWORD

pytestmark = [pytest.mark.e2e, pytest.mark.django_db(transaction=True)]


def test_sign_in_with_the_provider(live_server, sso, page, assert_accessible, screenshot_dir):
    sso.user("nia", ["proofmark-experts"])
    page.goto(f"{live_server.url}/problems/")
    page.wait_for_url("**/accounts/login/**")
    assert_accessible(page)
    page.screenshot(path=screenshot_dir / "sso-login.png")
    page.get_by_role("link", name="Sign in with Lab Login").click()

    expect(page.get_by_role("heading", name="Lab sign-in")).to_be_visible()
    assert page.url.startswith(sso.url)
    page.fill("#id_username", "nia")
    page.fill("#id_password", PASSWORD)
    page.get_by_role("button", name="Sign in to the lab").click()

    page.wait_for_url(f"{live_server.url}/problems/")
    expect(page.locator(".whoami")).to_have_text("nia")
    user = get_user_model().objects.get(username="nia")
    assert user_roles(user) == {Role.EXPERT}


def test_password_log_in_switched_off(live_server, sso, settings, page, assert_accessible):
    settings.PASSWORD_LOGIN = False
    page.goto(f"{live_server.url}/accounts/login/")
    expect(page.get_by_role("link", name="Sign in with Lab Login")).to_be_visible()
    expect(page.locator("#id_password")).to_have_count(0)
    assert_accessible(page)
