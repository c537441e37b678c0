"""Reads for the analysis review page: the item as the user may see it (the grading page's
blindness rules, via `grading_view_for_user`), the analysis, the user's own MetaReview, the LLM
pre-split suggestions, and what the page's script starts from."""

from __future__ import annotations

from dataclasses import dataclass, field

from django.contrib.auth.models import AbstractBaseUser
from django.db.models import Prefetch, Q, QuerySet
from django.http import Http404

from annotation.models import AssignmentStatus, DefectSuggestion, Grade, GradeStatus, MetaReview
from annotation.page import draft_restored
from annotation.selectors import GradingView, grading_view_for_user
from annotation.services.review import meta_review_snapshot
from core.roles import Role, has_role
from problems.models import VerifierAnalysis

# Appendix A.3's scope and rating rule, in our words (shown on the page).
SCOPE = [
    "Judge only the defects the analysis claims. Whatever it calls correct is out of scope, even "
    "when it is wrong: an analysis that claims no defect has no unreasonable defect, even if the "
    "proof is wrong.",
    "A claimed defect is reasonable only if it exists in the proof and the analysis describes it "
    "accurately.",
    "Expression errors: misquoted or misdescribed steps, typos and slips of calculation, and "
    "calling a conclusion that depends on a faulty step “wrong” when it is only “not rigorously "
    "demonstrated”. Taking a wrong step for a correct one is not an expression error.",
    "Score: does the analysis's score follow from the defects it found, by the verifier's rules "
    "(1 fully correct; 0.5 sound but with minor gaps or slips; 0 fatal error, severe omission, or "
    "a cited result left unproved)?",
]
RULE = [
    "Any unreasonable defect: 0 if every claimed defect is unreasonable, else 0.5.",
    "Otherwise (no defect claimed, or all reasonable): 0.5 if there is an expression error or a "
    "wrong score, else 1.",
]


@dataclass
class ReviewView:
    grading: GradingView
    analysis: VerifierAnalysis
    review: MetaReview | None
    suggestions: list[DefectSuggestion]
    others: list[Grade] = field(default_factory=list)


def review_view_for_user(
    *, item_id: int, user: AbstractBaseUser, grading: GradingView | None = None
) -> ReviewView:
    """The analysis review item as `user` may see it (404 for anyone not assigned, except
    admins; other experts' reviews only once the item is final or revealed). `grading`: the
    grading view already read for this user and item, if any."""
    grading = grading or grading_view_for_user(item_id=item_id, user=user)
    item = grading.item
    if item.analysis_id is None:
        raise Http404("This item is not an analysis review.")
    analysis = VerifierAnalysis.objects.get(pk=item.analysis_id)
    review = None
    if grading.grade is not None:
        review = (
            MetaReview.objects.filter(grade=grading.grade)
            .select_related("grade")
            .prefetch_related("defects")
            .first()
        )
    suggestions = list(DefectSuggestion.objects.filter(analysis_id=analysis.pk))
    others = []
    if grading.others:
        others = list(
            Grade.objects.filter(
                pk__in=[g.pk for g in grading.others], status=GradeStatus.SUBMITTED
            )
            .select_related("expert", "meta_review")
            .prefetch_related(Prefetch("meta_review__defects"))
        )
    return ReviewView(grading, analysis, review, suggestions, others)


def initial_state(view: ReviewView) -> dict:
    grade = view.grading.grade
    if view.review is None:
        state = {
            "score": None,
            "comment": grade.comment if grade else "",
            "defects": [],
            "expression_error": None,
            "expression_note": "",
            "score_fits": None,
            "score_note": "",
            "derived_rating": None,
            "derived_reason": "",
            "override": None,
            "override_reason": "",
        }
    else:
        state = meta_review_snapshot(view.review)
    state["seconds_spent"] = grade.seconds_spent if grade else 0
    state["status"] = grade.status if grade else "none"
    return state


def review_page_context(view: ReviewView) -> dict:
    grading = view.grading
    item = grading.item
    grade = grading.grade
    editable = (
        grading.assignment is not None
        and item.campaign.is_open
        and not item.is_final
        and grading.assignment.status != AssignmentStatus.RELEASED
    )
    state = initial_state(view)
    return {
        "item": item,
        "campaign": item.campaign,
        "problem": item.proof.problem,
        "proof": item.proof,
        "analysis": view.analysis,
        "grade": grade,
        "submitted": grade is not None and grade.is_submitted,
        "editable": editable,
        "others": view.others,
        "suggestions": [
            {"start": s.start, "end": s.end, "quote": s.quote, "source": s.source}
            for s in view.suggestions
        ],
        "state": state,
        "restored": draft_restored(grade, state),
        "scope": SCOPE,
        "rule": RULE,
    }


def meta_reviews_for_user(*, user: AbstractBaseUser, campaign: str = "") -> QuerySet[MetaReview]:
    """Meta-reviews `user` may read: an expert their own; researchers the submitted reviews of
    final items; admins every submitted review."""
    qs = MetaReview.objects.select_related(
        "grade__item__campaign", "grade__item__analysis", "grade__expert"
    ).prefetch_related("defects")
    if has_role(user, Role.ADMIN):
        qs = qs.filter(grade__status=GradeStatus.SUBMITTED)
    elif has_role(user, Role.RESEARCHER):
        qs = qs.filter(
            Q(grade__expert=user)
            | Q(grade__status=GradeStatus.SUBMITTED, grade__item__is_final=True)
        )
    else:
        qs = qs.filter(grade__expert=user)
    if campaign:
        qs = qs.filter(grade__item__campaign__slug=campaign)
    return qs.order_by("grade__item_id", "grade_id")
