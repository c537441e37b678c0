import gc
import logging
import os
import time

from celery import Celery
from celery.signals import (
    beat_init,
    task_postrun,
    task_prerun,
    worker_init,
    worker_process_init,
    worker_ready,
    worker_shutdown,
)
from django.conf import settings
from kombu import Queue

from core import workers
from core.logging import log_context

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")

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


# A job's bounds on a statement and on a wait for a lock, longer than a web request's
# (config/settings.py DB_STATEMENT_TIMEOUT, DB_LOCK_TIMEOUT, which win where they are set).
JOB_STATEMENT_TIMEOUT, JOB_LOCK_TIMEOUT = "30min", "2min"


@worker_init.connect
@beat_init.connect
def _job_database_bounds(**_):
    """The worker's and beat's connections take the jobs' bounds, set before the first one
    opens (only in those processes: a web process that sends a task keeps its own)."""
    from django.db import connections

    statement = os.environ.get("DB_STATEMENT_TIMEOUT") or JOB_STATEMENT_TIMEOUT
    lock = os.environ.get("DB_LOCK_TIMEOUT") or JOB_LOCK_TIMEOUT
    bounds = " ".join(
        f"-c {name}={value}"
        for name, value in (("statement_timeout", statement), ("lock_timeout", lock))
        if value != "0"
    )
    for connection in connections.all():
        connection.close()
        if bounds:
            connection.settings_dict["OPTIONS"]["options"] = bounds
        else:
            connection.settings_dict["OPTIONS"].pop("options", None)


@worker_process_init.connect
@worker_ready.connect
def _worker_heap_frozen(**_):
    """What the worker has loaded (every app and task module) leaves the garbage collector's
    generations, as in the web process (config/wsgi.py): a full pass during a job then walks only
    the job's objects. In a pool process (prefork) and in the worker itself (the thread and solo
    pools run jobs there). A 20,000-row import in a process holding the worker's modules: its full
    passes 0.32-0.38 -> 0.02 CPU-s, the import 2.1-2.3 -> 1.9-2.0 CPU-s; the `worker` process over
    an API upload of it, three alternating pairs, 1.85 / 2.39 / 1.71 -> 1.91 / 1.81 / 1.50 CPU-s
    (benchmarks/RESULTS.md, issue 40)."""
    gc.freeze()


@worker_ready.connect
def _worker_marks_itself_alive(sender=None, **_):
    workers.alive_marker_start(name=getattr(sender, "hostname", "worker"))


@worker_shutdown.connect
def _worker_stops_marking(**_):
    workers.alive_marker_stop()
