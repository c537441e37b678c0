"""The `annotations` format: every submitted judgement with its awards, spans, verdicts and
history, for audits."""

from __future__ import annotations

from collections.abc import Iterator

from django.db.models.functions import Coalesce

from annotation.models import (
    Campaign,
    ErrorSpan,
    Grade,
    GradeRevision,
    GradeStatus,
    SecondOpinion,
)
from core.queries import of_ids
from exports.formats.base import (
    DESIGN_KEYS,
    ROUTE_COLUMNS,
    ROUTE_FIELDS,
    SPLIT_FIELD,
    ExportOptions,
    Plan,
    _batches,
    _filtered,
    _float,
    pseudonym,
    split_of,
)
from exports.writers import Field

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
    "statement_version": Coalesce(
        "item__proof__statement__version", "item__proof__problem__statement_version"
    ),
    "analysis_id": "item__analysis_id",
    "is_gold": "item__is_gold",
    "final_value": "item__final_label__value",
    "final_source": "item__final_label__source",
    "final_confidence": "item__final_label__confidence",
    **ROUTE_COLUMNS,
    "route_components": "item__route_components",
}


# A campaign with an AI second opinion (shown after the submission, one revision allowed) adds
# these columns; `score` is the expert's judgement (the revised score when they revised).
SECOND_OPINION_FIELDS = [
    Field("second_opinion_revealed", "bool", "The expert was shown the second opinion."),
    Field("second_opinion_source", "string", "verifier or grader (empty: not revealed)."),
    Field("automatic_score", "float", "The automatic score revealed (null: none existed)."),
    Field("automatic_scale", "string", "The automatic score's scale."),
    Field("automatic_origin", "string", "Which verifier or grader, how many runs."),
    Field("score_before_reveal", "float", "The score the expert submitted before the reveal."),
    Field("score_after_reveal", "float", "The one revision after the reveal (null: kept)."),
    Field("revision_reason", "string", "Why the expert revised after the reveal."),
]


def _second_opinion_columns(found: dict | None) -> dict:
    if found is None:
        return {
            "second_opinion_revealed": False,
            "second_opinion_source": "",
            "automatic_score": None,
            "automatic_scale": "",
            "automatic_origin": "",
            "score_before_reveal": None,
            "score_after_reveal": None,
            "revision_reason": "",
        }
    return {
        "second_opinion_revealed": True,
        "second_opinion_source": found["source"],
        "automatic_score": _float(found["score"]),
        "automatic_scale": found["scale"],
        "automatic_origin": found["origin"],
        "score_before_reveal": _float(found["score_before"]),
        "score_after_reveal": _float(found["score_after"]),
        "revision_reason": found["reason"],
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
        Field(
            "statement_version",
            "int",
            "The version of the problem's statement the proof was shown and rated with (1: the "
            "statement the problem first had).",
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
        Field("step_verdicts", "json", "Step-level verdicts {step: correct | wrong | unclear}."),
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
        Field(
            "label_confidence",
            "float",
            "The rater model's probability that the final label is the item's true class "
            "(null: not fitted since the label last changed).",
        ),
        Field("campaign", "string", "Campaign slug."),
        *ROUTE_FIELDS,
        Field(
            "route_components",
            "json",
            "The uncertainty's components when the item was ranked (spread, invalidation, "
            "disagreement, and how many scores, meta-verified analyses and predictions).",
        ),
    ] + ([SPLIT_FIELD] if options.test_fraction is not None else [])
    reveals = (
        bool(campaign.second_opinion)
        or SecondOpinion.objects.filter(grade__item__campaign=campaign).exists()
    )
    if reveals:
        fields += SECOND_OPINION_FIELDS

    qs = _filtered(
        Grade.objects.filter(item__campaign=campaign, status=GradeStatus.SUBMITTED),
        campaign,
        options,
        label_source="item__final_label__source",
    )

    def who(user_id, username):
        if user_id is None:
            return None
        return username if options.expert_names else pseudonym(user_id)

    def rows() -> Iterator[dict]:
        for batch in _batches(qs, GRADE_COLUMNS):
            ids = [raw["_pk"] for raw in batch]
            spans: dict[int, list] = {}
            for span in of_ids(ErrorSpan.objects.all(), "grade", ids).values(
                "grade_id", "start", "end", "quote", "category", "note"
            ):
                spans.setdefault(span.pop("grade_id"), []).append(span)
            history: dict[int, list] = {}
            for rev in of_ids(GradeRevision.objects.all(), "grade", ids).values(
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
            opinions: dict[int, dict] = {}
            if reveals:
                for found in of_ids(SecondOpinion.objects.all(), "grade", ids).values(
                    "grade_id", "source", "score", "scale", "origin", "score_before",
                    "score_after", "reason",
                ):  # fmt: skip
                    opinions[found["grade_id"]] = found
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
                    "statement_version": raw["statement_version"],
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
                    "label_confidence": raw["final_confidence"],
                    "campaign": campaign.slug,
                    "route_rank": raw["route_rank"],
                    "route_uncertainty": raw["route_uncertainty"],
                    "route_components": raw["route_components"] or {},
                    **{key: raw[key] for key in DESIGN_KEYS},
                }
                if options.test_fraction is not None:
                    row["split"] = split
                if reveals:
                    row |= _second_opinion_columns(opinions.get(raw["_pk"]))
                yield row

    return Plan(
        fields=fields,
        rows=rows,
        count=qs.count,
        summary="Every submitted expert judgement of the campaign, for audits: checkpoint "
        "awards, error spans with offsets and categories, step verdicts and revision history.",
    )
