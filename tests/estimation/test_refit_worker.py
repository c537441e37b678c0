"""A real Celery worker killed with SIGKILL in the middle of a rater-model refit: the fit, written
in one transaction, never half-lands (the old fit and every label's confidence stay as they
were), and celery beat's sweep has a new worker run the refit again to the end.

The refit is held mid-fit by a lock on the fit's table (the fit reads everything, computes, then
waits to write its model), so the kill lands inside the fit whatever the machine's speed; the
worker and beat run on a queue of their own (as tests/jobs/test_killed_worker.py)."""

import signal
from datetime import timedelta

import psycopg
import pytest
from django.db import connection
from django.utils import timezone

from adjudication.models import FinalLabel
from adjudication.services.labels import final_label_set
from estimation.models import RaterModelFit, RaterModelRefit
from estimation.services.confidence import campaign_rater_model_fit
from jobs.models import JobStatus
from tests.conftest import WORKER_APPLICATION, celery_process, wait_for, worker_database_url
from tests.exports.factories import graded_by_experts_and_graders

pytestmark = [pytest.mark.worker]


def waiting_on_a_lock() -> bool:
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT count(*) FROM pg_stat_activity WHERE datname = current_database()"
            " AND application_name = %s AND wait_event_type = 'Lock'",
            [WORKER_APPLICATION],
        )
        return cursor.fetchone()[0] > 0


def test_a_worker_killed_mid_refit_leaves_the_old_fit_and_the_refit_runs_again(
    transactional_db, tmp_path, settings
):
    if connection.vendor != "postgresql":
        pytest.skip("the lock that holds the fit is PostgreSQL's")
    campaign = graded_by_experts_and_graders()
    old = campaign_rater_model_fit(campaign_id=campaign.pk)
    label = FinalLabel.objects.filter(item__campaign=campaign, source="single").first()
    final_label_set(item=label.item, value=1 - label.value, source="adjudication", policy="kill",
                    grade_ids=[])  # fmt: skip
    before = dict(
        FinalLabel.objects.filter(item__campaign=campaign).values_list("item_id", "confidence")
    )
    # one refit whose message was lost long ago (sent to the session's queue): the sweep sends it
    RaterModelRefit.objects.all().delete()
    refit = RaterModelRefit.objects.create(
        campaign=campaign, changes=1, heartbeat_at=timezone.now() - timedelta(hours=1)
    )
    env = {
        "CELERY_BROKER_URL": "filesystem://",
        "CELERY_TASK_DEFAULT_QUEUE": "proofmark-refit-killed",
        "PROOFMARK_RUN_DIR": str(tmp_path / "run"),
        "JOB_HEARTBEAT_SECONDS": "0.5",
        "JOB_STALE_SECONDS": "3",
        "JOB_SWEEP_SECONDS": "1",
        "RATER_MODEL_REFIT_DEBOUNCE_SECONDS": "0.5",
    }
    lock = psycopg.connect(worker_database_url().replace("postgres://", "postgresql://"))
    lock.execute(f"LOCK TABLE {RaterModelFit._meta.db_table} IN ACCESS EXCLUSIVE MODE")
    logs = settings.RUN_DIR
    logs.mkdir(parents=True, exist_ok=True)
    with (
        (logs / "test-refit-killed-worker.log").open("w") as worker_log,
        (logs / "test-refit-killed-beat.log").open("w") as beat_log,
    ):
        beat = celery_process("beat", env=env, log=beat_log)
        worker = celery_process("worker", env=env, log=worker_log)
        try:
            wait_for(
                lambda: (
                    RaterModelRefit.objects.filter(
                        pk=refit.pk, status=JobStatus.RUNNING, attempts=1
                    ).exists()
                    and waiting_on_a_lock()
                ),
                timeout=90,
                interval=0.5,
            )
            worker.send_signal(signal.SIGKILL)  # mid-fit: computed, waiting to write
            worker.wait(timeout=10)
            lock.rollback()
            # the dead worker's transaction wrote nothing: the old fit stays whole
            kept = RaterModelFit.objects.get(campaign=campaign)
            assert kept.fitted_at == old.fitted_at
            assert (
                dict(
                    FinalLabel.objects.filter(item__campaign=campaign).values_list(
                        "item_id", "confidence"
                    )
                )
                == before
            )
            worker = celery_process("worker", env=env, log=worker_log)
            done = wait_for(
                lambda: RaterModelRefit.objects.filter(
                    pk=refit.pk, status__in=(JobStatus.SUCCEEDED, JobStatus.FAILED)
                ).first(),
                timeout=120,
                interval=0.5,
            )
        finally:
            lock.close()
            for process in (worker, beat):
                process.terminate()
                process.wait(timeout=20)
    assert (done.status, done.attempts) == (JobStatus.SUCCEEDED, 2), done.error
    assert RaterModelFit.objects.get(campaign=campaign).fitted_at > old.fitted_at
    assert RaterModelFit.objects.filter(campaign=campaign).count() == 1
