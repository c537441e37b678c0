"""Accounts and browser security: password guessing is throttled per account and per address
(django-axes), passwords are checked by Django's validators, pages carry a Content-Security-
Policy that allows no inline script, the deployment profile passes `check --deploy`, and a
user without a role gets no API schema."""

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
from django.contrib.auth.password_validation import validate_password
from django.core.exceptions import ValidationError
from django.urls import reverse

from accounts import login_limits
from core.proxies import trusted_proxies
from tests.factories import UserFactory

ROOT = Path(__file__).resolve().parent.parent
pytestmark = pytest.mark.django_db


def login(client, username, password, address="10.0.0.1", **headers):
    return client.post(
        reverse("login"),
        {"username": username, "password": password},
        REMOTE_ADDR=address,
        **headers,
    )


def user_with(username, password):
    user = UserFactory(username=username)
    user.set_password(password)
    user.save()
    return user


def test_guessing_a_password_locks_that_name_from_that_address_only(client, settings):
    user_with("target", "a-long-right-passphrase")
    user_with("bystander", "another-long-passphrase")
    for _ in range(settings.AXES_FAILURE_LIMIT - 1):
        assert login(client, "target", "wrong").status_code == 200
    assert login(client, "target", "wrong").status_code == 429
    assert login(client, "target", "a-long-right-passphrase").status_code == 429
    # one guesser locks out neither the account elsewhere nor anyone else
    assert login(client, "target", "a-long-right-passphrase", "10.0.0.2").status_code == 302
    client.logout()
    assert login(client, "bystander", "another-long-passphrase").status_code == 302


def test_behind_a_trusted_proxy_the_lockout_keys_on_the_forwarded_client(client, settings):
    """Two clients behind one balancer: the guesser is locked out, the other is not. Without
    the setting, a forged X-Forwarded-For changes nothing: the peer is the client."""
    user_with("target", "a-long-right-passphrase")
    settings.LOGIN_NAME_SLOW = 100  # django-axes' own lock, apart from the per-name slowing
    balancer, guesser, colleague = "10.9.0.1", "203.0.113.7", "198.51.100.4"
    settings.TRUSTED_PROXIES = trusted_proxies("10.9.0.0/16")
    for _ in range(settings.AXES_FAILURE_LIMIT):
        login(client, "target", "wrong", balancer, HTTP_X_FORWARDED_FOR=guesser)
    assert (
        login(
            client, "target", "a-long-right-passphrase", balancer, HTTP_X_FORWARDED_FOR=guesser
        ).status_code
        == 429
    )
    ok = login(
        client, "target", "a-long-right-passphrase", balancer, HTTP_X_FORWARDED_FOR=colleague
    )
    assert ok.status_code == 302
    client.logout()
    # a client that writes the header itself, past the balancer, is still the guesser
    forged = f"{colleague}, {guesser}"
    assert (
        login(
            client, "target", "a-long-right-passphrase", balancer, HTTP_X_FORWARDED_FOR=forged
        ).status_code
        == 429
    )

    settings.TRUSTED_PROXIES = trusted_proxies("")
    for _ in range(settings.AXES_FAILURE_LIMIT):
        login(client, "target", "wrong", "192.0.2.9", HTTP_X_FORWARDED_FOR=f"{colleague}")
    assert login(client, "target", "a-long-right-passphrase", "192.0.2.9").status_code == 429
    assert login(client, "target", "a-long-right-passphrase", colleague).status_code == 302


def test_weak_passwords_are_refused():
    for weak in ("short", "password123", "12345678901"):
        with pytest.raises(ValidationError):
            validate_password(weak)
    validate_password("correct horse battery staple")


def test_pages_send_a_csp_without_inline_script(client):
    client.force_login(UserFactory(roles=["admin"]))
    for url in ("/", reverse("rubrics:generate"), "/api/docs/"):
        response = client.get(url)
        assert response.status_code == 200, url
        policy = response["Content-Security-Policy"]
        assert "script-src 'self'" in policy and "unsafe-inline" not in policy.split("style-src")[0]
        scripts = re.findall(
            r"<script(?![^>]*\b(?:src|type=\"application/json\")\b)[^>]*>",
            response.content.decode(),
        )
        assert not scripts, (url, scripts)


