"""Routing expert effort by uncertainty: rank a campaign's items by how unsure the automatic
graders are (formula: estimation.routing.uncertainty), apply the admin's budget, label the rest
automatically where the labelling loop is confident.

Its evidence spans every app below estimation: verifier analyses (problems), meta-verifications
and labelling-loop outcomes (adjudication), grader-evaluation predictions (graders) and the rater
model's posteriors (estimation.services.confidence). The assignment path
(annotation.services.assignment) only reads what is stored here on the items: `route_rank`,
`route_uncertainty`, `route_components`, `route_ranked_at`, `route_held`.

What a ranking pass does (`campaign_rank`, under the campaign's row lock):
1. The pool: the campaign's items no expert was ever given (no assignment), not final, not gold.
   Items already given to an expert, and final ones, keep the rank they had: "why it was chosen"
   stays what it was at the time.
2. Each pool item's uncertainty is computed from its proof's stored evidence; the pool is ranked,
   most uncertain first (ties: oldest item first). Rank 1 = most uncertain.
3. Budget b (a share, or none = every item): experts grade at most ceil(b x the campaign's
   non-gold items). Items already given to experts use up that allowance first; the top of the
   pool takes what is left; the rest are held (never served). A held item whose proof the
   labelling loop labelled (latest labelled outcome) gets that label as its final label (source
   automatic) when the campaign grades proofs on the loop's scale (0 / 0.5 / 1); otherwise it
   stays held, shown as such on the queue page, until the budget is raised. When the loop labels
   a held proof later, `routing_loop_labelled` (on the loop's signal) ranks its campaign again.

Which pool items experts get (the design, recorded on each item so that the score intervals
can weight by it: estimation.services.intervals):
- the campaign's `routing_uniform_share` u > 0 (default 0.25): each pool item i gets the
  inclusion probability pi_i = min(1, c (u / n + (1 - u) uncertainty_i / sum uncertainty)),
  c such that the pi sum to what is left of the allowance (adjudication.estimators.
  pps_probabilities); that many items are drawn by Pareto pi-ps sampling with each item's
  permanent random number (a seeded hash of the campaign's seed and the proof's natural key,
  so a new pass keeps most of the last draw). Drawn items are served most uncertain first.
  `Item.design` says "uniform" where the item's random number fell under the uniform part
  (u x its share), "routed" otherwise; "not_chosen" for held items; `inclusion_probability`
  is pi_i in every case (what the estimators need). Items given to experts before keep the
  design they had.
- u = 0: the most uncertain items, in rank order, as before designs were recorded: no item has
  a known probability (`design` routed / not_chosen, probability empty), and the scores page
  says why it shows no interval.
- no budget: every item is for experts (design "all", probability 1).
"""

from __future__ import annotations

import hashlib
import json
import math
from collections import defaultdict
from dataclasses import dataclass
from decimal import Decimal, InvalidOperation

from django.db import transaction
from django.db.models import Exists, OuterRef, QuerySet
from django.utils import timezone

from adjudication.estimators import pareto_sample, pps_probabilities
from adjudication.models import LabellingOutcome, LabelSource, LoopDecision, MetaVerification
from adjudication.services.labels import final_label_set
from annotation import scales
from annotation.models import Assignment, Campaign, Item, ItemDesign, ItemOrder, TaskKind
from annotation.scales import prediction_on_unit
from core.queries import of_ids
from core.sql import update_by_id
from estimation.routing.uncertainty import Uncertainty, proof_uncertainty
from estimation.services.confidence import (
    ProofPosterior,
    automatic_posteriors,
    imported_automatic_ratings,
)
from graders.models import GraderPrediction
from problems.models import VerifierAnalysis
from problems.selectors import proof_natural_keys

LOOP_SCALE = scales.Scale.TERNARY


class RoutingError(ValueError):
    """Routing settings that cannot be applied; the message names the field."""


@dataclass
class RankResult:
    ranked: int = 0
    served: int = 0
    held: int = 0
    auto_labelled: int = 0
    allowance: int | None = None
    already_given: int = 0


