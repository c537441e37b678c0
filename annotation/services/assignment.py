"""Assignment: the next item for an expert, leases, skips, hand assignment and moves.

Correctness under concurrency (PostgreSQL): every write that adds a judgement slot to an item
(a lease, a renewed lease, a submission) holds the item's row lock. "Next" picks a candidate
with `SELECT ... FOR UPDATE SKIP LOCKED` (an item another expert is being given right now is
skipped, never waited on), then recounts the item's taken slots in a new statement, which under
READ COMMITTED sees every commit made by earlier holders of the lock; a stale candidate is
dropped and the next one tried. Taken slots = submitted judgements + unexpired active leases.
"""

from __future__ import annotations

import random
from datetime import timedelta

from django.contrib.auth.models import AbstractBaseUser
from django.db import IntegrityError, connection, transaction
from django.db.models import Count, Exists, F, IntegerField, OuterRef, Q, Subquery
from django.db.models.functions import Coalesce
from django.utils import timezone

from annotation.calibration_gate import calibration_gate_check
from annotation.models import Assignment, AssignmentStatus, Campaign, Item, ItemOrder
from annotation.slots import item_open, item_open_sql, slot_taken, slot_taken_sql

MANUAL_LEASE = timedelta(days=14)


def _lease_commit_fast() -> None:
    """Leases are cheap, re-creatable state: their transactions commit without waiting for the
    WAL flush (PostgreSQL `synchronous_commit = off`, this transaction only). A database crash
    can forget the last moments' leases (the items return to the pool), never a grade:
    submissions keep the default, durable commit."""
    if connection.vendor == "postgresql":
        with connection.cursor() as cursor:
            cursor.execute("SET LOCAL synchronous_commit TO OFF")


MAX_ATTEMPTS = 20


class AssignmentError(Exception):
    """An assignment that cannot be made or changed; the message says why, in words."""


def _taken_count(item_id: int, now, *, exclude_expert_id: int | None = None) -> int:
    qs = Assignment.objects.filter(slot_taken(now), item_id=item_id)
    if exclude_expert_id is not None:
        qs = qs.exclude(expert_id=exclude_expert_id)
    return qs.count()


def _lease_end(campaign: Campaign, now):
    return now + timedelta(minutes=campaign.lease_minutes)


_OWN_OPEN_SQL = """
SELECT 1 FROM annotation_assignment a JOIN annotation_item i ON i.id = a.item_id
WHERE a.expert_id = %s AND a.status = 'active' AND i.campaign_id = %s
  AND (NOT i.is_final OR i.is_gold)
LIMIT 1
"""


def _own_open_assignment(
    *, campaign: Campaign, expert: AbstractBaseUser, after_item_id: int | None = None
) -> Assignment | None:
    """The expert's oldest active assignment in the campaign (resumed before anything new),
    other than the one on `after_item_id`; an expired one is renewed when its slot is still
    free, released otherwise."""
    with connection.cursor() as cursor:
        cursor.execute(_OWN_OPEN_SQL, [expert.pk, campaign.pk])
        if cursor.fetchone() is None:
            return None
    now = timezone.now()
    mine = (
        Assignment.objects.filter(
            Q(item__is_final=False) | Q(item__is_gold=True),
            item__campaign=campaign,
            expert=expert,
            status=AssignmentStatus.ACTIVE,
        )
        .exclude(item_id=after_item_id)
        .select_related("item")
        .order_by("created_at", "id")
    )
    for assignment in mine:
        if assignment.leased_until > now:
            return assignment
        renewed = _renew_expired(assignment=assignment, campaign=campaign)
        if renewed is not None:
            return renewed
    return None


