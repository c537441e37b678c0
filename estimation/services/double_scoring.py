"""Adaptive double-scoring: a campaign whose `double_design` is adaptive spends its second
judgements where the experts are expected to disagree, with a uniform random share kept, and
records each item's probability of being double-scored (what the agreement figures weight by:
adjudication.metrics.agreement_weights).

When items are added (annotation's `items_added` signal), annotation has already drawn the
seeded uniform sample of `double_share` of them; here, for an adaptive campaign, the same number
of second judgements is drawn again among the batch's new items:
- each item's expected disagreement: where the campaign has a stored rater model fit, the
  chance that two independent judgements drawn from the fit's posterior for the proof (given
  its automatic judgements) differ, 1 - sum_c p_c^2; otherwise the proof's uncertainty from
  its automatic evidence (estimation.routing.uncertainty: the spread of its verifier scores,
  the graders' disagreement, imported ratings);
- probabilities: `double_uniform_share` of the draw uniform, the rest proportional to the
  expected disagreement (adjudication.estimators.pps_probabilities), so every item has a
  positive probability; a fixed-size Pareto pi-ps draw with each item's permanent random
  number (a seeded hash of the campaign's seed and the proof's natural key).
Items whose judgements were fixed by hand (`double_design` fixed) keep them.
"""

from __future__ import annotations

import hashlib
import json

from django.db import transaction

from adjudication.estimators import pareto_sample, pps_probabilities
from annotation.models import Campaign, DoubleDesign, Item
from core.queries import of_ids
from core.sql import update_by_id
from estimation.routing.services import uncertainty_by_proof
from estimation.services.confidence import automatic_posteriors
from problems.selectors import proof_natural_keys


def expected_disagreement(campaign: Campaign, proof_ids: list[int]) -> dict[int, float]:
    """Per proof, how likely two experts are to disagree (module docstring), 0-1."""
    posteriors = automatic_posteriors(campaign, proof_ids)
    evidence = uncertainty_by_proof(proof_ids, posteriors)
    out = {}
    for proof_id in proof_ids:
        found = posteriors.get(proof_id)
        if found is not None:
            out[proof_id] = max(0.0, 1.0 - sum(p * p for p in found.posterior))
        else:
            out[proof_id] = evidence[proof_id].value
    return out


def _random_numbers(campaign: Campaign, items: list[Item]) -> list[float]:
    natural = proof_natural_keys(proof_ids=(item.proof_id for item in items))
    out = []
    for item in items:
        key = json.dumps(
            ["double", campaign.sample_seed, *natural[item.proof_id], item.analysis_id or 0]
        )
        out.append(int(hashlib.sha256(key.encode()).hexdigest()[:13], 16) / 16**13)
    return out


@transaction.atomic
def double_scoring_items_added(*, campaign_id: int, item_ids: list[int]) -> int | None:
    """Draws the double-scored items of a new batch adaptively (module docstring). Returns how
    many are double-scored, or None when the campaign's double design is not adaptive."""
    campaign = Campaign.objects.get(pk=campaign_id)
    if campaign.double_design != DoubleDesign.ADAPTIVE:
        return None
    items = list(
        of_ids(Item.objects.select_for_update(), "pk", item_ids)
        .filter(double_design=DoubleDesign.UNIFORM, submitted_count=0, is_gold=False)
        .only("pk", "proof_id", "analysis_id", "required_judgements")
        .order_by("pk")
    )
    if not items:
        return 0
    doubles = sum(1 for item in items if item.required_judgements > 1)
    proof_ids = sorted({item.proof_id for item in items})
    disagreement = expected_disagreement(campaign, proof_ids)
    pi = pps_probabilities(
        [disagreement[item.proof_id] for item in items],
        doubles,
        uniform_share=float(campaign.double_uniform_share),
    )
    chosen = pareto_sample(pi, _random_numbers(campaign, items), doubles)
    for item, p, taken in zip(items, pi, chosen, strict=True):
        item.required_judgements = 2 if taken else 1
        item.double_design = DoubleDesign.ADAPTIVE
        item.double_probability = float(p)
    update_by_id(items, ("required_judgements", "double_design", "double_probability"))
    return int(chosen.sum())
