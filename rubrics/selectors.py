"""Reads of marking schemes. Each selector prefetches what its page needs, so a page costs the
same number of queries whatever the number of versions, ratings or checkpoints.

Every role reads schemes (views and endpoints check the role); ratings are the exception:
`scheme_ratings_for_user` gives admins every rater's rating and anyone else only their own, and
`scheme_rating_means_visible` keeps the means and counts from experts who are not admins.
"""

from __future__ import annotations

import difflib
from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass, field
from decimal import ROUND_HALF_UP, Decimal

from django.contrib.auth.models import AbstractBaseUser
from django.db.models import Avg, Count, Max, OuterRef, Prefetch, Q, QuerySet, Subquery
from django.shortcuts import get_object_or_404

from core.queries import of_ids
from core.roles import Role, has_role
from problems.models import Problem, ReferenceSolution

from .models import MarkingScheme, SchemeMethod, SchemeRating, SchemeStatus

HIGH_RATING = 2
HEAVY_FIELDS = ("text", "guidelines", "structure", "validation", "provenance")
RATING_SCALE = (
    (0, "Invalid: wrong or unusable for grading"),
    (1, "Weak: major gaps or wrong point allocation"),
    (2, "Reasonable: usable with minor fixes"),
    (3, "High fidelity: matches the solution's key steps and fair partial credit"),
)


@dataclass(frozen=True)
class SchemeFilters:
    status: str = ""
    method: str = ""
    valid: bool | None = None
    contest: str = ""
    search: str = ""
    problem: str = ""  # a problem's external id, exactly

    @property
    def active(self) -> bool:
        return bool(
            self.status
            or self.method
            or self.valid is not None
            or self.contest
            or self.search
            or self.problem
        )


def _with_rating_stats(schemes: QuerySet[MarkingScheme]) -> QuerySet[MarkingScheme]:
    """Adds `rating_mean`, `rating_count` and `rating_high` (ratings of 2 or more)."""
    return schemes.annotate(
        rating_mean=Avg("ratings__score"),
        rating_count=Count("ratings"),
        rating_high=Count("ratings", filter=Q(ratings__score__gte=HIGH_RATING)),
    )


def scheme_list(*, filters: SchemeFilters | None = None) -> QuerySet[MarkingScheme]:
    """The latest version of each problem's scheme, with its problem, its mean rating and
    count (`rating_mean`, `rating_count`), the number of versions (`version_count`) and the
    approved version's number (`approved_version`, None when none is approved). Filters apply
    to the latest version."""
    filters = filters or SchemeFilters()
    latest = (
        MarkingScheme.objects.filter(problem_id=OuterRef("problem_id"))
        .order_by()
        .values("problem_id")
        .annotate(top=Max("version"))
        .values("top")
    )
    approved = MarkingScheme.objects.filter(
        problem_id=OuterRef("problem_id"), status=SchemeStatus.APPROVED
    ).values("version")[:1]
    versions = (
        MarkingScheme.objects.filter(problem_id=OuterRef("problem_id"))
        .order_by()
        .values("problem_id")
        .annotate(n=Count("pk"))
        .values("n")
    )
    schemes = MarkingScheme.objects.filter(version=Subquery(latest))
    if filters.status:
        schemes = schemes.filter(status=filters.status)
    if filters.method:
        schemes = schemes.filter(method=filters.method)
    if filters.valid is not None:
        schemes = schemes.filter(is_valid=filters.valid)
    if filters.contest:
        schemes = schemes.filter(problem__contest=filters.contest)
    if filters.problem:
        schemes = schemes.filter(problem__external_id=filters.problem)
    if filters.search:
        schemes = schemes.filter(
            Q(problem__external_id__icontains=filters.search) | Q(text__icontains=filters.search)
        )
    return _with_rating_stats(
        schemes.select_related("problem")
        .defer("text", "guidelines", "structure", "problem__statement", "problem__metadata")
        .annotate(approved_version=Subquery(approved), version_count=Subquery(versions))
    ).order_by("problem__contest", "problem__year", "problem__number", "problem__external_id")


