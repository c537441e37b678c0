"""Background jobs of the adjudication app: verifier runs and the automated labelling loop.
Each job takes ids, is idempotent, and retries only a provider's transient errors, with
backoff; the last try records the failure on the row the page reads."""

from celery import shared_task

from adjudication.verification import labelling, verifier_runs
from jobs.services import job_run, retry_countdown
from llm.client import LLMTransientError

MAX_RETRIES = 3


@shared_task(bind=True, max_retries=MAX_RETRIES, acks_late=True)
def verifier_run_job(self, run_id: int) -> None:
    final = self.request.retries >= self.max_retries

    def body() -> None:
        try:
            verifier_runs.verifier_run_execute(run_id=run_id, final_attempt=final)
        except LLMTransientError as exc:
            raise self.retry(exc=exc, countdown=retry_countdown(self.request.retries)) from exc
        except Exception as exc:
            verifier_runs.verifier_run_fail(run_id=run_id, reason=f"unexpected error: {exc}")
            raise

    job_run("verifier_run", run_id, body)


@shared_task(bind=True, max_retries=MAX_RETRIES, acks_late=True)
def labelling_outcome_job(self, outcome_id: int) -> None:
    final = self.request.retries >= self.max_retries

    def body() -> None:
        try:
            labelling.labelling_outcome_execute(outcome_id=outcome_id, final_attempt=final)
        except LLMTransientError as exc:
            raise self.retry(exc=exc, countdown=retry_countdown(self.request.retries)) from exc
        except Exception as exc:
            labelling.labelling_outcome_fail(
                outcome_id=outcome_id, reason=f"unexpected error: {exc}"
            )
            raise

    job_run("labelling", outcome_id, body)
