"""Demo marking schemes for `manage.py demo_setup`: an approved, valid ProofBench-style scheme
for every demo problem with a rating or two, and one later draft (history and diff). Written
through the rubrics services; running it again changes nothing."""

from django.contrib.auth.models import User
from django.db import transaction

from problems.demo.loader import DEMO_PROBLEMS, DEMO_SOURCE
from problems.models import Problem
from rubrics.demo_schemes import COPRIME_EDIT, DEMO_SCHEMES
from rubrics.models import MarkingScheme, SchemeMethod, SchemeRating
from rubrics.selectors import scheme_approved_for_problem
from rubrics.services import scheme_approve, scheme_edit, scheme_rate, scheme_version_create

# (problem, rater) -> (rating 0-3, comment): the experts' reviews of the approved versions.
RATINGS = {
    ("DEMO-2024-A1", "expert1"): (3, "Faithful to the official solution; the [max 3] step "
                                     "handles the unproved-minimum shortcut well."),
    ("DEMO-2024-A1", "expert2"): (2, "Good, though the equality cap could be lower."),
    ("DEMO-2024-C1", "expert1"): (2, "Coprimality deserves half points for a partial reason."),
    ("DEMO-2024-G1", "expert2"): (3, "Both standard approaches are covered as chains."),
    ("DEMO-2025-N1", "expert1"): (3, "The shared reduction and the Fermat chain are right."),
    ("DEMO-2025-N1", "expert2"): (1, "Chain B gives 6 points for one citation: too generous."),
}  # fmt: skip


def _version_with_text(problem: Problem, text: str) -> MarkingScheme | None:
    return MarkingScheme.objects.filter(problem=problem, text=text).order_by("version").first()


@transaction.atomic
def demo_load() -> str:
    """Creates (once) and approves each demo problem's scheme, rates them, and adds the edit
    draft; returns a one-line summary."""
    admin = User.objects.get(username="admin")
    problems = {
        p.external_id: p
        for p in Problem.objects.filter(external_id__in=[s["external_id"] for s in DEMO_PROBLEMS])
    }
    for external_id, text in DEMO_SCHEMES.items():
        problem = problems[external_id]
        scheme = _version_with_text(problem, text)
        if scheme is None:
            scheme = scheme_version_create(
                problem=problem,
                text=text,
                method=SchemeMethod.MANUAL,
                provenance={"source": DEMO_SOURCE},
                created_by=admin,
            )
        if scheme_approved_for_problem(problem.pk) is None:
            scheme_approve(scheme=scheme, user=admin)
    for (external_id, username), (score, comment) in RATINGS.items():
        scheme = _version_with_text(problems[external_id], DEMO_SCHEMES[external_id])
        rater = User.objects.get(username=username)
        if not SchemeRating.objects.filter(
            scheme=scheme, rater=rater, score=score, comment=comment
        ).exists():
            scheme_rate(scheme=scheme, rater=rater, score=score, comment=comment)
    external_id, edited_text = COPRIME_EDIT
    if _version_with_text(problems[external_id], edited_text) is None:
        scheme_edit(
            scheme=_version_with_text(problems[external_id], DEMO_SCHEMES[external_id]),
            text=edited_text,
            user=admin,
        )
    return (
        f"Marking schemes: {len(DEMO_SCHEMES)} approved, {len(RATINGS)} ratings, a later draft "
        f"of {external_id}'s (history and diff)."
    )
