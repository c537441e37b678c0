"""Background jobs of the rubrics app: one Celery job per problem of a generation run."""

from celery import shared_task

from jobs.services import job_run, retry_countdown
from llm.client import LLMTransientError

from .generation import generation_task_execute

MAX_RETRIES = 3


@shared_task(bind=True, max_retries=MAX_RETRIES, acks_late=True)
def generate_scheme(self, task_id: int) -> None:
    """Generates the scheme of one GenerationTask. Idempotent (a done task is skipped, its
    scheme created once); a provider that is still rate-limiting or failing after the client's
    own retries gets the job retried later, and the last try records the failure."""
    final = self.request.retries >= self.max_retries

    def body() -> None:
        try:
            generation_task_execute(task_id=task_id, final_attempt=final)
        except LLMTransientError as exc:
            raise self.retry(exc=exc, countdown=retry_countdown(self.request.retries)) from exc

    job_run("scheme_generation", task_id, body)
