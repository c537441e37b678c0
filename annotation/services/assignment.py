"""Assignment: the next item for an expert, leases, skips, hand assignment and moves.

Correctness under concurrency (PostgreSQL): every write that adds a judgement slot to an item
(a lease, a renewed lease, a submission) holds the item's row lock. "Next" picks a candidate
with `SELECT ... FOR UPDATE SKIP LOCKED` (an item another expert is being given right now is
skipped; only when nothing else is left is the walk made again waiting on such locks, so a
passing lock never reads as "no work left"), then recounts the item's taken slots in a new statement, which under
READ COMMITTED sees every commit made by earlier holders of the lock; a stale candidate is
dropped and the next one tried. Taken slots = submitted judgements + unexpired active leases.
"""

from __future__ import annotations

import random
from datetime import timedelta

from django.contrib.auth.models import AbstractBaseUser
from django.db import IntegrityError, connection, transaction
from django.db.models import Q
from django.utils import timezone

from annotation.calibration_gate import CalibrationRequired, calibration_gate_check
from annotation.models import Assignment, AssignmentStatus, Campaign, Item, ItemOrder
from annotation.selectors.assignment import gold_never_held
from annotation.slots import (
    assignment_open,
    item_open_sql,
    lease_is_live,
    open_work_sql,
    slot_taken,
    slot_taken_sql,
    takeable_sql,
)
from core.sql import Table

MANUAL_LEASE = timedelta(days=14)


def _lease_commit_fast() -> None:
    """Leases are cheap, re-creatable state: their transactions commit without waiting for the
    WAL flush (PostgreSQL `synchronous_commit = off`, this transaction only). A database crash
    can forget the last moments' leases (the items return to the pool), never a grade:
    submissions keep the default, durable commit."""
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


OWN_PAGE = 8  # the expert's open assignments read at a time
# whether the expert has any (hand-written: the ORM's query building cost more than the reading,
# on the path of every "next" that was not told)
_OWN_OPEN_SQL = f"SELECT {open_work_sql('%(campaign)s')}"


def _own_open_assignment(
    *,
    campaign: Campaign,
    expert: AbstractBaseUser,
    after_item_id: int | None = None,
    has_open: bool | None = None,
    passed: bool = False,
) -> Assignment | None:
    """The expert's oldest active assignment in the campaign that they have not moved on from
    (resumed before anything new), or with `passed` the one they moved on from longest ago,
    other than the one on `after_item_id`; an expired one is renewed when its slot is still
    free, released otherwise. `has_open`: whether the expert has one at all, when a read
    already gave it (selectors.expert_campaign does; None: looked up here). Read a page at a
    time: an expert an admin handed 900 items reads 8 of them, not 900."""
    if has_open is None:
        with connection.cursor() as cursor:
            cursor.execute(_OWN_OPEN_SQL, {"user": expert.pk, "campaign": campaign.pk})
            has_open = bool(cursor.fetchone()[0])
    if not has_open:
        return None
    now = timezone.now()
    order = "passed_at" if passed else "created_at"
    mine = (
        Assignment.objects.filter(
            assignment_open(),
            item__campaign=campaign,
            expert=expert,
            passed_at__isnull=not passed,
        )
        .select_related("item")
        .order_by(order, "id")
    )
    if after_item_id is not None:
        mine = mine.exclude(item_id=after_item_id)
    after = Q()
    while page := list(mine.filter(after)[:OWN_PAGE]):
        for assignment in page:
            if lease_is_live(assignment, now):
                return assignment
            renewed = _renew_expired(assignment=assignment, campaign=campaign)
            if renewed is not None:
                return renewed
        last = getattr(page[-1], order), page[-1].pk
        after = Q(**{f"{order}__gt": last[0]}) | Q(**{order: last[0], "id__gt": last[1]})
    return None


def _pass(*, expert: AbstractBaseUser, item_id: int) -> None:
    """The expert moves on from the item without submitting (Next): it stays theirs, and comes
    back after the rest of their work (one statement on the item's unique (item, expert) row;
    nothing when they do not hold it: submitted, skipped or moved)."""
    Assignment.objects.filter(
        item_id=item_id, expert=expert, status=AssignmentStatus.ACTIVE
    ).update(passed_at=timezone.now())


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
    item_id = gold_never_held(campaign_id=campaign.pk, expert_id=expert.pk)
    if item_id is None:
        return None
    try:
        with transaction.atomic():
            _lease_commit_fast()
            return Assignment.objects.create(
                item_id=item_id, expert=expert, leased_until=_lease_end(campaign, timezone.now())
            )
    except IntegrityError:
        return None


