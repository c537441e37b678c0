"""The Celery broker, asked before a job is made: while it cannot be reached, creating a job is
refused with 503 and the reason (nothing is saved), and everything that needs no job carries on.
`/readyz` asks the same question."""

from django.conf import settings
from django.utils.module_loading import import_string
from rest_framework import status
from rest_framework.exceptions import APIException


class BrokerUnavailable(APIException):
    """503: the job queue cannot be reached (pages show it as a 503 page, core.errors)."""

    status_code = status.HTTP_503_SERVICE_UNAVAILABLE
    default_code = "broker_unavailable"


def celery_app():
    """The Celery app the settings name (`TASK_APP`, config.celery's), loaded on first use:
    `config/__init__.py` does not import it, so a command or a request that queues nothing never
    loads Celery and Kombu."""
    return import_string(settings.TASK_APP)


def broker_problem() -> str | None:
    """None when the broker accepts a connection, else what went wrong, in words."""
    try:
        with celery_app().connection_for_write() as broker:
            broker.ensure_connection(max_retries=1, interval_start=0, timeout=2)
    except Exception as exc:  # noqa: BLE001 (any failure to connect is the answer)
        return f"{type(exc).__name__}: {exc}"
    return None


def broker_refusal(exc: Exception) -> str:
    """The reason given for a job refused because the broker is away (BrokerUnavailable's own, or
    Kombu's error when the broker went away between the check and the send)."""
    if isinstance(exc, BrokerUnavailable):
        return str(exc.detail)
    return f"The job queue (Celery broker) cannot be reached: try again in a minute. ({exc})"


def broker_require() -> None:
    """Raises BrokerUnavailable unless the broker answers. Call it inside the transaction that
    makes the job, before the job is sent: the refusal rolls the job back. Jobs run inside the
    request (CELERY_TASK_ALWAYS_EAGER, tests) need no broker."""
    if settings.CELERY_TASK_ALWAYS_EAGER:
        return
    problem = broker_problem()
    if problem is not None:
        raise BrokerUnavailable(
            "The job queue (Celery broker) cannot be reached, so no job was created: try again "
            f"in a minute. Grading and reading need no queue and go on working. ({problem})"
        )
