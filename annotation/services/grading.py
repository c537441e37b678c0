"""Grades: server-side drafts (autosave), idempotent submission, revisions with history.

The server holds the score: on a checklist (or band) item the final score is the computed one
(floored to the scale) unless the expert chose another, an override that needs a note
(`score_note`). Every write increments the grade's `version`; a draft, submission or revision
that names the version it was based on (`base_version`) is refused with GradeConflict (409) when
the grade moved on since, unless the page now writing wrote it (its `Origin`), and so is a
different submission of a submitted grade, whatever its idempotency key; an identical repeat
returns the grade as stored. Every write records its origin, so that a conflict names who wrote
the stored version (this page, another tab, another device)."""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass
from functools import cache

from django.contrib.auth.models import AbstractBaseUser
from django.db import connection, transaction
from django.utils import timezone

from annotation import opinions
from annotation.models import (
    Assignment,
    AssignmentStatus,
    Campaign,
    CampaignStatus,
    ErrorSpan,
    Grade,
    GradeRevision,
    GradeStatus,
    Item,
)
from annotation.services.assignment import _taken_count
from annotation.services.grade_checks import (
    NO_ORIGIN,
    GradeChecked,
    GradeError,
    GradeInput,
    GradeRules,
    Origin,
    SpanInput,
    grade_check,
    grade_snapshot,
    same_judgement,
    stale_conflict,
    submitted_conflict,
    written_here,
)
from annotation.services.progress import COUNT_SQL
from annotation.signals import item_judged, judgement_submitted
from annotation.slots import lease_live_sql
from core.sql import Table, insert_one
from problems.models import Proof
from rubrics.models import MarkingScheme, SchemeStatus
from rubrics.services import scheme_freeze_if_approved
from rubrics.structure import Scheme


def _apply(
    grade: Grade, data: GradeInput, checked: GradeChecked, scheme_id: int | None, origin: Origin
) -> None:
    origin.stamp(grade)
    grade.score = checked.score
    grade.computed_score = checked.computed
    grade.awards = data.awards
    grade.deductions = data.deductions
    grade.via_equivalent = data.via_equivalent
    grade.score_note = data.score_note
    grade.comment = data.comment
    grade.step_verdicts = data.step_verdicts
    grade.first_wrong_step = data.first_wrong_step
    grade.seconds_spent = max(grade.seconds_spent, data.seconds_spent)
    grade.scheme_id = scheme_id
    grade.version += 1


_SPAN = Table(ErrorSpan)
_DELETE_SPANS_SQL = f"DELETE FROM {_SPAN} WHERE {_SPAN.grade_id} = %s"


def _replace_spans(grade: Grade, spans: list[SpanInput], *, fresh: bool = False) -> None:
    if not fresh:
        # one statement (spans have no dependants): the ORM's delete would collect them first
        with connection.cursor() as cursor:
            cursor.execute(_DELETE_SPANS_SQL, [grade.pk])
    written = (
        ErrorSpan.objects.bulk_create(ErrorSpan(grade=grade, **asdict(span)) for span in spans)
        if spans
        else []
    )
    # the spans as written are the grade's spans (in the model's order, `Grade.span_list`):
    # reading them back costs no query
    grade.written_spans = sorted(written, key=lambda span: (span.start, span.end, span.pk))


def _lock_item(item: Item) -> Item:
    return (
        Item.objects.select_for_update(of=("self",))
        .select_related("campaign", "proof", "scheme")
        .get(pk=item.pk)
    )


def _refuse_if_closed(*, campaign_open: bool, is_final: bool, is_gold: bool) -> None:
    if not campaign_open:
        raise GradeError("The campaign is closed: grades can no longer change.")
    if is_final and not is_gold:
        raise GradeError("This item's label is final: its grades can no longer change.")


def _check_open(item: Item) -> None:
    _refuse_if_closed(
        campaign_open=item.campaign.is_open, is_final=item.is_final, is_gold=item.is_gold
    )


