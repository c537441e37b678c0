"""Reads of assignment: the items an admin may give by hand, an expert's assignment of an item,
and where an item stands in the expert's work (item k of N, counted over what "next" could
offer)."""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass

from django.contrib.auth import get_user_model
from django.contrib.auth.models import AbstractBaseUser
from django.db import connection
from django.db.models import QuerySet
from django.utils import timezone

from annotation.models import (
    Assignment,
    AssignmentStatus,
    Campaign,
    ExpertProgress,
    Grade,
    Item,
    MemberRole,
)
from annotation.slots import item_open_sql, never_held_sql, takeable_sql
from core.sql import Table


def assignment_for_expert(*, item_id: int, expert: AbstractBaseUser) -> Assignment | None:
    """The expert's assignment of the item, if any."""
    return Assignment.objects.filter(item_id=item_id, expert=expert).first()


HAND_ASSIGNABLE_SHOWN = 1000


def items_for_hand_assignment(
    campaign: Campaign, *, blind: bool = False
) -> list[tuple[str, list[Item]]]:
    """The items an admin may still give to an expert (not final), grouped by problem, for the
    dashboard's "assign by hand" list: problem, then proof (generator, sample; for an admin
    blind to some proof, core.visibility, the proof's text hash: an order naming no model); at
    most HAND_ASSIGNABLE_SHOWN of them."""
    order = ("proof__text_hash",) if blind else ("proof__generator", "proof__sample_index")
    items = (
        Item.objects.filter(campaign=campaign, is_final=False)
        .select_related("proof__problem")
        .only(
            "id",
            "submitted_count",
            "required_judgements",
            "is_gold",
            "proof__generator",
            "proof__sample_index",
            "proof__sample_key",
            "proof__text_hash",
            "proof__problem__external_id",
        )
        .order_by("proof__problem__external_id", *order, "id")[:HAND_ASSIGNABLE_SHOWN]
    )
    groups: dict[str, list[Item]] = defaultdict(list)
    for item in items:
        groups[item.proof.problem.external_id].append(item)
    return list(groups.items())


def experts_for_assignment(campaign: Campaign) -> QuerySet:
    return (
        get_user_model()
        .objects.filter(
            campaign_memberships__campaign=campaign, campaign_memberships__role=MemberRole.EXPERT
        )
        .order_by("username")
        .distinct()
    )


def expert_holds_item(*, expert: AbstractBaseUser, item_id: int | None) -> bool:
    """The expert has an open (unsubmitted, not skipped) assignment on the item."""
    return (
        item_id is not None
        and Assignment.objects.filter(
            item_id=item_id, expert=expert, status=AssignmentStatus.ACTIVE
        ).exists()
    )


@dataclass(frozen=True)
class ExpertPosition:
    """Where an item stands in an expert's work on its campaign: item `number` of `total`, with
    `remaining` left for them after it, and the item they submitted before it. `more`: more
    items than OFFERABLE_BOUND could still be offered, or the expert holds more than that many
    other items, so `total` and `remaining` are bounds the true counts exceed (the page says
    "over")."""

    number: int
    total: int
    remaining: int
    previous_item_id: int | None
    more: bool = False


# Past this many items "next" could still offer, or the expert holds beside this one, the page
# says "over": counting them all would read the whole open queue on each load (12,000 items with
# their assignments on a 20,000-item campaign), or every item a manager handed the expert (1,250
# held: 6.9 ms a load where the bounded count takes 0.27, EXPLAIN ANALYZE on a busy 2-core
# machine), and past a hundred the exact number tells the expert nothing more.
OFFERABLE_BOUND = 100


# The items "next" could still offer the expert (as annotation.services.assignment selects them):
# open (needing a judgement, not final, not gold, not held back by a routing budget), never held
# by the expert, a judgement slot free; counted up to OFFERABLE_BOUND + 1. The walk goes by the
# ranked queue's index (annotation.models.Item, item_ranked_queue) backwards: the items with the
# fewest judgements first, which the expert cannot have judged, so the count stops after about
# OFFERABLE_BOUND items whatever the expert did before.
# table and column names from the models
i = Table(Item, "i")
g, gi, h, hi = Table(Grade, "g"), Table(Item, "gi"), Table(Assignment, "h"), Table(Item, "hi")
p = Table(ExpertProgress, "p")


