"""Confidence always current: every change of a label queues a refit of its campaign's rater model
in the background, debounced, and an export refits first when the fit is stale.

- A change (a grade submitted or revised, an adjudication, the labelling loop, an import of
  labels or ratings; estimation.receivers) calls `rater_model_refit_request`: the first change
  since the campaign's last refit started writes a waiting `RaterModelRefit` row and sends its
  task to run RATER_MODEL_REFIT_DEBOUNCE_SECONDS later; the changes that come meanwhile only add
  to the row's `changes` (many changes in a window: one fit). A change that comes while a refit
  runs queues the next one.
- The job (estimation.tasks) runs `rater_model_refit_run` through jobs.services.job_run: a
  heartbeat while it fits, the sweep running it again after its worker died. The fit
  (`campaign_rater_model_fit`) writes the model and every label's confidence in one
  transaction: a run that dies leaves the previous fit whole. Two refits of one campaign never
  run at once (`rater_model_refit_busy`: the later waits), so a slow old fit never overwrites a
  newer one.
- `rater_model_refresh` fits at once when the fit is stale (`rater_model_stale`), for an export
  (which runs in a worker already), and settles the refits that fit made needless.
"""

from __future__ import annotations

from collections.abc import Iterable

from django.conf import settings
from django.db import connection, transaction
from django.db.models import Q, Sum
from django.utils import timezone

from adjudication.models import FinalLabel
from annotation.models import Item
from core.broker import broker_require
from core.queries import of_ids
from core.sql import Table
from estimation.models import RaterModelFit, RaterModelRefit
from jobs.models import JobStatus
from jobs.services import job_send_on_commit, stale_after

KIND = "rater_model_refit"
WAITING = (JobStatus.PENDING, JobStatus.RETRYING)
OPEN = (*WAITING, JobStatus.RUNNING)
_LOCK_SPACE = 33  # pg_advisory_xact_lock(space, campaign id): one request at a time a campaign


def _lock_campaign(campaign_id: int) -> None:
    """Serialises the requests of one campaign (PostgreSQL; SQLite writes one at a time)."""
    if connection.vendor == "postgresql":
        with connection.cursor() as cursor:
            cursor.execute("SELECT pg_advisory_xact_lock(%s, %s)", [_LOCK_SPACE, campaign_id])


_r, _w, _i = Table(RaterModelRefit), Table(RaterModelRefit, "w"), Table(Item, "i")
_WAITING_SQL = ", ".join(f"'{status.value}'" for status in WAITING)
# the campaign's first waiting refit takes the changes; the status is checked again on the row
# (a refit that began to run meanwhile is not counted into: the change then queues another)
_BUMP_SQL = f"""
UPDATE {_r} SET {_r.changes} = {_r.changes} + %(changes)s, {_r.last_change_at} = %(now)s
WHERE {_r.id} = (
  SELECT {_w.id} FROM {_w} WHERE {_w.campaign_id} = {{campaign}}
    AND {_w.status} IN ({_WAITING_SQL}) ORDER BY {_w.id} LIMIT 1
) AND {_r.status} IN ({_WAITING_SQL})"""
_BUMP_BY_CAMPAIGN = _BUMP_SQL.format(campaign="%(campaign)s")
_BUMP_BY_ITEM = _BUMP_SQL.format(
    campaign=f"(SELECT {_i.campaign_id} FROM {_i} WHERE {_i.id} = %(item)s)"
)


def _waiting_bumped(*, changes: int, now, campaign_id: int | None = None, item_id=None) -> bool:
    """Adds the changes to the campaign's (or the item's campaign's) waiting refit, in one
    statement: whether there was one. Every judgement comes here: written by hand, it costs
    0.4 ms where the ORM's UPDATE over two subqueries cost 1.65 ms (300 calls, in process)."""
    sql = _BUMP_BY_ITEM if campaign_id is None else _BUMP_BY_CAMPAIGN
    params = {"changes": changes, "now": now, "campaign": campaign_id, "item": item_id}
    with connection.cursor() as cursor:
        cursor.execute(sql, params)
        return cursor.rowcount > 0


def rater_model_refit_request(
    *, campaign_id: int, changes: int = 1, reason: str = ""
) -> int | None:
    """Records `changes` changes of the campaign's labels: added to its waiting refit, or a new
    refit queued to run after the debounce window. Returns the new refit's id (None when a
    waiting one took the changes). Never fits here: the caller may be a page request."""
    now = timezone.now()
    if _waiting_bumped(campaign_id=campaign_id, changes=changes, now=now):
        return None
    return _refit_queue(campaign_id=campaign_id, changes=changes, reason=reason, now=now)


def _refit_queue(*, campaign_id: int, changes: int, reason: str, now) -> int | None:
    """No refit was waiting a moment ago: under the campaign's lock, the changes go to one that
    came meanwhile, or a new refit is queued (its id returned)."""
    with transaction.atomic():
        _lock_campaign(campaign_id)
        if _waiting_bumped(campaign_id=campaign_id, changes=changes, now=now):
            return None
        refit = RaterModelRefit.objects.create(
            campaign_id=campaign_id, changes=changes, reason=reason[:40], last_change_at=now
        )
        job_send_on_commit(KIND, [refit.pk], countdown=settings.RATER_MODEL_REFIT_DEBOUNCE_SECONDS)
    return refit.pk