def test_the_api_answers_json_without_the_pages_middleware(client, api_client_for):
    """The API (core.middleware.PagesOnly) skips the pages' CSP, flash messages and htmx, and
    answers JSON even to a browser that asks for HTML (no browsable API left without a CSP);
    it keeps the other security headers, and the pages beside it keep their CSP."""
    user = UserFactory(roles=["expert"])
    for answer in (
        api_client_for(user).get("/api/v1/grades/", HTTP_ACCEPT="text/html"),
        client.get("/api/v1/grades/"),  # refused (no credentials): JSON all the same
    ):
        assert answer["Content-Type"] == "application/json", answer["Content-Type"]
        assert "Content-Security-Policy" not in answer
        assert answer["X-Frame-Options"] == "DENY"
        assert answer["X-Content-Type-Options"] == "nosniff"
        assert not hasattr(answer.wsgi_request, "htmx")
        assert not hasattr(answer.wsgi_request, "_messages")
    client.force_login(user)
    page = client.get("/", HTTP_HX_REQUEST="true")
    assert "script-src 'self'" in page["Content-Security-Policy"]
    assert page.wsgi_request.htmx and hasattr(page.wsgi_request, "_messages")


def test_a_user_without_a_role_gets_no_api_schema(api_client_for):
    assert api_client_for(UserFactory(roles=[])).get("/api/schema/").status_code == 403
    assert api_client_for(UserFactory(roles=["expert"])).get("/api/schema/").status_code == 200