@transaction.atomic
def _renew_expired(*, assignment: Assignment, campaign: Campaign) -> Assignment | None:
    item = Item.objects.select_for_update(skip_locked=True).filter(pk=assignment.item_id).first()
    if item is None:
        return None
    now = timezone.now()
    assignment = Assignment.objects.select_for_update().get(pk=assignment.pk)
    if assignment.status != AssignmentStatus.ACTIVE:
        return None
    if item.is_gold or _taken_count(item.pk, now, exclude_expert_id=assignment.expert_id) < (
        item.required_judgements
    ):
        assignment.leased_until = _lease_end(campaign, now)
        assignment.save(update_fields=["leased_until", "updated_at"])
        return assignment
    assignment.status = AssignmentStatus.RELEASED
    assignment.save(update_fields=["status", "updated_at"])
    return None


def _gold_turn(*, campaign: Campaign, expert: AbstractBaseUser) -> bool:
    """Whether this "next" serves a gold item: a seeded draw per (campaign, expert, position in
    the expert's queue), so the mix is reproducible and unannounced."""
    if campaign.gold_rate <= 0:
        return False
    position = Assignment.objects.filter(item__campaign=campaign, expert=expert).count()
    draw = random.Random(f"{campaign.sample_seed}:{campaign.pk}:{expert.pk}:{position}").random()
    return draw < float(campaign.gold_rate)


def _take_gold(*, campaign: Campaign, expert: AbstractBaseUser) -> Assignment | None:
    item = (
        Item.objects.filter(campaign=campaign, is_gold=True)
        .exclude(assignments__expert=expert)
        .order_by("id")
        .first()
    )
    if item is None:
        return None
    try:
        with transaction.atomic():
            _lease_commit_fast()
            return Assignment.objects.create(
                item=item, expert=expert, leased_until=_lease_end(campaign, timezone.now())
            )
    except IntegrityError:
        return None


# The hot path of "next", in SQL (the ORM's query building cost more than the database work).
# Candidates: items that still need a judgement and that the expert never held, closest to
# complete first (most submitted judgements, then the oldest, which are the ones already
# leased), walked along the partial index item_open_queue; rows another transaction holds are
# skipped, never waited on. A campaign ordered by uncertainty puts its ranked items first within
# each submitted count, rank 1 (most uncertain) first, unranked ones after, and never serves an
# item held back by its routing budget (walked along the partial index item_ranked_queue).
# The third column is `_lease_commit_fast` without a round trip of its own: when a candidate is
# found, this transaction (which will write the lease) commits without waiting for the WAL flush.
_CANDIDATE_SQL = f"""
SELECT i.id, i.required_judgements, set_config('synchronous_commit', 'off', true)
FROM annotation_item i
WHERE i.campaign_id = %(campaign)s AND {item_open_sql("i")}
  AND NOT (i.id = ANY(%(skip)s))
  AND NOT EXISTS (
    SELECT 1 FROM annotation_assignment own WHERE own.item_id = i.id AND own.expert_id = %(expert)s
  )
  AND (
    SELECT count(*) FROM annotation_assignment a
    WHERE a.item_id = i.id AND {slot_taken_sql("a")}
  ) < i.required_judgements
ORDER BY i.submitted_count DESC, {{rank}} i.id
LIMIT 1
FOR UPDATE OF i SKIP LOCKED
"""
_BY_RANK = "i.route_rank ASC NULLS LAST,"


def _by_uncertainty(campaign: Campaign) -> bool:
    return campaign.item_order == ItemOrder.UNCERTAINTY


# Under the item's row lock, a new statement (a fresh READ COMMITTED snapshot that sees every
# commit of earlier lock holders) recounts the taken slots and inserts the lease only if one is
# still free.
_LEASE_SQL = f"""
INSERT INTO annotation_assignment
  (item_id, expert_id, leased_until, status, assigned_by_id, created_at, updated_at)
SELECT %(item)s, %(expert)s, %(until)s, 'active', NULL, %(now)s, %(now)s
WHERE (
  SELECT count(*) FROM annotation_assignment a
  WHERE a.item_id = %(item)s AND {slot_taken_sql("a")}
) < %(required)s
RETURNING id
"""


