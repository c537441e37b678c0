"""Demo campaigns for `manage.py demo_setup`, written through the annotation services.

A proof-grading campaign (0-7, 40% double-scored) over the demo proofs, where some items are
already graded by both experts (agreeing, within the tolerance, and two disagreeing beyond it,
which open adjudication cases), some once, and the rest wait for the experts; and an analysis
review campaign over the demo verifier analyses, two of them reviewed. Running it again
changes nothing.
"""

from __future__ import annotations

from dataclasses import dataclass
from decimal import Decimal

from django.contrib.auth.models import User
from django.db import transaction

from annotation.models import (
    Campaign,
    Grade,
    GradeStatus,
    Item,
    LabelPolicy,
    MemberRole,
    Scale,
    TaskKind,
)
from annotation.services import (
    GradeInput,
    SpanInput,
    assignment_create_manual,
    campaign_create,
    campaign_member_add,
    grade_submit,
    items_create_from_selection,
)
from annotation.services.review import (
    MetaReviewInput,
    analysis_items_create,
    meta_review_submit,
)
from problems.demo.loader import DEMO_PROBLEMS, DEMO_VERIFIER
from problems.models import Proof, VerifierAnalysis
from rubrics.structure import Scheme, compute_score

GRADING_SLUG = "demo-proof-grading"
REVIEW_SLUG = "demo-analysis-review"

GUIDELINES = """Grade each proof from 0 to 7 against the pinned marking scheme: award the
checkpoints the proof earns, tick a deduction only when it applies, and mark the passages that
are wrong or unjustified as error spans. A score that differs from the checklist's total needs a
short note. Two experts grade 40% of the proofs independently; differences above one point go
to the adjudicator."""

REVIEW_GUIDELINES = """Read the verifier's analysis of the proof. For each defect it claims,
say whether the defect exists and whether it is described accurately; then say whether its
0 / 0.5 / 1 score fits what it found."""

# Checkpoint awards and deductions by problem and proof quality, on the demo schemes
# (rubrics/demo_schemes.py): what a careful grader gives each demo proof.
AWARDS: dict[str, dict[str, tuple[dict[str, str], list[str]]]] = {
    "DEMO-2024-A1": {
        "correct": ({"c1": "3", "c2.1": "3", "c3": "1"}, []),
        "gap": ({"c1": "3", "c2.2": "1", "c3": "1"}, []),
        "wrong": ({}, []),
    },
    "DEMO-2025-A2": {
        "correct": ({"c1": "2", "c2": "2", "c3": "2", "c4": "1"}, []),
        "gap": ({"c2": "2", "c3": "2", "c4": "1"}, ["d1"]),
        "wrong": ({}, []),
    },
    "DEMO-2024-C1": {
        "correct": ({"c1": "2", "c2": "2", "c3": "3"}, []),
        "gap": ({"c2": "2", "c3": "3"}, []),
        "wrong": ({}, []),
    },
    "DEMO-2025-C2": {
        "correct": ({"c1": "2", "c2.1": "2", "c2.2": "2", "c3": "1"}, []),
        "gap": ({"c2.1": "2", "c2.2": "2"}, []),
        "wrong": ({}, []),
    },
    "DEMO-2024-G1": {
        "correct": ({"B1": "3", "B2": "4"}, []),
        "gap": ({"A1": "3", "A2": "3"}, ["d1"]),
        "wrong": ({}, ["d2"]),
    },
    "DEMO-2025-N1": {
        "correct": ({"s1": "1", "A1": "2", "A2.1": "4"}, []),
        "gap": ({"s1": "1", "A1": "2", "A2.2": "2"}, []),
        "wrong": ({}, []),
    },
}

