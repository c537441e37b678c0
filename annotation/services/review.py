"""Analysis review (DeepSeekMath-V2 meta-verification, appendix A.3): items that pair a proof
with a verifier analysis, and the expert's MetaReview of the analysis.

A review is a Grade (item, expert, status, score = the final rating, time, revisions) with a
MetaReview beside it, so assignment, leases, blindness, double scoring, progress, history and
adjudication work for analysis reviews exactly as for proof grades: the final rating flows to
adjudication as the grade's score through `item_judged`. The rating is derived by
`annotation.meta_rubric.meta_rating` from the expert's judgement of each claimed defect, the
expression errors and the score's fit; an override needs a reason.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from decimal import Decimal, InvalidOperation

from django.contrib.auth.models import AbstractBaseUser
from django.db import transaction
from django.db.models import QuerySet

from annotation.meta_rubric import DefectJudgement, MetaRating, meta_rating
from annotation.models import (
    Campaign,
    Grade,
    GradeRevision,
    GradeStatus,
    Item,
    MetaDefect,
    MetaReview,
    Scale,
    TaskKind,
)
from annotation.services.grade_checks import (
    NO_ORIGIN,
    GradeError,
    GradeInput,
    Origin,
    stale_conflict,
    submitted_conflict,
    written_here,
)
from annotation.services.grading import (
    _check_open,
    _lock_item,
    _send_signals,
    grade_save_draft,
    grade_submit,
)
from annotation.services.items import (
    ItemsCreated,
    double_scored_keys,
    item_design_fields,
    items_write,
)
from annotation.signals import items_added
from annotation.spans import SpanError, locate_span
from core.queries import of_ids
from problems.models import VerifierAnalysis
from problems.selectors import proof_natural_keys

RATINGS = (Decimal("0"), Decimal("0.5"), Decimal("1"))


def _flag(value) -> bool | None:
    if value in (None, ""):
        return None
    if isinstance(value, bool):
        return value
    text = str(value).strip().lower()
    if text in {"true", "yes", "1"}:
        return True
    if text in {"false", "no", "0"}:
        return False
    raise GradeError(f"{value!r} is not yes or no")


def _int_or_none(value) -> int | None:
    return None if value in (None, "") else int(value)


@dataclass
class DefectInput:
    start: int
    end: int
    quote: str
    exists: bool | None = None
    accurate: bool | None = None
    note: str = ""
    proof_start: int | None = None
    proof_end: int | None = None
    proof_quote: str = ""
    from_suggestion: bool = False

    @property
    def judged(self) -> bool:
        return self.exists is False or (self.exists is True and self.accurate is not None)

    def judgement(self) -> DefectJudgement:
        return DefectJudgement(exists=bool(self.exists), accurate=bool(self.accurate))


@dataclass
class MetaReviewInput:
    """What the review page or the API sends; every field optional in a draft."""

    defects: list[DefectInput] = field(default_factory=list)
    expression_error: bool | None = None
    expression_note: str = ""
    score_fits: bool | None = None
    score_note: str = ""
    override: Decimal | None = None
    override_reason: str = ""
    comment: str = ""
    seconds_spent: int = 0
    base_version: int | None = None  # the review's version this was based on (None: not checked)

    @classmethod
    def from_data(cls, data: dict) -> MetaReviewInput:
        override = data.get("override")
        try:
            override = None if override in (None, "") else Decimal(str(override))
        except InvalidOperation as exc:
            raise GradeError(f"override: {override!r} is not a number") from exc
        defects = [
            DefectInput(
                start=int(d["start"]),
                end=int(d["end"]),
                quote=str(d.get("quote", "")),
                exists=_flag(d.get("exists")),
                accurate=_flag(d.get("accurate")),
                note=str(d.get("note") or ""),
                proof_start=_int_or_none(d.get("proof_start")),
                proof_end=_int_or_none(d.get("proof_end")),
                proof_quote=str(d.get("proof_quote") or ""),
                from_suggestion=bool(d.get("from_suggestion")),
            )
            for d in data.get("defects") or []
        ]
        return cls(
            defects=defects,
            expression_error=_flag(data.get("expression_error")),
            expression_note=str(data.get("expression_note") or ""),
            score_fits=_flag(data.get("score_fits")),
            score_note=str(data.get("score_note") or ""),
            override=override,
            override_reason=str(data.get("override_reason") or "").strip(),
            comment=str(data.get("comment") or ""),
            seconds_spent=max(0, int(data.get("seconds_spent") or 0)),
            base_version=data.get("base_version"),
        )


def meta_review_derive(data: MetaReviewInput) -> tuple[MetaRating | None, list[str]]:
    """The rating A.3's rule gives for what the expert judged so far, or None and what is
    still missing. With an unreasonable defect the rating rests on defects alone (expression
    and score need no answer); otherwise both must be answered."""
    missing = [
        f"defect {index}: say whether it exists"
        if defect.exists is None
        else f"defect {index}: say whether the analysis describes it accurately"
        for index, defect in enumerate(data.defects, start=1)
        if not defect.judged
    ]
    if missing:
        return None, missing
    judgements = [defect.judgement() for defect in data.defects]
    if any(not j.reasonable for j in judgements):
        return meta_rating(judgements, expression_error=False, score_error=False), []
    if data.expression_error is None:
        missing.append("expression: say whether the analysis has expression errors")
    if data.score_fits is None:
        missing.append("score: say whether the analysis's score fits the defects it found")
    if missing:
        return None, missing
    rating = meta_rating(
        judgements, expression_error=data.expression_error, score_error=not data.score_fits
    )
    return rating, []


def _review_item(item: Item) -> VerifierAnalysis:
    if item.analysis_id is None or item.campaign.task_kind != TaskKind.ANALYSIS_REVIEW:
        raise GradeError("This item is not an analysis review.")
    return item.analysis


def review_check(
    item: Item, data: MetaReviewInput, *, final: bool
) -> tuple[MetaRating | None, Decimal | None, list[str]]:
    """Validates the review against the analysis and proof texts (defects re-anchored); returns
    the derived rating, the final value (override or derived) and the problems."""
    analysis = _review_item(item)
    problems: list[str] = []
    for index, defect in enumerate(data.defects, start=1):
        try:
            defect.start, defect.end, defect.quote = locate_span(
                analysis.text, defect.start, defect.end, defect.quote
            )
        except SpanError as exc:
            problems.append(f"defect {index}: {str(exc).replace('the proof', 'the analysis')}")
        if defect.proof_start is not None or defect.proof_quote:
            try:
                defect.proof_start, defect.proof_end, defect.proof_quote = locate_span(
                    item.proof.text,
                    defect.proof_start or 0,
                    defect.proof_end or 0,
                    defect.proof_quote,
                )
            except SpanError as exc:
                problems.append(f"defect {index}, proof passage: {exc}")
    if data.override is not None and data.override not in RATINGS:
        problems.append("override: the rating is 0, 0.5 or 1")
    if data.override is not None and not data.override_reason:
        problems.append("override: give the reason for overriding the derived rating")
    rating, missing = meta_review_derive(data)
    if final:
        problems.extend(missing)
    value = data.override if data.override is not None else (rating.rating if rating else None)
    return rating, value, problems


def _grade_input(
    data: MetaReviewInput, value: Decimal | None, *, versioned: bool = True
) -> GradeInput:
    """The grade's part of the review (its version checked by the grade's write unless
    `versioned` is off: the review's own check, which compares the defects too, came first)."""
    return GradeInput(
        score=value,
        comment=data.comment,
        seconds_spent=data.seconds_spent,
        base_version=data.base_version if versioned else None,
    )


