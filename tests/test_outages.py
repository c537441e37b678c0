"""Graceful degradation: Redis (cache and broker) stopped under load and started again, a killed
database connection, throttles on failed authentication, the health checks over plain HTTP.

Redis here is a server of the test's own on a free port (the shared one is never touched);
terminated database backends are the test database's own (filtered by its name).
"""

import json
import os
import shutil
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest
import redis
from django.core.exceptions import ImproperlyConfigured
from django.core.files.uploadedfile import SimpleUploadedFile
from django.db import close_old_connections, connection
from rest_framework.authtoken.models import Token
from rest_framework.test import APIClient

from core.proxies import client_address, trusted_proxies
from problems.models import ImportJob
from tests.annotation.factories import CampaignFactory, ItemFactory, expert_in
from tests.conftest import ROOT, wait_for
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
        "default": {"BACKEND": "core.cache.FailOpenRedisCache", "LOCATION": f"{url}/0"}
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


# the threads write at once, each on a connection of its own
@pytest.mark.django_db(transaction=True)
def test_grading_goes_on_while_redis_is_down_and_recovers_without_restart(
    own_redis, settings, tmp_path, caplog
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
    throttled = redis.Redis(port=own_redis.port, db=0)
    try:
        wait_for(lambda: len(statuses) >= 8 and throttled.keys("*throttle_user*"))
        own_redis.stop()  # cache and broker gone, under load
        before = len(statuses)
        wait_for(lambda: len(statuses) >= before + 16)
        during = statuses[before:]
        refused = token_client(admin).post("/api/v1/imports/", upload(), format="multipart")
        own_redis.start()  # empty: the throttles' keys come back only if the cache is used again
        wait_for(lambda: throttled.keys("*throttle_user*"))
        accepted = token_client(admin).post("/api/v1/imports/", upload(), format="multipart")
    finally:
        stop.set()
        for thread in threads:
            thread.join()
    assert set(during) <= {200, 204}, sorted(set(during))
    assert set(statuses) <= {200, 204}
    assert refused.status_code == 503 and refused["Retry-After"]
    assert "job queue" in refused.json()["detail"]
    assert accepted.status_code == 202, accepted.content
    assert ImportJob.objects.count() == 1  # the refused one left nothing behind
    assert any("cache unreachable" in r.getMessage() for r in caplog.records)  # logged


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
    with pytest.raises(ImproperlyConfigured, match="not-a-proxy"):
        trusted_proxies("10.0.0.1, not-a-proxy")


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


def terminate_own_backends(spare: int | None = None) -> int:
    """Terminates the test database's backends (never another database's) but `spare`'s pid,
    from a connection of its own; how many."""
    import psycopg

    params = connection.get_connection_params()
    params.pop("cursor_factory", None)
    params.pop("context", None)
    with psycopg.connect(**params, autocommit=True) as admin:
        rows = admin.execute(
            "SELECT pg_terminate_backend(pid) FROM pg_stat_activity "
            "WHERE datname = current_database() AND pid <> pg_backend_pid() AND pid <> %s",
            [spare or 0],
        ).fetchall()
    return len(rows)


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


@pytest.mark.django_db(transaction=True)
def test_a_kept_connection_the_server_closed_is_replaced_before_the_request_uses_it():
    """Django's health check (CONN_HEALTH_CHECKS, the stock backend): a kept connection whose
    backend was terminated is found dead before the request's first query and replaced, so a
    write after it is not a 503."""
    campaign = CampaignFactory(slug="checked")
    ItemFactory(campaign=campaign)
    client = token_client(expert_in(campaign))
    connection.settings_dict["CONN_MAX_AGE"] = 600
    connection.close()  # the next one opens with that age
    try:
        assert client.get("/api/v1/grades/").status_code == 200
        kept = connection.connection
        assert terminate_own_backends() >= 1
        close_old_connections()  # what a server does as each request starts
        answer = client.post(f"/api/v1/campaigns/{campaign.slug}/next/")
        assert answer.status_code == 200, answer.content  # a new connection, not a 503
        assert connection.connection is not kept
    finally:
        connection.settings_dict["CONN_MAX_AGE"] = 0


def lost_lines(caplog) -> list[str]:
    return [r.getMessage() for r in caplog.records if "database connection lost" in r.getMessage()]


@pytest.mark.django_db(transaction=True)
def test_backends_killed_under_load_give_no_server_error(caplog):
    """Experts grading in threads while the test database's backends are terminated again and
    again: reads are run again, writes answer 503, nothing answers 500."""
    campaign = CampaignFactory(slug="killed")
    for _ in range(6):
        ItemFactory(campaign=campaign)
    experts = [expert_in(campaign, username=f"killed-expert-{n}") for n in range(3)]
    connection.ensure_connection()
    own_pid = connection.connection.info.backend_pid
    statuses: list[int] = []
    stop = threading.Event()

    def grade_loop(user):
        client = token_client(user)
        try:
            while not stop.is_set():
                statuses.append(client.get("/api/v1/grades/").status_code)
                statuses.append(client.post(f"/api/v1/campaigns/{campaign.slug}/next/").status_code)
        finally:
            connection.close()

    threads = [threading.Thread(target=grade_loop, args=(user,)) for user in experts]
    killed = 0
    with caplog.at_level("WARNING", logger="proofmark.request"):
        for thread in threads:
            thread.start()
        try:
            for _ in range(600):  # until kills have landed inside requests, a minute at most
                time.sleep(0.1)
                killed += terminate_own_backends(spare=own_pid)
                if len(statuses) >= 40 and len(lost_lines(caplog)) >= 5:
                    break
        finally:
            stop.set()
            for thread in threads:
                thread.join()
    assert killed and 500 not in statuses, sorted(set(statuses))
    assert set(statuses) <= {200, 503}
    assert lost_lines(caplog)  # the kills landed inside requests, and were answered


# --- Health over plain HTTP, gunicorn's own limits -----------------------------------------------


def raw_request(port: int, line: bytes, headers: bytes = b"") -> bytes:
    """The status line and headers gunicorn answers to one raw HTTP/1.1 request."""
    with socket.create_connection(("127.0.0.1", port), timeout=30) as sock:
        sock.sendall(line + b"\r\nHost: 127.0.0.1\r\nConnection: close\r\n" + headers + b"\r\n")
        answer = b""
        while chunk := sock.recv(65536):
            answer += chunk
    return answer


def test_gunicorn_with_https_on_answers_health_checks_over_plain_http(tmp_path):
    """The Procfile's web process (config.gunicorn) with HTTPS=true: `/healthz` and `/readyz`
    answer plain HTTP (no redirect), a page redirects; a request line up to 8190 bytes reaches
    Django (JSON), a longer one gets gunicorn's 414, as the README says."""
    port = free_port()
    env = {
        **os.environ,
        "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}",
        "DEBUG": "false",
        "HTTPS": "true",
        "TRUST_X_FORWARDED_PROTO": "true",
        "SECRET_KEY": "k" * 50,
        "ALLOWED_HOSTS": "127.0.0.1",
        "PORT": str(port),
        "WEB_CONCURRENCY": "1",
        "PROOFMARK_RUN_DIR": str(tmp_path),
    }
    env.pop("DJANGO_ALLOW_ASYNC_UNSAFE", None)
    log = (tmp_path / "web.log").open("w")
    web = subprocess.Popen(
        ["gunicorn", "--config", "python:config.gunicorn", "config.wsgi"],
        cwd=ROOT,
        env=env,
        stdout=log,
        stderr=subprocess.STDOUT,
    )
    try:
        for _ in range(300):
            try:
                health = raw_request(port, b"GET /healthz HTTP/1.1")
                break
            except OSError:
                assert web.poll() is None, (tmp_path / "web.log").read_text()
                time.sleep(0.1)
        assert health.startswith(b"HTTP/1.1 200"), health
        ready = raw_request(port, b"GET /readyz HTTP/1.1")
        assert ready.split(b" ")[1] in (b"200", b"503"), ready  # answered, not redirected
        assert raw_request(port, b"GET /problems/ HTTP/1.1").startswith(b"HTTP/1.1 301")
        https = b"X-Forwarded-Proto: https\r\n"
        long_query = b"GET /api/v1/grades/?q=" + b"x" * 8100 + b" HTTP/1.1"
        answer = raw_request(port, long_query, https)
        assert answer.startswith(b"HTTP/1.1 401") and b"application/json" in answer, answer[:300]
        too_long = b"GET /api/v1/grades/?q=" + b"x" * 8200 + b" HTTP/1.1"
        assert raw_request(port, too_long, https).startswith(b"HTTP/1.1 414")
    finally:
        web.terminate()
        web.wait(timeout=30)
        log.close()


def test_the_request_log_names_the_client_the_trusted_proxy_saw(client, settings, caplog):
    settings.TRUSTED_PROXIES = trusted_proxies("10.0.0.0/8")
    with caplog.at_level("INFO", logger="proofmark.request"):
        client.get("/healthz", REMOTE_ADDR="10.2.3.4", HTTP_X_FORWARDED_FOR="203.0.113.8")
        settings.TRUSTED_PROXIES = trusted_proxies("")
        client.get("/healthz", REMOTE_ADDR="10.2.3.4", HTTP_X_FORWARDED_FOR="203.0.113.8")
    assert [record.client for record in caplog.records if record.name == "proofmark.request"] == [
        "203.0.113.8",
        "10.2.3.4",
    ]


def test_a_lost_connection_raised_outside_a_view_is_a_503_too(rf):
    """Raised in a middleware, it reaches handler500 (core.errors.server_error): still 503."""
    from django.db import OperationalError

    from core.errors import server_error

    try:
        raise OperationalError("server closed the connection unexpectedly")
    except OperationalError:
        answer = server_error(rf.post("/api/v1/grades/"))
    assert answer.status_code == 503 and answer["Retry-After"]
    assert "connection was lost" in json.loads(answer.content)["detail"]


@pytest.mark.django_db
def test_a_statement_the_database_refuses_is_no_lost_connection(rf):
    """psycopg refuses a statement of more than 65,535 parameters with an OperationalError on a
    connection that is fine: no 503 saying the connection was lost (a read would be run again
    for nothing), but the server error it is."""
    from django.db import OperationalError

    from core.errors import database_lost, outage_response, server_error
    from problems.models import Proof

    try:
        Proof.objects.filter(pk__in=list(range(1, 70_001))).count()
    except OperationalError as exc:
        refused = exc
    else:
        pytest.fail("a statement of 70,000 parameters was accepted")
    assert "65535" in str(refused)
    assert not database_lost(refused)
    assert outage_response(rf.get("/api/v1/grades/"), refused) is None
    assert connection.is_usable()  # the same connection goes on
    try:
        raise refused
    except OperationalError:
        answer = server_error(rf.get("/api/v1/grades/"))
    assert answer.status_code == 500


@pytest.mark.django_db(transaction=True)
def test_a_deadlock_is_a_503_saying_nothing_was_saved(rf):
    """Two transactions waiting on each other: PostgreSQL rolls this one back (a deadlock,
    SQLSTATE 40P01). The connection is fine, nothing was saved: 503 asking to try again, not a
    server error and not a lost connection."""
    import psycopg
    from django.db import OperationalError, transaction

    from core.errors import database_lost, outage_response
    from tests.conftest import worker_database_url

    other = psycopg.connect(worker_database_url().replace("postgres://", "postgresql://"))
    other.execute("SET deadlock_timeout = '10s'")  # this side waits; ours finds the deadlock
    crossed = None
    with transaction.atomic(), connection.cursor() as cursor:
        cursor.execute("SET LOCAL deadlock_timeout = '50ms'")
        cursor.execute("SELECT pg_advisory_xact_lock(424201)")
        other.execute("SELECT pg_advisory_xact_lock(424202)")
        waiter = threading.Thread(
            target=lambda: other.execute("SELECT pg_advisory_xact_lock(424201)")
        )
        waiter.start()
        for _ in range(200):  # until the other side waits on our lock (a busy machine is slow)
            cursor.execute(
                "SELECT count(*) FROM pg_locks WHERE locktype = 'advisory' AND NOT granted"
                " AND objid = 424201 AND database = (SELECT oid FROM pg_database"
                " WHERE datname = current_database())"
            )
            if cursor.fetchone()[0]:
                break
            time.sleep(0.05)
        try:
            cursor.execute("SELECT pg_advisory_xact_lock(424202)")
        except OperationalError as exc:
            crossed = exc
        transaction.set_rollback(True)
    waiter.join(10)
    other.rollback()
    other.close()
    assert crossed is not None and crossed.__cause__.sqlstate == "40P01"
    assert not database_lost(crossed)
    answer = outage_response(rf.post("/api/v1/items/1/submit/"), crossed)
    assert answer.status_code == 503 and not getattr(answer, "retryable", False)
    assert "nothing was saved" in answer.content.decode()
    assert connection.is_usable()


@pytest.mark.django_db(transaction=True)
def test_a_terminated_backend_is_a_lost_connection(rf):
    """The OperationalError of a query on a connection whose backend was killed: lost (503,
    marked to be run again), and the dead connection is closed so the next query opens one."""
    from django.db import InterfaceError, OperationalError

    from core.errors import database_lost, outage_response

    connection.ensure_connection()
    assert terminate_own_backends() >= 1
    try:
        connection.cursor().execute("SELECT 1")
    except OperationalError as exc:
        lost = exc
    else:
        pytest.fail("a query on a terminated backend succeeded")
    assert database_lost(lost)
    answer = outage_response(rf.get("/api/v1/grades/"), lost)
    assert answer.status_code == 503 and answer.retryable
    assert connection.connection is None  # closed: the next query opens a new one
    assert database_lost(InterfaceError("connection already closed"))
    assert not database_lost(ValueError("server closed the connection unexpectedly"))


def test_the_cache_answers_nothing_there_while_redis_is_away(settings):
    """Every operation of the fail-open cache, on a port where no Redis listens."""
    from core.cache import FailOpenRedisCache

    settings.CACHE_RETRY_SECONDS = 60
    cache = FailOpenRedisCache(f"redis://127.0.0.1:{free_port()}/0", {})
    assert cache.get("k", "default") == "default" and cache.get("k") is None
    assert cache.add("k", 1) is False and cache.set("k", 1) is None
    assert cache.get_many(["k"]) == {} and cache.has_key("k") is False
    with pytest.raises(ValueError, match="not found"):
        cache.incr("k")
    assert cache.delete("k") is False and cache.clear() is False


@pytest.mark.django_db(transaction=True)
def test_a_request_stuck_on_a_lock_answers_503_with_retry_after_and_runs_once():
    """A lock held longer than DB_LOCK_TIMEOUT (the web process's bound): the request is 503 with
    Retry-After, is not run again, and the next request (the lock gone) works."""
    import psycopg

    from annotation.models import Assignment

    campaign = CampaignFactory(slug="locked")
    ItemFactory(campaign=campaign)
    client = token_client(expert_in(campaign))
    options = connection.settings_dict["OPTIONS"]
    options["options"] = "-c lock_timeout=300ms"
    connection.close()  # the next one opens with the bound
    params = {k: v for k, v in connection.get_connection_params().items() if k != "context"}
    params.pop("cursor_factory", None)
    holder = psycopg.connect(**params)
    try:
        holder.execute(f"LOCK TABLE {Assignment._meta.db_table} IN ACCESS EXCLUSIVE MODE")
        answer = client.post(f"/api/v1/campaigns/{campaign.slug}/next/")
        assert answer.status_code == 503 and answer["Retry-After"]
        assert "database was busy" in answer.json()["detail"]
        holder.rollback()
        assert client.post(f"/api/v1/campaigns/{campaign.slug}/next/").status_code == 200
    finally:
        holder.close()
        options.pop("options", None)
        connection.close()


def test_the_web_and_the_worker_processes_have_their_own_bounds():
    """config/gunicorn.py gives the web process 30 s a statement and 10 s a lock wait; the jobs'
    worker (config/celery.py) 30 min and 2 min; a command typed by hand none."""
    code = (
        "import json, os, runpy; {load}; import django; django.setup(); {after}; "
        "from django.db import connection; "
        "print(json.dumps(connection.settings_dict['OPTIONS'].get('options')))"
    )

    def bounds(load: str, after: str = "pass"):
        env = {k: v for k, v in os.environ.items() if not k.startswith("DB_")}
        env["DJANGO_SETTINGS_MODULE"] = "config.settings"
        out = subprocess.run(
            [sys.executable, "-c", code.format(load=load, after=after)],
            env=env,
            cwd=ROOT,
            capture_output=True,
            text=True,
            check=True,
        ).stdout
        return json.loads(out.strip().splitlines()[-1])

    assert bounds("runpy.run_path('config/gunicorn.py')") == (
        "-c statement_timeout=30s -c lock_timeout=10s"
    )
    worker = "import config.celery; from celery.signals import worker_init; worker_init.send(None)"
    assert bounds("pass", worker) == "-c statement_timeout=30min -c lock_timeout=2min"
    assert bounds("pass", "import config.celery") is None  # a web process sending a task
    assert bounds("pass") is None