@transaction.atomic
def grade_save_draft(
    *, item: Item, expert: AbstractBaseUser, data: GradeInput, origin: Origin = NO_ORIGIN
) -> Grade:
    """Autosave: stores whatever the expert has so far (spans included), never refusing work
    in progress for being incomplete; a score off the scale and spans that cannot be placed
    are refused, as a submission would refuse them. A draft based on an older version is a
    GradeConflict unless it says what the stored draft says (an identical repeat, as for a
    submission) or the stored version came from the same page (its answer was lost: this
    draft is the page's later state)."""
    item = Item.objects.select_related("campaign", "proof", "scheme").get(pk=item.pk)
    _check_open(item)
    if not Assignment.objects.filter(item=item, expert=expert).exists():
        raise GradeError("This item is not assigned to you.")
    grade, _ = Grade.objects.select_for_update().get_or_create(
        item=item, expert=expert, defaults={"scheme_id": item.scheme_id}
    )
    if grade.is_submitted:
        raise submitted_conflict(grade, origin, draft=True)
    grade.item = item
    checked = grade_check(GradeRules.of(item), data, final=False)
    if (
        data.base_version is not None
        and data.base_version != grade.version
        and not written_here(grade.origin_page, origin)
    ):
        if same_judgement(grade, data, checked):
            # a change sent again whose first copy was stored after the page that sent it was
            # left (its answer never read): a repeat, not another tab's work
            return grade
        raise stale_conflict(grade, origin)
    refused = [p for p in checked.problems if p.startswith(("error span", "score:"))]
    if refused:
        raise GradeError(refused)
    _apply(grade, data, checked, item.scheme_id, origin)
    grade.save()
    _replace_spans(grade, data.spans)
    return grade


def _send_signals(item: Item, grade: Grade, *, revised: bool) -> None:
    """`item_judged` now, in the transaction (the label or case commits with the judgement);
    `judgement_submitted` once the transaction commits."""
    if item.submitted_count >= item.required_judgements:
        item_judged.send(sender=Item, item_id=item.pk)
    transaction.on_commit(
        lambda: judgement_submitted.send(
            sender=Grade, item_id=item.pk, grade_id=grade.pk, revised=revised
        )
    )


@dataclass(frozen=True)
class _Submission:
    """The item as a submission sees it, read in one statement under the item's row lock:
    its state, its rules, and the submitting expert's assignment and grade (if any)."""

    rules: GradeRules
    campaign_open: bool
    is_final: bool
    is_gold: bool
    required: int
    scheme_id: int | None
    scheme_status: str | None
    assignment_id: int | None
    assignment_status: str | None
    lease_expired: bool
    grade_id: int | None
    grade_status: str | None
    grade_seconds: int | None
    grade_version: int
    grade_key: str
    grade_page: str


@cache
def _submission_sql() -> str:
    i, c, p = Table(Item, "i"), Table(Campaign, "c"), Table(Proof, "p")
    s, a, g = Table(MarkingScheme, "s"), Table(Assignment, "a"), Table(Grade, "g")
    return f"""
SELECT {c.status}, {c.scale}, {c.error_taxonomy}, {p.text}, {s.structure}, {s.status},
       {i.is_final}, {i.is_gold}, {i.required_judgements}, {i.scheme_id},
       {a.id}, {a.status}, NOT {lease_live_sql("a")}, {g.id}, {g.status}, {g.seconds_spent},
       {g.version}, {g.submit_key}, {g.origin_page}
FROM {i}
JOIN {c} ON {c.id} = {i.campaign_id}
JOIN {p} ON {p.id} = {i.proof_id}
LEFT JOIN {s} ON {s.id} = {i.scheme_id}
LEFT JOIN {a} ON {a.item_id} = {i.id} AND {a.expert_id} = %(expert)s
LEFT JOIN {g} ON {g.item_id} = {i.id} AND {g.expert_id} = %(expert)s
WHERE {i.id} = %(item)s"""


_ITEM = Table(Item)
_LOCK_ITEM_SQL = f"SELECT 1 FROM {_ITEM} WHERE {_ITEM.id} = %s FOR UPDATE"


def _json(value):
    return json.loads(value) if isinstance(value, str | bytes) else value


