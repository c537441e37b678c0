"""The sweep, sent by every celery beat every JOB_SWEEP_SECONDS (config.settings.CELERY_BEAT_SCHEDULE),
run once a period whatever the number of beats."""

from celery import shared_task

from jobs.services import jobs_sweep, sweep_turn_take


@shared_task(name="jobs.sweep", ignore_result=True)
def jobs_sweep_task() -> None:
    """Sweeps unless another beat's message swept within this period (jobs.services)."""
    if sweep_turn_take():
        jobs_sweep()
