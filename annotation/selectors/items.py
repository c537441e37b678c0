"""Reads for making items: the proofs a selection matches, the choices the selection offers, and
what adding it to a campaign will make (`selection_preview`)."""

from __future__ import annotations

from dataclasses import dataclass

from django.db.models import QuerySet

from annotation.models import Campaign, Item, TaskKind
from problems.models import Proof, VerifierAnalysis


def proof_selection(
    *,
    contest: str = "",
    year: int | None = None,
    generator: str = "",
    problem: str = "",
    blind: bool = False,
) -> QuerySet[Proof]:
    """Proofs matching the selection (empty filters match everything); for a reader blind to
    some proof (core.visibility), in an order naming no model."""
    qs = Proof.objects.select_related("problem")
    if contest:
        qs = qs.filter(problem__contest=contest)
    if year:
        qs = qs.filter(problem__year=year)
    if generator:
        qs = qs.filter(generator=generator)
    if problem:
        qs = qs.filter(problem__external_id=problem)
    if blind:
        return qs.order_by("problem__external_id", "text_hash", "id")
    return qs.order_by("problem__external_id", "generator", "sample_key")


def selection_choices() -> dict[str, list]:
    return {
        "contests": list(
            Proof.objects.values_list("problem__contest", flat=True)
            .distinct()
            .order_by("problem__contest")
        ),
        "years": list(
            Proof.objects.exclude(problem__year=None)
            .values_list("problem__year", flat=True)
            .distinct()
            .order_by("problem__year")
        ),
        "generators": list(
            Proof.objects.values_list("generator", flat=True).distinct().order_by("generator")
        ),
    }


@dataclass(frozen=True)
class SelectionPreview:
    """What adding a selection to a campaign will make, counted as the creation counts it: one
    item per proof not yet in a grading campaign; one per verifier analysis of the selected
    proofs not yet in an analysis-review campaign (`analysis_items_create`)."""

    proofs: int
    analyses: int | None  # the selected proofs' analyses (analysis review only)
    new: int  # the items "Create" makes
    present: int  # already in the campaign: left as they are
    without_analyses: list[str]  # problems whose selected proofs have no analysis: no item

    @property
    def nothing(self) -> str:
        """Why the selection makes no item, in words; "" when it makes some."""
        if self.new:
            return ""
        if not self.proofs:
            return "No proof matches: nothing to create."
        if self.analyses == 0:
            return "The selected proofs have no verifier analysis: nothing to create."
        return "Every one is already in the campaign: nothing to create."


def selection_preview(*, campaign: Campaign, proofs: QuerySet[Proof]) -> SelectionPreview:
    count = proofs.count()
    if campaign.task_kind != TaskKind.ANALYSIS_REVIEW:
        present = Item.objects.filter(
            campaign=campaign, analysis__isnull=True, proof__in=proofs
        ).count()
        return SelectionPreview(count, None, count - present, present, [])
    analyses = VerifierAnalysis.objects.filter(proof__in=proofs)
    total = analyses.count()
    present = Item.objects.filter(campaign=campaign, analysis__in=analyses).count()
    with_analyses = set(analyses.values_list("proof__problem__external_id", flat=True))
    selected = set(proofs.values_list("problem__external_id", flat=True))
    return SelectionPreview(
        count, total, total - present, present, sorted(selected - with_analyses)
    )