def _take_normal_portable(*, campaign: Campaign, expert: AbstractBaseUser) -> Assignment | None:
    """The same selection through the ORM, for the embedded SQLite mode (where a write
    transaction holds the whole database, so there is no row to skip)."""
    now = timezone.now()
    taken = (
        Assignment.objects.filter(slot_taken(now), item_id=OuterRef("pk"))
        .order_by()
        .values("item_id")
        .annotate(n=Count("pk"))
        .values("n")
    )
    with transaction.atomic():
        item = (
            Item.objects.filter(item_open(), campaign=campaign)
            .exclude(Exists(Assignment.objects.filter(item_id=OuterRef("pk"), expert=expert)))
            .annotate(taken=Coalesce(Subquery(taken, output_field=IntegerField()), 0))
            .filter(taken__lt=F("required_judgements"))
            .order_by(
                "-submitted_count",
                *([F("route_rank").asc(nulls_last=True)] if _by_uncertainty(campaign) else []),
                "id",
            )
            .first()
        )
        if item is None:
            return None
        return Assignment.objects.create(
            item=item, expert=expert, leased_until=_lease_end(campaign, now)
        )


def _take_normal(*, campaign: Campaign, expert: AbstractBaseUser) -> Assignment | None:
    if connection.vendor != "postgresql":
        return _take_normal_portable(campaign=campaign, expert=expert)
    skip: list[int] = []
    candidate_sql = _CANDIDATE_SQL.format(rank=_BY_RANK if _by_uncertainty(campaign) else "")
    for _ in range(MAX_ATTEMPTS):
        with transaction.atomic(), connection.cursor() as cursor:
            now = timezone.now()
            cursor.execute(
                candidate_sql,
                {"campaign": campaign.pk, "expert": expert.pk, "skip": skip, "now": now},
            )
            row = cursor.fetchone()
            if row is None:
                return None
            item_id, required, _ = row
            until = _lease_end(campaign, now)
            cursor.execute(
                _LEASE_SQL,
                {
                    "item": item_id,
                    "expert": expert.pk,
                    "until": until,
                    "now": now,
                    "required": required,
                },
            )
            created = cursor.fetchone()
            if created is None:
                skip.append(item_id)
                continue
            assignment = Assignment(
                id=created[0],
                item_id=item_id,
                expert_id=expert.pk,
                leased_until=until,
                status=AssignmentStatus.ACTIVE,
                created_at=now,
                updated_at=now,
            )
            assignment._state.adding = False
            assignment._state.db = cursor.db.alias
            return assignment
    return None


def assignment_next(
    *, campaign: Campaign, expert: AbstractBaseUser, after_item_id: int | None = None
) -> Assignment | None:
    """The expert's next piece of work: their own open assignment first (resumed), else a new
    lease on the item closest to complete that still needs a judgement and that the expert has
    never held (in a campaign ordered by uncertainty, then the lowest rank, and never an item
    held back by the routing budget); gold items mixed in at the campaign's rate. None when
    nothing is left. "Next" from an item passes it as `after_item_id`: that item is never the
    answer (it stays the expert's, to come back to). New work needs the campaign's calibration
    round passed, when it requires one (CalibrationRequired otherwise, saying what to do)."""
    if not campaign.is_open:
        return None
    own = _own_open_assignment(campaign=campaign, expert=expert, after_item_id=after_item_id)
    if own is not None:
        return own
    if campaign.calibration_required:
        calibration_gate_check(campaign=campaign, expert=expert)
    if _gold_turn(campaign=campaign, expert=expert):
        gold = _take_gold(campaign=campaign, expert=expert)
        if gold is not None:
            return gold
    return _take_normal(campaign=campaign, expert=expert)


