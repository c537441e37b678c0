"""Background jobs of the estimation app: the debounced refit of a campaign's rater model
(estimation.services.refit). It takes the refit's id, is idempotent, and retries only the
database's transient errors, with backoff; the last try records the failure on the row."""

from celery import shared_task
from django.conf import settings
from django.db import OperationalError

from estimation.services.refit import (
    rater_model_refit_busy,
    rater_model_refit_fail,
    rater_model_refit_run,
)
from jobs.services import job_run, retry_countdown

MAX_RETRIES = 3
# the database's transient errors pass in seconds, not a provider's minutes: 5 s, 10 s, 20 s
FIRST_RETRY_SECONDS = 5


@shared_task(
    name="estimation.rater_model_refit", bind=True, max_retries=MAX_RETRIES, acks_late=True
)
def rater_model_refit_task(self, refit_id: int) -> None:
    if rater_model_refit_busy(refit_id=refit_id):
        # another refit of the campaign still fits: this one runs after it, on a message of its
        # own (not a retry: the wait is no failure)
        self.apply_async((refit_id,), countdown=settings.RATER_MODEL_REFIT_DEBOUNCE_SECONDS)
        return

    def body() -> None:
        try:
            rater_model_refit_run(refit_id=refit_id)
        except OperationalError as exc:
            if self.request.retries >= MAX_RETRIES:
                rater_model_refit_fail(
                    refit_id=refit_id, reason=f"the database was unavailable: {exc}"
                )
                return
            raise self.retry(
                exc=exc, countdown=retry_countdown(self.request.retries, first=FIRST_RETRY_SECONDS)
            ) from exc
        except Exception as exc:
            rater_model_refit_fail(refit_id=refit_id, reason=f"the fit stopped: {exc!r}")
            raise

    job_run("rater_model_refit", refit_id, body)
