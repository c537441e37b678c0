"""What every export format shares: options, the plan a writer streams, filters, batches,
splits, pseudonyms and licences."""

from __future__ import annotations

import hashlib
import hmac
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from decimal import Decimal

from django.conf import settings
from django.db.models import Count, F, Max, Min, OuterRef, QuerySet, Subquery

from adjudication.models import FinalLabel
from annotation.models import Campaign, Grade, GradeStatus
from exports.writers import Field
from problems.models import ReferenceSolution

BATCH = 1000
FORMATS = ("proofbench", "dv", "dmv", "annotations")
LABEL_SOURCES = ("agreement", "adjudication", "single", "imported", "automatic")
DEFAULT_CUTS = (5, 7)


class ExportError(ValueError):
    """An export that cannot be made as asked (the message says why)."""


@dataclass(frozen=True)
class ExportOptions:
    """What to export. `min_agreement` in [0, 1] keeps items whose judgements spread over at most
    (1 - min_agreement) of the scale's range (items with a single judgement have no agreement and
    are left out when it is set). Splits are by problem: a problem's hash with `split_seed` decides
    whether all its rows are in the test split (share `test_fraction`) or in train."""

    contest: str = ""
    year: int | None = None
    generator: str = ""
    label_sources: tuple[str, ...] = ()
    min_agreement: float | None = None
    test_fraction: float | None = None
    split_seed: int = 0
    split: str = ""
    cuts: tuple[int, int] = DEFAULT_CUTS
    expert_names: bool = False

    @classmethod
    def from_dict(cls, data: dict) -> ExportOptions:
        def number(key, kind):
            value = data.get(key)
            if value in (None, ""):
                return None
            try:
                return kind(value)
            except (TypeError, ValueError) as exc:
                raise ExportError(f"filter {key}: {value!r} is not a number") from exc

        sources = data.get("label_sources") or ()
        if isinstance(sources, str):
            sources = [s for s in sources.split(",") if s]
        unknown = sorted(set(sources) - set(LABEL_SOURCES))
        if unknown:
            raise ExportError(
                f"filter label_sources: unknown {', '.join(unknown)} "
                f"(choose from {', '.join(LABEL_SOURCES)})"
            )
        cuts = tuple(data.get("cuts") or DEFAULT_CUTS)
        if len(cuts) != 2 or not 0 < int(cuts[0]) < int(cuts[1]) <= 7:
            raise ExportError(f"cuts {list(cuts)}: two increasing cut points within 1..7")
        options = cls(
            contest=str(data.get("contest") or ""),
            year=number("year", int),
            generator=str(data.get("generator") or ""),
            label_sources=tuple(sources),
            min_agreement=number("min_agreement", float),
            test_fraction=number("test_fraction", float),
            split_seed=number("split_seed", int) or 0,
            split=str(data.get("split") or ""),
            cuts=(int(cuts[0]), int(cuts[1])),
            expert_names=bool(data.get("expert_names")),
        )
        if options.min_agreement is not None and not 0 <= options.min_agreement <= 1:
            raise ExportError("filter min_agreement: between 0 and 1")
        if options.test_fraction is not None and not 0 < options.test_fraction < 1:
            raise ExportError("test_fraction: strictly between 0 and 1")
        if options.split not in ("", "train", "test"):
            raise ExportError("split: train or test")
        if options.split and options.test_fraction is None:
            raise ExportError("split: set test_fraction too")
        return options

    def to_dict(self) -> dict:
        return {
            "contest": self.contest,
            "year": self.year,
            "generator": self.generator,
            "label_sources": list(self.label_sources),
            "min_agreement": self.min_agreement,
            "test_fraction": self.test_fraction,
            "split_seed": self.split_seed,
            "split": self.split,
            "cuts": list(self.cuts),
            "expert_names": self.expert_names,
        }


def split_of(problem_external_id: str, seed: int, test_fraction: float) -> str:
    """'test' or 'train', from a hash of the problem id: deterministic, one split per problem."""
    digest = hashlib.sha256(f"{seed}:{problem_external_id}".encode()).digest()
    return "test" if int.from_bytes(digest[:8], "big") / 2**64 < test_fraction else "train"


def pseudonym(user_id: int) -> str:
    """A stable expert pseudonym that does not reveal the account (keyed by SECRET_KEY)."""
    mac = hmac.new(settings.SECRET_KEY.encode(), f"expert:{user_id}".encode(), "sha256")
    return "expert-" + mac.hexdigest()[:10]


def licence_of(proof_meta: dict | None, problem_meta: dict | None) -> str:
    for meta in (proof_meta or {}, problem_meta or {}):
        for key in ("licence", "license"):
            if meta.get(key):
                return str(meta[key])
    return ""


@dataclass
class Plan:
    """A format ready to stream: its columns, its rows, the conversions it applies and how many
    rows the query holds before the split filter."""

    fields: list[Field]
    rows: Callable[[], Iterator[dict]]
    total: int
    conversions: list[dict] = field(default_factory=list)
    summary: str = ""


# --- Shared query parts ----------------------------------------------------------------------