def uncertainty_by_proof(
    proof_ids: list[int], posteriors: dict[int, ProofPosterior] | None = None
) -> dict[int, Uncertainty]:
    """The uncertainty of each proof from its stored evidence, in four queries; `posteriors`:
    the campaign's rater model's posterior per proof (`automatic_posteriors`), where it has
    one."""
    scores: dict[int, list[Decimal]] = defaultdict(list)
    analysis_proof: dict[int, int] = {}
    for analysis_id, proof_id, score in of_ids(
        VerifierAnalysis.objects.all(), "proof", proof_ids
    ).values_list("id", "proof_id", "score"):
        analysis_proof[analysis_id] = proof_id
        if score is not None:
            scores[proof_id].append(score)
    metas: dict[int, dict[int, list[Decimal]]] = defaultdict(lambda: defaultdict(list))
    for analysis_id, proof_id, score in (
        of_ids(MetaVerification.objects.all(), "analysis__proof", proof_ids)
        .filter(score__isnull=False)
        .values_list("analysis_id", "analysis__proof_id", "score")
    ):
        metas[proof_id][analysis_id].append(score)
    predictions: dict[int, list[float]] = defaultdict(list)
    for proof_id, score, scale in of_ids(
        GraderPrediction.objects.all(), "item__proof", proof_ids
    ).values_list("item__proof_id", "score", "evaluation__prediction_scale"):
        predictions[proof_id].append(prediction_on_unit(score, scale))
    ratings = imported_automatic_ratings(proof_ids)
    return {
        proof_id: proof_uncertainty(
            verifier_scores=scores[proof_id],
            meta_scores=list(metas[proof_id].values()),
            predictions=predictions[proof_id],
            ratings=[value for _, value in ratings.get(proof_id, ())],
            posterior=found.posterior if (found := (posteriors or {}).get(proof_id)) else None,
            label_class=found.verifier_class if found else None,
        )
        for proof_id in proof_ids
    }


def _loop_labels(proof_ids: list[int]) -> dict[int, tuple[Decimal, int]]:
    """Per proof, the label of its latest labelled outcome of the loop, and that run's id."""
    labels: dict[int, tuple[Decimal, int]] = {}
    for proof_id, label, run_id in (
        of_ids(LabellingOutcome.objects.all(), "proof", proof_ids)
        .filter(decision=LoopDecision.LABELLED)
        .order_by("pk")
        .values_list("proof_id", "label", "run_id")
    ):
        labels[proof_id] = (label, run_id)
    return labels


def parse_budget(raw: object) -> Decimal | None:
    """A budget as given by a form or the API: empty = none; a share in (0, 1], or a percentage
    written with %."""
    if raw is None or (isinstance(raw, str) and not raw.strip()):
        return None
    text = str(raw).strip()
    percent = text.endswith("%")
    try:
        value = Decimal(text.rstrip("%").strip())
    except InvalidOperation:
        raise RoutingError(f"budget: {text!r} is not a number (a share like 0.3, or 30%)") from None
    if percent:
        value = value / 100
    if not value.is_finite() or value <= 0 or value > 1:
        raise RoutingError("budget: a share above 0 and at most 1 (or a percentage up to 100%)")
    return value.quantize(Decimal("0.001"))


def parse_uniform_share(raw: object) -> Decimal | None:
    """The uniform random share of the budget as given by a form or the API: empty = keep the
    campaign's; a share in [0, 1], or a percentage written with %."""
    if raw is None or (isinstance(raw, str) and not raw.strip()):
        return None
    text = str(raw).strip()
    percent = text.endswith("%")
    try:
        value = Decimal(text.rstrip("%").strip())
    except InvalidOperation:
        raise RoutingError(
            f"uniform_share: {text!r} is not a number (a share like 0.25, or 25%)"
        ) from None
    if percent:
        value = value / 100
    if not value.is_finite() or value < 0 or value > 1:
        raise RoutingError("uniform_share: a share from 0 to 1 (or a percentage up to 100%)")
    return value.quantize(Decimal("0.001"))


