"""Reads of the corpus. Every selector returns its rows with what the page needs prefetched, so
a page costs the same number of queries whatever the number of rows behind it.

The corpus is readable by every role (admin, expert, adjudicator, researcher): views and API
endpoints check the role; these selectors do not narrow by user.
"""

from collections.abc import Iterable
from dataclasses import dataclass

from django.db.models import Count, OuterRef, Prefetch, Q, QuerySet, Subquery
from django.db.models.functions import Coalesce, Substr
from django.shortcuts import get_object_or_404

from core.queries import of_ids
from problems.models import (
    ImportJob,
    Picture,
    Problem,
    ProblemStatement,
    Proof,
    ReferenceSolution,
    Topic,
    VerifierAnalysis,
)
from problems.progress import import_progress_read

STATEMENT_START_LENGTH = 400


@dataclass(frozen=True)
class ProblemFilters:
    contest: str = ""
    year: int | None = None
    topic: str = ""
    search: str = ""

    @property
    def active(self) -> bool:
        return bool(self.contest or self.year or self.topic or self.search)


def corpus_counts() -> dict[str, int]:
    return {
        "problems": Problem.objects.count(),
        "proofs": Proof.objects.count(),
        "analyses": VerifierAnalysis.objects.count(),
    }


def _count_of(model, field: str) -> Coalesce:
    counted = (
        model.objects.filter(**{field: OuterRef("pk")})
        .order_by()
        .values(field)
        .annotate(n=Count("pk"))
        .values("n")
    )
    return Coalesce(Subquery(counted), 0)


def problem_list(*, filters: ProblemFilters | None = None) -> QuerySet[Problem]:
    """Problems matching the filters, with their proof and reference-solution counts and the
    start of their statement (`statement_start`; the statement itself is deferred)."""
    filters = filters or ProblemFilters()
    problems = Problem.objects.defer("statement", "metadata", "final_answer")
    if filters.contest:
        problems = problems.filter(contest=filters.contest)
    if filters.year:
        problems = problems.filter(year=filters.year)
    if filters.topic:
        problems = problems.filter(topic=filters.topic)
    if filters.search:
        problems = problems.filter(
            Q(external_id__icontains=filters.search) | Q(statement__icontains=filters.search)
        )
    return problems.annotate(
        statement_start=Substr("statement", 1, STATEMENT_START_LENGTH),
        proof_count=_count_of(Proof, "problem"),
        solution_count=_count_of(ReferenceSolution, "problem"),
    ).order_by("contest", "year", "number", "external_id")


def problem_filter_choices() -> dict[str, list]:
    """The contests, years and topics present in the corpus, for the filter form."""
    contests = (
        Problem.objects.exclude(contest="")
        .order_by("contest")
        .values_list("contest", flat=True)
        .distinct()
    )
    years = (
        Problem.objects.exclude(year=None)
        .order_by("-year")
        .values_list("year", flat=True)
        .distinct()
    )
    return {
        "contests": list(contests),
        "years": list(years),
        "topics": [(value, label) for value, label in Topic.choices if value],
    }


def _analyses_prefetch() -> Prefetch:
    return Prefetch(
        "analyses",
        queryset=VerifierAnalysis.objects.order_by("verifier", "sample_key"),
    )


# Proofs as their readers list them: by model for a reader who sees models; by the hash of the
# text for a reader blind to some proof (core.visibility), an order that says nothing of the
# model, the source file or the order of the import.
PROOF_ORDER = ("generator", "sample_index", "sample_key", "id")
BLIND_PROOF_ORDER = ("text_hash", "id")


def proof_order(*, blind: bool) -> tuple[str, ...]:
    return BLIND_PROOF_ORDER if blind else PROOF_ORDER


def problem_detail(*, external_id: str, blind: bool = False) -> Problem:
    """A problem with its reference solutions and its proofs (texts deferred) and their
    verifier analyses (scores only); 404 when there is no such problem. `blind`: the reader is
    blind to some proof, and the proofs come in an order that names no model."""
    proofs = Proof.objects.defer("text").prefetch_related(
        Prefetch("analyses", queryset=VerifierAnalysis.objects.defer("text").order_by("verifier"))
    )
    return get_object_or_404(
        Problem.objects.prefetch_related(
            Prefetch("reference_solutions", queryset=ReferenceSolution.objects.order_by("id")),
            Prefetch("proofs", queryset=proofs.order_by(*proof_order(blind=blind))),
        ),
        external_id=external_id,
    )


def problem_statements(*, problem: Problem) -> dict:
    """What admins see of a problem's statements: its earlier versions (each with the number of
    proofs rated against it), newest first, and the alternative statements its sources carry
    (`alternative_statements` of its metadata, as the import recorded them)."""
    past = list(
        ProblemStatement.objects.filter(problem=problem)
        .annotate(proof_count=Count("proofs"))
        .order_by("-version")
    )
    recorded = (problem.metadata or {}).get("alternative_statements")
    alternatives = [
        entry
        for entry in (recorded if isinstance(recorded, list) else [])
        if isinstance(entry, dict) and isinstance(entry.get("text"), str)
    ]
    return {"past": past, "alternatives": alternatives}