def _write_review(
    grade: Grade, data: MetaReviewInput, rating: MetaRating | None, value: Decimal | None
) -> MetaReview:
    review, _ = MetaReview.objects.update_or_create(
        grade=grade,
        defaults={
            "expression_error": data.expression_error,
            "expression_note": data.expression_note,
            "score_fits": data.score_fits,
            "score_note": data.score_note,
            "derived_rating": rating.rating if rating else None,
            "derived_reason": rating.reason if rating else "",
            "override": data.override if data.override in RATINGS else None,
            "override_reason": data.override_reason if data.override in RATINGS else "",
            "value": value if value in RATINGS else None,
        },
    )
    review.defects.all().delete()
    MetaDefect.objects.bulk_create(
        MetaDefect(
            review=review,
            position=position,
            start=d.start,
            end=d.end,
            quote=d.quote,
            exists=d.exists,
            accurate=d.accurate,
            note=d.note,
            proof_start=d.proof_start,
            proof_end=d.proof_end if d.proof_start is not None else None,
            proof_quote=d.proof_quote if d.proof_start is not None else "",
            from_suggestion=d.from_suggestion,
        )
        for position, d in enumerate(data.defects, start=1)
    )
    return review


def meta_review_snapshot(review: MetaReview) -> dict:
    """The review as JSON (revisions, the API); `score` is the final rating, as for a grade."""

    def num(value: Decimal | None) -> str | None:
        return None if value is None else format(value.normalize(), "f")

    return {
        "score": num(review.grade.score),
        "comment": review.grade.comment,
        "defects": [
            {
                "start": d.start,
                "end": d.end,
                "quote": d.quote,
                "exists": d.exists,
                "accurate": d.accurate,
                "note": d.note,
                "proof_start": d.proof_start,
                "proof_end": d.proof_end,
                "proof_quote": d.proof_quote,
                "from_suggestion": d.from_suggestion,
            }
            for d in review.defects.all()
        ],
        "expression_error": review.expression_error,
        "expression_note": review.expression_note,
        "score_fits": review.score_fits,
        "score_note": review.score_note,
        "derived_rating": num(review.derived_rating),
        "derived_reason": review.derived_reason,
        "override": num(review.override),
        "override_reason": review.override_reason,
    }


