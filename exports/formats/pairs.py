"""The `pairs` format: every submitted judgement of a pairwise campaign, one row each, with both
proofs' natural keys, the choice against those keys (never the screen's order), the order the
expert was shown and the pair's final choice. Experts appear as pseudonyms unless an admin asks
for names. Filters: contest, year, generator (either proof), final only, split by problem.
Rows are read in keyset batches of plain values (no proof text), so memory stays flat."""

from __future__ import annotations

from collections.abc import Iterator

from django.db.models import Q

from annotation.models import Campaign, JudgementStatus, PairJudgement, PairStatus, TaskKind
from exports.formats.base import (
    BATCH,
    SPLIT_FIELD,
    ExportError,
    ExportOptions,
    Plan,
    pseudonym,
    split_of,
)
from exports.writers import Field

CHOICES = "a (proof_a is better), b (proof_b is better) or tie"


def _fields(options: ExportOptions) -> list[Field]:
    return [
        Field("problem_id", "string", "The problem's external id (both proofs are of it)."),
        Field(
            "a_generator",
            "string",
            "proof_a's generator (with problem_id and a_sample_key, "
            "its natural key; proof_a is the proof of the smaller database id).",
        ),  # fmt: skip
        Field("a_sample_key", "string", "proof_a's sample key."),
        Field("b_generator", "string", "proof_b's generator."),
        Field("b_sample_key", "string", "proof_b's sample key."),
        Field("pair_id", "int", "The campaign's pair (every judgement of it shares the id)."),
        Field("campaign", "string", "Campaign slug."),
        Field("judge", "string", "The expert's pseudonym (or username, if the admin chose names)."),
        Field("choice", "string", f"The expert's choice against the proof keys: {CHOICES}."),
        Field(
            "shown_left",
            "string",
            "Which proof the expert saw on the left, as A (a or b): the order was drawn at random "
            "for each judgement; choice is already normalised to the keys.",
        ),
        Field("reason", "string", "The expert's optional reason."),
        Field("submitted_at", "string", "When the judgement was submitted (ISO 8601)."),
        Field(
            "final_choice",
            "string",
            f"The pair's final choice ({CHOICES}); empty while the pair is open or disputed.",
        ),
        Field(
            "label_source",
            "string",
            "How the final choice was reached: agreement, single, adjudication (an adjudicator "
            "settled a disagreement); empty when not final.",
        ),
    ] + ([SPLIT_FIELD] if options.test_fraction is not None else [])


def plan_pairs(campaign: Campaign, options: ExportOptions) -> Plan:
    if campaign.task_kind != TaskKind.PAIRWISE:
        raise ExportError(
            f"format pairs: campaign {campaign.slug} is not a pairwise campaign (its task kind "
            f"is {campaign.task_kind})"
        )
    judgements = PairJudgement.objects.filter(
        pair__campaign=campaign, status=JudgementStatus.SUBMITTED
    )
    if options.contest:
        judgements = judgements.filter(pair__proof_a__problem__contest=options.contest)
    if options.year is not None:
        judgements = judgements.filter(pair__proof_a__problem__year=options.year)
    if options.generator:
        judgements = judgements.filter(
            Q(pair__proof_a__generator=options.generator)
            | Q(pair__proof_b__generator=options.generator)
        )
    if options.final_only or options.label_sources:
        judgements = judgements.filter(pair__status=PairStatus.FINAL)
    if options.label_sources:
        judgements = judgements.filter(pair__final_source__in=options.label_sources)

    def rows() -> Iterator[dict]:
        last = 0
        while True:
            batch = list(
                judgements.filter(id__gt=last)
                .order_by("id")
                .values(
                    "id",
                    "pair_id",
                    "expert_id",
                    "expert__username",
                    "choice",
                    "a_on_left",
                    "reason",
                    "submitted_at",
                    "pair__final_choice",
                    "pair__final_source",
                    "pair__proof_a__problem__external_id",
                    "pair__proof_a__generator",
                    "pair__proof_a__sample_key",
                    "pair__proof_b__generator",
                    "pair__proof_b__sample_key",
                )[:BATCH]
            )
            if not batch:
                return
            last = batch[-1]["id"]
            for j in batch:
                problem = j["pair__proof_a__problem__external_id"]
                row = {
                    "problem_id": problem,
                    "a_generator": j["pair__proof_a__generator"],
                    "a_sample_key": j["pair__proof_a__sample_key"],
                    "b_generator": j["pair__proof_b__generator"],
                    "b_sample_key": j["pair__proof_b__sample_key"],
                    "pair_id": j["pair_id"],
                    "campaign": campaign.slug,
                    "judge": j["expert__username"]
                    if options.expert_names
                    else pseudonym(j["expert_id"]),
                    "choice": j["choice"],
                    "shown_left": "a" if j["a_on_left"] else "b",
                    "reason": j["reason"],
                    "submitted_at": j["submitted_at"].isoformat() if j["submitted_at"] else "",
                    "final_choice": j["pair__final_choice"],
                    "label_source": j["pair__final_source"],
                }
                if options.test_fraction is not None:
                    split = split_of(problem, options.split_seed, options.test_fraction)
                    if options.split and split != options.split:
                        continue
                    row["split"] = split
                yield row

    return Plan(
        fields=_fields(options),
        rows=rows,
        count=judgements.count,
        summary="Every submitted judgement of the campaign's pairs of proofs, one row each: both "
        "proofs' keys, the expert's choice against those keys (a, b or tie), the order they were "
        "shown, and the pair's final choice (by agreement or by an adjudicator).",
    )
