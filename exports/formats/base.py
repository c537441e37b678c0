"""What every export format shares: options, the plan a writer streams, filters, batches,
splits, pseudonyms and licences."""

from __future__ import annotations

import hashlib
import hmac
from collections import OrderedDict
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from decimal import Decimal
from functools import cached_property
from typing import NamedTuple

from django.conf import settings
from django.db.models import (
    Count,
    Expression,
    F,
    Max,
    Min,
    OuterRef,
    QuerySet,
    Subquery,
    TextField,
    Value,
)
from django.db.models.fields.json import KeyTextTransform
from django.db.models.functions import Coalesce, NullIf

from adjudication.models import FinalLabel
from annotation.models import Campaign, Grade, GradeStatus
from annotation.scales import DEFAULT_CUTS, scale_spec
from core.queries import of_ids
from core.threads import read_ahead
from exports.writers import Field
from problems.models import Problem, ProblemStatement
from problems.selectors import first_references
from rubrics.models import MarkingScheme

# A batch holds at most BATCH rows and about BATCH_CHARS characters of text: the first batch is
# small, and each next one is sized from the width of the rows before it, so memory stays flat
# however long the proofs are.
BATCH = 2000
FIRST_BATCH = 200
BATCH_CHARS = 6_000_000
FORMATS = ("proofbench", "dv", "dmv", "annotations", "judgements", "pairs")
LABEL_SOURCES = ("agreement", "adjudication", "single", "imported", "automatic")


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
    final_only: bool = False

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
        if not isinstance(sources, list | tuple) or not all(isinstance(s, str) for s in sources):
            raise ExportError("filter label_sources: a list of label sources")
        unknown = sorted(set(sources) - set(LABEL_SOURCES))
        if unknown:
            raise ExportError(
                f"filter label_sources: unknown {', '.join(unknown)} "
                f"(choose from {', '.join(LABEL_SOURCES)})"
            )
        try:
            cuts = tuple(int(cut) for cut in data.get("cuts") or DEFAULT_CUTS)
        except (TypeError, ValueError) as exc:
            raise ExportError("cuts: two whole numbers") from exc
        if len(cuts) != 2 or not 0 < cuts[0] < cuts[1] <= 7:
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
            final_only=bool(data.get("final_only")),
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
            "final_only": self.final_only,
        }


def split_of(problem_external_id: str, seed: int, test_fraction: float) -> str:
    """'test' or 'train', from a hash of the problem id: deterministic, one split per problem."""
    digest = hashlib.sha256(f"{seed}:{problem_external_id}".encode()).digest()
    return "test" if int.from_bytes(digest[:8], "big") / 2**64 < test_fraction else "train"


def pseudonym(user_id: int) -> str:
    """A stable expert pseudonym that does not reveal the account (keyed by SECRET_KEY)."""
    mac = hmac.new(settings.SECRET_KEY.encode(), f"expert:{user_id}".encode(), "sha256")
    return "expert-" + mac.hexdigest()[:10]


@dataclass
class Plan:
    """A format ready to stream: its columns, its rows, the conversions it applies and how many
    rows the query holds before the split filter (`total`, counted on first use: a plan made
    only to check that the format fits, as `export_create` does, runs no count)."""

    fields: list[Field]
    rows: Callable[[], Iterator[dict]]
    count: Callable[[], int]
    conversions: list[dict] = field(default_factory=list)
    summary: str = ""

    @cached_property
    def total(self) -> int:
        return self.count()


# --- Shared query parts ----------------------------------------------------------------------

