"""The export formats: their columns and the rows they stream from the database.

Each format reads the final labels (or, for `annotations`, the submitted judgements) of one
campaign in keyset-paginated batches of plain values, so memory stays flat however many rows there
are. Filters: contest, year, generator, label source, minimum agreement, split.
"""

from __future__ import annotations

import hashlib
import hmac
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from decimal import Decimal

from django.conf import settings
from django.db.models import Count, F, Max, Min, OuterRef, QuerySet, Subquery

from adjudication.models import FinalLabel
from annotation.models import Campaign, ErrorSpan, Grade, GradeRevision, GradeStatus
from annotation.scales import to_0_7, to_ternary
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


# --- proofbench ------------------------------------------------------------------------------


def plan_proofbench(campaign: Campaign, options: ExportOptions) -> Plan:
    if campaign.task_kind != "proof_grading":
        raise ExportError("the proofbench format needs a proof-grading campaign")
    if campaign.scale == "0-0.5-1":
        raise ExportError(
            "the proofbench format rates proofs 0-7 and the 0 / 0.5 / 1 scale has no map onto "
            "0-7: export this campaign as dv"
        )
    conversions = []
    if campaign.scale == "1-4":
        conversions.append(
            {
                "field": "expert_rating",
                "from": "1-4",
                "to": "0-7",
                "description": "expert_rating from RefGrader's 1-4 onto 0-7 by 2x - 1",
            }
        )
    rating_kind = "float" if campaign.label_policy == "mean" else "int"
    fields = [
        Field("problem_id", "string", "The problem's external id."),
        Field("problem", "string", "Problem statement (Markdown + LaTeX)."),
        Field("reference_solution", "string", "A reference solution (the first recorded)."),
        Field("marking_scheme", "string", "The marking-scheme version the label was given under."),
        Field("generator", "string", "The model that wrote the proof."),
        Field("model_solution", "string", "The proof."),
        Field("expert_rating", rating_kind, "Final expert label on 0-7."),
        Field(
            "metadata",
            "struct",
            "Contest and year of the problem.",
            (Field("contest", "string", ""), Field("contest_year", "int", "")),
        ),
        Field("response_number", "int", "The proof's sample index for this problem and model."),
        Field("generation_prompt", "string", "The prompt the proof was generated from, if known."),
        Field("scheme_version", "int", "Version number of the marking scheme used."),
    ] + _tail(options)

    def build(raw, batch, context):
        if context["references"] is None:
            context["references"] = first_references({r["problem_pk"] for r in batch})
        value = raw["value"] if campaign.scale == "0-7" else to_0_7(raw["value"], campaign.scale)
        meta = raw["proof_meta"] or {}
        return {
            "problem_id": raw["problem_id"],
            "problem": raw["statement"],
            "reference_solution": context["references"].get(raw["problem_pk"], ""),
            "marking_scheme": raw["scheme_text"] or raw["item_scheme_text"] or "",
            "generator": raw["generator"],
            "model_solution": raw["proof_text"],
            "expert_rating": float(value) if rating_kind == "float" else int(value),
            "metadata": {"contest": raw["contest"], "contest_year": raw["year"]},
            "response_number": raw["sample_index"],
            "generation_prompt": meta.get("generation_prompt", ""),
            "scheme_version": raw["scheme_version"] or raw["item_scheme_version"],
        }

    qs = _labels(campaign, options).filter(item__analysis__isnull=True)
    return Plan(
        fields=fields,
        rows=lambda: _stream(campaign, options, qs, LABEL_COLUMNS, build),
        total=qs.count(),
        conversions=conversions,
        summary="One row per graded proof, with ProofBench's columns and the final expert "
        "rating on 0-7.",
    )


# --- dv --------------------------------------------------------------------------------------


def _ternary(value: Decimal, scale: str, cuts: tuple[int, int]) -> Decimal:
    if scale == "0-0.5-1":
        return value
    return to_ternary(to_0_7(value, scale), cuts)


def _ternary_conversions(scale: str, cuts: tuple[int, int], field_name: str) -> list[dict]:
    if scale == "0-0.5-1":
        return []
    low, high = cuts

    def span(a: int, b: int) -> str:
        return str(a) if a == b else f"{a}-{b}"

    text = (
        f"{field_name} from 0-7 onto 0 / 0.5 / 1 by cut points {low} and {high}: "
        f"{span(high, 7)} -> 1, {span(low, high - 1)} -> 0.5, {span(0, low - 1)} -> 0"
    )
    if scale == "1-4":
        text = f"{field_name} from 1-4 onto 0-7 by 2x - 1, then " + text.split(" from 0-7 ")[1]
    return [
        {
            "field": field_name,
            "from": scale,
            "to": "0-0.5-1",
            "cuts": [low, high],
            "description": text,
        }
    ]


