"""The one claim of every job kind (jobs.services._take): a compare-and-set to running with
attempts + 1, so that of two copies of one message only the first runs the job."""

import threading
from datetime import timedelta

import pytest
from django.db import connection
from django.utils import timezone

from exports.models import ExportJob
from jobs.kinds import KINDS
from jobs.services import _take
from tests.exports.factories import labelled_campaign
from tests.factories import UserFactory


def waiting_export() -> ExportJob:
    return ExportJob.objects.create(
        campaign=labelled_campaign().campaign,
        format="dv",
        file_type="csv",
        created_by=UserFactory(roles=["researcher"]),
    )


@pytest.mark.django_db
def test_a_second_claim_of_a_waiting_job_takes_nothing():
    job = waiting_export()
    assert _take(KINDS["export"], job.pk) is True
    assert _take(KINDS["export"], job.pk) is False
    job.refresh_from_db()
    assert (job.status, job.attempts) == ("running", 1)


@pytest.mark.django_db
def test_a_running_job_whose_heartbeat_went_stale_is_claimed_again():
    job = waiting_export()
    assert _take(KINDS["export"], job.pk)
    ExportJob.objects.filter(pk=job.pk).update(heartbeat_at=timezone.now() - timedelta(hours=1))
    assert _take(KINDS["export"], job.pk)
    job.refresh_from_db()
    assert (job.status, job.attempts) == ("running", 2)
    ExportJob.objects.filter(pk=job.pk).update(status="failed")
    assert not _take(KINDS["export"], job.pk)


@pytest.mark.django_db(transaction=True)
def test_two_claims_at_once_take_the_job_once():
    job = waiting_export()
    start, results = threading.Barrier(2), []

    def claim():
        try:
            start.wait()
            results.append(_take(KINDS["export"], job.pk))
        finally:
            connection.close()

    threads = [threading.Thread(target=claim) for _ in range(2)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert sorted(results) == [False, True]
    assert ExportJob.objects.get(pk=job.pk).attempts == 1


def test_every_job_kind_has_a_queue_of_its_kind_of_work(settings):
    """Imports, exports, model runs and sweeps each have their own queue (an export never waits
    behind a verifier run); a task of no kind named falls back to the default queue."""
    from jobs.kinds import KINDS
    from jobs.services import queue_of

    queues = {name: queue_of(kind.task) for name, kind in KINDS.items()}
    assert queues["import"] == settings.WORK_QUEUES["imports"]
    assert queues["export"] == settings.WORK_QUEUES["exports"]
    for name in ("scheme_generation", "verifier_run", "labelling", "grader_evaluation"):
        assert queues[name] == settings.WORK_QUEUES["models"]
    assert queues["rater_model_refit"] == settings.WORK_QUEUES["fits"]
    assert queue_of("jobs.sweep") == settings.WORK_QUEUES["sweep"]
    assert queue_of("no.such.task") == settings.CELERY_TASK_DEFAULT_QUEUE