def test_the_https_profile_passes_check_deploy():
    env = dict(os.environ)
    env.pop(
        "DJANGO_ALLOW_ASYNC_UNSAFE", None
    )  # set by the browser tests' process, not a deployment's
    env.update(
        DEBUG="false", HTTPS="true", ALLOWED_HOSTS="proofmark.example",
        SECRET_KEY="x" * 20 + "-a-deployment-key-long-and-random-enough-for-django-checks",
    )  # fmt: skip
    done = subprocess.run(
        [sys.executable, "manage.py", "check", "--deploy", "--fail-level", "WARNING"],
        cwd=ROOT, env=env, capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert done.returncode == 0, done.stdout + done.stderr
    assert "no issues" in done.stdout


def test_a_session_user_and_roles_are_read_in_one_statement(client):
    """A page request reads its session, then the user with their groups in one statement
    (core.authentication.ModelBackend), and the roles come from that read."""
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    from core.roles import Role, user_roles

    user = UserFactory(roles=["expert", "adjudicator"])
    client.force_login(user, backend="core.authentication.ModelBackend")
    with CaptureQueriesContext(connection) as queries:
        answer = client.get("/annotation/")
    assert answer.status_code == 200
    reads = [q["sql"] for q in queries if "auth_user" in q["sql"] or "auth_group" in q["sql"]]
    assert len(reads) == 1 and "auth_group" in reads[0]
    request_user = answer.wsgi_request.user
    assert request_user.pk == user.pk and request_user.username == user.username
    assert user_roles(request_user) == {Role.EXPERT, Role.ADJUDICATOR}
    assert request_user.date_joined == user.date_joined  # a timestamp, as the ORM reads it
    user.is_active = False
    user.save()
    assert client.get("/annotation/").status_code == 302  # an inactive user is logged out


def test_a_session_is_read_by_one_statement_until_it_expires(client):
    """Django's database sessions: the session's row is read by one statement; an expired or
    unknown session reads as none, and the page asks for a log-in."""
    from datetime import timedelta

    from django.contrib.sessions.models import Session
    from django.db import connection
    from django.test.utils import CaptureQueriesContext
    from django.utils import timezone

    client.force_login(UserFactory(roles=["expert"]))
    with CaptureQueriesContext(connection) as queries:
        assert client.get("/annotation/").status_code == 200
    reads = [q["sql"] for q in queries if "django_session" in q["sql"]]
    assert len(reads) == 1 and "session_data" in reads[0]
    key = client.cookies["sessionid"].value
    Session.objects.filter(session_key=key).update(
        expire_date=timezone.now() - timedelta(seconds=1)
    )
    assert client.get("/annotation/").status_code == 302
    client.cookies["sessionid"] = "x" * 32  # well formed, never issued
    assert client.get("/annotation/").status_code == 302


def test_sessions_read_through_the_shared_cache_end_everywhere_at_log_out(client, settings):
    """With Redis as the cache (CACHE_URL), sessions are Django's cached_db: a log-out in one
    client ends the session for every other holder of its cookie, as the cache is shared."""
    from django.core.cache import cache
    from django.test import Client

    settings.CACHES = {
        "default": {
            "BACKEND": "core.cache.FailOpenRedisCache",
            "LOCATION": os.environ["CELERY_BROKER_URL"],
        }
    }
    settings.SESSION_ENGINE = "django.contrib.sessions.backends.cached_db"
    try:
        client.force_login(UserFactory(roles=["expert"]))
        other = Client()
        other.cookies["sessionid"] = client.cookies["sessionid"].value
        assert other.get("/annotation/").status_code == 200
        client.post("/accounts/logout/")
        assert other.get("/annotation/").status_code == 302
    finally:
        cache.clear()


def test_the_session_engine_is_cached_db_only_with_a_shared_cache():
    from tests.test_settings_env import setting_read

    def engine(**env):
        return setting_read("SESSION_ENGINE", **env)

    assert engine(CACHE_URL="redis://127.0.0.1:6379/3") == (
        "django.contrib.sessions.backends.cached_db"
    )
    assert engine(CACHE_URL="") == "django.contrib.sessions.backends.db"


def test_a_spray_from_one_address_across_names_is_refused_after_its_limit(client, settings):
    """160 wrong passwords from one address over 40 names (django-axes alone let all through):
    refused at LOGIN_ADDRESS_LIMIT, with the reason and Retry-After; another address logs in."""
    from django.core.cache import cache

    cache.clear()
    user_with("sprayed", "a-long-right-passphrase")
    statuses = [
        login(client, f"name{n % 40}", "wrong", "203.0.113.9").status_code for n in range(160)
    ]
    assert statuses[: settings.LOGIN_ADDRESS_LIMIT] == [200] * settings.LOGIN_ADDRESS_LIMIT
    assert set(statuses[settings.LOGIN_ADDRESS_LIMIT :]) == {429}
    refused = login(client, "sprayed", "a-long-right-passphrase", "203.0.113.9")
    assert refused.status_code == 429 and int(refused["Retry-After"]) > 0
    assert "Too many failed log-ins from your address" in refused.content.decode()
    assert login(client, "sprayed", "a-long-right-passphrase", "198.51.100.1").status_code == 302


def test_one_name_from_many_addresses_is_slowed_then_locked_until_an_admin_unlocks(
    client, settings
):
    """30 wrong `admin` log-ins from 30 addresses: slowed after LOGIN_NAME_SLOW (429 with
    Retry-After), locked at LOGIN_NAME_LOCK even for the right password, until
    `manage.py login_unlock`."""
    from io import StringIO

    from django.core.cache import cache
    from django.core.management import call_command

    cache.clear()
    settings.LOGIN_NAME_SLOW, settings.LOGIN_NAME_LOCK = 5, 30
    user_with("admin", "a-long-right-passphrase")
    statuses = [login(client, "admin", "wrong", f"198.51.100.{n}").status_code for n in range(5)]
    assert statuses == [200] * 5
    slowed = login(client, "admin", "wrong", "198.51.100.77")
    assert slowed.status_code == 429 and int(slowed["Retry-After"]) >= 1
    assert "slowed" in slowed.content.decode()
    for n in range(5, 30):  # as if each waited its turn
        cache.set(login_limits._key("name-last", "admin"), 0, None)
        login(client, "admin", "wrong", f"198.51.100.{n}")
    locked = login(client, "admin", "a-long-right-passphrase", "192.0.2.1")
    assert locked.status_code == 429 and "Retry-After" not in locked
    assert "Ask an admin to unlock it" in locked.content.decode()
    out = StringIO()
    call_command("login_unlock", "admin", stdout=out)
    assert "unlocked" in out.getvalue()
    assert login(client, "admin", "a-long-right-passphrase", "192.0.2.1").status_code == 302