# The keys that join a row to the other exports: its proof's natural key is (problem_id,
# generator, sample_key); item_id and campaign name the campaign item behind the label (the
# annotations export's item_id). A format's own columns come first, then these, then the tail.
KEY_FIELDS = [
    Field(
        "sample_key",
        "string",
        "The proof's sample key (with problem_id and generator, the proof's natural key).",
    ),
    Field("item_id", "int", "The campaign item behind the label (as in the annotations export)."),
]
COMMON_TAIL = KEY_FIELDS + [
    Field(
        "label_source",
        "string",
        "How the final label was reached (agreement, adjudication, single, imported, automatic).",
    ),
    Field(
        "judgements",
        "int",
        "Number of submitted expert judgements of the item behind the label (all of them, also "
        "when an adjudicator accepted one; 0 for an automatic label).",
    ),
    Field("campaign", "string", "Campaign slug."),
    Field(
        "statement_version",
        "int",
        "The version of the problem's statement the proof was rated against, whose text is "
        "`problem` (1: the statement the problem first had; a later import may have changed "
        "the problem's current statement since).",
    ),
    Field("licence", "string", "Licence of the source record, where the import recorded one."),
    Field(
        "label_confidence",
        "float",
        "P(the label's class | every judgement of the item) from the campaign's rater model "
        "(over experts and automatic graders, chosen by held-out calibration); null until fitted "
        "after the label.",
    ),
]
# Why the item was chosen, in a campaign that routes expert effort by uncertainty
# (estimation.routing.services): empty for items never ranked.
ROUTE_FIELDS = [
    Field("route_rank", "int", "The item's rank when it was ranked (1 = most uncertain)."),
    Field(
        "route_uncertainty",
        "float",
        "The automatic graders' uncertainty about the proof when it was ranked (0-1).",
    ),
]
# The sampling design (annotation.models.ItemDesign / DoubleDesign): what a weighted estimate
# needs (weight = 1 / probability), explained in the card's "Sampling design" section.
DESIGN_FIELDS = [
    Field(
        "chosen_by",
        "string",
        "How the item was chosen for experts: all (every item), uniform (the uniform random "
        "share of a routing budget), routed (drawn with probability proportional to "
        "uncertainty), not_chosen (in the routing draw, not drawn: its label is automatic), "
        "gold, unknown (no known probability).",
    ),
    Field(
        "inclusion_probability",
        "float",
        "P(experts grade the item) under its design; weight an expert label by 1 / this "
        "(null: not known, no design-weighted estimate can use the row).",
    ),
    Field(
        "double_chosen_by",
        "string",
        "How its second judgement was decided: uniform (seeded sample), adaptive (where "
        "disagreement was expected, a uniform share kept) or fixed (by hand).",
    ),
    Field(
        "double_probability",
        "float",
        "P(the item is double-scored) under that design (null: not known).",
    ),
]
ROUTE_FIELDS += DESIGN_FIELDS
ROUTE_COLUMNS = {
    "route_rank": "item__route_rank",
    "route_uncertainty": "item__route_uncertainty",
    "chosen_by": "item__design",
    "inclusion_probability": "item__inclusion_probability",
    "double_chosen_by": "item__double_design",
    "double_probability": "item__double_probability",
}
DESIGN_KEYS = ("chosen_by", "inclusion_probability", "double_chosen_by", "double_probability")
COMMON_TAIL += ROUTE_FIELDS
SPLIT_FIELD = Field("split", "string", "train or test (by problem: no problem is in both).")


def _filtered(
    qs: QuerySet,
    campaign: Campaign,
    options: ExportOptions,
    *,
    label_source: str,
    item: str = "item",
) -> QuerySet:
    """The export's filters on rows that point at an item by the path `item` ("" for items
    themselves); `label_source` is the path from the row to its final label's source."""
    at = f"{item}__" if item else ""
    if options.final_only:
        qs = qs.filter(**{f"{at}is_final": True})
    if options.contest:
        qs = qs.filter(**{f"{at}proof__problem__contest": options.contest})
    if options.year is not None:
        qs = qs.filter(**{f"{at}proof__problem__year": options.year})
    if options.generator:
        qs = qs.filter(**{f"{at}proof__generator": options.generator})
    if options.label_sources:
        qs = qs.filter(**{f"{label_source}__in": options.label_sources})
    if options.min_agreement is not None:
        qs = _with_agreement(qs, campaign, options.min_agreement, f"{item}_id" if item else "id")
    return qs


def _labels(campaign: Campaign, options: ExportOptions) -> QuerySet:
    # campaign_labelled_items, read from the labels' side (an item holds at most one label):
    # `item__in` that queryset made every batch's key query join the labels twice
    qs = FinalLabel.objects.filter(item__campaign_id=campaign.pk)
    return _filtered(qs, campaign, options, label_source="source")


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
    spec = scale_spec(campaign.scale)
    scale_range = spec.max - spec.min
    allowed = (Decimal(1) - Decimal(str(minimum))) * scale_range
    return qs.annotate(_spread=Subquery(spread), _n=Subquery(count)).filter(
        _spread__lte=allowed, _n__gte=2
    )


