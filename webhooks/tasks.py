"""Background jobs of the webhooks app: sending one delivery (webhooks.services), on the
`webhooks` queue. It takes the delivery's id and is idempotent (a delivered or failed delivery
is left alone by the job runner); a transient failure (no connection, a timeout, a 5xx or 429)
is tried again after WEBHOOK_RETRY_SECONDS, doubling, up to WEBHOOK_MAX_ATTEMPTS tries."""

from celery import shared_task

from jobs.services import job_run
from webhooks.services import delivery_attempt, retry_delay


@shared_task(name="webhooks.delivery_send", bind=True, max_retries=None, acks_late=True)
def delivery_send_task(self, delivery_id: int) -> None:
    def body() -> None:
        outcome = delivery_attempt(delivery_id=delivery_id)
        if outcome.state == "retry":
            # the tries are counted on the row (attempts), not by Celery: a replay or a sweep's
            # restart starts its own count
            raise self.retry(countdown=retry_delay(outcome.number))

    job_run("webhook_delivery", delivery_id, body)
