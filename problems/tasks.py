"""Background jobs of the corpus."""

from celery import shared_task
from django.db import OperationalError

from jobs.services import job_run
from problems.services import import_job_fail, import_job_run, texts_prerender

MAX_RETRIES = 3


@shared_task(bind=True, max_retries=MAX_RETRIES, acks_late=True)
def import_run(self, job_id: int) -> None:
    """Runs an import job; retries (with backoff) only when the database connection fails."""

    def body() -> None:
        try:
            import_job_run(job_id=job_id)
        except OperationalError as exc:
            if self.request.retries >= MAX_RETRIES:
                import_job_fail(job_id=job_id, message=f"The database was unavailable: {exc}")
                return
            raise self.retry(exc=exc, countdown=5 * 2**self.request.retries) from exc
        except Exception as exc:
            import_job_fail(job_id=job_id, message=f"The import stopped: {exc!r}")
            raise

    job_run("import", job_id, body)


@shared_task(ignore_result=True)
def texts_prerender_run(proof_ids: list[int]) -> None:
    """Renders the proofs' texts ahead (a cache's warming: no job row; lost, the page renders)."""
    texts_prerender(proof_ids=proof_ids)
