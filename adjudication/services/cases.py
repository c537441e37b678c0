"""Working a case: assign, return to the experts with a question, comment, resolve."""

from __future__ import annotations

from decimal import Decimal, InvalidOperation

from django.contrib.auth.models import AbstractBaseUser
from django.db import transaction
from django.utils import timezone

from adjudication.models import (
    AdjudicatedSpan,
    AdjudicationCase,
    CaseEvent,
    CaseStatus,
    EventKind,
    LabelSource,
    Resolution,
)
from adjudication.selectors import anonymous_names, item_grader_ids, user_may_adjudicate_item
from adjudication.services.detection import AdjudicationError, case_announce
from adjudication.services.labels import final_label_set
from adjudication.signals import case_settled
from annotation.models import GradeStatus
from annotation.scales import ScaleError, check_value
from annotation.services import item_reveal_judgements
from rubrics.structure import Scheme, check_awards, format_points
from rubrics.structure.model import to_decimal


def _locked(case_id: int) -> AdjudicationCase:
    return (
        AdjudicationCase.objects.select_for_update(of=("self",))
        .select_related("item__campaign", "item__proof")
        .get(pk=case_id)
    )


def _check_adjudicator(case: AdjudicationCase, user: AbstractBaseUser) -> None:
    if not user_may_adjudicate_item(user, campaign_id=case.item.campaign_id, item_id=case.item_id):
        raise AdjudicationError(
            f"{user.get_username()} may not adjudicate this case (not an adjudicator of the "
            "campaign, or one of the item's own graders)"
        )


def _check_unresolved(case: AdjudicationCase) -> None:
    if case.status == CaseStatus.RESOLVED:
        who = case.resolved_by.get_username() if case.resolved_by else "the experts' agreement"
        raise AdjudicationError(f"case {case.pk} is already resolved (by {who})")


def _log(case, kind, actor, text="", **data) -> CaseEvent:
    return CaseEvent.objects.create(case=case, kind=kind, actor=actor, text=text, data=data)


@transaction.atomic
def case_assign(
    *, case: AdjudicationCase, adjudicator: AbstractBaseUser | None, by: AbstractBaseUser
) -> AdjudicationCase:
    """Gives the case to an adjudicator (None: back to the pool). Never to one of the item's
    graders; the service checks it whoever asks."""
    case = _locked(case.pk)
    _check_unresolved(case)
    if adjudicator is not None:
        _check_adjudicator(case, adjudicator)
    case.assigned_to = adjudicator
    if case.status != CaseStatus.RETURNED:
        case.status = CaseStatus.ASSIGNED if adjudicator else CaseStatus.OPEN
    case.save(update_fields=["assigned_to", "status", "updated_at"])
    if adjudicator is None:
        _log(case, EventKind.UNASSIGNED, by)
    else:
        _log(case, EventKind.ASSIGNED, by, text=adjudicator.get_username())
    return case


@transaction.atomic
def case_return(
    *, case: AdjudicationCase, user: AbstractBaseUser, question: str
) -> AdjudicationCase:
    """Returns the case to the item's experts with a question: they now see each other's
    judgement (annotation.item_reveal_judgements) and may revise theirs."""
    case = _locked(case.pk)
    _check_unresolved(case)
    _check_adjudicator(case, user)
    question = question.strip()
    if not question:
        raise AdjudicationError("returning a case needs a question for the experts")
    case.status = CaseStatus.RETURNED
    if case.assigned_to_id is None:
        case.assigned_to = user
    case.save(update_fields=["status", "assigned_to", "updated_at"])
    _log(case, EventKind.RETURNED, user, text=question)
    item_reveal_judgements(item=case.item)
    return case


@transaction.atomic
def case_comment(*, case: AdjudicationCase, user: AbstractBaseUser, text: str) -> CaseEvent:
    """A message in the case's thread, by an adjudicator or (once returned) one of its experts."""
    case = _locked(case.pk)
    _check_unresolved(case)
    text = text.strip()
    if not text:
        raise AdjudicationError("a comment cannot be empty")
    if user.pk in item_grader_ids(case.item_id):
        if case.status != CaseStatus.RETURNED:
            raise AdjudicationError("the experts can comment only once the case is returned")
    else:
        _check_adjudicator(case, user)
    return _log(case, EventKind.COMMENT, user, text=text)


