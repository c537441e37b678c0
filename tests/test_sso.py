"""Single sign-on end to end (accounts/oidc.py): the code flow against the real OpenID Connect
provider of tests/oidc_provider/ (django-oauth-toolkit, RS256 key made at start, its own process
on a loopback port), driven with requests as a browser would: start, the provider's log-in form,
the callback, the account and its roles in Proofmark's database."""

import re

import pytest
import requests
from django.contrib.auth import get_user_model
from django.contrib.auth.models import Group

from accounts.models import OIDCIdentity
from core.roles import Role, user_roles
from tests.factories import UserFactory
from tests.oidc_provider.harness import PASSWORD

User = get_user_model()


def roles_of(username: str) -> set[str]:
    return {role.value for role in user_roles(User.objects.get(username=username))}


def sso_login(live_server, username: str, browser: requests.Session | None = None):
    """Signs in through the provider as `username` (password PASSWORD); the last answer."""
    browser = browser or requests.Session()
    at_provider = browser.get(f"{live_server.url}/accounts/oidc/authenticate/?next=/", timeout=20)
    assert at_provider.status_code == 200 and "Lab sign-in" in at_provider.text, at_provider.text
    answer = browser.post(
        at_provider.url,
        data={
            "username": username,
            "password": PASSWORD,
            "csrfmiddlewaretoken": browser.cookies["provider_csrf"],
            "next": re.search(r'name="next" value="([^"]*)"', at_provider.text)[1].replace(
                "&amp;", "&"
            ),
        },
        timeout=20,
    )
    answer.browser = browser
    return answer


def logged_in(live_server, browser: requests.Session) -> bool:
    home = browser.get(f"{live_server.url}/", allow_redirects=False, timeout=10)
    return home.status_code == 200


def test_without_settings_no_sign_on(client, db):
    page = client.get("/accounts/login/")
    assert b"Sign in with" not in page.content and b'id="id_password"' in page.content
    assert client.get("/accounts/oidc/authenticate/").status_code == 404
    assert client.get("/accounts/oidc/callback/?code=a&state=b").status_code == 404


def test_the_log_in_page_offers_the_provider(client, sso, db):
    page = client.get("/accounts/login/?next=/problems/")
    assert b"Sign in with Lab Login" in page.content
    assert b"/accounts/oidc/authenticate/?next=%2Fproblems%2F" in page.content
    assert b'id="id_password"' in page.content  # local accounts still log in


def test_first_log_in_makes_the_account_with_mapped_roles(live_server, sso):
    subject = sso.user("ada", ["proofmark-experts", "lab-staff"])
    answer = sso_login(live_server, "ada")
    assert answer.status_code == 200 and answer.url == f"{live_server.url}/"
    assert logged_in(live_server, answer.browser)
    user = User.objects.get(username="ada")
    assert user.email == "ada@lab.example" and user.first_name == "Ada"
    assert not user.has_usable_password()
    assert OIDCIdentity.objects.get(user=user).subject == subject
    assert roles_of("ada") == {Role.EXPERT}


def test_each_log_in_syncs_the_roles(live_server, sso):
    sso.user("bea", ["proofmark-experts"])
    assert sso_login(live_server, "bea").status_code == 200
    assert roles_of("bea") == {"expert"}
    local = Group.objects.create(name="reading-group")  # not a role: kept
    User.objects.get(username="bea").groups.add(local)

    sso.user("bea", ["proofmark-admins", "math-faculty"], email="bea@new.example")
    assert sso_login(live_server, "bea").status_code == 200
    assert roles_of("bea") == {"admin", "expert", "adjudicator"}
    user = User.objects.get(username="bea")
    assert user.email == "bea@new.example" and local in user.groups.all()
    assert User.objects.filter(username="bea").count() == 1

    sso.user("bea", ["lab-staff"])
    assert sso_login(live_server, "bea").status_code == 200
    assert roles_of("bea") == set()


def test_no_mapped_group_no_roles(live_server, sso):
    sso.user("cy", ["lab-staff"])
    answer = sso_login(live_server, "cy")
    assert answer.status_code == 200 and logged_in(live_server, answer.browser)
    assert roles_of("cy") == set()