_OFFERABLE = f"""
  SELECT 1 FROM {i}
  WHERE {i.campaign_id} = %(campaign)s AND {item_open_sql("i")} AND {takeable_sql("i")}
  ORDER BY {i.submitted_count}, {i.route_rank} DESC, {i.id} DESC
"""


# The campaign's gold items the expert never held: in a calibration round, what it offers (each
# goes to every expert once); in a campaign with a gold rate, what a gold turn may serve.
_GOLD_NEVER_HELD = f"""
  FROM {i} WHERE {i.campaign_id} = %(campaign)s AND {i.is_gold} AND {never_held_sql("i")}
"""
_OFFERABLE_GOLD = f"SELECT 1 {_GOLD_NEVER_HELD}"
_FIRST_GOLD_NEVER_HELD = f"SELECT {i.id} {_GOLD_NEVER_HELD} ORDER BY {i.id} LIMIT 1"


def gold_never_held(*, campaign_id: int, expert_id: int) -> int | None:
    """The first (by id) of the campaign's gold items the expert never held, or None."""
    with connection.cursor() as cursor:
        cursor.execute(_FIRST_GOLD_NEVER_HELD, {"campaign": campaign_id, "expert": expert_id})
        row = cursor.fetchone()
    return None if row is None else row[0]


# The whole position in one statement: the expert's count of submitted grades (ExpertProgress),
# the item submitted before the grade at %(before)s (NULL: before the next one), the other open
# items the expert holds and the offerable items, each up to the bound.
_SUBMITTED = f"""(SELECT {p.submitted} FROM {p}
   WHERE {p.campaign_id} = %(campaign)s AND {p.expert_id} = %(expert)s)"""


def _position_sql(offerable: str) -> str:
    return f"""
SELECT
  coalesce({_SUBMITTED}, 0),
  (SELECT {g.item_id} FROM {g} JOIN {gi} ON {gi.id} = {g.item_id}
   WHERE {g.expert_id} = %(expert)s AND {gi.campaign_id} = %(campaign)s
     AND {g.sequence} = coalesce(%(before)s, {_SUBMITTED})),
  (SELECT count(*) FROM (SELECT 1 FROM {h} JOIN {hi} ON {hi.id} = {h.item_id}
   WHERE {h.expert_id} = %(expert)s AND {h.status} = '{AssignmentStatus.ACTIVE.value}'
     AND {hi.campaign_id} = %(campaign)s AND NOT {hi.is_final} AND {h.item_id} <> %(item)s
   LIMIT %(limit)s) held),
  (SELECT count(*) FROM ({offerable} LIMIT %(limit)s) offerable)
"""


_POSITION_SQL = _position_sql(_OFFERABLE)


_POSITION_GOLD_SQL = _position_sql(_OFFERABLE_GOLD)


def expert_position(
    *, item: Item, expert: AbstractBaseUser, grade: Grade | None = None
) -> ExpertPosition:
    """Total = the expert's submitted items + the items they hold + the items that could still
    be offered to them (not final, not gold, not held back by a routing budget, a judgement slot
    free, never held by them; in a calibration round, the gold items they never held), the
    last two each counted up to OFFERABLE_BOUND.
    `grade`: the expert's grade of the item, when the caller has read it (a submitted grade
    keeps its place: its `sequence`). One statement."""
    place = grade.sequence if grade is not None and grade.is_submitted else None
    params = {
        "campaign": item.campaign_id,
        "expert": expert.pk,
        "item": item.pk,
        "before": None if place is None else place - 1,
        "now": connection.ops.adapt_datetimefield_value(timezone.now()),
        "limit": OFFERABLE_BOUND + 1,
    }
    with connection.cursor() as cursor:
        cursor.execute(
            _POSITION_GOLD_SQL if item.campaign.is_calibration else _POSITION_SQL, params
        )
        submitted, previous, held_others, offerable = cursor.fetchone()
    more = offerable > OFFERABLE_BOUND or held_others > OFFERABLE_BOUND
    offerable, held_others = min(offerable, OFFERABLE_BOUND), min(held_others, OFFERABLE_BOUND)
    if place is not None:
        total = submitted + held_others + offerable
        return ExpertPosition(
            number=place,
            total=total,
            remaining=total - submitted,
            previous_item_id=previous,
            more=more,
        )
    total = submitted + held_others + 1 + offerable
    return ExpertPosition(
        number=submitted + 1,
        total=total,
        remaining=total - submitted - 1,
        previous_item_id=previous,
        more=more,
    )
