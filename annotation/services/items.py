"""Items: created from a selection of proofs, pinned to the approved scheme; finalised and
revealed by the adjudication app."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable
from dataclasses import dataclass, field
from decimal import ROUND_HALF_UP, Decimal
from itertools import islice

from django.db import transaction
from django.db.models import Exists, OuterRef, QuerySet

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
from core.queries import of_ids
from core.sql import copy_new
from problems.models import Problem, Proof
from problems.selectors import proof_natural_keys
from problems.services import texts_prerender_queue
from rubrics.selectors import scheme_generator_config_id, schemes_approved_for_problems

# Items one COPY writes: the rows of a batch are all the memory the write holds.
CREATE_BATCH = 10_000


@dataclass
class ItemsCreated:
    """What `items_create_from_selection` did, in numbers and words: the new items by id (a
    selection may hold more proofs than is wise to keep as model instances)."""

    created_ids: list[int] = field(default_factory=list)  # in creation order
    already_present: int = 0
    double_scored: int = 0
    without_scheme: list[str] = field(default_factory=list)  # problem external ids, each once
    generator_config: str = ""  # the campaign's generator configuration, by name
    not_from_config: list[str] = field(default_factory=list)  # problem external ids, each once

    @property
    def created_count(self) -> int:
        return len(self.created_ids)

    def summary(self) -> str:
        parts = [f"{self.created_count} item(s) created"]
        if not self.created_ids and not self.already_present:
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
    imported afresh, the demo, a test's database after others). The hashes are held as one
    array of 32-byte digests (2 MB for 70,000 keys), ordered as their hex digests are."""
    count = int((share * len(keys)).quantize(Decimal(1), rounding=ROUND_HALF_UP))
    if count == 0:
        return set()
    import numpy as np  # loaded when a sample is drawn, not at every start-up

    ids = np.fromiter(keys, dtype=np.int64, count=len(keys))
    digests = np.fromiter(
        (hashlib.sha256(json.dumps([seed, *key]).encode()).digest() for key in keys.values()),
        dtype="S32",
        count=len(keys),
    )
    return set(ids[np.argsort(digests, kind="stable")[:count]].tolist())


def _selected_proofs(proofs: Iterable[Proof]) -> list[tuple[int, int, str]]:
    """(id, problem id, problem external id) of each selected proof, in the selection's order;
    a queryset is read for these three columns only (not the proofs' texts)."""
    if isinstance(proofs, QuerySet):
        return list(proofs.values_list("pk", "problem_id", "problem__external_id"))
    proofs = list(proofs)
    names = dict(
        of_ids(Problem.objects.all(), "id", {p.problem_id for p in proofs}).values_list(
            "pk", "external_id"
        )
    )
    return [(p.pk, p.problem_id, names[p.problem_id]) for p in proofs]


def items_write(*, rows: Iterable[dict], result: ItemsCreated) -> list[int]:
    """Writes `rows` (Item attnames -> values, the same names in each; a generator is best: no
    more than a batch of them is ever held) CREATE_BATCH at a time by binary COPY
    (core.sql.copy_new), keeping of each only its id in `result` and counting the double-scored
    ones there; returns the created items' proof ids. Measured (benchmarks/bench_selection.py,
    one API call through gunicorn, 2026-12-06): 10,500 items a second through the ORM's
    bulk_create (its 20 fields prepared a row, a model instance made for each: 100,000 proofs
    in 9.5 s, a million outlasted the request's 60 s), 24,000 a second this way (a million in
    41 s, receivers and answer included)."""
    proof_ids: list[int] = []
    rows = iter(rows)
    while batch := list(islice(rows, CREATE_BATCH)):
        result.created_ids.extend(copy_new(Item, batch))
        for row in batch:
            proof_ids.append(row["proof_id"])
            result.double_scored += row["required_judgements"] > 1
    return proof_ids


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
    selected = _selected_proofs(proofs)
    result = ItemsCreated()
    # one statement, the selection's ids one array parameter (however many they are)
    existing = set(
        of_ids(
            Item.objects.filter(campaign=campaign, analysis__isnull=True),
            "proof",
            (pk for pk, _, _ in selected),
        ).values_list("proof_id", flat=True)
    )
    fresh = [row for row in selected if row[0] not in existing]
    result.already_present = len(selected) - len(fresh)
    del selected, existing
    approved = schemes_approved_for_problems({problem_id for _, problem_id, _ in fresh})
    config = campaign.generator_config
    if config is not None:
        result.generator_config = config.name
    natural = proof_natural_keys(proof_ids=(pk for pk, _, _ in fresh))
    doubles = double_scored_keys(
        seed=campaign.sample_seed,
        share=campaign.double_share,
        keys={pk: natural[pk] for pk, _, _ in fresh},
    )
    del natural
    design = item_design_fields(
        is_gold=is_gold,
        required_judgements=required_judgements,
        doubles=len(doubles),
        fresh=len(fresh),
    )
    unschemed: dict[str, None] = {}
    off_config: dict[str, None] = {}

    def rows():
        for pk, problem_id, external_id in fresh:
            if required_judgements is not None:
                required = required_judgements
            else:
                required = 2 if pk in doubles else 1
            scheme = approved.get(problem_id)
            if scheme is None:
                unschemed[external_id] = None
            elif config is not None and scheme_generator_config_id(scheme) != config.pk:
                off_config[external_id] = None
            yield {
                "campaign_id": campaign.pk,
                "proof_id": pk,
                "scheme_id": None if scheme is None else scheme.pk,
                "required_judgements": required,
                "is_gold": is_gold,
                **design,
            }

    proof_ids = items_write(rows=rows(), result=result)
    result.without_scheme = list(unschemed)
    result.not_from_config = list(off_config)
    texts_prerender_queue(proof_ids=proof_ids)
    if result.created_ids:
        # once for the whole creation, with every new item (the receivers draw and rank them
        # together)
        items_added.send(sender=Item, campaign_id=campaign.pk, item_ids=result.created_ids)
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
    return of_ids(Item.objects.all(), "pk", ids).exclude(Exists(graded)).update(scheme_id=scheme_id)


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