def test_no_mapped_group_refused_where_a_role_is_required(live_server, sso, settings):
    settings.OIDC_REQUIRE_ROLE = True
    sso.user("dee", ["lab-staff"])
    answer = sso_login(live_server, "dee")
    assert answer.status_code == 403
    assert "holds no group that gives a role" in answer.text
    assert not User.objects.filter(username="dee").exists()
    assert not logged_in(live_server, answer.browser)

    # an account whose groups were taken away loses its roles and is refused
    sso.user("eve", ["proofmark-experts"])
    assert sso_login(live_server, "eve").status_code == 200
    sso.user("eve", [])
    answer = sso_login(live_server, "eve")
    assert answer.status_code == 403 and roles_of("eve") == set()


def test_a_bad_or_replayed_state_is_refused(live_server, sso):
    browser = requests.Session()
    forged = browser.get(
        f"{live_server.url}/accounts/oidc/callback/?code=abc&state=forged", timeout=10
    )
    assert forged.status_code == 400 and "was not started from this browser" in forged.text

    sso.user("fay", ["proofmark-experts"])
    answer = sso_login(live_server, "fay")
    callback = next(r for r in answer.history if "/accounts/oidc/callback/" in r.url)
    replayed = answer.browser.get(callback.url, timeout=10)
    assert replayed.status_code == 400 and "used already" in replayed.text

    missing = browser.get(f"{live_server.url}/accounts/oidc/callback/", timeout=10)
    assert missing.status_code == 400


def test_the_provider_refusing_is_said(live_server, sso):
    browser = requests.Session()
    start = browser.get(
        f"{live_server.url}/accounts/oidc/authenticate/", allow_redirects=False, timeout=10
    )
    state = re.search(r"state=([^&]+)", start.headers["Location"])[1]
    answer = browser.get(
        f"{live_server.url}/accounts/oidc/callback/?error=access_denied&state={state}", timeout=10
    )
    assert answer.status_code == 403 and "access_denied" in answer.text


def test_a_local_name_is_not_taken_over(live_server, sso):
    UserFactory(username="gus")
    sso.user("gus", ["proofmark-admins"])
    answer = sso_login(live_server, "gus")
    assert answer.status_code == 403 and "exists already" in answer.text
    assert roles_of("gus") == set()
    assert not OIDCIdentity.objects.exists()


def test_a_local_name_is_linked_where_allowed(live_server, sso, settings):
    settings.OIDC_LINK_BY_USERNAME = True
    local = UserFactory(username="hal")
    sso.user("hal", ["proofmark-experts"])
    assert sso_login(live_server, "hal").status_code == 200
    assert OIDCIdentity.objects.get().user == local and roles_of("hal") == {"expert"}


def test_password_log_in_beside_sign_on(client, sso, db):
    user = UserFactory(username="local-ida")
    answer = client.post(
        "/accounts/login/", {"username": user.username, "password": "pass-word-123"}
    )
    assert answer.status_code == 302 and answer["Location"] == "/"


@pytest.mark.parametrize("path", ["/accounts/login/", "/admin/login/"])
def test_password_log_in_switched_off(client, sso, settings, db, path):
    settings.PASSWORD_LOGIN = False
    user = UserFactory(username="local-jo", is_staff=True, is_superuser=True)
    page = client.get("/accounts/login/")
    assert b"Sign in with Lab Login" in page.content and b'id="id_password"' not in page.content
    answer = client.post(path, {"username": user.username, "password": "pass-word-123"})
    assert answer.status_code in (200, 403)
    assert "_auth_user_id" not in client.session


def test_a_refused_sign_on_is_no_failed_password(live_server, sso, settings):
    from axes.models import AccessAttempt
    from django.core.cache import cache

    from accounts import login_limits

    settings.OIDC_REQUIRE_ROLE = True
    sso.user("kim", ["lab-staff"])
    assert sso_login(live_server, "kim").status_code == 403
    assert not AccessAttempt.objects.exists()
    assert cache.get(login_limits._key("address", "127.0.0.1")) is None


def test_the_log_in_limits_hold_beside_sign_on(client, sso, settings, db):
    settings.LOGIN_ADDRESS_LIMIT = 2
    user = UserFactory(username="local-lee")
    for name in ("x1", "x2"):
        assert client.post("/accounts/login/", {"username": name, "password": "no"}).status_code
    refused = client.post(
        "/accounts/login/", {"username": user.username, "password": "pass-word-123"}
    )
    assert refused.status_code == 429 and b"Too many failed log-ins" in refused.content
    assert b"Sign in with Lab Login" in refused.content  # the provider is still offered
