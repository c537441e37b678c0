"""Shared test set-up: real PostgreSQL, a real Celery worker on Redis, real Chromium.

Fixtures here are used by every app's tests; app-specific factories live in tests/<app>/.
"""

import os
import subprocess
import sys
import time
from pathlib import Path

import pytest
from django.conf import settings

from tests.factories import UserFactory
from tests.oidc_provider.harness import oidc_provider, sso  # noqa: F401 (the SSO tests' fixtures)

ROOT = Path(__file__).resolve().parent.parent
SHARED = ROOT.parent / "shared"
FIXTURES_REAL = SHARED / "fixtures" / "real"
IN_CI = os.environ.get("CI", "").strip().lower() in {"1", "true", "yes"}


def pytest_configure(config):
    """A fast hasher for the suite: PBKDF2's deliberate cost (about 0.6 s a hash here) buys tests
    nothing. Production keeps Django's default hashers (config/settings.py)."""
    settings.PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]


def pytest_collection_modifyitems(config, items):
    """The `nightly` tests run only when `-m` names them (`make nightly`): a plain run, or one
    selecting other markers, leaves them out."""
    if "nightly" in (config.option.markexpr or "").replace("not nightly", ""):
        return
    kept = [item for item in items if item.get_closest_marker("nightly") is None]
    if len(kept) < len(items):
        config.hook.pytest_deselected(items=[i for i in items if i not in kept])
        items[:] = kept


def pytest_sessionfinish(session, exitstatus):
    """Under CI a skipped test is a failure: whatever it checks went unchecked."""
    if not IN_CI:
        return
    reporter = session.config.pluginmanager.get_plugin("terminalreporter")
    skipped = reporter.stats.get("skipped", []) if reporter else []
    if skipped:
        reporter.write_line(
            f"CI=true: {len(skipped)} skipped test(s) count as failures (see the reasons above).",
            red=True,
        )
        session.exitstatus = pytest.ExitCode.TESTS_FAILED


@pytest.fixture(scope="session")
def django_db_modify_db_settings(django_db_modify_db_settings_parallel_suffix):
    """Each worker's test database is a copy of one template migrated once (tests/template_db.py)."""
    from tests.template_db import template_database

    db = settings.DATABASES["default"]
    db.setdefault("TEST", {})["TEMPLATE"] = template_database(db)


# Table k (by name) numbers its rows from k * ID_SPACING on, not from 1 as a fresh database does.
ID_SPACING = 10_007


@pytest.fixture(scope="session")
def django_db_setup(django_db_setup, django_db_blocker):
    """The test database's tables number their rows apart from each other: a test that takes
    one table's id for another's (an item's for its proof's) finds no row instead of passing
    because both were 1, and no test leans on the small ids of a fresh database. A sequence
    never goes back (a reused database keeps what it has used)."""
    from django.db import connection

    with django_db_blocker.unblock(), connection.cursor() as cursor:
        # A test database need not outlive a crash of its server: its commits do not wait for
        # the disk (every process's connection, the live server's, the worker's, gunicorn's)
        name = connection.ops.quote_name(connection.settings_dict["NAME"])
        cursor.execute(f"ALTER DATABASE {name} SET synchronous_commit = off")
        cursor.execute("SET synchronous_commit = off")
        cursor.execute(
            "SELECT sequencename, COALESCE(last_value, 0) FROM pg_sequences"
            " WHERE schemaname = current_schema() ORDER BY sequencename"
        )
        for k, (name, last) in enumerate(cursor.fetchall(), start=1):
            cursor.execute("SELECT setval(%s, %s)", [name, max(last, k * ID_SPACING)])


@pytest.fixture(autouse=True)
def _cache_empty():
    """Each test starts with empty caches (log-in limits, throttles: counts of earlier tests
    would otherwise carry over; rendered texts)."""
    from django.core.cache import caches

    for cache in caches.all():
        cache.clear()


@pytest.fixture
def migrations(transactional_db):
    """Moves the test database's schema back and forth (tests/migrations.py). Whatever the test's
    end, the schema is back at every app's latest migration afterwards: a migration test that
    failed half-way once left the tests after it in its process on an old schema (39 failures)."""
    from tests import migrations as moves

    yield moves
    moves.migrate()