@transaction.atomic
def campaign_routing_set(
    *,
    campaign: Campaign,
    item_order: str,
    budget: Decimal | None,
    uniform_share: Decimal | None = None,
) -> RankResult | None:
    """Sets how the campaign orders its items, its budget and (given) the uniform random share
    of the budget; ordering by uncertainty ranks the items at once (the result of that pass is
    returned). Back to the created order: ranks and held flags are cleared (nothing is held
    without a ranking) and the waiting items are for experts again (design "all")."""
    if item_order not in ItemOrder.values:
        raise RoutingError(f"item_order: one of {', '.join(ItemOrder.values)}")
    if budget is not None and item_order != ItemOrder.UNCERTAINTY:
        raise RoutingError("budget: a budget needs the items ordered by uncertainty")
    if uniform_share is not None and not Decimal(0) <= uniform_share <= Decimal(1):
        raise RoutingError("uniform_share: a share from 0 to 1")
    campaign = Campaign.objects.select_for_update().get(pk=campaign.pk)
    campaign.item_order = item_order
    campaign.routing_budget = budget
    fields = ["item_order", "routing_budget"]
    if uniform_share is not None:
        campaign.routing_uniform_share = uniform_share
        fields.append("routing_uniform_share")
    campaign.save(update_fields=fields)
    if item_order == ItemOrder.UNCERTAINTY:
        return campaign_rank(campaign=campaign)
    Item.objects.filter(campaign=campaign, route_held=True).update(route_held=False)
    _pool(campaign).filter(is_gold=False).update(design=ItemDesign.ALL, inclusion_probability=1.0)
    return None


def permanent_random_numbers(campaign: Campaign, items: list[Item]) -> list[float]:
    """Each item's permanent random number in [0, 1): a seeded hash of the campaign's sample
    seed and the proof's natural key (and the analysis, in a review campaign), never a
    database id, so the same campaign draws the same items in any database."""
    natural = proof_natural_keys(proof_ids=(item.proof_id for item in items))
    out = []
    for item in items:
        key = json.dumps(
            ["route", campaign.sample_seed, *natural[item.proof_id], item.analysis_id or 0]
        )
        out.append(int(hashlib.sha256(key.encode()).hexdigest()[:13], 16) / 16**13)
    return out


def _draw(campaign: Campaign, pool: list[Item], evidence: dict, remaining: int) -> None:
    """Sets each pool item's route_held, design and inclusion probability (module docstring);
    `pool` is in rank order."""
    u = float(campaign.routing_uniform_share)
    if campaign.routing_budget is None or remaining >= len(pool):
        for item in pool:
            item.route_held = False
            item.design, item.inclusion_probability = ItemDesign.ALL, 1.0
        return
    if u <= 0:
        for rank, item in enumerate(pool, start=1):
            item.route_held = rank > remaining
            item.design = ItemDesign.NOT_CHOSEN if item.route_held else ItemDesign.ROUTED
            item.inclusion_probability = None
        return
    weights = [evidence[item.proof_id].value for item in pool]
    pi = pps_probabilities(weights, remaining, uniform_share=u)
    numbers = permanent_random_numbers(campaign, pool)
    chosen = pareto_sample(pi, numbers, remaining)
    uniform_part = u * remaining / len(pool)
    for item, p, number, taken in zip(pool, pi, numbers, chosen, strict=True):
        item.route_held = not taken
        item.inclusion_probability = float(p)
        if not taken:
            item.design = ItemDesign.NOT_CHOSEN
        else:
            item.design = ItemDesign.UNIFORM if number < uniform_part else ItemDesign.ROUTED


def _pool(campaign: Campaign) -> QuerySet[Item]:
    """The items to rank, their rows locked (an expert's "next" skips them meanwhile)."""
    return (
        Item.objects.filter(campaign=campaign, is_final=False, is_gold=False)
        .exclude(Exists(Assignment.objects.filter(item_id=OuterRef("pk"))))
        .select_related("campaign")
        .select_for_update(of=("self",))
        .order_by("id")
    )


