"""jobs.services.job_send_on_commit: the one way a service sends its job."""

import pytest

from jobs.services import job_send_on_commit
from problems.models import ImportJob

pytestmark = pytest.mark.django_db


def test_nothing_is_sent_before_the_row_commits_and_a_refused_message_fails_the_row(
    dead_broker, django_capture_on_commit_callbacks
):
    jobs = [ImportJob.objects.create(original_name=f"{n}.jsonl", file="") for n in "ab"]
    with django_capture_on_commit_callbacks(execute=False) as callbacks:
        job_send_on_commit("import", [job.pk for job in jobs])
    assert len(callbacks) == 1  # waits for the commit
    assert all(job.status == ImportJob.Status.PENDING for job in jobs)
    callbacks[0]()
    for job in jobs:  # each row failed with the reason, the second still tried
        job.refresh_from_db()
        assert job.status == ImportJob.Status.FAILED
        assert "could not be queued (is the Celery broker up?)" in job.error


def test_a_sent_job_runs_its_kind_task_by_name(settings, django_capture_on_commit_callbacks):
    """With eager tasks (a deployment's test settings), the task found by the kind's registered
    name runs the job: the service needs no import of its tasks module."""
    settings.CELERY_TASK_ALWAYS_EAGER = True
    from config.celery import app

    app.conf.task_always_eager = True
    try:
        job = ImportJob.objects.create(original_name="missing.jsonl", file="")
        with django_capture_on_commit_callbacks(execute=True):
            job_send_on_commit("import", [job.pk])
    finally:
        app.conf.task_always_eager = False
    job.refresh_from_db()
    assert job.status == ImportJob.Status.FAILED  # the run read the row: it has no file
    assert job.error
