"""The automatic second opinion, revealed only after the expert commits: the reveal (a record of
what the expert was shown) and the one revision it allows, with a reason.

The revised score becomes the grade's score, so labels, agreement and adjudication read it as
the expert's judgement (the item is evaluated again, as after any revision); the committed
score stays in `SecondOpinion.score_before`, and the change is also a GradeRevision."""

from __future__ import annotations

from decimal import Decimal, InvalidOperation

from django.contrib.auth.models import AbstractBaseUser
from django.db import IntegrityError, transaction
from django.utils import timezone

from annotation import opinions, scales
from annotation.models import Grade, GradeRevision, Item, SecondOpinion, TaskKind
from annotation.services.grade_checks import (
    GradeError,
    grade_snapshot,
)
from annotation.services.grading import (
    _refuse_if_closed,
    _send_signals,
)


class SecondOpinionError(GradeError):
    """A reveal or revision that cannot happen; `status` is the HTTP status that says why
    (400 bad input, 403 not yours, 409 not now) and `field` the input at fault, if any."""

    def __init__(self, problem: str, *, status: int = 409, field: str | None = None):
        super().__init__(problem)
        self.status = status
        self.field = field


def second_opinion_enabled(item: Item) -> bool:
    campaign = item.campaign
    return bool(campaign.second_opinion) and campaign.task_kind == TaskKind.PROOF_GRADING


def second_opinion_reveal(*, grade: Grade) -> SecondOpinion | None:
    """Records what the grade's expert is shown now that the grade is submitted: the automatic
    opinion of the proof, or that there is none. Idempotent (the first reveal stays); None when
    the campaign has no second opinion or the grade is not submitted: nothing automatic is ever
    shown before the expert commits."""
    item = grade.item
    if not second_opinion_enabled(item) or not grade.is_submitted:
        return None
    existing = SecondOpinion.objects.filter(grade_id=grade.pk).first()
    if existing is not None:
        return existing
    opinion = opinions.opinion_for(item)
    row = SecondOpinion(
        grade=grade,
        source=item.campaign.second_opinion,
        revealed_at=timezone.now(),
        score_before=grade.score,
    )
    if opinion is not None:
        row.score, row.scale, row.origin = opinion.score, opinion.scale, opinion.origin
        row.analyses = opinion.analyses
    try:
        with transaction.atomic():
            row.save()
    except IntegrityError:  # a reveal of the same grade at the same moment won
        return SecondOpinion.objects.get(grade_id=grade.pk)
    return row


def _score(value, scale: str) -> Decimal:
    try:
        number = value if isinstance(value, Decimal) else Decimal(str(value).strip())
        return scales.check_value(number, scale)
    except (InvalidOperation, ValueError) as exc:
        words = str(exc) if isinstance(exc, scales.ScaleError) else f"{value!r} is not a number"
        raise SecondOpinionError(f"score: {words}", status=400, field="score") from exc


@transaction.atomic
def second_opinion_revise(
    *, grade: Grade, expert: AbstractBaseUser, score: Decimal | str | None, reason: str
) -> SecondOpinion:
    """The expert's one revision after the reveal: a new score with the reason. A repeat of the
    same revision (double click, retry) returns it; a second, different one is refused, as is a
    revision of another expert's grade, before the reveal, when there was no opinion to react
    to, without a reason, to the same score, or once the item is final or the campaign closed."""
    item = (
        Item.objects.select_for_update(of=("self",))
        .select_related("campaign")
        .get(pk=grade.item_id)
    )
    grade = Grade.objects.select_for_update().get(pk=grade.pk)
    if grade.expert_id != expert.pk:
        raise SecondOpinionError("Only the expert who made a grade can revise it.", status=403)
    row = SecondOpinion.objects.select_for_update().filter(grade=grade).first()
    if row is None:
        raise SecondOpinionError(
            "Nothing was revealed yet: submit your grade first, then see the automatic opinion."
        )
    if not row.available:
        raise SecondOpinionError(
            "No automatic opinion existed for this proof: there is nothing to revise after."
        )
    if score in (None, ""):
        raise SecondOpinionError("score: choose your revised score", status=400, field="score")
    value = _score(score, item.campaign.scale)
    reason = (reason or "").strip()
    if row.revised:
        if row.score_after == value and row.reason == reason:
            return row  # the same revision again: a double click or a retry
        raise SecondOpinionError(
            f"You already revised this grade after the reveal (from "
            f"{scales.shown(row.score_before)} to {scales.shown(row.score_after)}): one revision "
            "only."
        )
    try:
        _refuse_if_closed(
            campaign_open=item.campaign.is_open, is_final=item.is_final, is_gold=item.is_gold
        )
    except GradeError as exc:
        raise SecondOpinionError(str(exc)) from exc
    if not reason:
        raise SecondOpinionError(
            "reason: say why you change your score", status=400, field="reason"
        )
    if value == grade.score:
        raise SecondOpinionError(
            f"score: {scales.shown(value)} is the score you submitted; to keep it, move on",
            status=400,
            field="score",
        )
    grade.item = item
    old = grade_snapshot(grade)
    now = timezone.now()
    grade.score = value
    grade.version += 1
    grade.save(update_fields=["score", "version", "updated_at"])
    GradeRevision.objects.create(grade=grade, changed_by=expert, old=old, new=grade_snapshot(grade))
    row.score_after, row.reason, row.revised_at = value, reason, now
    row.save(update_fields=["score_after", "reason", "revised_at"])
    _send_signals(item, grade, revised=True)
    return row