def scheme_filter_choices() -> dict[str, list]:
    contests = (
        MarkingScheme.objects.exclude(problem__contest="")
        .order_by("problem__contest")
        .values_list("problem__contest", flat=True)
        .distinct()
    )
    return {
        "contests": list(contests),
        "methods": list(SchemeMethod.choices),
        "statuses": list(SchemeStatus.choices),
    }


def scheme_detail(*, scheme_id: int) -> MarkingScheme:
    """A version with its problem (reference solutions prefetched), its ratings with their
    raters, and every version of the problem's scheme (`problem.marking_schemes.all()`, newest
    first, with rating stats); 404 when there is none."""
    versions = _with_rating_stats(
        MarkingScheme.objects.select_related("created_by", "previous").defer(
            *HEAVY_FIELDS, *(f"previous__{name}" for name in HEAVY_FIELDS)
        )
    ).order_by("-version")
    return get_object_or_404(
        MarkingScheme.objects.select_related(
            "problem", "previous", "created_by", "approved_by"
        ).prefetch_related(
            Prefetch(
                "problem__reference_solutions", queryset=ReferenceSolution.objects.order_by("id")
            ),
            Prefetch("problem__marking_schemes", queryset=versions),
            Prefetch(
                "ratings",
                queryset=SchemeRating.objects.select_related("rater").order_by("rater__username"),
            ),
        ),
        pk=scheme_id,
    )


def scheme_ratings_for_user(*, scheme: MarkingScheme, user: AbstractBaseUser) -> list[SchemeRating]:
    """The ratings `user` may see: admins all of them (side by side), anyone else their own.
    Reads the prefetched ratings of `scheme_detail`."""
    ratings = list(scheme.ratings.all())
    if has_role(user, Role.ADMIN):
        return ratings
    return [rating for rating in ratings if rating.rater_id == user.pk]


def scheme_rating_means_visible(*, user: AbstractBaseUser) -> bool:
    """Whether `user` sees other people's ratings in aggregate (means and counts): admins, and
    the roles that do not rate (adjudicators, researchers). Experts who are not admins do not,
    so that each rates without anchoring on the others."""
    return has_role(user, Role.ADMIN) or not has_role(user, Role.EXPERT)


def scheme_diff_base(*, scheme: MarkingScheme) -> MarkingScheme | None:
    """The version to diff against: the one it was edited from, else the one numbered just
    before it. Reads the prefetched versions of `scheme_detail`."""
    if scheme.previous_id is not None:
        return scheme.previous
    earlier = [v for v in scheme.problem.marking_schemes.all() if v.version < scheme.version]
    return max(earlier, key=lambda v: v.version) if earlier else None


@dataclass(frozen=True)
class DiffLine:
    kind: str  # "add", "remove", "context" or "hunk"
    text: str


def scheme_diff(*, old: str, new: str, context: int = 3) -> list[DiffLine]:
    """The line diff from `old` to `new` (unified, `context` lines around each change); the
    page escapes the text."""
    lines: list[DiffLine] = []
    diff = difflib.unified_diff(old.splitlines(), new.splitlines(), lineterm="", n=context)
    for line in diff:
        if line.startswith(("---", "+++")):
            continue
        if line.startswith("@@"):
            lines.append(DiffLine("hunk", line))
        elif line.startswith("+"):
            lines.append(DiffLine("add", line[1:]))
        elif line.startswith("-"):
            lines.append(DiffLine("remove", line[1:]))
        else:
            lines.append(DiffLine("context", line[1:]))
    return lines


def scheme_approved_for_problem(problem_id: int) -> MarkingScheme | None:
    """The problem's approved version, or else its newest frozen one (frozen versions were
    approved when grades started pointing at them); None when neither exists."""
    return (
        MarkingScheme.objects.filter(
            problem_id=problem_id, status__in=[SchemeStatus.APPROVED, SchemeStatus.FROZEN]
        )
        .order_by("status", "-version")  # approved sorts before frozen
        .first()
    )


