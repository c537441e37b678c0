"""The `judgements` format: every judgement of the campaign's proofs, one row each, by a human
or a model, in long format (for rater models and grader comparisons outside Proofmark).

Kinds (`judge_kind`): `expert` (a submitted grade of the campaign; its analysis in an analysis
review), `verifier` (a verifier analysis's score of the proof), `meta_verifier` (a
meta-verification's score of an analysis), `grader` (a grader evaluation's prediction, one row
per run), `imported_expert` and `imported_automatic` (the ratings a corpus import kept on the
proof). Experts appear as pseudonyms unless an admin asks for names, as in `annotations`.
Rows are read proof by proof in keyset batches of plain values (no text), so memory stays flat.
"""

from __future__ import annotations

from collections.abc import Iterator
from decimal import Decimal, InvalidOperation

from django.db.models import F, QuerySet
from django.db.models.fields.json import KeyTransform
from django.db.models.functions import Coalesce

from adjudication.models import MetaVerification
from annotation.models import Campaign, Grade, GradeStatus, Item
from annotation.scales import (
    PREDICTION_ON_SCALE,
    Scale,
    ScaleError,
    comparison_scale,
    on_scale,
)
from core.queries import of_ids
from exports.formats.base import (
    BATCH,
    SPLIT_FIELD,
    ExportOptions,
    Plan,
    _filtered,
    pseudonym,
    split_of,
)
from exports.writers import Field
from graders.models import GraderPrediction
from problems.models import Proof, VerifierAnalysis

JUDGE_KINDS = (
    "expert",
    "verifier",
    "meta_verifier",
    "grader",
    "imported_expert",
    "imported_automatic",
)


def _items(campaign: Campaign, options: ExportOptions) -> QuerySet:
    """The campaign's items under the export's filters (those of the label formats)."""
    return _filtered(
        Item.objects.filter(campaign=campaign),
        campaign,
        options,
        label_source="final_label__source",
        item="",
    )


def _proof_batches(items: QuerySet) -> Iterator[list[int]]:
    last = 0
    while True:
        ids = list(
            items.filter(proof_id__gt=last)
            .order_by("proof_id")
            .values_list("proof_id", flat=True)
            .distinct()[:BATCH]
        )
        if not ids:
            return
        yield ids
        last = ids[-1]


def _count(items: QuerySet) -> int:
    """How many judgements the rows hold (before the split filter): the progress total."""
    from adjudication.services.imported import RATER_PREFIX  # as in plan_judgements

    proof_ids = items.values("proof_id")
    imported = sum(
        len(entries)
        for entries in Proof.objects.filter(id__in=proof_ids, metadata__has_key="imported_ratings")
        .values_list(KeyTransform("imported_ratings", "metadata"), flat=True)
        .iterator(chunk_size=BATCH)
        if isinstance(entries, list)
    )
    return (
        Grade.objects.filter(item__in=items, status=GradeStatus.SUBMITTED)
        .exclude(expert__username__startswith=RATER_PREFIX)
        .count()
        + VerifierAnalysis.objects.filter(proof_id__in=proof_ids).count()
        + MetaVerification.objects.filter(analysis__proof_id__in=proof_ids).count()
        + GraderPrediction.objects.filter(item__in=items).count()
        + imported
    )


def _imported_scale(maximum: Decimal) -> str:
    if maximum == 7:
        return Scale.ZERO_TO_SEVEN
    if maximum == 1:
        return Scale.TERNARY
    return f"0-{format(maximum.normalize(), 'f')}"