@pytest.fixture
def real_fixtures() -> Path:
    """The real sample files in ../shared/fixtures/real (never copied into this repository)."""
    if not FIXTURES_REAL.is_dir():
        pytest.skip(f"{FIXTURES_REAL} is absent: clone this repository beside ../shared")
    return FIXTURES_REAL


@pytest.fixture
def shared_dir() -> Path:
    if not SHARED.is_dir():
        pytest.skip(f"{SHARED} is absent: clone this repository beside ../shared")
    return SHARED


@pytest.fixture
def admin_user(db):
    return UserFactory(username="admin1", roles=["admin"])


@pytest.fixture
def expert_user(db):
    return UserFactory(username="expert1", roles=["expert"])


@pytest.fixture
def expert2_user(db):
    return UserFactory(username="expert2", roles=["expert"])


@pytest.fixture
def adjudicator_user(db):
    return UserFactory(username="adjudicator1", roles=["adjudicator"])


@pytest.fixture
def researcher_user(db):
    return UserFactory(username="researcher1", roles=["researcher"])


@pytest.fixture
def api_client_for():
    """api_client_for(user) -> a DRF client authenticated by the user's token."""
    from rest_framework.authtoken.models import Token
    from rest_framework.test import APIClient

    def make(user):
        client = APIClient()
        token, _ = Token.objects.get_or_create(user=user)
        client.credentials(HTTP_AUTHORIZATION=f"Token {token.key}")
        return client

    return make


# --- A real Celery worker process on Redis -------------------------------------------------


def _redis_url() -> str:
    return os.environ.get("CELERY_BROKER_URL", "")


@pytest.fixture(scope="session")
def celery_worker_process(django_db_setup, django_db_blocker):
    """Starts `celery worker` as a separate process on the Redis broker, against the test database.

    Tests using it must use `transactional_db` so that what they write is committed (and seen
    by the worker). Eager mode is off: jobs really cross the broker.
    """
    broker = _redis_url()
    if not broker.startswith("redis://"):
        pytest.skip("CELERY_BROKER_URL is not a redis:// URL: run the suite with `make test`")
    import redis

    redis.Redis.from_url(broker).flushdb()
    settings.RUN_DIR.mkdir(parents=True, exist_ok=True)  # one per xdist worker (tests/suite.py)
    log = (settings.RUN_DIR / "test-worker.log").open("w")  # noqa: SIM115 (closed at teardown)
    proc = celery_process("worker", env={"CELERY_BROKER_URL": broker}, log=log)
    from config.celery import app

    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise RuntimeError(f"the Celery worker exited at start: see {log.name}")
        if app.control.ping(timeout=0.5):
            break
    else:
        proc.terminate()
        raise RuntimeError("the Celery worker did not answer a ping within 60 s")
    yield proc
    proc.terminate()
    try:
        proc.wait(timeout=20)
    except subprocess.TimeoutExpired:
        proc.kill()
    log.close()


# The name the test workers' connections go by in pg_stat_activity (see pytest_runtest_teardown).
WORKER_APPLICATION = "proofmark-test-worker"
_workers_started = False


def worker_database_url() -> str:
    db = settings.DATABASES["default"]
    return (
        f"postgres://{db['USER']}@{db['HOST'] or '127.0.0.1'}:{db['PORT'] or 5432}/{db['NAME']}"
        f"?application_name={WORKER_APPLICATION}"
    )


@pytest.hookimpl(wrapper=True)
def pytest_runtest_teardown(item, nextitem):
    """Before a test's fixtures are torn down (a transactional test's flush TRUNCATEs every
    table), the test workers' database sessions still at work are ended. A worker started by an
    earlier test lives for the session and takes any job a later test queues, one that does not
    wait for it included (an import page's upload): its transaction and the flush's TRUNCATE then
    deadlocked, and PostgreSQL gave up the flush. The job belongs to a test that is over."""

    if _workers_started:
        worker_sessions_end()
    return (yield)


def worker_sessions_end() -> int:
    """Ends the test workers' sessions of the test database that are not idle (a query running,
    or a transaction open); returns how many."""
    import psycopg

    db = settings.DATABASES["default"]
    with psycopg.connect(
        dbname=db["NAME"],
        user=db["USER"],
        host=db["HOST"] or "127.0.0.1",
        port=db["PORT"] or 5432,
        autocommit=True,
    ) as conn:
        ended = conn.execute(
            "SELECT pg_terminate_backend(pid) FROM pg_stat_activity"
            " WHERE datname = current_database() AND application_name = %s"
            " AND state <> 'idle'",
            [WORKER_APPLICATION],
        ).fetchall()
    return len(ended)


