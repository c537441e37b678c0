"""Items: created from a selection of proofs, pinned to the approved scheme; finalised and
revealed by the adjudication app."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable
from dataclasses import dataclass, field
from decimal import ROUND_HALF_UP, Decimal

from django.db import transaction
from django.db.models import Exists, OuterRef

from annotation.models import (
    Campaign,
    CampaignStatus,
    DoubleDesign,
    Grade,
    GradeStatus,
    Item,
    ItemDesign,
    TaskKind,
)
from annotation.services.grade_checks import (
    GradeError,
)
from annotation.signals import items_added
from problems.models import Proof
from problems.selectors import proof_natural_keys
from problems.services import texts_prerender_queue
from rubrics.selectors import scheme_generator_config_id, schemes_approved_for_problems


@dataclass
class ItemsCreated:
    """What `items_create_from_selection` did, in numbers and words."""

    created: list[Item] = field(default_factory=list)
    already_present: int = 0
    double_scored: int = 0
    without_scheme: list[str] = field(default_factory=list)  # problem external ids
    generator_config: str = ""  # the campaign's generator configuration, by name
    not_from_config: list[str] = field(default_factory=list)  # problem external ids

    def summary(self) -> str:
        parts = [f"{len(self.created)} item(s) created"]
        if not self.created and not self.already_present:
            parts = [
                "No item created: the selection holds nothing to make one of (in an analysis "
                "review, no verifier analysis of the selected proofs)"
            ]
        if self.already_present:
            parts.append(f"{self.already_present} already in the campaign")
        parts.append(f"{self.double_scored} double-scored")
        if self.without_scheme:
            parts.append(
                "no approved marking scheme (items pinned to none) for "
                + ", ".join(sorted(set(self.without_scheme)))
            )
        if self.not_from_config:
            parts.append(
                f"warning: the pinned scheme was not generated with “{self.generator_config}” "
                "for " + ", ".join(sorted(set(self.not_from_config)))
            )
        return "; ".join(parts) + "."


def double_scored_keys(*, seed: int, share: Decimal, keys: dict[int, tuple[str, ...]]) -> set[int]:
    """The reproducible double-scored sample: of `keys` (ids, each with its natural key), the
    round(share * n) with the smallest seeded hash of their natural key. Never database ids:
    the same seed and the same selection give the same sample in any database (a corpus
    imported afresh, the demo, a test's database after others)."""
    count = int((share * len(keys)).quantize(Decimal(1), rounding=ROUND_HALF_UP))
    ranked = sorted(
        keys,
        key=lambda key: hashlib.sha256(json.dumps([seed, *keys[key]]).encode()).hexdigest(),
    )
    return set(ranked[:count])


def item_design_fields(
    *, is_gold: bool, required_judgements: int | None, doubles: int, fresh: int
) -> dict:
    """The sampling design recorded on an item at its creation: every created item is for
    experts (probability 1; gold items as gold); double-scored by the seeded sample of
    `doubles` of the `fresh` items (each has probability doubles / fresh: a simple random
    sample), or fixed by hand (probability 1 or 0). Routing redraws the expert design of the
    items it ranks (estimation.routing); adaptive double-scoring redraws the double design."""
    fields = {
        "design": ItemDesign.GOLD if is_gold else ItemDesign.ALL,
        "inclusion_probability": 1.0,
    }
    if required_judgements is not None:
        fields["double_design"] = DoubleDesign.FIXED
        fields["double_probability"] = 1.0 if required_judgements > 1 else 0.0
    else:
        fields["double_design"] = DoubleDesign.UNIFORM
        fields["double_probability"] = doubles / fresh if fresh else 0.0
    return fields


ROUND_TAKES_GOLD_ONLY = (
    "A calibration round takes only copies of gold items: make one under Calibration, New "
    "calibration round."
)

REVIEW_TAKES_ANALYSES = (
    "An analysis review campaign takes the verifier analyses of the selected proofs, not the "
    "proofs themselves (analysis_items_create)."
)


@transaction.atomic
def items_create_from_selection(
    *,
    campaign: Campaign,
    proofs: Iterable[Proof],
    required_judgements: int | None = None,
    is_gold: bool = False,
) -> ItemsCreated:
    """One item per proof not yet in the campaign, each pinned to its problem's approved scheme
    (else its newest frozen one; or to none, reported). When the campaign names a generator
    configuration, problems whose pinned scheme was not generated with it are named as a
    warning. The double-scored share comes from the campaign's seeded sample
    unless `required_judgements` fixes it for every item. A calibration round is refused: its
    items are copies of gold items, made by the calibration app with the gold they are checked
    against (items added here would get no gold answer and no label)."""
    if campaign.is_calibration:
        raise GradeError(ROUND_TAKES_GOLD_ONLY)
    if campaign.task_kind == TaskKind.ANALYSIS_REVIEW:
        raise GradeError(REVIEW_TAKES_ANALYSES)
    proofs = list(proofs)
    result = ItemsCreated()
    existing = set(
        Item.objects.filter(
            campaign=campaign, analysis__isnull=True, proof__in=[p.pk for p in proofs]
        ).values_list("proof_id", flat=True)
    )
    fresh = [p for p in proofs if p.pk not in existing]
    result.already_present = len(proofs) - len(fresh)
    approved = schemes_approved_for_problems({p.problem_id for p in fresh})
    config = campaign.generator_config
    if config is not None:
        result.generator_config = config.name
    natural = proof_natural_keys(proof_ids=(p.pk for p in fresh))
    doubles = double_scored_keys(
        seed=campaign.sample_seed,
        share=campaign.double_share,
        keys={p.pk: natural[p.pk] for p in fresh},
    )
    design = item_design_fields(
        is_gold=is_gold,
        required_judgements=required_judgements,
        doubles=len(doubles),
        fresh=len(fresh),
    )
    rows = []
    for proof in fresh:
        if required_judgements is not None:
            required = required_judgements
        else:
            required = 2 if proof.pk in doubles else 1
        scheme = approved.get(proof.problem_id)
        if scheme is None:
            result.without_scheme.append(proof.problem.external_id)
        elif config is not None and scheme_generator_config_id(scheme) != config.pk:
            result.not_from_config.append(proof.problem.external_id)
        rows.append(
            Item(
                campaign=campaign,
                proof=proof,
                scheme=scheme,
                required_judgements=required,
                is_gold=is_gold,
                **design,
            )
        )
    result.created = Item.objects.bulk_create(rows)
    texts_prerender_queue(proof_ids=[item.proof_id for item in result.created])
    result.double_scored = sum(1 for item in result.created if item.required_judgements > 1)
    if result.created:
        items_added.send(
            sender=Item, campaign_id=campaign.pk, item_ids=[i.pk for i in result.created]
        )
    return result


@transaction.atomic
def items_repin_to_scheme(*, scheme_id: int, problem_id: int) -> int:
    """Moves the items waiting for the problem's newly approved version to it: items of open
    campaigns whose proof is of the problem, not final, with no submitted grade, pinned to
    another version or to none. Items with a submitted grade keep the version they were
    graded under (their grades point at it). Returns how many moved. The candidates are locked
    first, so that a grade submitted meanwhile (under the item's lock) is seen below."""
    candidates = (
        Item.objects.select_for_update(of=("self",))
        .filter(proof__problem_id=problem_id, campaign__status=CampaignStatus.OPEN, is_final=False)
        .exclude(scheme_id=scheme_id)
    )
    ids = list(candidates.order_by("pk").values_list("pk", flat=True))
    if not ids:
        return 0
    graded = Grade.objects.filter(item=OuterRef("pk"), status=GradeStatus.SUBMITTED)
    return Item.objects.filter(pk__in=ids).exclude(Exists(graded)).update(scheme_id=scheme_id)


@transaction.atomic
def item_set_gold(*, item: Item, is_gold: bool = True) -> Item:
    """Marks an item gold (mixed into experts' queues at the campaign's gold rate, never
    counted as normal work) or back to normal."""
    item = Item.objects.select_for_update().get(pk=item.pk)
    if item.is_gold != is_gold:
        item.is_gold = is_gold
        item.save(update_fields=["is_gold"])
    return item


@transaction.atomic(savepoint=False)
def item_finalize(*, item_id: int) -> None:
    """Marks the item's label final: no more assignments or revisions, judgements visible to
    the experts who made them and to each other. Idempotent; one statement, so a caller that
    holds the item's lock (adjudication) pays no savepoint for it."""
    Item.objects.filter(pk=item_id, is_final=False).update(is_final=True)


@transaction.atomic
def item_reveal_judgements(*, item: Item) -> Item:
    """Lets the item's experts see each other's judgements (an adjudicator returned the case
    for discussion). Idempotent."""
    item = Item.objects.select_for_update().get(pk=item.pk)
    if not item.judgements_visible:
        item.judgements_visible = True
        item.save(update_fields=["judgements_visible"])
    return item