def _clean_awards(case: AdjudicationCase, awards: dict | None, score: Decimal) -> dict[str, str]:
    """The adjudicator's awards, checked as a grader's are (rubrics.structure.score: known
    checkpoints at allowed levels; a band scheme takes one band), and on a band scheme the score
    is the picked band's points."""
    if not awards:
        return {}
    scheme = case.item.scheme
    if scheme is None or not scheme.structure:
        raise AdjudicationError("awards: this item has no marking scheme to award against")
    parsed = Scheme.from_dict(scheme.structure)
    problems = check_awards(parsed, awards)
    if problems:
        raise AdjudicationError("awards: " + "; ".join(problems))
    if parsed.bands:
        band = parsed.band(next(iter(awards)))
        if band.points != score:
            raise AdjudicationError(
                f"awards: the {band.name} band gives {format_points(band.points)}, "
                f"not the score {format_points(score)}"
            )
    return {key: format(to_decimal(raw).normalize(), "f") for key, raw in awards.items()}


def _clean_spans(case: AdjudicationCase, spans: list[dict] | None) -> list[AdjudicatedSpan]:
    text = case.item.proof.text
    categories = {entry["key"] for entry in case.item.campaign.error_taxonomy}
    rows = []
    for n, span in enumerate(spans or [], start=1):
        try:
            start, end = int(span["start"]), int(span["end"])
        except (KeyError, TypeError, ValueError):
            raise AdjudicationError(f"span {n}: start and end must be whole numbers") from None
        if not 0 <= start < end <= len(text):
            raise AdjudicationError(
                f"span {n}: [{start}, {end}) lies outside the proof (length {len(text)})"
            )
        category = str(span.get("category", ""))
        if category not in categories:
            raise AdjudicationError(f"span {n}: unknown error category {category!r}")
        rows.append(
            AdjudicatedSpan(
                case=case,
                start=start,
                end=end,
                quote=text[start:end],
                category=category,
                note=str(span.get("note", "")),
            )
        )
    return rows


@transaction.atomic
def case_resolve(
    *,
    case: AdjudicationCase,
    user: AbstractBaseUser,
    action: str,
    grade_id: int | None = None,
    score: Decimal | str | int | None = None,
    awards: dict | None = None,
    spans: list[dict] | None = None,
    rationale: str = "",
) -> AdjudicationCase:
    """Settles the case: `action` "accept" takes one submitted judgement (grade_id) as the
    label; "new_score" records the adjudicator's own score (with optional checkpoint awards and
    error spans) and needs a rationale. The row lock makes two simultaneous resolutions
    yield one: the second finds the case resolved and is refused."""
    case = _locked(case.pk)
    _check_unresolved(case)
    _check_adjudicator(case, user)
    item = case.item
    rationale = rationale.strip()
    grades = list(item.grades.filter(status=GradeStatus.SUBMITTED).order_by("id"))
    names = anonymous_names(grades)
    if action == "accept":
        grade = next((g for g in grades if g.pk == grade_id), None)
        if grade is None:
            raise AdjudicationError("accept: choose one of the item's submitted judgements")
        case.resolution = Resolution.ACCEPTED
        case.accepted_grade = grade
        case.score = grade.score
        policy = f"adjudication: accepted the judgement of {names[grade.pk]}"
        label_grades = [grade.pk]
    elif action == "new_score":
        if not rationale:
            raise AdjudicationError("a new score needs a rationale")
        if score is None or score == "":
            raise AdjudicationError("a new score needs the score")
        try:
            case.score = check_value(Decimal(str(score)), item.campaign.scale)
        except (ScaleError, InvalidOperation) as exc:
            raise AdjudicationError(f"score: {exc}") from None
        case.resolution = Resolution.NEW_SCORE
        case.awards = _clean_awards(case, awards, case.score)
        AdjudicatedSpan.objects.bulk_create(_clean_spans(case, spans))
        policy = "adjudication: new score by the adjudicator"
        label_grades = [g.pk for g in grades]
    else:
        raise AdjudicationError(f"unknown action {action!r}: use accept or new_score")
    case.status = CaseStatus.RESOLVED
    case.rationale = rationale
    case.resolved_by = user
    case.resolved_at = timezone.now()
    if case.assigned_to_id is None:
        case.assigned_to = user
    case.save()
    _log(
        case,
        EventKind.RESOLVED,
        user,
        text=rationale,
        resolution=case.resolution,
        score=format(case.score.normalize(), "f"),
    )
    final_label_set(
        item=item,
        value=case.score,
        source=LabelSource.ADJUDICATION,
        policy=policy,
        grade_ids=label_grades,
        case=case,
    )
    case_announce(case_settled, case.pk)
    return case
