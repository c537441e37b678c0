"""The browser tests' waits (tests/e2e/conftest.py): what a flow waits for is there and working."""

import time

import pytest

pytestmark = [pytest.mark.e2e, pytest.mark.django_db(transaction=True)]


def test_an_element_waited_for_comes_with_the_page_s_scripts(page, live_server):
    """An element is there as soon as it is parsed; the page's deferred scripts (htmx, the keys)
    run later. A wait for the element lasts until they have run, however slow they are."""

    def slow(route):
        time.sleep(1.5)
        route.continue_()

    page.route("**/htmx.min.js", slow)
    page.goto(f"{live_server.url}/accounts/login/", wait_until="commit")
    page.wait_for_selector("#id_username")
    assert page.evaluate("() => typeof window.htmx") == "object"
    page.goto(f"{live_server.url}/accounts/login/", wait_until="commit")
    page.locator("#id_password").wait_for()
    assert page.evaluate("() => typeof window.htmx") == "object"