@transaction.atomic
def campaign_rank(*, campaign: Campaign) -> RankResult:
    """One ranking pass (see the module's docstring)."""
    campaign = Campaign.objects.select_for_update().get(pk=campaign.pk)
    if campaign.item_order != ItemOrder.UNCERTAINTY:
        raise RoutingError("item_order: the campaign does not order its items by uncertainty")
    pool = list(_pool(campaign))
    proof_ids = sorted({item.proof_id for item in pool})
    evidence = uncertainty_by_proof(proof_ids, automatic_posteriors(campaign, proof_ids))
    pool.sort(key=lambda item: (-evidence[item.proof_id].value, item.pk))
    result = RankResult(ranked=len(pool))
    remaining = len(pool)
    if campaign.routing_budget is not None:
        non_gold = Item.objects.filter(campaign=campaign, is_gold=False).count()
        result.allowance = math.ceil(campaign.routing_budget * non_gold)
        result.already_given = (
            Item.objects.filter(campaign=campaign, is_gold=False)
            .filter(Exists(Assignment.objects.filter(item_id=OuterRef("pk"))))
            .count()
        )
        remaining = max(0, result.allowance - result.already_given)
    # the loop labels proofs on its own scale: only a proof-grading campaign on it takes them
    takes_loop_labels = (
        campaign.scale == LOOP_SCALE and campaign.task_kind == TaskKind.PROOF_GRADING
    )
    loop_labels = _loop_labels([item.proof_id for item in pool]) if takes_loop_labels else {}
    now = timezone.now()
    _draw(campaign, pool, evidence, remaining)
    for rank, item in enumerate(pool, start=1):
        found = evidence[item.proof_id]
        item.route_rank = rank
        item.route_uncertainty = found.value
        item.route_components = found.components()
        item.route_ranked_at = now
        if item.route_held:
            result.held += 1
        else:
            result.served += 1
    update_by_id(
        pool,
        (
            "route_rank",
            "route_uncertainty",
            "route_components",
            "route_ranked_at",
            "route_held",
            "design",
            "inclusion_probability",
        ),
    )
    for item in (item for item in pool if item.route_held):
        if item.proof_id not in loop_labels:
            continue
        value, run_id = loop_labels[item.proof_id]
        final_label_set(
            item=item,
            value=value,
            source=LabelSource.AUTOMATIC,
            policy=(
                f"beyond the routing budget ({scales.shown(campaign.routing_budget * 100)}% of "
                f"the items for experts): rank {item.route_rank} of {len(pool)}, uncertainty "
                f"{item.route_uncertainty:.3f}; the label of the automated labelling loop, "
                f"run {run_id}"
            ),
            grade_ids=[],
        )
        result.auto_labelled += 1
    return result


def routing_items_added(*, campaign_id: int) -> RankResult | None:
    """New items in a campaign ordered by uncertainty are ranked where they belong (with the
    whole pool, so ranks stay a single order)."""
    campaign = Campaign.objects.get(pk=campaign_id)
    if campaign.item_order != ItemOrder.UNCERTAINTY:
        return None
    return campaign_rank(campaign=campaign)


def routing_loop_labelled(*, proof_id: int) -> int:
    """The loop labelled a proof: each campaign ordered by uncertainty that holds an item of it
    beyond its budget ranks again (and so takes the label). Returns how many campaigns did."""
    campaign_ids = (
        Item.objects.filter(
            proof_id=proof_id,
            route_held=True,
            is_final=False,
            campaign__item_order=ItemOrder.UNCERTAINTY,
        )
        .values_list("campaign_id", flat=True)
        .distinct()
    )
    campaigns = list(Campaign.objects.filter(pk__in=list(campaign_ids)))
    for campaign in campaigns:
        campaign_rank(campaign=campaign)
    return len(campaigns)