def _says(grade: Grade, data: MetaReviewInput, rating: MetaRating | None, value) -> bool:
    """Whether `data` says what the review stored with `grade` says (written in a savepoint,
    compared, rolled back: one rule, the snapshot's, decides what is the same)."""
    review = MetaReview.objects.filter(grade=grade).prefetch_related("defects").first()
    if review is None:
        return False
    review.grade = grade
    old = meta_review_snapshot(review)
    savepoint = transaction.savepoint()
    score, comment = grade.score, grade.comment
    grade.score, grade.comment = value, data.comment  # in memory: the snapshot reads them
    written = _write_review(grade, data, rating, value)
    written.grade = grade
    new = meta_review_snapshot(written)
    grade.score, grade.comment = score, comment
    transaction.savepoint_rollback(savepoint)
    return new == old


def _moved_on(grade: Grade, data: MetaReviewInput, origin: Origin) -> bool:
    """Whether `data` was based on an older version of the review than `grade`'s, written by
    another page (or client)."""
    return (
        data.base_version is not None
        and data.base_version != grade.version
        and not written_here(grade.origin_page, origin)
    )


@transaction.atomic
def meta_review_save_draft(
    *, item: Item, expert: AbstractBaseUser, data: MetaReviewInput, origin: Origin = NO_ORIGIN
) -> MetaReview:
    """Autosave: keeps whatever the expert has so far; only defects that cannot be placed in
    the texts are refused. A draft based on an older version of the review, written by another
    page since (another tab, another device), is a GradeConflict with the stored review, unless
    it says the same: nothing is overwritten unseen."""
    item = Item.objects.select_related("campaign", "proof", "analysis").get(pk=item.pk)
    rating, value, problems = review_check(item, data, final=False)
    placing = [p for p in problems if p.startswith("defect")]
    if placing:
        raise GradeError(placing)
    if problems:
        data.override = None
        value = rating.rating if rating else None
    stored = Grade.objects.select_for_update().filter(item=item, expert=expert).first()
    if stored is not None and not stored.is_submitted and _moved_on(stored, data, origin):
        if not _says(stored, data, rating, value):
            raise stale_conflict(stored, origin, noun="review")
        return MetaReview.objects.select_related("grade").get(grade=stored)
    grade = grade_save_draft(
        item=item,
        expert=expert,
        data=_grade_input(data, value, versioned=False),
        origin=origin,
    )
    return _write_review(grade, data, rating, value)


@transaction.atomic
def meta_review_submit(
    *,
    item: Item,
    expert: AbstractBaseUser,
    data: MetaReviewInput,
    submit_key: str = "",
    origin: Origin = NO_ORIGIN,
) -> MetaReview:
    """Submits the review. Idempotent: a repeat that says what the submitted review says
    returns it; a different review of a submitted one is a GradeConflict naming who submitted
    it (a revision is asked for by name), under the same submission key too. One based on an
    older version of the draft, written by another page since, is a GradeConflict."""
    item = _lock_item(item)
    _review_item(item)  # a proof-grading item takes no review, not even a repeated one
    done = Grade.objects.filter(item=item, expert=expert, status=GradeStatus.SUBMITTED).first()
    if done is not None:
        return _repeat(item, done, data, origin)
    _check_open(item)
    rating, value, problems = review_check(item, data, final=True)
    if problems:
        raise GradeError(problems)
    grade = grade_submit(
        item=item,
        expert=expert,
        data=_grade_input(data, value),
        submit_key=submit_key,
        origin=origin,
    )
    return _write_review(grade, data, rating, value)