def plan_dv(campaign: Campaign, options: ExportOptions) -> Plan:
    if campaign.task_kind != "proof_grading":
        raise ExportError("the dv format needs a proof-grading campaign (dmv is for analyses)")
    fields = [
        Field("problem_id", "string", "The problem's external id."),
        Field("problem", "string", "Problem statement (X)."),
        Field("proof", "string", "The proof (Y)."),
        Field("score", "float", "Expert score s in {0, 0.5, 1}."),
        Field("generator", "string", "The model that wrote the proof."),
        Field(
            "native_score", "float", f"The final label on the campaign's {campaign.scale} scale."
        ),
    ] + _tail(options)

    def build(raw, batch, context):
        return {
            "problem_id": raw["problem_id"],
            "problem": raw["statement"],
            "proof": raw["proof_text"],
            "score": float(_ternary(raw["value"], campaign.scale, options.cuts)),
            "generator": raw["generator"],
            "native_score": float(raw["value"]),
        }

    qs = _labels(campaign, options).filter(item__analysis__isnull=True)
    return Plan(
        fields=fields,
        rows=lambda: _stream(campaign, options, qs, LABEL_COLUMNS, build),
        total=qs.count(),
        conversions=_ternary_conversions(campaign.scale, options.cuts, "score"),
        summary="DeepSeekMath-V2's D_v: one row per proof, (problem, proof, expert score in "
        "{0, 0.5, 1}).",
    )


# --- dmv -------------------------------------------------------------------------------------

DMV_COLUMNS = LABEL_COLUMNS | {
    "analysis_text": "item__analysis__text",
    "verifier": "item__analysis__verifier",
    "verifier_score": "item__analysis__score",
}


def plan_dmv(campaign: Campaign, options: ExportOptions) -> Plan:
    if campaign.task_kind != "analysis_review":
        raise ExportError("the dmv format needs an analysis-review campaign")
    if campaign.scale != "0-0.5-1":
        raise ExportError("the dmv format needs meta scores on the 0 / 0.5 / 1 scale")
    fields = [
        Field("problem_id", "string", "The problem's external id."),
        Field("problem", "string", "Problem statement (X)."),
        Field("proof", "string", "The proof (Y)."),
        Field("analysis", "string", "The verifier's analysis of the proof (V)."),
        Field("meta_score", "float", "Expert meta-verification score ms in {0, 0.5, 1}."),
        Field("verifier", "string", "The model that wrote the analysis."),
        Field("verifier_score", "float", "The score the analysis itself gave (null if none)."),
        Field("generator", "string", "The model that wrote the proof."),
    ] + _tail(options)

    def build(raw, batch, context):
        score = raw["verifier_score"]
        return {
            "problem_id": raw["problem_id"],
            "problem": raw["statement"],
            "proof": raw["proof_text"],
            "analysis": raw["analysis_text"],
            "meta_score": float(raw["value"]),
            "verifier": raw["verifier"],
            "verifier_score": None if score is None else float(score),
            "generator": raw["generator"],
        }

    qs = _labels(campaign, options).filter(item__analysis__isnull=False)
    return Plan(
        fields=fields,
        rows=lambda: _stream(campaign, options, qs, DMV_COLUMNS, build),
        total=qs.count(),
        summary="DeepSeekMath-V2's D_mv: one row per reviewed verifier analysis, (problem, proof, "
        "analysis, expert meta score in {0, 0.5, 1}).",
    )


# --- annotations -----------------------------------------------------------------------------

GRADE_COLUMNS = {
    "_pk": "id",
    "item_id": "item_id",
    "expert_id": "expert_id",
    "expert_username": "expert__username",
    "score": "score",
    "computed_score": "computed_score",
    "awards": "awards",
    "deductions": "deductions",
    "via_equivalent": "via_equivalent",
    "score_note": "score_note",
    "comment": "comment",
    "step_verdicts": "step_verdicts",
    "first_wrong_step": "first_wrong_step",
    "seconds_spent": "seconds_spent",
    "submitted_at": "submitted_at",
    "scheme_version": "scheme__version",
    "problem_id": "item__proof__problem__external_id",
    "generator": "item__proof__generator",
    "sample_key": "item__proof__sample_key",
    "analysis_id": "item__analysis_id",
    "is_gold": "item__is_gold",
    "final_value": "item__final_label__value",
    "final_source": "item__final_label__source",
}