def schemes_approved_for_problems(problem_ids: Iterable[int]) -> dict[int, MarkingScheme]:
    """`scheme_approved_for_problem` for many problems in one query: problem id -> its
    approved version, or else its newest frozen one (problems with neither are left out)."""
    chosen: dict[int, MarkingScheme] = {}
    schemes = (
        of_ids(MarkingScheme.objects.all(), "problem", problem_ids)
        .filter(status__in=[SchemeStatus.APPROVED, SchemeStatus.FROZEN])
        .only("id", "problem_id", "version", "status", "provenance")
        .order_by("problem_id", "status", "-version")  # approved sorts before frozen
    )
    for scheme in schemes:
        chosen.setdefault(scheme.problem_id, scheme)
    return chosen


def scheme_generator_config_id(scheme: MarkingScheme) -> int | None:
    """The generator configuration a version was generated with (its provenance, written by
    `rubrics.generation`), None for imported, hand-written or edited versions."""
    config = (scheme.provenance or {}).get("config")
    return config.get("id") if isinstance(config, dict) else None


@dataclass
class RatingGroup:
    """Ratings of the schemes of one method and prompt version. A scheme counts as rated
    when it has at least one rating; `mean_high` counts rated schemes whose mean rating is at
    least 2, `all_high` those whose every rating is at least 2 (ProofBench's "reasonable or
    better")."""

    method: str
    method_label: str
    prompt_version: str
    schemes: int = 0
    rated: int = 0
    ratings: int = 0
    mean_high: int = 0
    all_high: int = 0
    score_counts: list[int] = field(default_factory=lambda: [0, 0, 0, 0])

    @staticmethod
    def _share(part: int, whole: int) -> Decimal | None:
        if not whole:
            return None
        return (Decimal(100) * part / whole).quantize(Decimal("0.1"), rounding=ROUND_HALF_UP)

    @property
    def mean_high_share(self) -> Decimal | None:
        return self._share(self.mean_high, self.rated)

    @property
    def all_high_share(self) -> Decimal | None:
        return self._share(self.all_high, self.rated)


def scheme_ratings_summary() -> list[RatingGroup]:
    """One row per (method, prompt version) with schemes: how many schemes, how many rated,
    and the shares of rated schemes with mean rating >= 2 and with every rating >= 2. The
    prompt version is the scheme's `provenance["prompt_version"]` ("" when it has none)."""
    schemes = MarkingScheme.objects.order_by().values("id", "method", "provenance__prompt_version")
    scores: dict[int, list[int]] = defaultdict(list)
    for scheme_id, score in SchemeRating.objects.order_by().values_list("scheme_id", "score"):
        scores[scheme_id].append(score)
    labels = dict(SchemeMethod.choices)
    groups: dict[tuple[str, str], RatingGroup] = {}
    for row in schemes:
        prompt_version = row["provenance__prompt_version"]
        key = (row["method"], "" if prompt_version is None else str(prompt_version))
        group = groups.get(key)
        if group is None:
            group = groups[key] = RatingGroup(
                method=key[0], method_label=labels.get(key[0], key[0]), prompt_version=key[1]
            )
        group.schemes += 1
        given = scores.get(row["id"], [])
        if not given:
            continue
        group.rated += 1
        group.ratings += len(given)
        for score in given:
            group.score_counts[score] += 1
        group.mean_high += sum(given) >= HIGH_RATING * len(given)
        group.all_high += min(given) >= HIGH_RATING
    return sorted(groups.values(), key=lambda g: (g.method, g.prompt_version))


def scheme_versions_for_problem(*, external_id: str) -> QuerySet[MarkingScheme]:
    """Every version of a problem's scheme, newest first, with rating stats; 404 when there
    is no such problem."""
    problem = get_object_or_404(Problem.objects.only("id", "external_id"), external_id=external_id)
    return _with_rating_stats(
        MarkingScheme.objects.filter(problem=problem).select_related("problem")
    ).order_by("-version")


def problem_for_scheme(*, external_id: str) -> Problem:
    """The problem a new scheme is written for; 404 when there is none."""
    return get_object_or_404(Problem, external_id=external_id)


def problem_exists(*, external_id: str) -> bool:
    return Problem.objects.filter(external_id=external_id).exists()


def scheme_for_api(*, scheme_id: int) -> MarkingScheme:
    return get_object_or_404(
        _with_rating_stats(MarkingScheme.objects.select_related("problem")), pk=scheme_id
    )