def proof_detail(*, proof_id: int) -> Proof:
    """A proof with its problem, the statement it was rated against and its verifier analyses;
    404 when there is no such proof."""
    return get_object_or_404(
        Proof.objects.select_related("problem", "statement").prefetch_related(_analyses_prefetch()),
        pk=proof_id,
    )


def proof_siblings(*, proof: Proof, blind: bool = False) -> tuple[int | None, int | None]:
    """The ids of the proofs before and after `proof` among its problem's proofs (in the order
    `problem_detail` lists them for the same reader)."""
    ids = list(
        Proof.objects.filter(problem_id=proof.problem_id)
        .order_by(*proof_order(blind=blind))
        .values_list("id", flat=True)
    )
    at = ids.index(proof.pk)
    return (ids[at - 1] if at > 0 else None, ids[at + 1] if at + 1 < len(ids) else None)


def proof_natural_keys(*, proof_ids: Iterable[int]) -> dict[int, tuple[str, str, str]]:
    """Each proof's natural key by id: its problem's external id, its generator and its sample
    key (`proof_natural_key`), the same in every database the corpus is imported into."""
    rows = of_ids(Proof.objects.all(), "id", set(proof_ids)).values_list(
        "pk", "problem__external_id", "generator", "sample_key"
    )
    return {pk: (problem, generator, key) for pk, problem, generator, key in rows}


def proof_list(
    *, problem_external_id: str = "", generator: str = "", blind: bool = False
) -> QuerySet[Proof]:
    """Proofs, optionally of one problem and one generator, with their problem; for a reader
    blind to some proof (`blind`), in an order that names no model."""
    proofs = Proof.objects.select_related("problem").only(
        *(f"problem__{name}" for name in ("external_id", "contest", "year", "topic")),
        *(
            "id", "problem_id", "generator", "sample_key", "sample_index", "text", "source",
            "metadata", "created_at", "updated_at",
        ),
    )  # fmt: skip
    if problem_external_id:
        proofs = proofs.filter(problem__external_id=problem_external_id)
    if generator:
        proofs = proofs.filter(generator=generator)
    return proofs.order_by("problem__external_id", *proof_order(blind=blind))


def first_references(problem_ids: set[int]) -> dict[int, str]:
    """Each problem's first reference solution (by id), as problem id -> its text."""
    found: dict[int, str] = {}
    for problem_id, text in (
        of_ids(ReferenceSolution.objects.all(), "problem", problem_ids)
        .order_by("problem_id", "id")
        .values_list("problem_id", "text")
    ):
        found.setdefault(problem_id, text)
    return found


def problem_for_api(*, external_id: str) -> Problem:
    """A problem with its reference solutions and its proof count, for the API."""
    return get_object_or_404(
        Problem.objects.prefetch_related(
            Prefetch("reference_solutions", queryset=ReferenceSolution.objects.order_by("id"))
        ).annotate(proof_count=_count_of(Proof, "problem")),
        external_id=external_id,
    )


def import_job_list(*, limit: int = 20) -> QuerySet[ImportJob]:
    return ImportJob.objects.select_related("created_by").order_by("-created_at")[:limit]


def import_job_detail(*, job_id: int) -> ImportJob:
    """The job, with the progress of a running import laid over it where the database could not
    take it yet (problems.progress: an import run inside a transaction)."""
    job = get_object_or_404(ImportJob.objects.select_related("created_by"), pk=job_id)
    if job.status == ImportJob.Status.RUNNING and (progress := import_progress_read(job_id=job.pk)):
        job.processed, job.counts = progress["processed"], progress["counts"]
    return job


def picture_by_hash(*, sha256: str) -> Picture | None:
    """The stored picture of that content hash (problems.pictures), or None."""
    return Picture.objects.filter(sha256=sha256).first()


def problems_with_imported_schemes(*, problem_ids: Iterable[int]) -> QuerySet[Problem]:
    """The problems of `problem_ids` whose import shipped marking schemes
    (`metadata["imported_schemes"]`, which rubrics turns into versions)."""
    return of_ids(Problem.objects.all(), "id", problem_ids).filter(
        metadata__has_key="imported_schemes"
    )


def proofs_with_imported_ratings(*, problem_ids: Iterable[int]) -> QuerySet[Proof]:
    """The proofs of the problems `problem_ids` whose import shipped expert ratings
    (`metadata["imported_ratings"]`, which adjudication turns into judgements and labels)."""
    return of_ids(Proof.objects.all(), "problem", problem_ids).filter(
        metadata__has_key="imported_ratings"
    )
