"""Reads for making items: the proofs a selection matches and the choices the selection offers."""

from __future__ import annotations

from django.db.models import QuerySet

from problems.models import Proof


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