# The passage each careful grader marks in the flawed proofs: (quote, category, note).
SPANS: dict[tuple[str, str], tuple[str, str, str]] = {
    ("DEMO-2024-A1", "gap"): (
        "which vanishes only at $t=1$",
        "skipped_steps",
        "One critical point is not a global minimum: the sign of f' is never checked.",
    ),
    ("DEMO-2024-A1", "wrong"): (
        "is symmetric in $a,b,c$",
        "inventing_wrong_facts",
        "The expression is cyclic, not symmetric.",
    ),
    ("DEMO-2025-A2", "gap"): (
        "$f$ must be a polynomial of",
        "proposal_without_verification",
        "The form of f is assumed, not derived.",
    ),
    ("DEMO-2025-A2", "wrong"): (
        r"=\frac{x^2-4x+2}{3}\cdot(-1)",
        "calculation_mistake",
        "A sign appears from nowhere.",
    ),
    ("DEMO-2024-C1", "gap"): (
        "two of the chosen numbers must be consecutive",
        "skipped_steps",
        "The pigeonhole pairs are never named.",
    ),
    ("DEMO-2024-C1", "wrong"): (
        "Two odd numbers have no common factor $2$, so they are coprime",
        "wrong_logical_conclusion",
        "3 and 9 are odd and not coprime.",
    ),
    ("DEMO-2025-C2", "gap"): (
        "$P$ has at least three friends",
        "missing_cases",
        "P may have three strangers instead.",
    ),
    ("DEMO-2025-C2", "wrong"): (
        "must create a triangle",
        "wrong_logical_conclusion",
        "Asserted, not shown: this is the whole problem.",
    ),
    ("DEMO-2024-G1", "gap"): (
        "Angles subtending the same arc are equal",
        "skipped_steps",
        "Which arc M lies on is never justified.",
    ),
    ("DEMO-2024-G1", "wrong"): (
        "Also $AB = AC$",
        "inventing_wrong_facts",
        "The triangle is not isosceles in general.",
    ),
    ("DEMO-2025-N1", "gap"): (
        "This covers all cases",
        "missing_cases",
        "The residue 3 modulo 5 is missing.",
    ),
    ("DEMO-2025-N1", "wrong"): (
        "is a multiple of $5$, hence the whole",
        "wrong_logical_conclusion",
        "A multiple of 5 added to a multiple of 30 need not be a multiple of 30.",
    ),
}

COMMENTS = {
    "correct": "Complete and rigorous; every checkpoint is earned.",
    "gap": "The approach is right, but one step is asserted rather than proved.",
    "wrong": "No valid argument: the key claim is false or unsupported.",
}


@dataclass(frozen=True)
class PlannedGrade:
    expert: str
    view: str  # "own": the careful grade; "other": the grade of the other quality (disagrees)
    offset: int = 0  # points taken off (or added at 0) from the checklist total, with a note


# The work done so far. Double-scored items, in the order of their proofs (problem, generator):
# three agreements (one within the tolerance), two disagreements beyond it (one is settled by
# the adjudicator in adjudication/demo.py, one stays open), one graded by expert1 only, the rest
# untouched. Single items: three graded, the rest untouched.
DOUBLE_PLAN = (
    (PlannedGrade("expert1", "own"), PlannedGrade("expert2", "own")),
    (PlannedGrade("expert1", "own"), PlannedGrade("expert2", "own")),
    (PlannedGrade("expert1", "own"), PlannedGrade("expert2", "own", offset=1)),
    (PlannedGrade("expert1", "own"), PlannedGrade("expert2", "other")),
    (PlannedGrade("expert2", "own"), PlannedGrade("expert1", "other")),
    (PlannedGrade("expert1", "own"),),
)
SINGLE_PLAN = (
    (PlannedGrade("expert1", "own"),),
    (PlannedGrade("expert1", "own"),),
    (PlannedGrade("expert2", "own"),),
)


def _demo_proofs() -> list[Proof]:
    ids = [spec["external_id"] for spec in DEMO_PROBLEMS]
    return list(
        Proof.objects.filter(problem__external_id__in=ids)
        .select_related("problem")
        .order_by("problem__external_id", "generator")
    )


def _campaign(slug: str, admin: User, **fields) -> Campaign:
    campaign = Campaign.objects.filter(slug=slug).first()
    if campaign is None:
        campaign = campaign_create(created_by=admin, slug=slug, **fields)
    for username, role in (
        ("expert1", MemberRole.EXPERT),
        ("expert2", MemberRole.EXPERT),
        ("adjudicator", MemberRole.ADJUDICATOR),
    ):
        campaign_member_add(campaign=campaign, user=User.objects.get(username=username), role=role)
    return campaign


def _grade_input(item: Item, planned: PlannedGrade) -> GradeInput:
    quality = item.proof.metadata["demo_quality"]
    if planned.view == "other":
        quality = "gap" if quality == "correct" else "correct"
    awards, deductions = AWARDS[item.proof.problem.external_id][quality]
    total = compute_score(Scheme.from_dict(item.scheme.structure), awards, deductions)
    score, note = total, ""
    if planned.offset:
        score = total - planned.offset if total >= planned.offset else total + planned.offset
        note = "One point apart from the checklist: the write-up is looser than it needs to be."
    spans = []
    if planned.view == "own" and (item.proof.problem.external_id, quality) in SPANS:
        quote, category, span_note = SPANS[(item.proof.problem.external_id, quality)]
        start = item.proof.text.index(quote)
        spans.append(SpanInput(start, start + len(quote), quote, category, span_note))
    return GradeInput(
        score=Decimal(score),
        awards=dict(awards),
        deductions=list(deductions),
        score_note=note,
        comment=COMMENTS[quality],
        seconds_spent=420,
        spans=spans,
    )


