"""The label formats: `proofbench` (graded proofs with the ProofBench columns), `dv` (D_v) and
`dmv` (D_mv)."""

from __future__ import annotations

from decimal import Decimal

from django.db.models import F
from django.db.models.fields.json import KeyTextTransform
from django.db.models.functions import Mod

from adjudication.models import FinalLabel
from annotation.models import Campaign, LabelPolicy, Scale, TaskKind
from annotation.scales import conversions as scale_conversions
from annotation.scales import is_range, ternary_of, to_0_7
from exports.formats.base import (
    ExportError,
    ExportOptions,
    Plan,
    _labels,
    _stream,
    _tail,
)
from exports.writers import Field

# --- proofbench ------------------------------------------------------------------------------


def _between_values(campaign: Campaign, *, analyses: bool, factor: int) -> bool:
    """Whether any final label of the campaign (whatever the export's filters) is not a whole
    multiple of 1 / factor: a mean between two values of the scale it is exported on."""
    return (
        FinalLabel.objects.filter(item__campaign=campaign, item__analysis__isnull=not analyses)
        .alias(fraction=Mod(F("value") * factor, 1))
        .exclude(fraction=0)
        .exists()
    )


def fractional_ratings(campaign: Campaign) -> bool:
    """Whether `expert_rating` is a float column for this campaign: when its policy is the mean,
    or when any of its proof labels falls between two 0-7 values. Decided per campaign, so that
    the column never changes type between rows, splits or files of one campaign."""
    if campaign.label_policy == LabelPolicy.MEAN or is_range(campaign.scale):
        return True  # a range's linear map onto 0-7 (7x / 10) is seldom whole
    # 2x - 1 is whole when 2x is
    return _between_values(
        campaign, analyses=False, factor=2 if campaign.scale == Scale.ONE_TO_FOUR else 1
    )


def _integer(value: Decimal) -> int:
    if value != value.to_integral_value():
        raise ExportError(f"expert_rating {value} is not a whole number on 0-7")
    return int(value)


PROOFBENCH_COLUMNS = {
    "scheme_id": "scheme_id",
    "item_scheme_id": "item__scheme_id",
    "generator": "item__proof__generator",
    "proof_text": "item__proof__text",
    "sample_index": "item__proof__sample_index",
    "generation_prompt": KeyTextTransform("generation_prompt", "item__proof__metadata"),
}


def plan_proofbench(campaign: Campaign, options: ExportOptions) -> Plan:
    if campaign.task_kind != TaskKind.PROOF_GRADING:
        raise ExportError("the proofbench format needs a proof-grading campaign")
    if campaign.scale == Scale.TERNARY:
        raise ExportError(
            "the proofbench format rates proofs 0-7 and the 0 / 0.5 / 1 scale has no map onto "
            "0-7: export this campaign as dv"
        )
    conversions = []
    if campaign.scale == Scale.ONE_TO_FOUR:
        conversions.append(
            {
                "field": "expert_rating",
                "from": Scale.ONE_TO_FOUR.value,
                "to": Scale.ZERO_TO_SEVEN.value,
                "description": "expert_rating from RefGrader's 1-4 onto 0-7 by 2x - 1 (a label "
                "between two values too: 1.5 -> 2)",
            }
        )
    elif is_range(campaign.scale):
        conversions.append(
            {
                "field": "expert_rating",
                "from": campaign.scale,
                "to": Scale.ZERO_TO_SEVEN.value,
                "description": f"expert_rating from {campaign.scale} onto 0-7: "
                + scale_conversions(campaign.scale)["to_0_7"]
                + " (the campaign's own label is in native_rating)",
            }
        )
    rating_kind = "float" if fractional_ratings(campaign) else "int"
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
        Field(
            "scheme_format",
            "string",
            "The format of marking_scheme's text (proofbench_markdown, imobench_guidelines for "
            "band schemes, refgrader_*): an import reads it back as the same kind of scheme.",
        ),
    ]
    native = is_range(campaign.scale)
    if native:
        fields += [
            Field("native_rating", "float", f"The final label on the campaign's {campaign.scale}."),
            Field(
                "native_scale",
                "string",
                "The campaign's scale: an import reads native_rating on it (lossless round trip).",
            ),
        ]
    fields += _tail(options)

    def build(raw, problem, schemes):
        value = to_0_7(raw["value"], campaign.scale)
        scheme = schemes.get(raw["scheme_id"]) or schemes.get(raw["item_scheme_id"])
        return {
            "problem_id": problem.problem_id,
            "problem": problem.statement,
            "reference_solution": problem.reference,
            "marking_scheme": scheme.text if scheme else "",
            "generator": raw["generator"],
            "model_solution": raw["proof_text"],
            "expert_rating": float(value) if rating_kind == "float" else _integer(value),
            "metadata": {"contest": problem.contest, "contest_year": problem.year},
            "response_number": raw["sample_index"],
            "generation_prompt": raw["generation_prompt"] or "",
            "scheme_version": scheme.version if scheme else None,
            "scheme_format": scheme.text_format if scheme else "",
        } | (
            {"native_rating": float(raw["value"]), "native_scale": campaign.scale} if native else {}
        )

    qs = _labels(campaign, options).filter(item__analysis__isnull=True)
    return Plan(
        fields=fields,
        rows=lambda: _stream(
            campaign, options, qs, PROOFBENCH_COLUMNS, build, references=True, schemes=True
        ),
        count=qs.count,
        conversions=conversions,
        summary="One row per graded proof, with ProofBench's columns and the final expert "
        "rating on 0-7.",
    )


