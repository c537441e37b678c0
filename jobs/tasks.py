"""The sweep, sent by celery beat every JOB_SWEEP_SECONDS (config.settings.CELERY_BEAT_SCHEDULE)."""

from celery import shared_task

from jobs.services import jobs_sweep


@shared_task(name="jobs.sweep", ignore_result=True)
def jobs_sweep_task() -> None:
    jobs_sweep()
