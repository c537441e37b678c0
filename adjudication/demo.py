"""Demo adjudication for `manage.py demo_setup`: of the demo campaign's two disagreements, the
adjudicator has already settled the first (accepting the lower judgement, with a rationale);
the other stays open in the adjudicator's queue. Running it again changes nothing."""

from django.contrib.auth.models import User
from django.db import transaction

from adjudication.models import AdjudicationCase, CaseStatus, FinalLabel
from adjudication.services import case_assign, case_resolve
from annotation.demo import GRADING_SLUG
from annotation.models import GradeStatus

RATIONALE = (
    "The step both graders discuss is asserted, not proved: the checklist's total for the "
    "stricter reading is the right label. The more generous grade credits an argument the "
    "proof does not contain."
)


@transaction.atomic
def demo_load() -> str:
    """Resolves one open disagreement case of the demo campaign unless one was resolved already;
    returns a one-line summary."""
    adjudicator = User.objects.get(username="adjudicator")
    cases = AdjudicationCase.objects.filter(item__campaign__slug=GRADING_SLUG)
    unresolved = list(
        cases.exclude(status=CaseStatus.RESOLVED)
        .select_related("item")
        .order_by("item__proof__problem__external_id", "item__proof__generator")
    )
    if not cases.filter(status=CaseStatus.RESOLVED).exists() and len(unresolved) > 1:
        case = unresolved[0]
        grades = case.item.grades.filter(status=GradeStatus.SUBMITTED).order_by("score", "id")
        case_assign(case=case, adjudicator=adjudicator, by=adjudicator)
        case_resolve(
            case=case,
            user=adjudicator,
            action="accept",
            grade_id=grades.first().pk,
            rationale=RATIONALE,
        )
    labels = FinalLabel.objects.filter(item__campaign__slug=GRADING_SLUG)
    by_source = {
        source: labels.filter(source=source).count()
        for source in ("agreement", "single", "adjudication")
    }
    still_open = cases.exclude(status=CaseStatus.RESOLVED).count()
    return (
        f"Final labels: {by_source['agreement']} by agreement, {by_source['single']} single, "
        f"{by_source['adjudication']} by adjudication; {still_open} case(s) open."
    )
