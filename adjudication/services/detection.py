"""Detection: when an item holds all its judgements, derive its label or open a case."""

from __future__ import annotations

import logging
from dataclasses import dataclass
from decimal import Decimal
from functools import cache, partial

from django.contrib.auth.models import AbstractBaseUser
from django.db import connection, transaction
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
from adjudication.services.labels import DERIVED_SOURCES, label_write
from adjudication.signals import case_opened, case_settled
from annotation.models import Campaign, Grade, GradeStatus, Item, Scale
from annotation.scales import scale_spec
from core.signals import send_on_commit
from core.sql import Table

logger = logging.getLogger(__name__)


class AdjudicationError(ValueError):
    """A request the adjudication rules refuse, in words fit to show."""


def effective_tolerance(*, scale: str, tolerance: Decimal) -> Decimal:
    """The campaign's tolerance; on 0 / 0.5 / 1 only exact agreement counts."""
    return Decimal(0) if scale == Scale.TERNARY else Decimal(tolerance)


def _unresolved_case(item: Item) -> AdjudicationCase | None:
    return (
        AdjudicationCase.objects.select_for_update()
        .filter(item=item)
        .exclude(status=CaseStatus.RESOLVED)
        .first()
    )


def _log(case: AdjudicationCase, kind: str, actor=None, text: str = "", **data) -> None:
    CaseEvent.objects.create(case=case, kind=kind, actor=actor, text=text, data=data)


def case_announce(signal, case_id: int) -> None:
    """Sends `case_opened` or `case_settled` for the case once the transaction commits; a
    receiver that raises is logged, and never undoes the case's change."""
    send_on_commit(signal, sender=AdjudicationCase, event=f"case {case_id}", case_id=case_id)


def _scores(grades: list[tuple[int, Decimal]]) -> dict[str, str]:
    return {str(pk): format(score.normalize(), "f") for pk, score in grades}


@dataclass(frozen=True)
class _Judged:
    """The item as its evaluation sees it, read in one statement under its row lock."""

    required: int
    scheme_id: int | None
    scale: str
    tolerance: Decimal
    policy: str
    is_gold: bool
    is_calibration: bool
    label_id: int | None
    label_source: str | None
    case_id: int | None
    grades: list[tuple[int, Decimal]]  # (id, score) of the submitted judgements, oldest first

    @property
    def label_is_kept(self) -> bool:
        """A label that judgements no longer change: set by an adjudicator, an import or the
        labelling loop, or the label of a gold item (experts are checked against it)."""
        return self.label_id is not None and (
            self.is_gold or self.label_source not in DERIVED_SOURCES
        )


@cache
def _judged_sql() -> str:
    """One row per submitted judgement (one row with no judgement when there is none)."""
    i, c, k = Table(Item, "i"), Table(Campaign, "c"), Table(AdjudicationCase, "k")
    lb, g = Table(FinalLabel, "l"), Table(Grade, "g")
    return f"""
SELECT {i.required_judgements}, {i.scheme_id}, {c.scale}, {c.tolerance}, {c.label_policy},
       {i.is_gold}, {c.is_calibration}, {lb.id}, {lb.source},
       (SELECT {k.id} FROM {k}
        WHERE {k.item_id} = {i.id} AND {k.status} <> %(resolved)s ORDER BY {k.id} LIMIT 1),
       {g.id}, {g.score}
FROM {i}
JOIN {c} ON {c.id} = {i.campaign_id}
LEFT JOIN {lb} ON {lb.item_id} = {i.id}
LEFT JOIN {g} ON {g.item_id} = {i.id} AND {g.status} = %(submitted)s
WHERE {i.id} = %(item)s
ORDER BY {g.id}
FOR UPDATE OF i"""


def _judged(item_id: int) -> _Judged:
    """Locks the item's row (PostgreSQL) and reads what its evaluation needs, its submitted
    judgements with it: a hand-written join, since every submission that completes an item
    runs it."""
    sql = _judged_sql()
    params = {"item": item_id, "resolved": CaseStatus.RESOLVED, "submitted": GradeStatus.SUBMITTED}
    with connection.cursor() as cursor:
        cursor.execute(sql, params)
        rows = cursor.fetchall()
    if not rows:
        raise Item.DoesNotExist(f"item {item_id} does not exist")
    (required, scheme_id, scale, tolerance, policy, is_gold, is_calibration, label_id) = rows[0][:8]
    label_source, case_id = rows[0][8:10]
    return _Judged(
        required=required,
        scheme_id=scheme_id,
        scale=scale,
        tolerance=Decimal(str(tolerance)),
        policy=policy,
        is_gold=bool(is_gold),
        is_calibration=bool(is_calibration),
        label_id=label_id,
        label_source=label_source,
        case_id=case_id,
        grades=[(pk, Decimal(str(score))) for *_, pk, score in rows if pk is not None],
    )


