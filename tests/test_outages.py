"""Graceful degradation: Redis (cache and broker) stopped under load and started again, a killed
database connection, throttles on failed authentication, the health checks over plain HTTP.

Redis here is a server of the test's own on a free port (the shared one is never touched);
terminated database backends are the test database's own (filtered by its name).
"""

import os
import shutil
import socket
import subprocess
import sys
import threading
import time

import pytest
import redis
from django.core.files.uploadedfile import SimpleUploadedFile
from django.db import connection
from rest_framework.authtoken.models import Token
from rest_framework.test import APIClient

from config.proxies import client_address, trusted_proxies
from problems.models import ImportJob
from tests.annotation.factories import CampaignFactory, ItemFactory, expert_in
from tests.conftest import ROOT
from tests.factories import UserFactory


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


class RedisServer:
    """A redis-server of the test's own, stopped and started on the same port."""

    def __init__(self, port: int):
        self.port, self.process = port, None

    def start(self) -> None:
        self.process = subprocess.Popen(
            [
                shutil.which("redis-server"),
                "--port",
                str(self.port),
                "--save",
                "",
                "--appendonly",
                "no",
            ],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        client = redis.Redis(port=self.port)
        for _ in range(100):
            try:
                client.ping()
                return
            except redis.ConnectionError:
                time.sleep(0.05)
        raise RuntimeError("redis-server did not start")

    def stop(self) -> None:
        self.process.terminate()
        self.process.wait(timeout=10)


@pytest.fixture
def own_redis(settings):
    """The cache (fail-open backend) and the Celery broker on a Redis of the test's own."""
    if shutil.which("redis-server") is None:
        pytest.skip("redis-server is not installed")
    from config.celery import app

    server = RedisServer(free_port())
    server.start()
    url = f"redis://127.0.0.1:{server.port}"
    settings.CACHES = {
        "default": {"BACKEND": "config.cache.FailOpenRedisCache", "LOCATION": f"{url}/0"}
    }
    settings.CACHE_RETRY_SECONDS = 0.2
    saved = (app.conf.broker_url, app.conf.broker_write_url, app.conf.task_publish_retry)
    app.conf.broker_url = app.conf.broker_write_url = f"{url}/1"
    app.conf.task_publish_retry = False
    app._pool = None
    app.amqp._producer_pool = None
    yield server
    app.conf.broker_url, app.conf.broker_write_url, app.conf.task_publish_retry = saved
    app._pool = None
    app.amqp._producer_pool = None
    if server.process.poll() is None:
        server.stop()


def token_client(user) -> APIClient:
    client = APIClient()
    token, _ = Token.objects.get_or_create(user=user)
    client.credentials(HTTP_AUTHORIZATION=f"Token {token.key}")
    return client


def upload(name="rows.jsonl"):
    row = b'{"problem_id": "P1", "problem": "Show 1=1.", "model_solution": "Trivial."}\n'
    return {"file": SimpleUploadedFile(name, row), "format": "proofbench"}


# PostgreSQL: the threads write at once (SQLite's test database, in memory, locks whole tables)
@pytest.mark.postgresql
@pytest.mark.django_db(transaction=True)
def test_grading_goes_on_while_redis_is_down_and_recovers_without_restart(
    own_redis, settings, tmp_path
):
    settings.MEDIA_ROOT = tmp_path
    campaign = CampaignFactory(slug="outage")
    for _ in range(4):
        ItemFactory(campaign=campaign)
    experts = [expert_in(campaign, username=f"outage-expert-{n}") for n in range(4)]
    admin = UserFactory(roles=["admin"])
    statuses: list[int] = []
    stop = threading.Event()

    def grade_loop(user):
        client = token_client(user)
        try:
            while not stop.is_set():
                statuses.append(client.post(f"/api/v1/campaigns/{campaign.slug}/next/").status_code)
                statuses.append(client.get("/api/v1/grades/").status_code)
        finally:
            connection.close()

    threads = [threading.Thread(target=grade_loop, args=(user,)) for user in experts]
    for thread in threads:
        thread.start()
    try:
        time.sleep(0.5)
        own_redis.stop()  # cache and broker gone, under load
        before = len(statuses)
        time.sleep(1.0)
        during = statuses[before:]
        refused = token_client(admin).post("/api/v1/imports/", upload(), format="multipart")
        own_redis.start()
        time.sleep(0.5)  # past CACHE_RETRY_SECONDS: the cache is tried again
        accepted = token_client(admin).post("/api/v1/imports/", upload(), format="multipart")
    finally:
        stop.set()
        for thread in threads:
            thread.join()
    assert during and set(during) <= {200, 204}, sorted(set(during))
    assert set(statuses) <= {200, 204}
    assert refused.status_code == 503 and refused["Retry-After"]
    assert "job queue" in refused.json()["detail"]
    assert accepted.status_code == 202, accepted.content
    assert ImportJob.objects.count() == 1  # the refused one left nothing behind
    keys = redis.Redis(port=own_redis.port, db=0).keys("*throttle_user*")
    assert keys  # the throttles count in Redis again


@pytest.mark.django_db
def test_readyz_names_the_broker_while_it_is_down(own_redis, client):
    own_redis.stop()
    answer = client.get("/readyz")
    assert answer.status_code == 503
    assert answer.json()["database"] == "ok" and answer.json()["broker"] != "ok"


# --- Proxies, throttles --------------------------------------------------------------------------


class Meta:
    def __init__(self, peer, forwarded=""):
        self.META = {"REMOTE_ADDR": peer, "HTTP_X_FORWARDED_FOR": forwarded}


def test_the_client_address_comes_from_trusted_proxies_only(settings):
    settings.TRUSTED_PROXIES = trusted_proxies("")
    assert client_address(Meta("198.51.100.1", "203.0.113.5")) == "198.51.100.1"
    settings.TRUSTED_PROXIES = trusted_proxies("10.0.0.0/8, 192.168.1.5")
    assert client_address(Meta("10.1.1.1", "203.0.113.5")) == "203.0.113.5"
    assert client_address(Meta("10.1.1.1", "6.6.6.6, 203.0.113.5, 192.168.1.5")) == "203.0.113.5"
    assert client_address(Meta("198.51.100.1", "203.0.113.5")) == "198.51.100.1"  # not a proxy
    assert client_address(Meta("10.1.1.1", "not-an-address")) == "10.1.1.1"
    settings.TRUSTED_PROXIES = trusted_proxies("1")
    assert client_address(Meta("10.1.1.1", "6.6.6.6, 203.0.113.5")) == "203.0.113.5"
    assert client_address(Meta("10.1.1.1")) == "10.1.1.1"


@pytest.mark.django_db
def test_guessing_tokens_is_throttled_per_address(settings):
    settings.REST_FRAMEWORK = {**settings.REST_FRAMEWORK}  # the README's figure: 60 a minute
    assert settings.REST_FRAMEWORK["DEFAULT_THROTTLE_RATES"]["anon"] == "60/m"
    settings.TRUSTED_PROXIES = trusted_proxies("1")
    guesser = APIClient()
    answers = [
        guesser.get(
            "/api/v1/grades/",
            HTTP_AUTHORIZATION=f"Token guess{n:036d}",
            REMOTE_ADDR="10.0.0.1",
            HTTP_X_FORWARDED_FOR="203.0.113.9",
        ).status_code
        for n in range(61)
    ]
    assert answers[:60] == [401] * 60 and answers[60] == 429
    other = APIClient().get(
        "/api/v1/grades/",
        HTTP_AUTHORIZATION="Token wrong",
        REMOTE_ADDR="10.0.0.1",
        HTTP_X_FORWARDED_FOR="198.51.100.3",
    )
    assert other.status_code == 401  # another client behind the same balancer


# --- Database blips ------------------------------------------------------------------------------


def terminate_own_backends(except_pid: int | None = None) -> int:
    """Terminates the test database's backends (never another database's), from a connection of
    its own; how many."""
    import psycopg

    params = connection.get_connection_params()
    params.pop("cursor_factory", None)
    params.pop("context", None)
    with psycopg.connect(**params, autocommit=True) as admin:
        rows = admin.execute(
            "SELECT pg_terminate_backend(pid) FROM pg_stat_activity "
            "WHERE datname = current_database() AND pid <> pg_backend_pid()"
        ).fetchall()
    return len(rows)


@pytest.mark.postgresql
@pytest.mark.django_db(transaction=True)
def test_a_dropped_connection_is_retried_for_a_read_and_503_otherwise(settings):
    """A persistent connection killed between requests (no health check to catch it)."""
    campaign = CampaignFactory(slug="blip")
    ItemFactory(campaign=campaign)
    client = token_client(expert_in(campaign))
    connection.settings_dict["CONN_MAX_AGE"] = 600
    connection.settings_dict["CONN_HEALTH_CHECKS"] = False
    try:
        assert client.get("/api/v1/grades/").status_code == 200
        assert terminate_own_backends() >= 1
        assert client.get("/api/v1/grades/").status_code == 200  # run again on a new connection
        assert terminate_own_backends() >= 1
        answer = client.post(f"/api/v1/campaigns/{campaign.slug}/next/")
        assert answer.status_code == 503 and answer["Retry-After"]
        assert "database connection was lost" in answer.json()["detail"]
        assert client.post(f"/api/v1/campaigns/{campaign.slug}/next/").status_code == 200
    finally:
        connection.settings_dict["CONN_MAX_AGE"] = 0
        connection.settings_dict["CONN_HEALTH_CHECKS"] = True


# --- Health over plain HTTP ----------------------------------------------------------------------


def test_health_checks_answer_plain_http_with_https_on():
    """With HTTPS=true every page redirects plain HTTP, but the balancer's checks do not."""
    code = (
        "import django; django.setup(); from django.test import Client; c = Client(); "
        "print(c.get('/healthz').status_code, c.get('/readyz').status_code, "
        "c.get('/problems/').status_code)"
    )
    env = {
        **os.environ,
        "DJANGO_SETTINGS_MODULE": "config.settings",
        "DEBUG": "false",
        "HTTPS": "true",
        "SECRET_KEY": "k" * 50,
        "ALLOWED_HOSTS": "testserver",
    }
    env.pop("DJANGO_ALLOW_ASYNC_UNSAFE", None)
    done = subprocess.run(
        [sys.executable, "-c", code], env=env, cwd=ROOT, capture_output=True, text=True, timeout=120
    )
    healthz, readyz, page = done.stdout.split()[-3:]
    assert healthz == "200" and readyz in {"200", "503"} and page == "301", done.stderr


@pytest.mark.django_db
def test_the_import_page_keeps_the_form_and_says_why_while_the_broker_is_down(
    own_redis, client, settings, tmp_path
):
    settings.MEDIA_ROOT = tmp_path
    client.force_login(UserFactory(roles=["admin"]))
    own_redis.stop()
    answer = client.post("/problems/import/", upload())
    assert answer.status_code == 503
    assert b"job queue (Celery broker) cannot be reached" in answer.content
    assert b"import-form" in answer.content and not ImportJob.objects.exists()