def celery_process(command: str, *, env: dict, log) -> subprocess.Popen:
    """`celery worker` (threads) or `celery beat` in a process of its own, on the test database,
    eager mode off, `env` over the test's environment."""
    global _workers_started
    _workers_started = True
    queue = env.get("CELERY_TASK_DEFAULT_QUEUE", settings.CELERY_TASK_DEFAULT_QUEUE)
    options = {
        # the jobs' queues, all but rendering ahead's (queued by every test that makes items: it
        # would read the test database while a test's teardown empties it)
        "worker": [
            "--queues="
            + ",".join(
                (
                    queue,
                    *(
                        f"{queue}.{kind}"
                        for kind in ("imports", "exports", "models", "fits", "sweep", "webhooks")
                    ),
                )
            ),
            "--pool=threads",
            "--concurrency=8",
            "--without-heartbeat",
            "--without-gossip",
            "--without-mingle",
        ],
        "beat": [],
    }[command]
    return subprocess.Popen(
        [sys.executable, "-m", "celery", "-A", "config", command, "--loglevel=INFO", *options],
        cwd=ROOT,
        env={
            **os.environ,
            "DATABASE_URL": worker_database_url(),
            "CELERY_TASK_ALWAYS_EAGER": "false",
            # a webhook's retry comes after a fraction of a second, not 10 s (tests/webhooks/)
            "WEBHOOK_RETRY_SECONDS": "0.3",
            "WEBHOOK_TIMEOUT_SECONDS": "2",
            **env,
        },
        stdout=log,
        stderr=subprocess.STDOUT,
    )


def wait_for(predicate, timeout: float = 60.0, interval: float = 0.2):
    """Polls `predicate` until it returns something truthy; fails the test after `timeout` s."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = predicate()
        if value:
            return value
        time.sleep(interval)
    pytest.fail(f"condition not met within {timeout} s")


# --- A fake OpenAI-compatible server (tests/llm/fake_openai.py) ----------------------------


@pytest.fixture
def fake_llm():
    """A scripted OpenAI-compatible server on 127.0.0.1: `fake_llm.on(needle, *replies)`,
    `fake_llm.base_url` (ends in /v1), `fake_llm.log` (every request)."""
    from pytest_httpserver import HTTPServer

    from tests.llm.fake_openai import FakeOpenAI

    class QuickHTTPServer(HTTPServer):
        """Stops at once: serve_forever's default half-second poll made every stop wait 0.5 s."""

        def thread_target(self) -> None:
            self.server.serve_forever(poll_interval=0.01)

    server = QuickHTTPServer(host="127.0.0.1", port=0, threaded=True)
    server.start()
    fake = FakeOpenAI(server)
    yield fake
    fake.release()
    server.clear()
    server.stop()


@pytest.fixture
def dead_broker():
    """The Celery app pointed at a port where no broker listens, failing at once: neither Celery
    (task_publish_retry) nor the Redis client (max_retries) retries (restored afterwards)."""
    from config.celery import app

    saved = (
        app.conf.broker_write_url,
        app.conf.task_publish_retry,
        app.conf.broker_transport_options,
    )
    app.conf.broker_write_url = "redis://127.0.0.1:1/0"
    app.conf.task_publish_retry = False
    app.conf.broker_transport_options = {**saved[2], "max_retries": 0}
    app._pool = None
    app.amqp._producer_pool = None
    yield
    (
        app.conf.broker_write_url,
        app.conf.task_publish_retry,
        app.conf.broker_transport_options,
    ) = saved
    app._pool = None
    app.amqp._producer_pool = None


def as_job(kind_name: str, pk: int, body):
    """Runs a job's service as a worker does: claimed first by the job runner
    (jobs.services.job_run: status running, attempts + 1). Returns what `body` returned, or None
    when the claim found the job finished or alive elsewhere."""
    from jobs.services import job_run

    result = []
    job_run(kind_name, pk, lambda: result.append(body()))
    return result[0] if result else None