# The hot path of "next", in SQL (the ORM's query building cost more than the database work).
# Candidates: items that still need a judgement and that the expert never held, closest to
# complete first (most submitted judgements, then the oldest, which are the ones already
# leased), walked along the partial index item_open_queue; rows another transaction holds are
# skipped, and waited on only when nothing else is left. A campaign ordered by uncertainty puts its ranked items first within
# each submitted count, rank 1 (most uncertain) first, unranked ones after, and never serves an
# item held back by its routing budget (walked along the partial index item_ranked_queue).
#
# The walk looks in three places, each only when the one before offers nothing:
# the head of the queue (its first QUEUE_HEAD items), then the fresh items (no judgement yet),
# then the rest of the queue. So an expert who judged the many items waiting at the head for
# another expert's judgement passes them in one bounded step instead of visiting each of them
# and its assignments on every "next"; the waiting items further on are left to the other
# experts (who reach them first), and nothing is lost: the last scope walks the whole queue.
# The third column is `_lease_commit_fast` without a round trip of its own: when a candidate is
# found, this transaction (which will write the lease) commits without waiting for the WAL flush.
QUEUE_HEAD = 100
# table and column names from the models (the statements below are hand-written for their plans)
a, i, q, head = Table(Assignment, "a"), Table(Item, "i"), Table(Item, "q"), Table(Item, "head")
# never held by the expert, a slot free: one probe of the item's assignments per item walked
_CANDIDATE_FILTER = takeable_sql("i")
# the head: the queue's first QUEUE_HEAD items, read along the index, then taken in that order
_HEAD_SQL = f"""
SELECT {i.id}, {i.required_judgements}, set_config('synchronous_commit', 'off', true)
FROM (
  SELECT {q.id}, {q.submitted_count}, {q.route_rank} FROM {q}
  WHERE {q.campaign_id} = %(campaign)s AND {item_open_sql("q")} AND NOT ({q.id} = ANY(%(skip)s))
  ORDER BY {q.submitted_count} DESC, {{rank}} {q.id}
  LIMIT {QUEUE_HEAD}
) head
JOIN {i} ON {i.id} = {head.id}
WHERE {_CANDIDATE_FILTER}
ORDER BY {head.submitted_count} DESC, {{head_rank}} {head.id}
LIMIT 1
FOR UPDATE OF i SKIP LOCKED
"""
# a walk of one part of the queue (`part`: the fresh items, or the waiting ones)
_WALK_SQL = f"""
SELECT {i.id}, {i.required_judgements}, set_config('synchronous_commit', 'off', true)
FROM {i}
WHERE {i.campaign_id} = %(campaign)s AND {item_open_sql("i")} AND {{part}}
  AND NOT ({i.id} = ANY(%(skip)s)) AND {_CANDIDATE_FILTER}
ORDER BY {i.submitted_count} DESC, {{rank}} {i.id}
LIMIT 1
FOR UPDATE OF i SKIP LOCKED
"""
FRESH, WAITING = f"{i.submitted_count} = 0", f"{i.submitted_count} > 0"
# a ranked campaign's order within each submitted count (the ranked queue's index)
RANK = {t: f"{t.route_rank} ASC NULLS LAST," for t in (q, head, i)}


def _by_uncertainty(campaign: Campaign) -> bool:
    return campaign.item_order == ItemOrder.UNCERTAINTY


def _candidate_statements(campaign: Campaign, *, wait: bool = False) -> list[str]:
    """The candidate statements, tried in this order: the head, the fresh items, the waiting ones.
    `wait`: they wait on locked items instead of skipping them."""
    rank = RANK if _by_uncertainty(campaign) else dict.fromkeys(RANK, "")
    first = _HEAD_SQL.format(rank=rank[q], head_rank=rank[head])
    walks = [_WALK_SQL.format(part=part, rank=rank[i]) for part in (FRESH, WAITING)]
    statements = [first, *walks]
    return [s.replace(" SKIP LOCKED", "") for s in statements] if wait else statements