def _submission(item_id: int, expert_id: int, now) -> _Submission:
    """Locks the item's row (PostgreSQL), then reads what the submission needs in one
    statement: a hand-written join, since this is the hottest write path of the app. The read
    comes after the lock, in its own statement, so that it sees what a submission that held
    the lock before committed (an identical submission arriving at once is then a repeat)."""
    sql = _submission_sql()
    with connection.cursor() as cursor:
        cursor.execute(_LOCK_ITEM_SQL, [item_id])
        cursor.execute(
            sql,
            {
                "item": item_id,
                "expert": expert_id,
                "now": connection.ops.adapt_datetimefield_value(now),
            },
        )
        row = cursor.fetchone()
    if row is None:
        raise Item.DoesNotExist(f"item {item_id} does not exist")
    (campaign_status, scale, taxonomy, text, structure, scheme_status, is_final, is_gold,
     required, scheme_id, assignment_id, assignment_status, expired, grade_id,
     grade_status, grade_seconds, grade_version, grade_key, grade_page) = row  # fmt: skip
    structure = _json(structure)
    return _Submission(
        rules=GradeRules(
            scale=scale,
            taxonomy={entry["key"]: entry["label"] for entry in _json(taxonomy)},
            text=text,
            scheme=Scheme.from_dict(structure) if structure else None,
        ),
        campaign_open=campaign_status == CampaignStatus.OPEN,
        is_final=bool(is_final),
        is_gold=bool(is_gold),
        required=required,
        scheme_id=scheme_id,
        scheme_status=scheme_status,
        assignment_id=assignment_id,
        assignment_status=assignment_status,
        lease_expired=bool(expired),
        grade_id=grade_id,
        grade_status=grade_status,
        grade_seconds=grade_seconds,
        grade_version=grade_version or 0,
        grade_key=grade_key or "",
        grade_page=grade_page or "",
    )


# The submission's bookkeeping (under the item's row lock), one statement: the assignment is
# done, the item holds one more submitted judgement, and the expert's count of submitted grades
# in the campaign gives the grade its place (annotation.services.progress).
_A = Table(Assignment)
_DONE_SQL = f"""
WITH done AS (
  UPDATE {_A} SET {_A.status} = '{AssignmentStatus.DONE.value}', {_A.updated_at} = %(now)s
  WHERE {_A.id} = %(assignment)s
), progress AS ({COUNT_SQL})
UPDATE {_ITEM}
SET {_ITEM.submitted_count} = {_ITEM.submitted_count} + 1,
    {_ITEM.needs_work} = {_ITEM.submitted_count} + 1 < {_ITEM.required_judgements}
WHERE {_ITEM.id} = %(item)s
RETURNING {_ITEM.submitted_count}, {_ITEM.needs_work}, (SELECT * FROM progress)
"""


def _mark_done(assignment_id: int, item: Item, expert_id: int, now) -> tuple[int, bool, int]:
    """(the item's submitted judgements, whether it needs more, the grade's place)."""
    with connection.cursor() as cursor:
        cursor.execute(
            _DONE_SQL,
            {
                "assignment": assignment_id,
                "item": item.pk,
                "now": now,
                "campaign": item.campaign_id,
                "expert": expert_id,
            },
        )
        count, needs_work, place = cursor.fetchone()
        return count, bool(needs_work), place


def _freeze_scheme(scheme_id: int) -> None:
    """Freezes the item's approved scheme version once a submitted grade points at it, so
    that its status never changes again. A version that is no longer approved (another version
    of the problem was approved since the item was created) stays as it is: only the approved
    version can be frozen (`rubrics.services.scheme_freeze_if_approved`, one statement)."""
    scheme_freeze_if_approved(scheme_id=scheme_id)


