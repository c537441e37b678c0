"""Production processes: the readiness check, the JSON logs, and the Procfile's web and worker
processes run as on two machines (separate working and run folders) over shared storage."""

import json
import logging
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest
import requests
from django.conf import settings

from core.logging import JsonFormatter
from tests.conftest import ROOT, wait_for
from tests.exports.factories import labelled_campaign
from tests.factories import UserFactory
from tests.problems.import_files import proofbench_row

WEB_PORT = int(os.environ.get("PROOFMARK_TEST_WEB_PORT", "9610"))


def test_readiness_checks_the_database_and_the_broker(client, db, monkeypatch):
    from config.celery import app

    ready = client.get("/readyz")
    assert ready.status_code == 200
    assert ready.json() == {"database": "ok", "broker": "ok"}
    monkeypatch.setattr(app.conf, "broker_write_url", "redis://127.0.0.1:9/0")  # nothing there
    down = client.get("/readyz")
    assert down.status_code == 503
    body = down.json()
    assert body["database"] == "ok" and body["broker"] != "ok"
    assert client.get("/healthz").status_code == 200  # liveness does not depend on the broker


def test_a_command_loads_only_what_it_uses():
    """Django set up as a management command has it, then the export command's module: Celery
    and Kombu load on the first task sent (config/__init__.py), the model client and the scheme
    generation when an admin or a run asks, the apps' services when a format needs them; so a
    command's start-up is not spent on them."""
    probe = (
        "import sys, django; django.setup();"
        "import exports.management.commands.export_dataset;"
        "print(sorted(m for m in sys.modules if m.split('.')[0] in {'celery', 'kombu', 'openai'}"
        " or m in {'llm.client', 'rubrics.generation', 'rubrics.workflows',"
        " 'adjudication.services', 'annotation.services'}))"
    )
    env = {**os.environ, "DJANGO_SETTINGS_MODULE": "config.settings"}
    done = subprocess.run(
        [sys.executable, "-c", probe], cwd=ROOT, env=env, capture_output=True, text=True
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip().splitlines()[-1] == "[]"


def test_each_request_logs_one_json_line_with_its_request_id(client, db, caplog):
    caplog.set_level(logging.INFO, logger="proofmark.request")
    response = client.get("/healthz", HTTP_X_REQUEST_ID="lb-7f3a")
    assert response["X-Request-ID"] == "lb-7f3a"
    (record,) = [r for r in caplog.records if r.name == "proofmark.request"]
    line = json.loads(JsonFormatter().format(record))
    assert line["request_id"] == "lb-7f3a"
    assert (line["method"], line["path"], line["status"]) == ("GET", "/healthz", 200)
    assert line["level"] == "INFO" and line["duration_ms"] >= 0
    caplog.clear()
    made = client.get("/healthz", HTTP_X_REQUEST_ID="not an id\n")["X-Request-ID"]
    assert len(made) == 32 and made != "not an id\n"  # a malformed id is replaced


def test_task_logs_carry_the_job_id_and_attempt(db, caplog):
    # the app a worker loads (`celery -A config`): its signals write the task's log lines (the
    # test passed only after another test had imported it)
    import config.celery  # noqa: F401
    from problems.tasks import import_run

    caplog.set_level(logging.INFO, logger="proofmark.task")
    import_run.apply(args=[987654])  # no such job: the task returns at once
    lines = [json.loads(JsonFormatter().format(r)) for r in caplog.records]
    assert [line["message"] for line in lines] == [
        "task problems.tasks.import_run started",
        "task problems.tasks.import_run SUCCESS",
    ]
    assert all(line["job_id"] == 987654 and line["attempt"] == 1 for line in lines)


# --- The Procfile's processes, as on two machines ------------------------------------------


def procfile() -> dict[str, str]:
    lines = (ROOT / "Procfile").read_text().splitlines()
    return dict((part.strip() for part in line.split(":", 1)) for line in lines if line.strip())


def start(name: str, folder: Path, env: dict) -> subprocess.Popen:
    """Runs the Procfile's `name` line in `folder` (its working directory and run folder), the
    way a process manager does: `sh -c`, the virtualenv's bin first on PATH."""
    folder.mkdir(parents=True)
    env = {**env, "PROOFMARK_RUN_DIR": str(folder / ".run")}
    log = (folder / f"{name}.log").open("w")  # noqa: SIM115 (closed with the process)
    return subprocess.Popen(
        ["sh", "-c", "exec " + procfile()[name].replace("DEBUG=false ", "env DEBUG=false ", 1)],
        cwd=folder,
        env=env,
        stdout=log,
        stderr=subprocess.STDOUT,
    )


def stop(proc: subprocess.Popen) -> None:
    proc.terminate()
    try:
        proc.wait(timeout=30)
    except subprocess.TimeoutExpired:
        proc.kill()


def files_in(folder: Path) -> set[str]:
    return {str(p.relative_to(folder)) for p in folder.rglob("*") if p.is_file()}


@pytest.mark.worker
def test_web_and_worker_in_separate_folders_share_files_only_through_storage(
    transactional_db, tmp_path
):
    broker = os.environ.get("CELERY_BROKER_URL", "")
    if not broker.startswith("redis://"):
        pytest.skip("CELERY_BROKER_URL is not a redis:// URL: run the suite with `make test`")
    assert procfile()["web"].split()[1] == "gunicorn"
    db = settings.DATABASES["default"]
    shared = tmp_path / "shared-volume"
    env = {
        **os.environ,
        "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}",
        "PYTHONPATH": str(ROOT),  # the code, as installed on each machine
        "DATABASE_URL": f"postgres://{db['USER']}@{db['HOST'] or '127.0.0.1'}:"
        f"{db['PORT'] or 5432}/{db['NAME']}",
        "CELERY_BROKER_URL": broker,
        # a queue of its own, so that the suite's other worker never takes these jobs
        "CELERY_TASK_DEFAULT_QUEUE": f"deploy-test-{os.getpid()}",
        "CELERY_TASK_ALWAYS_EAGER": "false",
        "MEDIA_ROOT": str(shared),
        "SECRET_KEY": "deploy-test-key",
        "ALLOWED_HOSTS": "127.0.0.1",
        "PORT": str(WEB_PORT),
        "WEB_CONCURRENCY": "1",
    }
    env.pop("DEBUG", None)
    admin = UserFactory(username="deploy-admin", roles=["admin", "researcher"])
    from rest_framework.authtoken.models import Token

    headers = {"Authorization": f"Token {Token.objects.create(user=admin).key}"}
    corpus = labelled_campaign(slug="deploy-pilot")
    web = start("web", tmp_path / "web-machine", env)
    worker = start("worker", tmp_path / "worker-machine", env)
    base = f"http://127.0.0.1:{WEB_PORT}"
    try:

        def answers():
            try:
                return requests.get(f"{base}/readyz", timeout=30).status_code == 200
            except requests.ConnectionError:
                assert web.poll() is None, (tmp_path / "web-machine" / "web.log").read_text()
                return False

        wait_for(answers, timeout=60)
        rows = "".join(json.dumps(proofbench_row(n)) + "\n" for n in (1, 2))
        upload = requests.post(
            f"{base}/api/v1/imports/",
            headers=headers,
            files={"file": ("rows.jsonl", rows.encode())},
            data={"format": "proofbench"},
            timeout=30,
        )
        assert upload.status_code == 202, upload.text
        status_url = f"{base}/api/v1/imports/{upload.json()['id']}/"

        def imported():
            body = requests.get(status_url, headers=headers, timeout=30).json()
            return body if body["status"] in ("succeeded", "failed") else None

        job = wait_for(imported, timeout=120)
        assert job["status"] == "succeeded", job
        created = requests.post(
            f"{base}/api/v1/exports/",
            headers=headers,
            json={"campaign": corpus.campaign.slug, "format": "dv", "file_type": "jsonl"},
            timeout=30,
        )
        assert created.status_code == 201, created.text
        export_url = f"{base}/api/v1/exports/{created.json()['id']}/"

        def exported():
            body = requests.get(export_url, headers=headers, timeout=30).json()
            return body if body["status"] in ("succeeded", "failed") else None

        export = wait_for(exported, timeout=120)
        assert export["status"] == "succeeded", export
        download = requests.get(f"{export_url}download/", headers=headers, timeout=30)
        assert download.status_code == 200
        assert len(download.content.splitlines()) == export["processed"] == 3
    finally:
        stop(web)
        stop(worker)
    # The export's files (its grades used a scheme's checklist, so the checkpoint figures go
    # beside the data) are on the shared volume, nowhere else; the upload was read there by the
    # worker and removed when its job ended (the retention rule).
    stored = files_in(shared)
    assert not [name for name in stored if name.endswith("rows.jsonl")]
    assert {Path(name).name for name in stored if name.startswith("exports/")} == {
        "deploy-pilot-dv.jsonl",
        "deploy-pilot-dv.jsonl.manifest.json",
        "deploy-pilot-dv.jsonl.README.md",
        "deploy-pilot-dv.jsonl.checkpoints.csv",
    }
    for machine in ("web-machine", "worker-machine"):
        local = files_in(tmp_path / machine)
        assert not [name for name in local if "rows.jsonl" in name or "deploy-pilot" in name]
    # Production logs: JSON lines, the request id on the web's, the job id on the worker's.
    web_lines = (tmp_path / "web-machine" / "web.log").read_text().splitlines()
    requests_logged = [json.loads(line) for line in web_lines if '"proofmark.request"' in line]
    assert requests_logged and all(len(line["request_id"]) == 32 for line in requests_logged)
    worker_lines = (tmp_path / "worker-machine" / "worker.log").read_text().splitlines()
    tasks = [json.loads(line) for line in worker_lines if '"proofmark.task"' in line]
    assert {line["job_id"] for line in tasks} >= {job["id"], export["id"]}


@pytest.mark.django_db(transaction=True)
def test_readiness_fails_while_no_new_database_connection_can_be_had(client, settings):
    """The server's connections used up (a role's CONNECTION LIMIT reached, as max_connections
    is under load): this process's kept connection still works, but /readyz says 503 until a new
    one opens again; a server that never answers is 503 within the bound too."""
    import socket

    import psycopg
    from django.db import connection

    with connection.cursor() as cursor:
        cursor.execute("DROP ROLE IF EXISTS readyz_probe")
        cursor.execute("CREATE ROLE readyz_probe LOGIN CONNECTION LIMIT 1")
    params = dict(connection.settings_dict)
    try:
        connection.settings_dict["USER"] = "readyz_probe"
        holder = psycopg.connect(
            host=params["HOST"], port=params["PORT"], dbname=params["NAME"], user="readyz_probe"
        )
        try:
            busy = client.get("/readyz")
            assert busy.status_code == 503
            assert "too many connections" in busy.json()["database"]
        finally:
            holder.close()
        # the server ends the closed connection's backend a moment later: until it has, the
        # role's one connection is still taken (a loaded machine, 2026-12-06)
        with psycopg.connect(
            host=params["HOST"], port=params["PORT"], dbname=params["NAME"], user=params["USER"]
        ) as watcher:
            deadline = time.monotonic() + 10
            while watcher.execute(
                "SELECT count(*) FROM pg_stat_activity WHERE usename = 'readyz_probe'"
            ).fetchone()[0]:
                assert time.monotonic() < deadline, "the probe's backend never ended"
                time.sleep(0.02)
        assert client.get("/readyz").status_code == 200

        silent = socket.socket()
        silent.bind(("127.0.0.1", 0))
        silent.listen(1)  # accepts, never answers
        connection.settings_dict["HOST"], connection.settings_dict["PORT"] = silent.getsockname()
        started = time.monotonic()
        stuck = client.get("/readyz")
        assert stuck.status_code == 503 and time.monotonic() - started < 10
        silent.close()
    finally:
        connection.settings_dict.update(params)
        connection.close()
        with connection.cursor() as cursor:
            cursor.execute("DROP ROLE IF EXISTS readyz_probe")


def test_gunicorns_forwarded_addresses_follow_the_trusted_proxies_and_no_control_socket():
    import runpy

    def loaded(**env):
        saved = dict(os.environ)
        os.environ.update(env)
        try:
            return runpy.run_path(str(ROOT / "config" / "gunicorn.py"))
        finally:
            os.environ.clear()
            os.environ.update(saved)

    assert loaded(TRUSTED_PROXIES="")["forwarded_allow_ips"] == ""  # not gunicorn's localhost
    assert loaded(TRUSTED_PROXIES="10.0.0.0/8, 192.168.1.5")["forwarded_allow_ips"] == (
        "10.0.0.0/8,192.168.1.5"
    )
    one = loaded(TRUSTED_PROXIES="1")
    assert one["forwarded_allow_ips"] == "*" and one["proxy_allow_ips"] == "*"
    assert one["control_socket_disable"] is True