def plan_annotations(campaign: Campaign, options: ExportOptions) -> Plan:
    fields = [
        Field("grade_id", "int", "The judgement's id."),
        Field("item_id", "int", "The campaign item judged."),
        Field("problem_id", "string", "The problem's external id."),
        Field("generator", "string", "The model that wrote the proof."),
        Field(
            "sample_key",
            "string",
            "The proof's sample key (with problem and generator, its natural key).",
        ),
        Field("analysis_id", "int", "The verifier analysis reviewed (analysis review only)."),
        Field("is_gold", "bool", "A gold (calibration) item."),
        Field(
            "expert",
            "string",
            "Pseudonymised expert id (or the username, if the admin chose names).",
        ),
        Field("score", "float", f"The expert's score on the campaign scale ({campaign.scale})."),
        Field("computed_score", "float", "The score the marking scheme's awards compute."),
        Field("awards", "json", "Checkpoint awards {checkpoint id: points}."),
        Field("deductions", "json", "Deductions applied (ids)."),
        Field("via_equivalent", "json", "Checkpoints awarded for an equivalent argument (ids)."),
        Field("score_note", "string", "Why the score departs from the computed one."),
        Field("comment", "string", "The expert's comment."),
        Field("step_verdicts", "json", "Step-level verdicts {step: CORRECT | WRONG}."),
        Field("first_wrong_step", "int", "The first wrong step, if any."),
        Field("seconds_spent", "int", "Time spent grading."),
        Field("submitted_at", "string", "ISO 8601 time of submission."),
        Field("scheme_version", "int", "The marking-scheme version shown."),
        Field(
            "spans",
            "json",
            "Error spans [{start, end, quote, category, note}] (offsets into the proof text).",
        ),
        Field("history", "json", "Revisions [{changed_by, changed_at, old, new}]."),
        Field("final_label", "float", "The item's final label, if any."),
        Field("final_label_source", "string", "How the final label was reached."),
        Field("campaign", "string", "Campaign slug."),
    ] + ([SPLIT_FIELD] if options.test_fraction is not None else [])

    qs = Grade.objects.filter(item__campaign=campaign, status=GradeStatus.SUBMITTED)
    if options.contest:
        qs = qs.filter(item__proof__problem__contest=options.contest)
    if options.year is not None:
        qs = qs.filter(item__proof__problem__year=options.year)
    if options.generator:
        qs = qs.filter(item__proof__generator=options.generator)
    if options.label_sources:
        qs = qs.filter(item__final_label__source__in=options.label_sources)
    if options.min_agreement is not None:
        qs = _with_agreement(qs, campaign, options.min_agreement, "item_id")

    def who(user_id, username):
        if user_id is None:
            return None
        return username if options.expert_names else pseudonym(user_id)

    def rows() -> Iterator[dict]:
        for batch in _batches(qs, GRADE_COLUMNS):
            ids = [raw["_pk"] for raw in batch]
            spans: dict[int, list] = {}
            for span in ErrorSpan.objects.filter(grade_id__in=ids).values(
                "grade_id", "start", "end", "quote", "category", "note"
            ):
                spans.setdefault(span.pop("grade_id"), []).append(span)
            history: dict[int, list] = {}
            for rev in GradeRevision.objects.filter(grade_id__in=ids).values(
                "grade_id", "changed_by_id", "changed_by__username", "changed_at", "old", "new"
            ):
                history.setdefault(rev["grade_id"], []).append(
                    {
                        "changed_by": who(rev["changed_by_id"], rev["changed_by__username"]),
                        "changed_at": rev["changed_at"].isoformat(),
                        "old": rev["old"],
                        "new": rev["new"],
                    }
                )
            for raw in batch:
                split = ""
                if options.test_fraction is not None:
                    split = split_of(raw["problem_id"], options.split_seed, options.test_fraction)
                    if options.split and split != options.split:
                        continue
                row = {
                    "grade_id": raw["_pk"],
                    "item_id": raw["item_id"],
                    "problem_id": raw["problem_id"],
                    "generator": raw["generator"],
                    "sample_key": raw["sample_key"],
                    "analysis_id": raw["analysis_id"],
                    "is_gold": raw["is_gold"],
                    "expert": who(raw["expert_id"], raw["expert_username"]),
                    "score": _float(raw["score"]),
                    "computed_score": _float(raw["computed_score"]),
                    "awards": raw["awards"],
                    "deductions": raw["deductions"],
                    "via_equivalent": raw["via_equivalent"],
                    "score_note": raw["score_note"],
                    "comment": raw["comment"],
                    "step_verdicts": raw["step_verdicts"],
                    "first_wrong_step": raw["first_wrong_step"],
                    "seconds_spent": raw["seconds_spent"],
                    "submitted_at": raw["submitted_at"].isoformat()
                    if raw["submitted_at"]
                    else None,
                    "scheme_version": raw["scheme_version"],
                    "spans": spans.get(raw["_pk"], []),
                    "history": history.get(raw["_pk"], []),
                    "final_label": _float(raw["final_value"]),
                    "final_label_source": raw["final_source"] or "",
                    "campaign": campaign.slug,
                }
                if options.test_fraction is not None:
                    row["split"] = split
                yield row

    return Plan(
        fields=fields,
        rows=rows,
        total=qs.count(),
        summary="Every submitted expert judgement of the campaign, for audits: checkpoint "
        "awards, error spans with offsets and categories, step verdicts and revision history.",
    )


def _float(value: Decimal | None) -> float | None:
    return None if value is None else float(value)


PLANNERS = {
    "proofbench": plan_proofbench,
    "dv": plan_dv,
    "dmv": plan_dmv,
    "annotations": plan_annotations,
}


def plan_for(fmt: str, campaign: Campaign, options: ExportOptions) -> Plan:
    try:
        planner = PLANNERS[fmt]
    except KeyError as exc:
        raise ExportError(f"unknown format {fmt!r}: choose one of {', '.join(FORMATS)}") from exc
    return planner(campaign, options)