# --- dv --------------------------------------------------------------------------------------


BETWEEN = "a label between two values counts as the nearest, halfway as the lower"


def _ternary_conversions(
    campaign: Campaign, cuts: tuple[int, int], field_name: str, *, analyses: bool
) -> list[dict]:
    """How the export puts labels on 0 / 0.5 / 1: by the cut points from another scale, or, on
    0 / 0.5 / 1 itself, only for labels between its values (when there are any)."""
    scale = campaign.scale
    if scale == Scale.TERNARY:
        if not _between_values(campaign, analyses=analyses, factor=2):
            return []
        return [
            {
                "field": field_name,
                "from": scale,
                "to": Scale.TERNARY.value,
                "description": f"{field_name}: {BETWEEN} (0.75 -> 0.5, 0.83 -> 1)",
            }
        ]
    low, high = cuts

    def span(a: int, b: int) -> str:
        return str(a) if a == b else f"{a}-{b}"

    if is_range(scale):
        return [
            {
                "field": field_name,
                "from": scale,
                "to": Scale.TERNARY.value,
                "cuts": [low, high],
                "description": f"{field_name} from {scale} onto 0 / 0.5 / 1 by "
                + scale_conversions(scale, cuts)["to_ternary"],
            }
        ]
    text = (
        f"{field_name} from 0-7 onto 0 / 0.5 / 1 by cut points {low} and {high}: "
        f"{span(high, 7)} -> 1, {span(low, high - 1)} -> 0.5, {span(0, low - 1)} -> 0; "
        f"{BETWEEN} (6.5 -> 6)"
    )
    if scale == Scale.ONE_TO_FOUR:
        text = f"{field_name} from 1-4 onto 0-7 by 2x - 1, then " + text.split(" from 0-7 ")[1]
    return [
        {
            "field": field_name,
            "from": scale,
            "to": Scale.TERNARY.value,
            "cuts": [low, high],
            "description": text,
        }
    ]


PROOF_COLUMNS = {"generator": "item__proof__generator", "proof_text": "item__proof__text"}


def plan_dv(campaign: Campaign, options: ExportOptions) -> Plan:
    if campaign.task_kind != TaskKind.PROOF_GRADING:
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

    def build(raw, problem, schemes):
        return {
            "problem_id": problem.problem_id,
            "problem": problem.statement,
            "proof": raw["proof_text"],
            "score": float(ternary_of(raw["value"], campaign.scale, options.cuts)),
            "generator": raw["generator"],
            "native_score": float(raw["value"]),
        }

    qs = _labels(campaign, options).filter(item__analysis__isnull=True)
    return Plan(
        fields=fields,
        rows=lambda: _stream(campaign, options, qs, PROOF_COLUMNS, build),
        count=qs.count,
        conversions=_ternary_conversions(campaign, options.cuts, "score", analyses=False),
        summary="DeepSeekMath-V2's D_v: one row per proof, (problem, proof, expert score in "
        "{0, 0.5, 1}).",
    )


# --- dmv -------------------------------------------------------------------------------------

DMV_COLUMNS = PROOF_COLUMNS | {
    "analysis_text": "item__analysis__text",
    "verifier": "item__analysis__verifier",
    "verifier_score": "item__analysis__score",
    "analysis_id": "item__analysis_id",
    "verifier_sample": "item__analysis__sample_key",
}


def plan_dmv(campaign: Campaign, options: ExportOptions) -> Plan:
    if campaign.task_kind != TaskKind.ANALYSIS_REVIEW:
        raise ExportError("the dmv format needs an analysis-review campaign")
    if campaign.scale != Scale.TERNARY:
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
        Field(
            "verifier_sample",
            "string",
            "The analysis's sample key (with the proof and verifier, its natural key).",
        ),
        Field(
            "analysis_id", "int", "The analysis reviewed (the annotations export's analysis_id)."
        ),
    ] + _tail(options)

    def build(raw, problem, schemes):
        score = raw["verifier_score"]
        return {
            "problem_id": problem.problem_id,
            "problem": problem.statement,
            "proof": raw["proof_text"],
            "analysis": raw["analysis_text"],
            "meta_score": float(ternary_of(raw["value"], campaign.scale)),
            "verifier": raw["verifier"],
            "verifier_score": None if score is None else float(score),
            "generator": raw["generator"],
            "verifier_sample": raw["verifier_sample"],
            "analysis_id": raw["analysis_id"],
        }

    qs = _labels(campaign, options).filter(item__analysis__isnull=False)
    return Plan(
        fields=fields,
        rows=lambda: _stream(campaign, options, qs, DMV_COLUMNS, build),
        count=qs.count,
        conversions=_ternary_conversions(campaign, options.cuts, "meta_score", analyses=True),
        summary="DeepSeekMath-V2's D_mv: one row per reviewed verifier analysis, (problem, proof, "
        "analysis, expert meta score in {0, 0.5, 1}).",
    )
