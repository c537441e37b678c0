"""Background jobs of the exports app: each takes an id and records its state on its row
(jobs.services.job_run: skipped when finished or alive elsewhere, a heartbeat while it runs)."""

from celery import shared_task

from exports.services.datasets import export_run
from jobs.services import job_run


@shared_task(name="exports.export_run", acks_late=True)
def export_run_task(job_id: int) -> None:
    job_run("export", job_id, lambda: export_run(job_id=job_id))
