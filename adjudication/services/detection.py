"""Detection: when an item holds all its judgements, derive its label or open a case."""

from __future__ import annotations

from decimal import Decimal

from django.contrib.auth.models import AbstractBaseUser
from django.db import transaction
from django.utils import timezone

from adjudication import agreement
from adjudication.models import (
    AdjudicationCase,
    CaseEvent,
    CaseStatus,
    EventKind,
    FinalLabel,
    LabelSource,
    OpenedReason,
    Resolution,
)
from adjudication.services.labels import final_label_set
from annotation.models import Grade, GradeStatus, Item
from annotation.scales import scale_spec


class AdjudicationError(ValueError):
    """A request the adjudication rules refuse, in words fit to show."""


def effective_tolerance(*, scale: str, tolerance: Decimal) -> Decimal:
    """The campaign's tolerance; on 0 / 0.5 / 1 only exact agreement counts."""
    return Decimal(0) if scale == "0-0.5-1" else Decimal(tolerance)


def _submitted(item: Item) -> list[Grade]:
    return list(item.grades.filter(status=GradeStatus.SUBMITTED).order_by("id"))


def _unresolved_case(item: Item) -> AdjudicationCase | None:
    return (
        AdjudicationCase.objects.select_for_update()
        .filter(item=item)
        .exclude(status=CaseStatus.RESOLVED)
        .first()
    )


def _log(case: AdjudicationCase, kind: str, actor=None, text: str = "", **data) -> None:
    CaseEvent.objects.create(case=case, kind=kind, actor=actor, text=text, data=data)


def _scores(grades: list[Grade]) -> dict[str, str]:
    return {str(g.pk): format(g.score.normalize(), "f") for g in grades}


@transaction.atomic
def item_evaluate(*, item_id: int) -> FinalLabel | AdjudicationCase | None:
    """Compares the item's submitted judgements once all are in (and again after a revision).

    One judgement: a "single" label. Within the campaign tolerance: a label by the campaign's
    policy (the policy and arithmetic recorded on it), and an unresolved disagreement case is
    closed as "agreed". Beyond it: a case opens (or the open one records the new difference).
    An item that already has its final label keeps it (a gold item goes on taking judgements
    that are checked against it), and a case an admin opened by hand waits for an adjudicator.
    """
    item = Item.objects.select_for_update().select_related("campaign").get(pk=item_id)
    label = FinalLabel.objects.filter(item=item).first()
    if label is not None:
        # Final: only adjudication changes it (gold items keep taking judgements afterwards).
        return label
    grades = _submitted(item)
    if len(grades) < item.required_judgements or not grades:
        return None
    campaign = item.campaign
    case = _unresolved_case(item)
    scores = [g.score for g in grades]
    difference = agreement.disagreement(scores)
    if case is not None and case.opened_reason == OpenedReason.MANUAL:
        _log(case, EventKind.REVISED, scores=_scores(grades))
        return case
    if len(grades) == 1:
        return final_label_set(
            item=item,
            value=scores[0],
            source=LabelSource.SINGLE,
            policy="single judgement",
            grade_ids=[grades[0].pk],
        )
    tolerance = effective_tolerance(scale=campaign.scale, tolerance=campaign.tolerance)
    if difference <= tolerance:
        value, how = agreement.apply_policy(
            scores, campaign.label_policy, scale_spec(campaign.scale).values
        )
        if case is not None:
            case.status = CaseStatus.RESOLVED
            case.resolution = Resolution.AGREED
            case.score = value
            case.disagreement = difference
            case.resolved_at = timezone.now()
            case.save()
            _log(case, EventKind.RESOLVED, text=how, scores=_scores(grades), resolution="agreed")
        return final_label_set(
            item=item,
            value=value,
            source=LabelSource.AGREEMENT,
            policy=f"{how} (difference {difference.normalize():f} within tolerance "
            f"{tolerance.normalize():f})",
            grade_ids=[g.pk for g in grades],
            case=case,
        )
    if case is None:
        case = AdjudicationCase.objects.create(
            item=item, opened_reason=OpenedReason.DISAGREEMENT, disagreement=difference
        )
        _log(
            case, EventKind.OPENED, text="disagreement beyond the tolerance", scores=_scores(grades)
        )
        return case
    case.disagreement = difference
    if case.status == CaseStatus.RETURNED:
        case.status = CaseStatus.ASSIGNED if case.assigned_to_id else CaseStatus.OPEN
    case.save()
    _log(case, EventKind.REVISED, scores=_scores(grades))
    return case


@transaction.atomic
def case_open_manual(*, item: Item, user: AbstractBaseUser, note: str = "") -> AdjudicationCase:
    """An admin sends an item to adjudication by hand (whatever its judgements or label)."""
    item = Item.objects.select_for_update().get(pk=item.pk)
    if _unresolved_case(item) is not None:
        raise AdjudicationError(f"item {item.pk} already has an unresolved case")
    grades = _submitted(item)
    if not grades:
        raise AdjudicationError(f"item {item.pk} has no submitted judgement to adjudicate yet")
    case = AdjudicationCase.objects.create(
        item=item,
        opened_reason=OpenedReason.MANUAL,
        opened_by=user,
        disagreement=agreement.disagreement([g.score for g in grades]),
    )
    _log(case, EventKind.OPENED, actor=user, text=note or "sent to adjudication by hand")
    return case