# Under the item's row lock, a new statement (a fresh READ COMMITTED snapshot that sees every
# commit of earlier lock holders) recounts the taken slots and inserts the lease only if one is
# still free.
_NEW = Table(Assignment)
_LEASE_SQL = f"""
INSERT INTO {_NEW}
  ({_NEW.item_id}, {_NEW.expert_id}, {_NEW.leased_until}, {_NEW.status}, {_NEW.assigned_by_id},
   {_NEW.created_at}, {_NEW.updated_at})
SELECT %(item)s, %(expert)s, %(until)s, '{AssignmentStatus.ACTIVE.value}', NULL, %(now)s, %(now)s
WHERE (
  SELECT count(*) FROM {a}
  WHERE {a.item_id} = %(item)s AND {slot_taken_sql("a")}
) < %(required)s
RETURNING {_NEW.id}
"""


def _take_normal(*, campaign: Campaign, expert: AbstractBaseUser) -> Assignment | None:
    skip: list[int] = []
    statements, waited = _candidate_statements(campaign), False
    for _ in range(MAX_ATTEMPTS):
        with transaction.atomic(), connection.cursor() as cursor:
            now = timezone.now()
            params = {"campaign": campaign.pk, "expert": expert.pk, "skip": skip, "now": now}
            for sql in statements:
                cursor.execute(sql, params)
                row = cursor.fetchone()
                if row is not None:
                    break
            else:
                if waited:
                    return None
                # every item left may be locked by another expert's lease or submission at this
                # moment: look once more, waiting on those locks, before saying nothing is left
                statements, waited = _candidate_statements(campaign, wait=True), True
                continue
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
            # the row as inserted, a saved instance (Model.from_db, as the ORM builds one: every
            # column, in the model's order)
            values = {
                "id": created[0],
                "item_id": item_id,
                "expert_id": expert.pk,
                "leased_until": until,
                "status": AssignmentStatus.ACTIVE,
                "assigned_by_id": None,
                "passed_at": None,
                "created_at": now,
                "updated_at": now,
            }
            return Assignment.from_db(connection.alias, list(values), list(values.values()))
    return None


def assignment_next(
    *,
    campaign: Campaign,
    expert: AbstractBaseUser,
    after_item_id: int | None = None,
    has_open: bool | None = None,
) -> Assignment | None:
    """The expert's next piece of work, a walk through the campaign: their own open assignment
    first (resumed, oldest first), else a new lease on the item closest to complete that still
    needs a judgement and that the expert has never held (in a campaign ordered by uncertainty,
    then the lowest rank, and never an item held back by the routing budget; gold items mixed
    in at the campaign's rate), else the open work they moved on from, the one passed longest
    ago first. None when nothing is left. "Next" from an item passes it as `after_item_id`: it
    is marked as passed (it stays the expert's and comes back only once the rest is done) and
    is never the answer. New work needs the campaign's calibration round passed, when it
    requires one (CalibrationRequired otherwise, saying what to do, unless passed work is
    left). `has_open`: whether the expert has an open assignment in the campaign, when a read
    of the campaign already said (`selectors.expert_campaign`'s `has_open_work`); None: looked
    up."""
    if not campaign.is_open:
        return None
    if after_item_id is not None:
        _pass(expert=expert, item_id=after_item_id)
    own = _own_open_assignment(
        campaign=campaign, expert=expert, after_item_id=after_item_id, has_open=has_open
    )
    if own is not None:
        return own

    def passed() -> Assignment | None:
        if has_open is False:
            return None
        return _own_open_assignment(
            campaign=campaign, expert=expert, after_item_id=after_item_id, passed=True
        )

    try:
        fresh = _new_work(campaign=campaign, expert=expert)
    except CalibrationRequired:
        held = passed()
        if held is None:
            raise
        return held
    return fresh if fresh is not None else passed()


def _new_work(*, campaign: Campaign, expert: AbstractBaseUser) -> Assignment | None:
    """A new lease (gold at the campaign's rate, else the queue's next item), once the
    calibration gate lets the expert take new work."""
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
    if not lease_is_live(assignment, now):
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
