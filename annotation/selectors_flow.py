"""Reads for an expert's way through a campaign: where an item stands in their work (item k of
N, the previous item), whether they still hold an item, and the final label they learn once the
item is final."""

from dataclasses import dataclass
from decimal import Decimal

from django.contrib.auth.models import AbstractBaseUser
from django.core.exceptions import ObjectDoesNotExist
from django.db.models import Count, F, OuterRef, Q, Subquery
from django.db.models.functions import Coalesce
from django.utils import timezone

from annotation.models import Assignment, AssignmentStatus, Grade, GradeStatus, Item


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
    `remaining` left for them after it, and the item they submitted before it."""

    number: int
    total: int
    remaining: int
    previous_item_id: int | None


def expert_position(*, item: Item, expert: AbstractBaseUser) -> ExpertPosition:
    """Total = the expert's submitted items + the items they hold + the items that could still
    be offered to them (not final, not gold, a judgement slot free, never held by them; in a
    calibration round, the gold items they never held)."""
    now = timezone.now()
    submitted = list(
        Grade.objects.filter(
            item__campaign_id=item.campaign_id, expert=expert, status=GradeStatus.SUBMITTED
        )
        .order_by("submitted_at", "id")
        .values_list("item_id", flat=True)
    )
    held = set(
        Assignment.objects.filter(
            item__campaign_id=item.campaign_id,
            item__is_final=False,
            expert=expert,
            status=AssignmentStatus.ACTIVE,
        ).values_list("item_id", flat=True)
    )
    taken = (
        Assignment.objects.filter(
            Q(status=AssignmentStatus.DONE)
            | Q(status=AssignmentStatus.ACTIVE, leased_until__gt=now),
            item_id=OuterRef("pk"),
        )
        .order_by()
        .values("item_id")
        .annotate(n=Count("pk"))
        .values("n")
    )
    offerable = (
        Item.objects.filter(
            campaign_id=item.campaign_id, needs_work=True, is_final=False, is_gold=False
        )
        .exclude(assignments__expert=expert)
        .annotate(taken=Coalesce(Subquery(taken), 0))
        .filter(taken__lt=F("required_judgements"))
    )
    if item.campaign.is_calibration:  # a round's gold items go to every expert, each once
        offerable = Item.objects.filter(campaign_id=item.campaign_id, is_gold=True).exclude(
            assignments__expert=expert
        )
    offerable = offerable.count()
    if item.pk in submitted:
        index = submitted.index(item.pk)
        held.discard(item.pk)
        total = len(submitted) + len(held) + offerable
        return ExpertPosition(
            number=index + 1,
            total=total,
            remaining=total - len(submitted),
            previous_item_id=submitted[index - 1] if index else None,
        )
    held.add(item.pk)
    total = len(submitted) + len(held) + offerable
    return ExpertPosition(
        number=len(submitted) + 1,
        total=total,
        remaining=total - len(submitted) - 1,
        previous_item_id=submitted[-1] if submitted else None,
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