COMMON_TAIL = [
    Field(
        "label_source",
        "string",
        "How the final label was reached (agreement, adjudication, single, imported, automatic).",
    ),
    Field("judgements", "int", "Number of expert judgements behind the label."),
    Field("campaign", "string", "Campaign slug."),
    Field("licence", "string", "Licence of the source record, where the import recorded one."),
]
SPLIT_FIELD = Field("split", "string", "train or test (by problem: no problem is in both).")


def _labels(campaign: Campaign, options: ExportOptions) -> QuerySet:
    qs = FinalLabel.objects.filter(item__campaign=campaign)
    if options.contest:
        qs = qs.filter(item__proof__problem__contest=options.contest)
    if options.year is not None:
        qs = qs.filter(item__proof__problem__year=options.year)
    if options.generator:
        qs = qs.filter(item__proof__generator=options.generator)
    if options.label_sources:
        qs = qs.filter(source__in=options.label_sources)
    if options.min_agreement is not None:
        qs = _with_agreement(qs, campaign, options.min_agreement, "item_id")
    return qs


def _with_agreement(qs: QuerySet, campaign: Campaign, minimum: float, item_ref: str) -> QuerySet:
    spread = (
        Grade.objects.filter(item_id=OuterRef(item_ref), status=GradeStatus.SUBMITTED)
        .values("item_id")
        .annotate(spread=Max("score") - Min("score"))
        .values("spread")
    )
    count = (
        Grade.objects.filter(item_id=OuterRef(item_ref), status=GradeStatus.SUBMITTED)
        .values("item_id")
        .annotate(n=Count("id"))
        .values("n")
    )
    scale_range = {"0-7": Decimal(7), "0-0.5-1": Decimal(1), "1-4": Decimal(3)}[campaign.scale]
    allowed = (Decimal(1) - Decimal(str(minimum))) * scale_range
    return qs.annotate(_spread=Subquery(spread), _n=Subquery(count)).filter(
        _spread__lte=allowed, _n__gte=2
    )


def _batches(qs: QuerySet, columns: dict[str, str], pk: str = "id") -> Iterator[list[dict]]:
    """Keyset pagination over `qs` by `pk`: batches of plain dicts, two queries each.

    The first query finds the next batch's keys (narrow, so sorting them is cheap whatever the
    table statistics); the second reads the wide rows of exactly those keys by index.
    `columns` maps each output key to a field path.
    """
    plain = [alias for alias, path in columns.items() if alias == path]
    renamed = {alias: F(path) for alias, path in columns.items() if alias != path}
    model = qs.model
    last = 0
    while True:
        keys = list(
            qs.filter(**{f"{pk}__gt": last}).order_by(pk).values_list(pk, flat=True)[:BATCH]
        )
        if not keys:
            return
        rows = model.objects.filter(**{f"{pk}__in": keys}).order_by(pk)
        yield list(rows.values(*plain, **renamed))
        last = keys[-1]


def first_references(problem_ids: set[int]) -> dict[int, str]:
    found: dict[int, str] = {}
    for problem_id, text in (
        ReferenceSolution.objects.filter(problem_id__in=problem_ids)
        .order_by("problem_id", "id")
        .values_list("problem_id", "text")
    ):
        found.setdefault(problem_id, text)
    return found


LABEL_COLUMNS = {
    "_pk": "id",
    "value": "value",
    "source": "source",
    "grade_ids": "grade_ids",
    "scheme_version": "scheme__version",
    "scheme_text": "scheme__text",
    "item_scheme_version": "item__scheme__version",
    "item_scheme_text": "item__scheme__text",
    "problem_pk": "item__proof__problem_id",
    "problem_id": "item__proof__problem__external_id",
    "statement": "item__proof__problem__statement",
    "contest": "item__proof__problem__contest",
    "year": "item__proof__problem__year",
    "problem_meta": "item__proof__problem__metadata",
    "generator": "item__proof__generator",
    "proof_text": "item__proof__text",
    "sample_index": "item__proof__sample_index",
    "sample_key": "item__proof__sample_key",
    "proof_meta": "item__proof__metadata",
}


def _stream(
    campaign: Campaign, options: ExportOptions, qs: QuerySet, columns: dict, build: Callable
) -> Iterator[dict]:
    for batch in _batches(qs, columns):
        context = {"references": None}
        for raw in batch:
            split = ""
            if options.test_fraction is not None:
                split = split_of(raw["problem_id"], options.split_seed, options.test_fraction)
                if options.split and split != options.split:
                    continue
            row = build(raw, batch, context)
            row["label_source"] = raw["source"]
            row["judgements"] = len(raw["grade_ids"] or [])
            row["campaign"] = campaign.slug
            row["licence"] = licence_of(raw["proof_meta"], raw["problem_meta"])
            if options.test_fraction is not None:
                row["split"] = split
            yield row


def _tail(options: ExportOptions) -> list[Field]:
    return COMMON_TAIL + ([SPLIT_FIELD] if options.test_fraction is not None else [])


def _float(value: Decimal | None) -> float | None:
    return None if value is None else float(value)
