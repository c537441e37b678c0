"""Reads for an expert's way through a campaign: where an item stands in their work (item k of
N, the previous item), whether they still hold an item, and the final label they learn once the
item is final."""

from dataclasses import dataclass
from decimal import Decimal

from django.contrib.auth.models import AbstractBaseUser
from django.core.exceptions import ObjectDoesNotExist
from django.db import connection
from django.db.models import OuterRef, Subquery
from django.utils import timezone

from annotation.models import Assignment, AssignmentStatus, ExpertProgress, Grade, Item
from annotation.slots import item_open_sql, slot_taken_sql


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
    items than OFFERABLE_BOUND could still be offered, so `total` and `remaining` are bounds
    the true counts exceed (the page says "over")."""

    number: int
    total: int
    remaining: int
    previous_item_id: int | None
    more: bool = False


# Past this many items "next" could still offer, the page says "over": counting them all would
# read the whole open queue on each load (12,000 items with their assignments on a 20,000-item
# campaign), and past a hundred the exact number tells the expert nothing more.
OFFERABLE_BOUND = 100

# The items "next" could still offer the expert (as annotation.services.assignment selects them):
# open (needing a judgement, not final, not gold, not held back by a routing budget), never held
# by the expert, a judgement slot free; counted up to OFFERABLE_BOUND + 1. The walk goes by the
# ranked queue's index (annotation.models.Item, item_ranked_queue) backwards: the items with the
# fewest judgements first, which the expert cannot have judged, so the count stops after about
# OFFERABLE_BOUND items whatever the expert did before. Portable SQL: SQLite runs it too.
_OFFERABLE_SQL = f"""
SELECT count(*) FROM (
  SELECT 1 FROM annotation_item i
  WHERE i.campaign_id = %(campaign)s AND {item_open_sql("i")}
    AND (SELECT count(*) FROM annotation_assignment a
         WHERE a.item_id = i.id AND {slot_taken_sql("a")}) < i.required_judgements
    AND NOT EXISTS (SELECT 1 FROM annotation_assignment a
                    WHERE a.item_id = i.id AND a.expert_id = %(expert)s)
  ORDER BY i.submitted_count, i.route_rank DESC, i.id DESC
  LIMIT %(limit)s
) offerable
"""


def _offerable_count(*, campaign_id: int, expert: AbstractBaseUser, now) -> int:
    """The items "next" could still offer the expert, up to OFFERABLE_BOUND + 1."""
    params = {
        "campaign": campaign_id,
        "expert": expert.pk,
        "now": connection.ops.adapt_datetimefield_value(now),
        "limit": OFFERABLE_BOUND + 1,
    }
    with connection.cursor() as cursor:
        cursor.execute(_OFFERABLE_SQL, params)
        return cursor.fetchone()[0]


def _submitted_and_previous(
    *, campaign_id: int, expert: AbstractBaseUser, place: int | None
) -> tuple[int, int | None]:
    """The expert's count of submitted grades in the campaign (ExpertProgress) and the item
    they submitted before the grade at `place` (None: before the next one), in one statement."""
    before = OuterRef("submitted") if place is None else place - 1
    previous = Grade.objects.filter(
        expert=expert, item__campaign_id=campaign_id, sequence=before
    ).values("item_id")[:1]
    row = (
        ExpertProgress.objects.filter(campaign_id=campaign_id, expert=expert)
        .annotate(previous=Subquery(previous))
        .values_list("submitted", "previous")
        .first()
    )
    return row if row is not None else (0, None)


def expert_position(
    *, item: Item, expert: AbstractBaseUser, grade: Grade | None = None
) -> ExpertPosition:
    """Total = the expert's submitted items + the items they hold + the items that could still
    be offered to them (not final, not gold, not held back by a routing budget, a judgement slot
    free, never held by them; in a calibration round, the gold items they never held).
    `grade`: the expert's grade of the item, when the caller has read it (a submitted grade
    keeps its place: its `sequence`)."""
    now = timezone.now()
    place = grade.sequence if grade is not None and grade.is_submitted else None
    submitted, previous = _submitted_and_previous(
        campaign_id=item.campaign_id, expert=expert, place=place
    )
    held = set(
        Assignment.objects.filter(
            item__campaign_id=item.campaign_id,
            item__is_final=False,
            expert=expert,
            status=AssignmentStatus.ACTIVE,
        ).values_list("item_id", flat=True)
    )
    if item.campaign.is_calibration:  # a round's gold items go to every expert, each once
        offerable = (
            Item.objects.filter(campaign_id=item.campaign_id, is_gold=True)
            .exclude(assignments__expert=expert)
            .count()
        )
    else:
        offerable = _offerable_count(campaign_id=item.campaign_id, expert=expert, now=now)
    more = offerable > OFFERABLE_BOUND
    offerable = min(offerable, OFFERABLE_BOUND)
    if place is not None:
        held.discard(item.pk)
        total = submitted + len(held) + offerable
        return ExpertPosition(
            number=place,
            total=total,
            remaining=total - submitted,
            previous_item_id=previous,
            more=more,
        )
    held.add(item.pk)
    total = submitted + len(held) + offerable
    return ExpertPosition(
        number=submitted + 1,
        total=total,
        remaining=total - submitted - 1,
        previous_item_id=previous,
        more=more,
    )


@dataclass(frozen=True)
class FinalFeedback:
    """What an expert learns once their item is final: the label and, when an adjudicator
    decided it, their rationale (the feedback that calibrates experts)."""

    value: Decimal
    source: str
    rationale: str
    resolved_by: str


def final_feedback(*, item: Item) -> FinalFeedback | None:
    if not item.is_final:
        return None
    try:
        label = item.final_label
    except ObjectDoesNotExist:
        return None
    case = label.case
    return FinalFeedback(
        value=label.value,
        source=label.get_source_display(),
        rationale=case.rationale if case else "",
        resolved_by=case.resolved_by.get_username() if case and case.resolved_by else "",
    )
