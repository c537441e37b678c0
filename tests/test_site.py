import pytest
from django.urls import reverse

pytestmark = pytest.mark.django_db


def test_home_requires_login(client):
    response = client.get(reverse("home"))
    assert response.status_code == 302
    assert response["Location"].startswith(reverse("login"))


def test_home_lists_the_users_roles(client, expert_user):
    client.force_login(expert_user)
    response = client.get(reverse("home"))
    assert response.status_code == 200
    assert b'<span class="tag">expert</span>' in response.content


def test_every_page_declares_the_sites_icon(client):
    """Without one the browser asks for /favicon.ico on every page: a 404 in its console and a
    warning in the server's log each time."""
    from django.contrib.staticfiles import finders

    body = client.get(reverse("login")).content.decode()
    assert '<link rel="icon" href="/static/img/favicon.svg' in body
    assert finders.find("img/favicon.svg")


def test_health_check_needs_no_login(client):
    assert client.get(reverse("healthz")).content == b"ok"


def test_a_role_refusal_is_a_403_page_in_the_layout_even_with_debug(client, expert_user, settings):
    settings.DEBUG = True
    client.force_login(expert_user)
    response = client.get(reverse("problems:import"), HTTP_REFERER="http://testserver/problems/")
    assert response.status_code == 403
    body = response.content.decode()
    assert 'class="topbar"' in body and 'id="error-page"' in body
    assert "Your role does not allow this page." in body
    assert 'href="http://testserver/problems/">Back to the page you came from' in body
    assert "Traceback" not in body and "technical" not in body.lower()
    # a link from another site is not offered as the way back
    response = client.get(reverse("problems:import"), HTTP_REFERER="https://elsewhere.example/")
    assert "elsewhere.example" not in response.content.decode()


def test_not_found_and_server_error_pages_in_the_layout(client, expert_user, settings, rf):
    from core.views import server_error_page

    settings.DEBUG = False
    client.force_login(expert_user)
    response = client.get("/annotation/items/999999/")
    assert response.status_code == 404
    body = response.content.decode()
    assert 'id="error-page"' in body and "Not found" in body and 'href="/"' in body
    request = rf.get("/somewhere/")
    request.user = expert_user
    response = server_error_page(request)
    assert response.status_code == 500
    assert b"Something went wrong on our side" in response.content
    assert b'class="topbar"' in response.content


def test_shares_show_as_percentages():
    from problems.templatetags.proofmark import percent

    assert (percent("0.40"), percent(1), percent("0.125"), percent(None)) == (
        "40%",
        "100%",
        "12.5%",
        "",
    )


def _nav_links(html: str) -> list[str]:
    import re

    nav = html[html.index('<nav class="mainnav">') : html.index("</nav>")]
    return re.findall(r'<a href="([^"]+)">([^<]+)</a>', nav)


def test_the_top_bar_shows_each_role_its_links(client):
    """core.context_processors: the links a role sees, in the bar's order; a user holding
    two roles sees the first matching link of a shared place (Adjudication, not Discussions)."""
    from tests.factories import UserFactory

    seen = {}
    for roles in (["expert"], ["adjudicator", "expert"], ["researcher"], ["admin"]):
        client.force_login(UserFactory(roles=roles))
        seen["+".join(roles)] = [label for _, label in _nav_links(client.get("/").content.decode())]
    assert seen["expert"] == [
        "Problems", "Marking schemes", "Grading", "Discussions", "Calibration", "API",
    ]  # fmt: skip
    assert seen["adjudicator+expert"][3] == "Adjudication"
    assert seen["researcher"] == ["Problems", "Marking schemes", "Exports", "API"]
    assert seen["admin"] == [
        "Problems", "Marking schemes", "Campaigns", "Adjudication", "Verification", "Exports",
        "Calibration", "Import", "Generate", "Webhooks", "Admin", "API",
    ]  # fmt: skip


def test_the_top_bar_follows_the_script_prefix(client, expert_user):
    """The bar's links are drawn once per set of roles and script prefix: a site mounted under
    a prefix links under it, and the same process without one does not."""
    from django.urls import set_script_prefix

    client.force_login(expert_user)
    set_script_prefix("/proofmark/")  # as the WSGI handler sets it from SCRIPT_NAME
    try:
        mounted = client.get("/").content.decode()
    finally:
        set_script_prefix("/")
    assert all(url.startswith("/proofmark/") for url, _ in _nav_links(mounted))
    assert 'class="brand" href="/proofmark/"' in mounted
    plain = client.get("/").content.decode()
    assert ("/problems/", "Problems") in _nav_links(plain)
    assert 'class="brand" href="/"' in plain
