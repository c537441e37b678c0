"""Background jobs of the exports app: each takes an id and records its state on its row."""

from celery import shared_task

from exports.services.datasets import export_run
from exports.services.evaluations import evaluation_run, evaluation_run_fail


@shared_task(name="exports.export_run", acks_late=True)
def export_run_task(job_id: int) -> None:
    export_run(job_id=job_id)


@shared_task(name="exports.evaluation_run", acks_late=True)
def evaluation_run_task(evaluation_id: int) -> None:
    try:
        evaluation_run(evaluation_id=evaluation_id)
    except Exception as exc:
        evaluation_run_fail(evaluation_id=evaluation_id, reason=f"unexpected error: {exc}")
        raise