def rater_model_refit_ask(*, campaign_id: int) -> int | None:
    """An admin asked for a fit (the agreement page's button, the API): the same debounced refit
    a change queues, never a fit in the request. Refused (503, nothing saved) while the job queue
    is away, since the refit could not run."""
    broker_require()
    return rater_model_refit_request(campaign_id=campaign_id, reason="asked by an admin")


def rater_model_refit_request_for_item(*, item_id: int, reason: str = "") -> int | None:
    """`rater_model_refit_request` for the campaign of an item (nothing if it is gone). The
    common case, a refit already waiting (a change every judgement, a refit every debounce
    window), is one statement."""
    now = timezone.now()
    if _waiting_bumped(item_id=item_id, changes=1, now=now):
        return None
    campaign_id = Item.objects.filter(pk=item_id).values_list("campaign_id", flat=True).first()
    if campaign_id is None:
        return None
    return _refit_queue(campaign_id=campaign_id, changes=1, reason=reason, now=now)


def rater_model_refit_request_for_problems(*, problem_ids: Iterable[int]) -> list[int]:
    """An import changed these problems (their proofs' imported ratings or labels): one change
    for each campaign holding one of their proofs. Returns the campaigns."""
    items = of_ids(Item.objects.order_by(), "proof__problem", problem_ids)
    campaigns = sorted(items.values_list("campaign_id", flat=True).distinct())
    for campaign_id in campaigns:
        rater_model_refit_request(campaign_id=campaign_id, reason="import")
    return campaigns


def rater_model_refit_busy(*, refit_id: int) -> bool:
    """Whether another refit of the same campaign is running, alive (this one then waits)."""
    campaign_id = (
        RaterModelRefit.objects.filter(pk=refit_id).values_list("campaign_id", flat=True).first()
    )
    if campaign_id is None:
        return False
    return (
        RaterModelRefit.objects.filter(
            campaign_id=campaign_id,
            status=JobStatus.RUNNING,
            heartbeat_at__gte=timezone.now() - stale_after(),
        )
        .exclude(pk=refit_id)
        .exists()
    )


def rater_model_refit_run(*, refit_id: int) -> RaterModelRefit:
    """Fits the refit's campaign and marks the refit done. Idempotent: a finished refit is left
    alone; a run again after a lost worker fits again from the database (the dead run wrote
    nothing: the fit is one transaction). Only the run holding the latest attempt marks it."""
    from estimation.services.confidence import campaign_rater_model_fit

    refit = RaterModelRefit.objects.get(pk=refit_id)
    if refit.status in (JobStatus.SUCCEEDED, JobStatus.FAILED):
        return refit
    own = RaterModelRefit.objects.filter(pk=refit_id, attempts=refit.attempts)
    own.update(started_at=timezone.now())
    campaign_rater_model_fit(campaign_id=refit.campaign_id)
    own.exclude(status=JobStatus.SUCCEEDED).update(
        status=JobStatus.SUCCEEDED, error="", finished_at=timezone.now()
    )
    return RaterModelRefit.objects.get(pk=refit_id)


def rater_model_refit_fail(*, refit_id: int, reason: str) -> None:
    """Records a refit's failure (its changes stay counted as not in the fit)."""
    RaterModelRefit.objects.filter(pk=refit_id).exclude(status=JobStatus.SUCCEEDED).update(
        status=JobStatus.FAILED, error=reason, finished_at=timezone.now()
    )


def changes_since_fit(campaign_id: int, fit: RaterModelFit | None) -> int:
    """The changes of the campaign's labels the stored fit has not taken in: those of its
    waiting and running refits, and of refits that failed since the fit."""
    unfitted = Q(status__in=OPEN)
    if fit is not None:
        unfitted |= Q(status=JobStatus.FAILED, last_change_at__gt=fit.fitted_at)
    else:
        unfitted |= Q(status=JobStatus.FAILED)
    total = RaterModelRefit.objects.filter(unfitted, campaign_id=campaign_id).aggregate(
        n=Sum("changes")
    )["n"]
    return total or 0


def rater_model_stale(*, campaign_id: int) -> bool:
    """Whether the campaign's labels may not all carry the current fit's confidence: a label
    and no fit, a change not yet fitted, a label set after the fit or without a confidence."""
    labels = FinalLabel.objects.filter(item__campaign_id=campaign_id)
    if not labels.exists():
        return False
    fit = RaterModelFit.objects.filter(campaign_id=campaign_id).first()
    if fit is None or changes_since_fit(campaign_id, fit):
        return True
    return labels.filter(Q(updated_at__gt=fit.fitted_at) | Q(confidence__isnull=True)).exists()


def rater_model_refresh(*, campaign_id: int) -> bool:
    """Fits the campaign's rater model now when it is stale (for an export, in its worker);
    returns whether it fitted. The waiting refits whose changes this fit took in are settled,
    so that their messages find them done."""
    if not rater_model_stale(campaign_id=campaign_id):
        return False
    from estimation.services.confidence import campaign_rater_model_fit

    began = timezone.now()
    campaign_rater_model_fit(campaign_id=campaign_id)
    RaterModelRefit.objects.filter(
        campaign_id=campaign_id, status__in=WAITING, last_change_at__lt=began
    ).update(status=JobStatus.SUCCEEDED, finished_at=timezone.now())
    return True