def _repeat(item: Item, done: Grade, data: MetaReviewInput, origin: Origin) -> MetaReview:
    """The submitted review, if `data` repeats it; GradeConflict otherwise (whatever key)."""
    rating, value, problems = review_check(item, data, final=True)
    if not problems and _says(done, data, rating, value):
        return MetaReview.objects.select_related("grade").get(grade=done)
    raise submitted_conflict(done, origin, noun="review")


@transaction.atomic
def meta_review_revise(
    *,
    review: MetaReview,
    user: AbstractBaseUser,
    data: MetaReviewInput,
    origin: Origin = NO_ORIGIN,
) -> MetaReview:
    """The expert changes their submitted review (until the item is final or the campaign
    closes); old and new values are kept as a GradeRevision; adjudication re-evaluates. A
    change based on an older version, written by another page since, is a GradeConflict."""
    grade = Grade.objects.select_for_update().get(pk=review.grade_id)
    item = _lock_item(grade.item)
    if grade.expert_id != user.pk:
        raise GradeError("Only the expert who made a review can revise it.")
    if not grade.is_submitted:
        raise GradeError("This review is a draft: submit it instead.")
    _check_open(item)
    rating, value, problems = review_check(item, data, final=True)
    if problems:
        raise GradeError(problems)
    if _says(grade, data, rating, value):  # no change: no revision, no new version
        return MetaReview.objects.select_related("grade").get(grade=grade)
    if _moved_on(grade, data, origin):
        raise stale_conflict(grade, origin, noun="review")
    review = MetaReview.objects.select_related("grade").get(pk=review.pk)
    old = meta_review_snapshot(review)
    origin.stamp(grade)
    grade.score = value
    grade.comment = data.comment
    grade.seconds_spent += data.seconds_spent
    grade.version += 1
    grade.save()
    review = _write_review(grade, data, rating, value)
    review.grade = grade
    GradeRevision.objects.create(
        grade=grade, changed_by=user, old=old, new=meta_review_snapshot(review)
    )
    _send_signals(item, grade, revised=True)
    return review


@transaction.atomic
def analysis_items_create(
    *,
    campaign: Campaign,
    analyses: Iterable[VerifierAnalysis],
    required_judgements: int | None = None,
    is_gold: bool = False,
) -> ItemsCreated:
    """One item per (proof, analysis) not yet in the analysis-review campaign; the campaign's
    seeded sample decides which are double-scored unless `required_judgements` fixes it."""
    if campaign.task_kind != TaskKind.ANALYSIS_REVIEW:
        raise GradeError("Analysis items belong in an analysis review campaign.")
    if campaign.scale != Scale.TERNARY:
        raise GradeError("An analysis review campaign rates on 0 / 0.5 / 1.")
    if isinstance(analyses, QuerySet):  # the columns needed, not the analyses' texts
        selected = list(analyses.values_list("pk", "proof_id", "verifier", "sample_key"))
    else:
        selected = [(a.pk, a.proof_id, a.verifier, a.sample_key) for a in analyses]
    result = ItemsCreated()
    # one statement, the selection's ids one array parameter (however many they are)
    existing = set(
        of_ids(
            Item.objects.filter(campaign=campaign), "analysis", (a[0] for a in selected)
        ).values_list("analysis_id", flat=True)
    )
    fresh = [a for a in selected if a[0] not in existing]
    result.already_present = len(selected) - len(fresh)
    del selected, existing
    natural = proof_natural_keys(proof_ids=(proof_id for _, proof_id, _, _ in fresh))
    doubles = double_scored_keys(
        seed=campaign.sample_seed,
        share=campaign.double_share,
        keys={
            pk: (*natural[proof_id], verifier, sample_key)
            for pk, proof_id, verifier, sample_key in fresh
        },
    )
    del natural
    design = item_design_fields(
        is_gold=is_gold,
        required_judgements=required_judgements,
        doubles=len(doubles),
        fresh=len(fresh),
    )
    items_write(
        rows=(
            {
                "campaign_id": campaign.pk,
                "proof_id": proof_id,
                "analysis_id": pk,
                "required_judgements": required_judgements or (2 if pk in doubles else 1),
                "is_gold": is_gold,
                **design,
            }
            for pk, proof_id, _, _ in fresh
        ),
        result=result,
    )
    if result.created_ids:
        # once for the whole creation, with every new item
        items_added.send(sender=Item, campaign_id=campaign.pk, item_ids=result.created_ids)
    return result
