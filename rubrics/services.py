"""Writes on marking schemes: versions, edits, approval, ratings and imports."""

from __future__ import annotations

from django.contrib.auth.models import User
from django.db import transaction
from django.db.models import Max

from problems.models import Problem

from .models import MarkingScheme, SchemeStatus
from .structure import parse_scheme


@transaction.atomic
def scheme_version_create(
    *,
    problem: Problem,
    text: str,
    method: str,
    fmt: str = "proofbench_markdown",
    content: object | None = None,
    guidelines: str = "",
    provenance: dict | None = None,
    created_by: User | None = None,
    previous: MarkingScheme | None = None,
) -> MarkingScheme:
    """A new draft version of the problem's scheme: `content` (or `text`) parsed as `fmt`,
    the structure and validation messages stored beside the text. Text that does not parse
    is still saved, with its problems in words and is_valid False; text the parser keeps as
    free guidance (IMO-ProofBench guidelines) lands in `guidelines`."""
    Problem.objects.select_for_update().only("id").get(pk=problem.pk)
    result = parse_scheme(content if content is not None else text, fmt)
    last = MarkingScheme.objects.filter(problem=problem).aggregate(last=Max("version"))["last"]
    kept_guidelines = "\n\n".join(part for part in (guidelines, result.guidelines) if part)
    return MarkingScheme.objects.create(
        problem=problem,
        version=(last or 0) + 1,
        method=method,
        status=SchemeStatus.DRAFT,
        text=text,
        guidelines=kept_guidelines,
        structure=result.scheme.to_dict() if result.scheme is not None else {},
        validation=[message.to_dict() for message in result.messages],
        is_valid=result.is_valid,
        previous=previous,
        provenance=provenance or {},
        created_by=created_by,
    )