@transaction.atomic
def grade_submit(
    *,
    item: Item,
    expert: AbstractBaseUser,
    data: GradeInput,
    submit_key: str = "",
    origin: Origin = NO_ORIGIN,
) -> Grade:
    """Submits the expert's judgement of the item. Idempotent: a repeat (double click, retry)
    that says what the submitted grade says returns it; a different judgement of a submitted
    grade is a GradeConflict naming who submitted it (a revision is asked for by name), even
    under the same submission key: a key stands for one submission's content, and other
    content under it is another submission. A submission based on an older version of the
    draft is a GradeConflict too, unless this page wrote that version. Holds the item's row lock
    so that a submission after an expired lease never takes a slot another expert holds. The
    first grade pointing at the item's approved scheme version freezes it, in the same
    transaction."""
    now = timezone.now()
    target = _submission(item.pk, expert.pk, now)
    noun = "review" if item.analysis_id is not None else "grade"
    if target.grade_status == GradeStatus.SUBMITTED:
        stored = Grade.objects.prefetch_related("spans").get(pk=target.grade_id)
        if same_judgement(stored, data, grade_check(target.rules, data, final=True)):
            return stored
        raise submitted_conflict(stored, origin, noun=noun)
    if (
        target.grade_id is not None
        and data.base_version is not None
        and data.base_version != target.grade_version
        and not written_here(target.grade_page, origin)
    ):
        raise stale_conflict(Grade.objects.get(pk=target.grade_id), origin, noun=noun)
    _refuse_if_closed(
        campaign_open=target.campaign_open, is_final=target.is_final, is_gold=target.is_gold
    )
    if target.assignment_id is None or target.assignment_status == AssignmentStatus.RELEASED:
        raise GradeError("This item is not assigned to you (it was skipped or moved).")
    if not target.is_gold and target.lease_expired:
        taken = _taken_count(item.pk, now, exclude_expert_id=expert.pk)
        if taken >= target.required:
            raise GradeError(
                "Your lease on this item expired and other experts took its judgements: your "
                "draft is kept, but this grade cannot be submitted."
            )
    checked = grade_check(target.rules, data, final=True)
    if checked.problems:
        raise GradeError(checked.problems)
    if target.grade_id is None:
        grade = Grade(item=item, expert=expert)
    else:
        # The draft: every column is written below but its creation time (left deferred, so
        # the UPDATE leaves it alone) and the time spent so far (read with the item).
        grade = Grade.from_db(
            connection.alias,
            ["id", "item_id", "expert_id", "seconds_spent"],
            [target.grade_id, item.pk, expert.pk, target.grade_seconds],
        )
        grade.item = item
        grade.updated_at = now
        grade.version = target.grade_version
    _apply(grade, data, checked, target.scheme_id, origin)
    grade.status = GradeStatus.SUBMITTED
    grade.submitted_at = now
    grade.submit_key = submit_key[:64]
    count, needs_work, grade.sequence = _mark_done(target.assignment_id, item, expert.pk, now)
    if target.grade_id is None:  # the judgement without a draft
        insert_one(grade)
    else:
        grade.save()
    _replace_spans(grade, data.spans, fresh=target.grade_id is None)
    if target.scheme_status == SchemeStatus.APPROVED:
        _freeze_scheme(target.scheme_id)
    item.submitted_count, item.needs_work = count, needs_work
    item.required_judgements = target.required
    _send_signals(item, grade, revised=False)
    return grade


@transaction.atomic
def grade_revise(
    *, grade: Grade, user: AbstractBaseUser, data: GradeInput, origin: Origin = NO_ORIGIN
) -> Grade:
    """The expert changes their submitted grade (until the item is final or the campaign
    closes); the old and new values are kept as a GradeRevision. No change, no revision (and
    no new version); a change based on an older version is a GradeConflict, unless this page
    wrote that version."""
    item = _lock_item(grade.item)
    grade = Grade.objects.select_for_update().get(pk=grade.pk)
    if grade.expert_id != user.pk:
        raise GradeError("Only the expert who made a grade can revise it.")
    if not grade.is_submitted:
        raise GradeError("This grade is a draft: submit it instead.")
    _check_open(item)
    if refusal := opinions.ordinary_revision_refusal(grade, item):
        raise GradeError(refusal)
    if item.campaign.is_calibration:
        raise GradeError("A calibration grade cannot be revised: the gold answer was shown.")
    checked = grade_check(GradeRules.of(item), data, final=True)
    if checked.problems:
        raise GradeError(checked.problems)
    grade.item = item
    if same_judgement(grade, data, checked):
        return grade
    if (
        data.base_version is not None
        and data.base_version != grade.version
        and not written_here(grade.origin_page, origin)
    ):
        raise stale_conflict(grade, origin)
    old = grade_snapshot(grade)
    seconds = grade.seconds_spent
    _apply(grade, data, checked, item.scheme_id, origin)
    grade.seconds_spent = seconds + max(0, data.seconds_spent)
    grade.save()
    _replace_spans(grade, data.spans)
    new = grade_snapshot(grade)
    GradeRevision.objects.create(grade=grade, changed_by=user, old=old, new=new)
    _send_signals(item, grade, revised=True)
    return grade
