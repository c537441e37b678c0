"""Whether a Celery worker is there to run queued jobs, for pages where a job waits: a job
that waits with no worker alive says so instead of waiting in silence. Workers on a broker
with broadcast (Redis, AMQP) answer pings; on the filesystem broker (the embedded default) each
worker keeps a file of its own fresh."""

from __future__ import annotations

import os
import re
import time
from collections.abc import Callable
from functools import partial
from pathlib import Path

from django.conf import settings
from django.core.cache import cache
from kombu.exceptions import OperationalError

from core.threads import every

PING_TIMEOUT = 0.5
CACHE_SECONDS = 10
CACHE_KEY = "proofmark:workers-alive"
BROADCAST_BROKERS = ("redis://", "rediss://", "amqp://", "amqps://")


def _on_filesystem() -> bool:
    return settings.CELERY_BROKER_URL.startswith("filesystem")


def _alive_folder() -> Path:
    """broker/workers in the run directory, beside the filesystem broker's other folders."""
    return Path(settings.CELERY_BROKER_TRANSPORT_OPTIONS["control_folder"]).parent / "workers"


_markers: list[Callable[[], None]] = []  # the stops of this process's markers


def alive_marker_start(*, name: str) -> None:
    """On the filesystem broker, while this worker runs: its file in broker/workers touched
    every WORKER_ALIVE_SECONDS (removed when it stops; left to go stale when it is killed).
    Other brokers answer pings instead."""
    if not _on_filesystem():
        return
    folder = _alive_folder()
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"{re.sub(r'[^A-Za-z0-9._@-]', '_', name)}-{os.getpid()}"
    path.touch()
    _markers.append(
        every(
            settings.WORKER_ALIVE_SECONDS,
            path.touch,
            name="proofmark-alive",
            last=partial(path.unlink, missing_ok=True),
        )
    )


def alive_marker_stop() -> None:
    while _markers:
        _markers.pop()()


def _alive_on_filesystem() -> bool:
    fresh = time.time() - 3 * settings.WORKER_ALIVE_SECONDS
    for path in _alive_folder().glob("*"):
        try:
            if path.stat().st_mtime >= fresh:
                return True
        except FileNotFoundError:  # its worker stopped while we looked
            continue
    return False


def workers_alive() -> bool | None:
    """True when a worker answers a ping (on the filesystem broker: has touched its file in
    broker/workers lately), False when none does; None when it cannot be told (eager mode runs
    jobs in the web process; a broker without broadcast but the filesystem one; the broker is
    down, which the job itself reports). Pings are cached for a few seconds: pages poll every
    second. The ping goes through the broker the settings name now (workers listen there)."""
    if settings.CELERY_TASK_ALWAYS_EAGER:
        return None
    if _on_filesystem():
        return _alive_on_filesystem()
    if not settings.CELERY_BROKER_URL.startswith(BROADCAST_BROKERS):
        return None
    alive = cache.get(CACHE_KEY)
    if alive is None:
        from core.broker import celery_app

        app = celery_app()
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