def _grade(item: Item, planned: PlannedGrade, admin: User) -> None:
    expert = User.objects.get(username=planned.expert)
    if Grade.objects.filter(item=item, expert=expert, status=GradeStatus.SUBMITTED).exists():
        return
    assignment_create_manual(item=item, expert=expert, assigned_by=admin)
    grade_submit(
        item=item,
        expert=expert,
        data=_grade_input(item, planned),
        submit_key=f"demo-{item.pk}-{expert.pk}",
    )


def _review(item: Item, username: str, admin: User) -> None:
    """A meta-review of an analysis that found no defect in a correct proof: no defect to
    judge, no expression error, and its score (1) fits."""
    expert = User.objects.get(username=username)
    if Grade.objects.filter(item=item, expert=expert, status=GradeStatus.SUBMITTED).exists():
        return
    assignment_create_manual(item=item, expert=expert, assigned_by=admin)
    meta_review_submit(
        item=item,
        expert=expert,
        data=MetaReviewInput(
            expression_error=False,
            score_fits=True,
            comment="The analysis checks each step and rightly finds nothing wrong.",
            seconds_spent=240,
        ),
        submit_key=f"demo-{item.pk}-{expert.pk}",
    )


def demo_load() -> str:
    """Creates (once) the two demo campaigns, their members and items, and submits the planned
    grades not yet submitted; returns a one-line summary. Each grade is its own transaction,
    as on the grading page, so adjudication hears of each judged item when it commits."""
    admin = User.objects.get(username="admin")
    with transaction.atomic():
        grading = _campaign(
            GRADING_SLUG,
            admin,
            name="Demo: grading the demo proofs",
            task_kind=TaskKind.PROOF_GRADING,
            scale=Scale.ZERO_TO_SEVEN,
            double_share=Decimal("0.40"),
            sample_seed=2024,
            tolerance=Decimal(1),
            label_policy=LabelPolicy.MEAN_FLOOR,
            guidelines=GUIDELINES,
        )
        items_create_from_selection(campaign=grading, proofs=_demo_proofs())
    items = list(
        Item.objects.filter(campaign=grading)
        .select_related("campaign", "proof__problem", "scheme")
        .order_by("proof__problem__external_id", "proof__generator")
    )
    doubles = [item for item in items if item.required_judgements > 1]
    singles = [item for item in items if item.required_judgements == 1]
    for group, plan in ((doubles, DOUBLE_PLAN), (singles, SINGLE_PLAN)):
        for item, grades in zip(group, plan, strict=False):
            for planned in grades:
                _grade(item, planned, admin)
    with transaction.atomic():
        review = _campaign(
            REVIEW_SLUG,
            admin,
            name="Demo: reviewing the verifier's analyses",
            task_kind=TaskKind.ANALYSIS_REVIEW,
            scale=Scale.TERNARY,
            double_share=Decimal("0.40"),
            sample_seed=2025,
            tolerance=Decimal(0),
            label_policy=LabelPolicy.LOWER,
            guidelines=REVIEW_GUIDELINES,
        )
        analyses = VerifierAnalysis.objects.filter(
            verifier=DEMO_VERIFIER, proof__in=[item.proof for item in items]
        ).order_by("pk")
        analysis_items_create(campaign=review, analyses=analyses)
    reviewed = [
        item
        for item in Item.objects.filter(campaign=review, required_judgements=1)
        .select_related("campaign", "proof__problem", "analysis")
        .order_by("proof__problem__external_id", "proof__generator")
        if item.proof.metadata["demo_quality"] == "correct"
    ][:2]
    for item in reviewed:
        _review(item, "expert1", admin)
    submitted = Grade.objects.filter(item__campaign=grading, status=GradeStatus.SUBMITTED).count()
    return (
        f"Campaigns: '{grading.name}' ({len(items)} items, {len(doubles)} double-scored, "
        f"{submitted} grades submitted); '{review.name}' "
        f"({Item.objects.filter(campaign=review).count()} analyses, {len(reviewed)} reviewed)."
    )
