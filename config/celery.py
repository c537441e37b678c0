import logging
import os
import time

from celery import Celery
from celery.signals import task_postrun, task_prerun, worker_ready, worker_shutdown
from django.conf import settings
from kombu import Queue

from core import workers
from core.logging import log_context

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
# A job's bounds on a statement and on a wait for a lock (config/settings.py), longer than a web
# request's: they apply where this module configures the settings, the worker and beat (a web
# process has read its settings before it sends a task).
os.environ.setdefault("DB_STATEMENT_TIMEOUT", "30min")
os.environ.setdefault("DB_LOCK_TIMEOUT", "2min")

app = Celery("proofmark")
app.config_from_object("django.conf:settings", namespace="CELERY")
app.conf.task_queues = [Queue(name) for name in settings.TASK_QUEUES]
app.autodiscover_tasks()

logger = logging.getLogger("proofmark.task")


def _job_id(args, kwargs):
    """Tasks take ids: the job's is the first argument (or a `*_id` keyword)."""
    if args:
        return args[0]
    return next((value for key, value in (kwargs or {}).items() if key.endswith("_id")), None)


@task_prerun.connect
def _task_log_start(task_id=None, task=None, args=None, kwargs=None, **_):
    context = {
        "task": task.name,
        "task_id": task_id,
        "job_id": _job_id(args, kwargs),
        "attempt": task.request.retries + 1,
    }
    task.request.proofmark_log = (log_context.set(context), time.perf_counter())
    logger.info("task %s started", task.name)


@task_postrun.connect
def _task_log_end(task=None, state=None, **_):
    token, started = getattr(task.request, "proofmark_log", (None, None))
    if token is None:
        return
    logger.info(
        "task %s %s",
        task.name,
        state,
        extra={"state": state, "duration_ms": round((time.perf_counter() - started) * 1000, 2)},
    )
    log_context.reset(token)


@worker_ready.connect
def _worker_marks_itself_alive(sender=None, **_):
    workers.alive_marker_start(name=getattr(sender, "hostname", "worker"))


@worker_shutdown.connect
def _worker_stops_marking(**_):
    workers.alive_marker_stop()
