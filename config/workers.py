"""Whether a Celery worker is there to run queued jobs, for pages where a job waits: a job
that waits with no worker alive says so instead of waiting in silence."""

from __future__ import annotations

from django.conf import settings
from django.core.cache import cache
from kombu.exceptions import OperationalError

PING_TIMEOUT = 0.5
CACHE_SECONDS = 10
CACHE_KEY = "proofmark:workers-alive"
BROADCAST_BROKERS = ("redis://", "rediss://", "amqp://", "amqps://")


def workers_alive() -> bool | None:
    """True when a worker answers a ping, False when none does; None when it cannot be told
    (eager mode runs jobs in the web process; the filesystem broker has no broadcast; the broker
    is down, which the job itself reports). Cached for a few seconds: pages poll every second.
    The ping goes through the broker the settings name now (workers listen on the same one)."""
    if settings.CELERY_TASK_ALWAYS_EAGER or not settings.CELERY_BROKER_URL.startswith(
        BROADCAST_BROKERS
    ):
        return None
    alive = cache.get(CACHE_KEY)
    if alive is None:
        from config.celery import app

        try:
            with app.connection_for_write(
                settings.CELERY_BROKER_URL,
                transport_options=settings.CELERY_BROKER_TRANSPORT_OPTIONS,
            ) as connection:
                alive = bool(app.control.ping(timeout=PING_TIMEOUT, connection=connection))
        except (OperationalError, OSError):
            return None
        cache.set(CACHE_KEY, alive, CACHE_SECONDS)
    return alive