def _batches(
    qs: QuerySet, columns: dict[str, str | Expression], pk: str = "id"
) -> Iterator[list[dict]]:
    """Keyset pagination over `qs` by `pk`: batches of plain dicts, two queries each.

    The first query finds the next batch's keys (narrow, so sorting them is cheap whatever the
    table statistics); the second reads the wide rows of exactly those keys by index, without
    the filters. `columns` maps each output key to a field path or an expression. Batch sizes
    follow BATCH_CHARS (above).
    """
    plain = [alias for alias, path in columns.items() if alias == path]
    renamed = {
        alias: F(path) if isinstance(path, str) else path
        for alias, path in columns.items()
        if alias != path
    }
    model = qs.model
    last = 0
    size = FIRST_BATCH
    while True:
        keys = list(qs.filter(**{f"{pk}__gt": last}).order_by(pk).values_list(pk, flat=True)[:size])
        if not keys:
            return
        # the keys' range beside the ids: an index range on `pk` for the planner, where the id
        # array alone let it hash the whole items table for every batch (EXPLAIN, 20,000 items)
        wide = of_ids(model.objects.all(), pk, keys).filter(
            **{f"{pk}__gte": keys[0], f"{pk}__lte": keys[-1]}
        )
        batch = list(wide.order_by(pk).values(*plain, **renamed))
        yield batch
        if len(keys) < size:
            return  # a short batch was the last: no query to find that nothing follows
        last = keys[-1]
        chars = sum(len(value) for row in batch for value in row.values() if type(value) is str)
        size = max(1, min(BATCH, len(batch) * BATCH_CHARS // max(chars, 1)))


# --- Per-problem columns, read once ----------------------------------------------------------

CACHE_CHARS = 4_000_000


class ProblemColumns(NamedTuple):
    """What every row of one problem repeats: read once per problem, not joined into each row."""

    problem_id: str
    statement: str
    statement_version: int
    contest: str
    year: int | None
    licence: str
    reference: str
    split: str

    @property
    def chars(self) -> int:
        return len(self.statement) + len(self.reference)


class SchemeColumns(NamedTuple):
    version: int
    text: str
    text_format: str

    @property
    def chars(self) -> int:
        return len(self.text)


class ReadOnce:
    """Values read by key in one query per batch for the keys not yet held, and kept for later
    batches; the least recently used are dropped once their text passes `limit` characters, so
    memory stays bounded whatever the export's size."""

    def __init__(self, load: Callable[[set[int]], dict], limit: int = CACHE_CHARS):
        self.load = load
        self.limit = limit
        self.held: OrderedDict[int, ProblemColumns | SchemeColumns] = OrderedDict()
        self.chars = 0

    def get(self, keys: set[int]) -> dict:
        missing = set()
        for key in keys:
            if key in self.held:
                self.held.move_to_end(key)
            else:
                missing.add(key)
        if missing:
            for key, value in self.load(missing).items():
                self.held[key] = value
                self.chars += value.chars
        found = {key: self.held[key] for key in keys if key in self.held}
        while self.chars > self.limit and self.held:
            self.chars -= self.held.popitem(last=False)[1].chars
        return found


def _licence(path: str) -> Expression:
    """The `licence` (or `license`) key of a metadata column, as text; NULL when neither is set."""
    return Coalesce(
        NullIf(KeyTextTransform("licence", path), Value("")),
        NullIf(KeyTextTransform("license", path), Value("")),
        output_field=TextField(),
    )


def _problem_loader(options: ExportOptions, references: bool) -> Callable:
    def load(problem_ids: set[int]) -> dict[int, ProblemColumns]:
        texts = first_references(problem_ids) if references else {}
        found = {}
        for pk, external_id, statement, version, contest, year, licence in (
            of_ids(Problem.objects.all(), "id", problem_ids)
            .order_by()
            .values_list(
                "id",
                "external_id",
                "statement",
                "statement_version",
                "contest",
                "year",
                _licence("metadata"),
            )
        ):
            split = ""
            if options.test_fraction is not None:
                split = split_of(external_id, options.split_seed, options.test_fraction)
            found[pk] = ProblemColumns(
                external_id,
                statement,
                version,
                contest,
                year,
                licence or "",
                texts.get(pk, ""),
                split,
            )
        return found

    return load


class StatementColumns(NamedTuple):
    """A past statement that proofs were rated against (problems.models.ProblemStatement)."""

    version: int
    text: str

    @property
    def chars(self) -> int:
        return len(self.text)


def _load_statements(statement_ids: set[int]) -> dict[int, StatementColumns]:
    return {
        pk: StatementColumns(version, text)
        for pk, version, text in of_ids(ProblemStatement.objects.all(), "id", statement_ids)
        .order_by()
        .values_list("id", "version", "text")
    }


def _load_schemes(scheme_ids: set[int]) -> dict[int, SchemeColumns]:
    # imported here: rubrics' services and scheme parsers cost every export 15-20 ms of start-up,
    # and a campaign graded without schemes never needs them
    from rubrics.services import text_format_of

    return {
        pk: SchemeColumns(version, text, text_format_of(recorded))
        for pk, version, text, recorded in of_ids(MarkingScheme.objects.all(), "id", scheme_ids)
        .order_by()
        .values_list("id", "version", "text", KeyTextTransform("format", "provenance"))
    }


# The label columns every label format reads; each format adds its own.
LABEL_COLUMNS: dict[str, str | Expression] = {
    "_pk": "id",
    "value": "value",
    "source": "source",
    "label_confidence": "confidence",
    "judgements": Coalesce(
        Subquery(
            Grade.objects.filter(item_id=OuterRef("item_id"), status=GradeStatus.SUBMITTED)
            .values("item_id")
            .annotate(n=Count("id"))
            .values("n")
        ),
        0,
    ),
    "problem_pk": "item__proof__problem_id",
    "statement_pk": "item__proof__statement_id",
    "item_id": "item_id",
    "sample_key": "item__proof__sample_key",
    "proof_licence": _licence("item__proof__metadata"),
    **ROUTE_COLUMNS,
}


def _stream(
    campaign: Campaign,
    options: ExportOptions,
    qs: QuerySet,
    columns: dict,
    build: Callable,
    *,
    references: bool = False,
    schemes: bool = False,
) -> Iterator[dict]:
    """The rows of a label format: `build(raw, problem, schemes)` makes each row's own columns
    from the label's values, its problem's `ProblemColumns` and the batch's marking schemes
    ({id: SchemeColumns}, read only when `schemes`); the common tail is added here. A proof
    rated against an earlier statement of its problem gets that one (`problem.statement`,
    `statement_version`), not the problem's current one."""
    problems = ReadOnce(_problem_loader(options, references))
    scheme_texts = ReadOnce(_load_schemes)
    statements = ReadOnce(_load_statements)

    def read() -> Iterator[tuple[list[dict], dict, dict, dict]]:
        for batch in _batches(qs, LABEL_COLUMNS | columns):
            by_problem = problems.get({raw["problem_pk"] for raw in batch})
            held = {}
            if schemes:
                wanted = {raw[key] for raw in batch for key in ("scheme_id", "item_scheme_id")}
                held = scheme_texts.get(wanted - {None})
            past = statements.get({raw["statement_pk"] for raw in batch} - {None})
            yield batch, by_problem, held, past

    for batch, by_problem, held, past in read_ahead(read()):
        for raw in batch:
            problem = by_problem[raw["problem_pk"]]
            if options.split and problem.split != options.split:
                continue
            if raw["statement_pk"] is not None:
                shown = past[raw["statement_pk"]]
                problem = problem._replace(statement=shown.text, statement_version=shown.version)
            row = build(raw, problem, held)
            row["sample_key"] = raw["sample_key"]
            row["item_id"] = raw["item_id"]
            row["label_source"] = raw["source"]
            row["judgements"] = raw["judgements"]
            row["campaign"] = campaign.slug
            row["statement_version"] = problem.statement_version
            row["licence"] = raw["proof_licence"] or problem.licence
            row["label_confidence"] = raw["label_confidence"]
            row["route_rank"] = raw["route_rank"]
            row["route_uncertainty"] = raw["route_uncertainty"]
            for key in DESIGN_KEYS:
                row[key] = raw[key]
            if options.test_fraction is not None:
                row["split"] = problem.split
            yield row


def _tail(options: ExportOptions) -> list[Field]:
    return COMMON_TAIL + ([SPLIT_FIELD] if options.test_fraction is not None else [])


def _float(value: Decimal | None) -> float | None:
    return None if value is None else float(value)