@transaction.atomic
def assignment_heartbeat(*, assignment: Assignment) -> Assignment:
    """Extends an active lease while the grading page is open. An expired lease is renewed
    only if its slot is still free; AssignmentError otherwise."""
    assignment = (
        Assignment.objects.select_for_update()
        .select_related("item__campaign")
        .get(pk=assignment.pk)
    )
    if assignment.status != AssignmentStatus.ACTIVE:
        raise AssignmentError("This item is no longer assigned to you.")
    now = timezone.now()
    campaign = assignment.item.campaign
    if assignment.leased_until <= now:
        renewed = _renew_expired(assignment=assignment, campaign=campaign)
        if renewed is None:
            raise AssignmentError(
                "Your lease on this item expired and the item went to another expert."
            )
        return renewed
    assignment.leased_until = _lease_end(campaign, now)
    assignment.save(update_fields=["leased_until", "updated_at"])
    return assignment


@transaction.atomic
def assignment_release(*, assignment: Assignment) -> Assignment:
    """Skip: gives the item back to the pool (the expert is not offered it again)."""
    assignment = Assignment.objects.select_for_update().get(pk=assignment.pk)
    if assignment.status == AssignmentStatus.DONE:
        raise AssignmentError("You have already submitted a grade for this item.")
    if assignment.status == AssignmentStatus.ACTIVE:
        assignment.status = AssignmentStatus.RELEASED
        assignment.save(update_fields=["status", "updated_at"])
    return assignment


@transaction.atomic
def assignment_create_manual(
    *, item: Item, expert: AbstractBaseUser, assigned_by: AbstractBaseUser | None
) -> Assignment:
    """An admin gives an item to a named expert (a long lease). Refused when the expert already
    judged it or the item has all the judgements it needs."""
    item = Item.objects.select_for_update().select_related("campaign").get(pk=item.pk)
    if item.is_final:
        raise AssignmentError(f"Item {item.pk} is final: it takes no more judgements.")
    now = timezone.now()
    existing = Assignment.objects.select_for_update().filter(item=item, expert=expert).first()
    if existing is not None and existing.status == AssignmentStatus.DONE:
        raise AssignmentError(f"{expert} has already judged item {item.pk}.")
    if existing is not None and existing.status == AssignmentStatus.ACTIVE:
        existing.leased_until = now + MANUAL_LEASE
        existing.assigned_by = assigned_by
        existing.save(update_fields=["leased_until", "assigned_by", "updated_at"])
        return existing
    if not item.is_gold and _taken_count(item.pk, now) >= item.required_judgements:
        raise AssignmentError(
            f"Item {item.pk} already has its {item.required_judgements} judgement(s) taken: "
            "move an existing assignment instead."
        )
    if existing is not None:
        existing.status = AssignmentStatus.ACTIVE
        existing.leased_until = now + MANUAL_LEASE
        existing.assigned_by = assigned_by
        existing.save(update_fields=["status", "leased_until", "assigned_by", "updated_at"])
        return existing
    return Assignment.objects.create(
        item=item, expert=expert, leased_until=now + MANUAL_LEASE, assigned_by=assigned_by
    )


@transaction.atomic
def assignment_move(
    *, assignment: Assignment, to_expert: AbstractBaseUser, moved_by: AbstractBaseUser | None
) -> Assignment:
    """Moves unfinished work from one expert to another: the first lease is released (their
    draft stays theirs, unseen by the other), the second expert gets the item."""
    assignment = Assignment.objects.select_for_update().select_related("item").get(pk=assignment.pk)
    if assignment.status == AssignmentStatus.DONE:
        raise AssignmentError("A submitted judgement cannot be moved to another expert.")
    if assignment.expert_id == to_expert.pk:
        raise AssignmentError("The item is already with that expert.")
    assignment.status = AssignmentStatus.RELEASED
    assignment.save(update_fields=["status", "updated_at"])
    return assignment_create_manual(item=assignment.item, expert=to_expert, assigned_by=moved_by)
