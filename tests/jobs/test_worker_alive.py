"""On the filesystem broker (the embedded default, which cannot ping workers) a worker marks
itself alive with a file of its own: a waiting job's page can tell a dead worker from a busy one."""

import os
import signal

import pytest
from django.urls import reverse

from core import workers
from problems.models import ImportJob
from tests.conftest import celery_process, wait_for


@pytest.fixture
def filesystem_broker(settings, tmp_path):
    settings.CELERY_BROKER_URL = "filesystem://"
    settings.CELERY_TASK_ALWAYS_EAGER = False
    broker = tmp_path / "run" / "broker"  # as PROOFMARK_RUN_DIR=tmp_path/run lays it out
    settings.CELERY_BROKER_TRANSPORT_OPTIONS = {"control_folder": str(broker / "control")}
    settings.WORKER_ALIVE_SECONDS = 0.2
    return broker / "workers"


def test_a_marked_worker_is_alive_until_it_stops_or_falls_silent(filesystem_broker):
    assert workers.workers_alive() is False  # no worker ever marked
    workers.alive_marker_start(name="celery@host/1")
    try:
        (marker,) = filesystem_broker.iterdir()
        assert marker.name == f"celery@host_1-{os.getpid()}"
        assert workers.workers_alive() is True
    finally:
        workers.alive_marker_stop()
    assert not marker.exists() and workers.workers_alive() is False  # stopped: removed
    marker.touch()
    os.utime(marker, (marker.stat().st_mtime - 1, marker.stat().st_mtime - 1))
    assert workers.workers_alive() is False  # silent for five marks: gone


@pytest.mark.worker
@pytest.mark.django_db
def test_a_worker_killed_on_the_filesystem_broker_shows_on_a_waiting_job(
    client, admin_user, filesystem_broker, tmp_path
):
    env = {
        "CELERY_BROKER_URL": "filesystem://",
        "CELERY_TASK_DEFAULT_QUEUE": "proofmark-alive",
        "PROOFMARK_RUN_DIR": str(tmp_path / "run"),
        "WORKER_ALIVE_SECONDS": "0.2",
    }
    job = ImportJob.objects.create(original_name="rows.jsonl", format="proofbench", total=1)
    client.force_login(admin_user)
    url = reverse("problems:import-detail", args=[job.pk])
    with (tmp_path / "worker.log").open("w") as log:
        worker = celery_process("worker", env=env, log=log)
        try:
            (marker,) = wait_for(lambda: list(filesystem_broker.glob("*")), timeout=60)
            wait_for(lambda: workers.workers_alive(), timeout=5)
            assert f"-{worker.pid}" in marker.name
            assert 'id="no-worker"' not in client.get(url).content.decode()
            worker.send_signal(signal.SIGKILL)
            worker.wait(timeout=10)
        finally:
            if worker.poll() is None:
                worker.kill()
    assert marker.exists()  # nobody removed it: it goes stale
    wait_for(lambda: workers.workers_alive() is False, timeout=5)
    assert 'id="no-worker"' in client.get(url).content.decode()
