"""Liveness of background jobs: a run claims its job and beats while it works; the sweep re-queues
the jobs whose worker stopped, or fails them with the reason after their last attempt.

Bound: a job whose worker dies is queued again (or failed) at most JOB_STALE_SECONDS +
JOB_SWEEP_SECONDS after its last heartbeat (defaults 120 + 60 s: 3 minutes). The sweep reads
only the database, so it works whatever the broker did with the message: the filesystem broker
has deleted it, Redis keeps it unacknowledged for an hour (a late copy finds the job finished or
alive and does nothing).
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from functools import partial

from django.conf import settings
from django.db import DatabaseError, connection, transaction
from django.db.models import F, Q
from django.utils import timezone

from core.broker import celery_app
from core.signals import send_on_commit
from core.threads import every
from jobs.kinds import KINDS, RUNNING, JobKind
from jobs.models import JobStatus
from jobs.signals import job_failed

logger = logging.getLogger(__name__)


def stale_after() -> timedelta:
    return timedelta(seconds=settings.JOB_STALE_SECONDS)


# --- A run -------------------------------------------------------------------------------------


def _take(kind: JobKind, pk: int) -> bool:
    """The one claim of every job kind: a compare-and-set of the row to running, attempts + 1,
    heartbeat now, in one UPDATE that holds only while the job waits, or runs with a stale
    heartbeat (its worker died). False when it is finished (or gone) or running elsewhere with a
    fresh heartbeat: of two copies of one message, the second finds the row changed and does
    nothing (PostgreSQL re-reads a row another transaction updated before it updates it)."""
    now = timezone.now()
    status = kind.status_field
    claimable = Q(**{f"{status}__in": kind.waiting}) | Q(
        Q(heartbeat_at__isnull=True) | Q(heartbeat_at__lt=now - stale_after()),
        **{status: RUNNING},
    )
    claimed = kind.model.objects.filter(claimable, pk=pk).update(
        **{status: RUNNING}, attempts=F("attempts") + 1, heartbeat_at=now
    )
    return claimed == 1


def _heartbeat_start(kind: JobKind, pk: int) -> Callable[[], None]:
    """Renews the row's heartbeat every JOB_HEARTBEAT_SECONDS while the job runs (a thread,
    `core.threads.every`, so a long model call or a long statement still beats); returns the
    stop."""
    running = kind.model.objects.filter(pk=pk, **{kind.status_field: RUNNING})

    def beat() -> None:
        try:
            running.update(heartbeat_at=timezone.now())
        except DatabaseError as exc:  # e.g. a lock timeout: the next beat tries again
            logger.warning("%s %s: heartbeat not saved: %s", kind.name, pk, exc)

    def last() -> None:  # the heartbeat thread's own connection, looked up in that thread
        connection.close()

    return every(
        settings.JOB_HEARTBEAT_SECONDS, beat, name=f"heartbeat {kind.name} {pk}", last=last
    )


def job_run(kind_name: str, pk: int, body: Callable[[], object]) -> bool:
    """Runs `body` (the job's service) for the job `pk` of kind `kind_name`, beating while it
    works. Returns False, without running it, when the job is finished or alive elsewhere.

    A job that asks Celery to retry later (celery.exceptions.Retry) waits: its status goes back
    to waiting and its heartbeat is set to when the retry is due, so the sweep leaves it alone.
    """
    from celery.exceptions import Retry  # run by the worker, which has Celery loaded

    kind = KINDS[kind_name]
    if not _take(kind, pk):
        logger.info("%s %s: finished or running elsewhere, not run again", kind_name, pk)
        return False
    heartbeat_stop = _heartbeat_start(kind, pk)
    try:
        body()
    except Retry as exc:
        _wait_for_retry(kind, pk, exc.when)
        raise
    finally:
        heartbeat_stop()
        _failure_read(kind, pk)
    return True


def _failure_read(kind: JobKind, pk: int) -> None:
    """After a run: announces the job's failure when its service recorded one on the row (a
    database that went away is logged; the run's own outcome or error goes on)."""
    try:
        failed = kind.model.objects.filter(pk=pk, **{kind.status_field: JobStatus.FAILED})
        row = failed.values("pk").first()
        if row is None:
            return
        error = (
            failed.values_list("error", flat=True).first()
            if any(f.name == "error" for f in kind.model._meta.fields)
            else ""
        )
    except DatabaseError as exc:
        logger.warning("%s %s: its outcome could not be read: %s", kind.name, pk, exc)
        return
    job_failed_announce(kind.name, pk, error or "")


def job_failed_announce(kind_name: str, pk: int, reason: str) -> None:
    """Sends `jobs.signals.job_failed` once the transaction commits (at once outside one). A
    receiver that raises is logged; the job's outcome stays as recorded."""
    send_on_commit(
        job_failed,
        sender=KINDS[kind_name].model,
        event="job_failed",
        kind=kind_name,
        job_id=pk,
        reason=reason,
    )


def retry_countdown(retries: int, *, first: int = 30, most: int = 600) -> int:
    """Seconds before a job's next try after `retries` tries failed with a transient error (a
    provider rate-limiting): `first`, then doubling (30 s, 60 s, 120 s...), at most `most`."""
    return min(most, first * 2**retries)


def _wait_for_retry(kind: JobKind, pk: int, when) -> None:
    now = timezone.now()
    if isinstance(when, datetime):
        due = when
    elif isinstance(when, int | float):
        due = now + timedelta(seconds=when)
    else:
        due = now
    rows = kind.model.objects.filter(pk=pk)
    rows.filter(**{kind.status_field: RUNNING}).update(**{kind.status_field: kind.waiting[-1]})
    rows.update(heartbeat_at=due)


# --- The sweep ---------------------------------------------------------------------------------


@dataclass
class Sweep:
    requeued: list[tuple[str, int]] = field(default_factory=list)
    failed: list[tuple[str, int]] = field(default_factory=list)


# A sweep's turn is taken when the last one is older than this share of the period: two beats
# a period apart by a little jitter still sweep once each period.
SWEEP_TURN_SHARE = 0.8


def sweep_turn_take(*, name: str = "jobs", period: float | None = None) -> bool:
    """Whether this caller runs the sweep `name` now: True for the first caller of a period
    (the database decides between beats: one UPDATE whose condition a second caller finds
    false once the first has committed), False for the others."""
    from jobs.models import SweepTurn

    period = settings.JOB_SWEEP_SECONDS if period is None else period
    now = timezone.now()
    SweepTurn.objects.get_or_create(name=name, defaults={"swept_at": now - timedelta(days=1)})
    due = now - timedelta(seconds=period * SWEEP_TURN_SHARE)
    return bool(SweepTurn.objects.filter(name=name, swept_at__lte=due).update(swept_at=now))


def queue_of(task: str) -> str:
    """The queue a task is sent to (settings.CELERY_TASK_ROUTES, else the default queue)."""
    route = settings.CELERY_TASK_ROUTES.get(task)
    return route["queue"] if route else settings.CELERY_TASK_DEFAULT_QUEUE


def queued_messages(queue: str | None = None) -> int:
    """How many messages wait in `queue` (the default queue if none is given; 0 when the broker
    cannot say)."""
    from kombu.exceptions import ChannelError, OperationalError

    try:
        with celery_app().connection_for_write() as conn:
            declared = conn.default_channel.queue_declare(
                queue=queue or settings.CELERY_TASK_DEFAULT_QUEUE, passive=True
            )
            return declared.message_count
    except (ChannelError, OperationalError):
        return 0


def task_by_name(name: str):
    """The Celery task registered under `name`. A command has not imported the apps' task
    modules (the worker does at start, the web at its preload, config.wsgi): they are imported,
    through Celery's autodiscovery, the first time one is asked for; forced, not through the
    loader's default modules, whose Django fix-up runs every system check first (0.04 s)."""
    app = celery_app()
    if name not in app.tasks:
        app.autodiscover_tasks(force=True)
    return app.tasks[name]


def job_send_on_commit(
    kind_name: str,
    pks: Iterable[int],
    *,
    unqueued: Callable[[int, str], None] | None = None,
    countdown: float | None = None,
) -> None:
    """Sends the kind's task for each row once the transaction commits: the one way a service
    queues its jobs. The task is found by the name its kind registered, so a service never imports
    its own app's tasks module (which imports the services: no cycle). A row whose message cannot
    be sent (the broker went away after the service's `broker_require`) is recorded as failed with
    the reason, by `unqueued` or else the kind's `fail`; the other rows are still sent. With
    `countdown`, each task runs that many seconds after it is sent (a debounced job)."""
    kind = KINDS[kind_name]
    record = unqueued or kind.fail
    pks = list(pks)

    def send() -> None:
        from kombu.exceptions import OperationalError

        task = task_by_name(kind.task)
        for pk in pks:
            try:
                if countdown:
                    task.apply_async((pk,), countdown=countdown)
                else:
                    task.delay(pk)
            except OperationalError as exc:
                logger.error("%s %s: could not be queued: %s", kind.name, pk, exc)
                reason = f"the job could not be queued (is the Celery broker up?): {exc}"
                record(pk, reason)
                job_failed_announce(kind.name, pk, reason)

    transaction.on_commit(send)


def _send(kind: JobKind, pk: int) -> None:
    from kombu.exceptions import OperationalError

    try:
        celery_app().send_task(kind.task, args=[pk])
    except OperationalError as exc:  # the next sweep sends it again
        logger.error("%s %s: could not be queued again: %s", kind.name, pk, exc)


def jobs_sweep(
    *,
    stale: timedelta | None = None,
    max_attempts: int | None = None,
    queued: int | None = None,
) -> Sweep:
    """Re-queues every job whose worker stopped; fails it with the reason after its last attempt.

    - running, heartbeat older than `stale`: queued again (waiting, heartbeat now, partial
      output removed), or failed when it has had `max_attempts` runs;
    - waiting, heartbeat (set when queued) older than `stale` while its kind's queue is empty
      (`queued` messages, read per kind unless given): its message was lost, it is sent again.
    Idempotent and safe when two sweeps meet: a job is changed only if still as found.
    """
    stale = stale or stale_after()
    max_attempts = max_attempts or settings.JOB_MAX_ATTEMPTS
    now = timezone.now()
    sweep = Sweep()
    waiting_in: dict[str, int] = {}
    for kind in KINDS.values():
        status = kind.status_field
        silent = kind.model.objects.filter(
            Q(heartbeat_at__lt=now - stale) | Q(heartbeat_at__isnull=True),
            **{f"{status}__in": (RUNNING, *kind.waiting)},
        )
        for pk, state, attempts, beat in silent.values_list(
            "pk", status, "attempts", "heartbeat_at"
        ):
            if state != RUNNING:
                if queued is None:
                    queue = queue_of(kind.task)
                    if queue not in waiting_in:
                        waiting_in[queue] = queued_messages(queue)
                    if waiting_in[queue]:
                        continue  # its message may still be in the queue
                elif queued:
                    continue
            with transaction.atomic():
                same = silent.select_for_update().filter(
                    pk=pk, attempts=attempts, heartbeat_at=beat, **{status: state}
                )
                if not same.exists():
                    continue
                if state == RUNNING and attempts >= max_attempts:
                    since = f"{beat:%Y-%m-%d %H:%M:%S} UTC" if beat else "its start"
                    reason = (
                        f"its worker stopped (no sign of it since {since}); "
                        f"given up after {attempts} attempts"
                    )
                    kind.fail(pk, reason)
                    job_failed_announce(kind.name, pk, reason)
                    sweep.failed.append((kind.name, pk))
                    continue
                changes = {"heartbeat_at": now}
                if state == RUNNING:
                    changes[status] = kind.waiting[0]
                same.update(**changes)
                if kind.reset:
                    kind.reset(pk)
                transaction.on_commit(partial(_send, kind, pk))
                sweep.requeued.append((kind.name, pk))
    if sweep.requeued or sweep.failed:
        logger.warning("jobs sweep: queued again %s; failed %s", sweep.requeued, sweep.failed)
    return sweep