_G = Table(Grade)
_SUBMITTED_SCORES_SQL = (
    f"SELECT {_G.id}, {_G.score} FROM {_G} WHERE {_G.item_id} = %s AND {_G.status} = %s "
    f"ORDER BY {_G.id}"
)


def _submitted_scores(item_id: int) -> list[tuple[int, Decimal]]:
    """(grade id, score) of the item's submitted judgements, oldest first."""
    sql = _SUBMITTED_SCORES_SQL
    with connection.cursor() as cursor:
        cursor.execute(sql, [item_id, GradeStatus.SUBMITTED])
        return [(pk, Decimal(str(score))) for pk, score in cursor.fetchall()]


@transaction.atomic(savepoint=False)
def item_evaluate(*, item_id: int) -> int | AdjudicationCase | None:
    """Compares the item's submitted judgements once all are in (and again after a revision).

    One judgement: a "single" label. Within the campaign tolerance: a label by the campaign's
    policy (the policy and arithmetic recorded on it), and an unresolved disagreement case is
    closed as "agreed". Beyond it: a case opens (or the open one records the new difference).
    These derived labels follow the judgements: a revision re-derives the label, or removes it
    and opens a case when the experts no longer agree. A label set by an adjudicator, an
    import or the labelling loop is kept, as is a gold item's (experts are checked against
    it), and a case an admin opened by hand waits for an adjudicator.
    Runs inside the submitting transaction (through `item_judged`) without a savepoint of its
    own: if it fails, the judgement that triggered it is not recorded either. Returns the key of
    the item's label, its case, or None (not all judgements in, or a calibration round).
    """
    item = _judged(item_id)
    if item.is_calibration:
        return None  # a calibration round's grades are checked against gold, never labels
    if item.label_is_kept:
        return item.label_id
    grades = item.grades
    if len(grades) < item.required or not grades:
        return None
    case = None
    if item.case_id is not None:
        case = AdjudicationCase.objects.select_for_update().get(pk=item.case_id)
    scores = [score for _, score in grades]
    grade_ids = [pk for pk, _ in grades]
    difference = agreement.disagreement(scores)
    if case is not None and case.opened_reason == OpenedReason.MANUAL:
        _log(case, EventKind.REVISED, scores=_scores(grades))
        return case
    write_label = partial(label_write, item_id=item_id, scale=item.scale, scheme_id=item.scheme_id)
    if len(grades) == 1:
        return write_label(
            value=scores[0],
            source=LabelSource.SINGLE,
            policy="single judgement",
            grade_ids=grade_ids,
        )
    tolerance = effective_tolerance(scale=item.scale, tolerance=item.tolerance)
    if difference <= tolerance:
        value, how = agreement.apply_policy(scores, item.policy, scale_spec(item.scale).values)
        if case is not None:
            case.status = CaseStatus.RESOLVED
            case.resolution = Resolution.AGREED
            case.score = value
            case.disagreement = difference
            case.resolved_at = timezone.now()
            case.save()
            _log(case, EventKind.RESOLVED, text=how, scores=_scores(grades), resolution="agreed")
            case_announce(case_settled, case.pk)
        return write_label(
            value=value,
            source=LabelSource.AGREEMENT,
            policy=f"{how} (difference {difference.normalize():f} within tolerance "
            f"{tolerance.normalize():f})",
            grade_ids=grade_ids,
            case_id=case.pk if case is not None else None,
        )
    if item.label_id is not None:
        # a revision undid the agreement: the derived label goes, a case decides
        FinalLabel.objects.filter(pk=item.label_id).delete()
    if case is None:
        case = AdjudicationCase.objects.create(
            item_id=item_id, opened_reason=OpenedReason.DISAGREEMENT, disagreement=difference
        )
        _log(
            case, EventKind.OPENED, text="disagreement beyond the tolerance", scores=_scores(grades)
        )
        case_announce(case_opened, case.pk)
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
    grades = _submitted_scores(item.pk)
    if not grades:
        raise AdjudicationError(f"item {item.pk} has no submitted judgement to adjudicate yet")
    case = AdjudicationCase.objects.create(
        item=item,
        opened_reason=OpenedReason.MANUAL,
        opened_by=user,
        disagreement=agreement.disagreement([score for _, score in grades]),
    )
    _log(case, EventKind.OPENED, actor=user, text=note or "sent to adjudication by hand")
    case_announce(case_opened, case.pk)
    return case
