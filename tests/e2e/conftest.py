"""Browser tests: Playwright for Python driving Debian's Chromium against the live server."""

import os
import shutil

import pytest
from django.conf import settings

os.environ.setdefault("DJANGO_ALLOW_ASYNC_UNSAFE", "true")

CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking"]


@pytest.fixture(scope="session")
def browser():
    if not shutil.which(CHROMIUM):
        pytest.skip(f"{CHROMIUM} is absent: `make test` installs Debian's chromium")
    from playwright.sync_api import sync_playwright

    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS, headless=True)
        yield browser
        browser.close()


@pytest.fixture
def context(browser):
    context = browser.new_context(viewport={"width": 1366, "height": 900})
    context.set_default_timeout(15_000)
    yield context
    context.close()


@pytest.fixture
def page(context):
    return context.new_page()


@pytest.fixture
def login(live_server, context):
    """login(page, user): logs the user in through the real log-in form."""

    def do_login(page, user, password: str = "pass-word-123"):
        page.goto(f"{live_server.url}/accounts/login/")
        page.fill("#id_username", user.username)
        page.fill("#id_password", password)
        page.click("button[type=submit]")
        page.wait_for_url(f"{live_server.url}/")
        return page

    return do_login


@pytest.fixture
def screenshot_dir():
    path = settings.BASE_DIR / ".run" / "screenshots"
    path.mkdir(parents=True, exist_ok=True)
    return path