def plan_judgements(campaign: Campaign, options: ExportOptions) -> Plan:
    # the imported ratings' rules, here and not at the module's top: importing adjudication's
    # services loads every app's services, which no other format's export needs
    from adjudication.services.imported import RATER_PREFIX, imported_on_scale

    target = campaign.scale
    fields = [
        Field("problem_id", "string", "The problem's external id."),
        Field("generator", "string", "The model that wrote the proof."),
        Field(
            "sample_key",
            "string",
            "The proof's sample key (with problem_id and generator, the proof's natural key).",
        ),
        Field(
            "statement_version",
            "int",
            "The version of the problem's statement the proof was rated against (1: the "
            "statement the problem first had; a later import may have changed it since).",
        ),
        Field(
            "analysis_id",
            "int",
            "The verifier analysis judged (meta-verifications and analysis reviews); null when "
            "the judgement is of the proof.",
        ),
        Field(
            "item_id",
            "int",
            "The campaign item of what was judged (the proof's, or the analysis's in an analysis "
            "review); null when it has none.",
        ),
        Field("campaign", "string", "Campaign slug."),
        Field("judge_kind", "string", f"Who judged: {', '.join(JUDGE_KINDS)}."),
        Field(
            "judge",
            "string",
            "The judge: an expert's pseudonym (or username, if the admin chose names), the "
            "verifier or meta-verifier model, the grader evaluation, or the imported source.",
        ),
        Field(
            "run",
            "string",
            "Which of the judge's judgements: the analysis's or meta-verification's sample key, "
            "the grader run, the imported rating's position; empty for experts.",
        ),
        Field("value", "float", "The judgement on its own scale (null: the judge gave none)."),
        Field(
            "scale",
            "string",
            "The judgement's scale: 0-7, 0-0.5-1, 1-4, or 0-N for an imported rating out of N.",
        ),
        Field(
            "value_on_campaign_scale",
            "float",
            f"The value on the campaign's scale ({target}) where a map exists "
            "(annotation.scales: 1-4 onto 0-7 by 2x - 1, 0-7 onto 0 / 0.5 / 1 by the cut "
            "points; a value between two scale values keeps its number); null where none does.",
        ),
    ] + ([SPLIT_FIELD] if options.test_fraction is not None else [])
    items = _items(campaign, options)

    def on_campaign_scale(value, scale: str) -> float | None:
        if value is None or comparison_scale(target, scale) != target:
            return None
        try:
            return float(on_scale(Decimal(str(value)), scale, target, options.cuts))
        except ScaleError:
            return None

    def who(user_id: int, username: str) -> str:
        return username if options.expert_names else pseudonym(user_id)

    def judged(kind, judge, run, value, scale, analysis_id, item_id, linear=None) -> dict:
        """One judgement's columns; `linear` is an imported rating already on a scale of ours
        (x * 7 / max), converted in its place."""
        return {
            "analysis_id": analysis_id,
            "item_id": item_id,
            "campaign": campaign.slug,
            "judge_kind": kind,
            "judge": judge,
            "run": run,
            "value": None if value is None else float(value),
            "scale": scale,
            "value_on_campaign_scale": on_campaign_scale(value, scale)
            if linear is None
            else on_campaign_scale(*linear),
        }

    def batch_judgements(ids: list[int], proofs: dict) -> dict[int, list[dict]]:
        own = list(items.filter(proof_id__in=ids).values("id", "proof_id", "analysis_id"))
        item_ids = [i["id"] for i in own]
        proof_item = {i["proof_id"]: i["id"] for i in own if i["analysis_id"] is None}
        analysis_item = {i["analysis_id"]: i["id"] for i in own if i["analysis_id"]}
        found: dict[int, list[dict]] = {pk: [] for pk in ids}
        for g in (
            of_ids(Grade.objects.all(), "item", item_ids)
            .filter(status=GradeStatus.SUBMITTED)
            .exclude(expert__username__startswith=RATER_PREFIX)  # imported ratings: below
            .order_by("id")
            .values("item_id", "expert_id", "expert__username", "score", "item__proof_id",
                    "item__analysis_id")
        ):  # fmt: skip
            found[g["item__proof_id"]].append(
                judged("expert", who(g["expert_id"], g["expert__username"]), "", g["score"],
                       target, g["item__analysis_id"], g["item_id"])
            )  # fmt: skip
        for a in (
            of_ids(VerifierAnalysis.objects.all(), "proof", ids)
            .order_by("id")
            .values("proof_id", "verifier", "sample_key", "score")
        ):
            found[a["proof_id"]].append(
                judged("verifier", a["verifier"], a["sample_key"], a["score"], Scale.TERNARY, None,
                       proof_item.get(a["proof_id"]))
            )  # fmt: skip
        for m in (
            MetaVerification.objects.filter(analysis__proof_id__in=ids)
            .order_by("id")
            .values("analysis_id", "analysis__proof_id", "verifier", "sample_key", "score")
        ):
            found[m["analysis__proof_id"]].append(
                judged("meta_verifier", m["verifier"], m["sample_key"], m["score"], Scale.TERNARY,
                       m["analysis_id"], analysis_item.get(m["analysis_id"]))
            )  # fmt: skip
        for p in (
            of_ids(GraderPrediction.objects.all(), "item", item_ids)
            .order_by("id")
            .values("item_id", "item__proof_id", "item__analysis_id", "evaluation_id",
                    "evaluation__name", "evaluation__prediction_scale", "run_index", "score")
        ):  # fmt: skip
            found[p["item__proof_id"]].append(
                judged("grader", f"{p['evaluation__name']} (evaluation {p['evaluation_id']})",
                       str(p["run_index"]), p["score"],
                       PREDICTION_ON_SCALE.get(p["evaluation__prediction_scale"], Scale.ZERO_TO_SEVEN),
                       p["item__analysis_id"], p["item_id"])
            )  # fmt: skip
        for proof_id in ids:
            entries = proofs[proof_id]["imported"]
            for n, entry in enumerate(entries if isinstance(entries, list) else []):
                try:
                    value, maximum = Decimal(str(entry["value"])), Decimal(str(entry["max"]))
                    scale, linear, _ = imported_on_scale(value, maximum)
                except (KeyError, TypeError, InvalidOperation, ValueError):
                    continue  # the materialisation reports these; no judgement to export
                kind = "imported_expert" if entry.get("kind") == "expert" else "imported_automatic"
                found[proof_id].append(
                    judged(kind, str(entry.get("source") or ""), str(n), value,
                           _imported_scale(maximum), None, proof_item.get(proof_id),
                           (linear, scale))
                )  # fmt: skip
        return found

    def rows() -> Iterator[dict]:
        for ids in _proof_batches(items):
            proofs = {
                row["id"]: row
                for row in of_ids(Proof.objects.all(), "id", ids).values(
                    "id",
                    "generator",
                    "sample_key",
                    problem_key=F("problem__external_id"),
                    statement_version=Coalesce("statement__version", "problem__statement_version"),
                    imported=KeyTransform("imported_ratings", "metadata"),
                )
            }
            for proof_id, judgements in batch_judgements(ids, proofs).items():
                proof = proofs[proof_id]
                keys = {
                    "problem_id": proof["problem_key"],
                    "generator": proof["generator"],
                    "sample_key": proof["sample_key"],
                    "statement_version": proof["statement_version"],
                }
                tail = {}
                if options.test_fraction is not None:
                    split = split_of(
                        proof["problem_key"], options.split_seed, options.test_fraction
                    )
                    if options.split and split != options.split:
                        continue
                    tail["split"] = split
                for judgement in judgements:
                    yield {**keys, **judgement, **tail}

    return Plan(
        fields=fields,
        rows=rows,
        count=lambda: _count(items),
        conversions=[
            {
                "field": "value_on_campaign_scale",
                "from": "each judgement's scale",
                "to": target,
                "description": "value_on_campaign_scale: 1-4 onto 0-7 by 2x - 1; 0-7 onto "
                f"0 / 0.5 / 1 by cut points {options.cuts[0]} and {options.cuts[1]}; a rating out "
                "of N onto 0-7 by x * 7 / N; null where the scale has no map onto the campaign's",
            }
        ],
        summary="Every judgement of the campaign's proofs, one row each: expert grades, verifier "
        "samples, meta-verifications, grader predictions and imported ratings, each on its own "
        "scale and on the campaign's.",
    )
