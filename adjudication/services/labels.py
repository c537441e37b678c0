"""Final labels: the one place that writes them (and their confidence), and finalises the item
with annotation."""

from __future__ import annotations

from decimal import Decimal
from functools import partial

from django.db import transaction
from django.utils import timezone

from adjudication.models import AdjudicationCase, FinalLabel, LabelSource
from adjudication.signals import label_changed
from annotation.models import Item
from annotation.services import item_finalize
from core.queries import of_ids
from core.sql import insert_one, update_by_id


def label_write(
    *,
    item_id: int,
    scale: str,
    scheme_id: int | None,
    source: str,
    grade_ids: list[int],
    **columns: object,
) -> int:
    """Creates or replaces the item's final label in one statement (an upsert on the item) and
    returns its key; `columns` are the label's other columns by attname (value, policy,
    case_id, native value and maximum). A label that judgements no longer change (adjudication,
    import, labelling loop) also marks the item final; a label derived from the judgements
    (single, agreement) leaves the experts free to revise until the item is adjudicated or the
    campaign closes. Runs inside the caller's transaction, which holds the item's row lock;
    every submission that completes an item runs it (one INSERT ... ON CONFLICT DO UPDATE,
    core.sql.insert_one)."""
    source = LabelSource(source).value
    label = FinalLabel(
        item_id=item_id,
        scale=scale,
        scheme_id=scheme_id,
        source=source,
        grade_ids=sorted(grade_ids),
        **columns,
    )
    insert_one(label, unique=("item_id",), update=_REPLACED)
    label_id = label.pk
    if source not in DERIVED_SOURCES:
        item_finalize(item_id=item_id)
        transaction.on_commit(partial(label_changed.send, sender=FinalLabel, item_id=item_id))
    return label_id


# Labels computed from the experts' judgements: they follow revisions (`item_evaluate`).
DERIVED_SOURCES = frozenset({LabelSource.SINGLE, LabelSource.AGREEMENT})


_REPLACED = (
    "value",
    "scale",
    "source",
    "policy",
    "scheme_id",
    "grade_ids",
    "case_id",
    "native_value",
    "native_max",
    "updated_at",  # later than the rater model's fit: the label's confidence (the last fit's) is
    # shown as stale until the refit its change queued lands
)


@transaction.atomic
def final_label_set(
    *,
    item: Item,
    value: Decimal,
    source: str,
    policy: str,
    grade_ids: list[int],
    case: AdjudicationCase | None = None,
    native_value: Decimal | None = None,
    native_max: Decimal | None = None,
) -> int:
    """Creates or replaces the item's final label and returns its key (`label_write` says when
    the item becomes final)."""
    return label_write(
        item_id=item.pk,
        scale=item.campaign.scale,
        scheme_id=item.scheme_id,
        value=value,
        source=source,
        policy=policy,
        grade_ids=grade_ids,
        case_id=case.pk if case is not None else None,
        native_value=native_value,
        native_max=native_max,
    )


@transaction.atomic
def label_confidences_set(
    *, campaign_id: int, confidences: dict[int, tuple[Decimal, float]]
) -> None:
    """Sets the confidence of each labelled item of the campaign (`confidences`: item id -> (the
    label value fitted, P(its class)), from estimation's rater model). Labels left out get none;
    a label whose value changed since it was read for the fit keeps the confidence it had (its
    `updated_at`, later than the fit, shows it stale; the refit its change queued gives it one)."""
    labels = list(
        FinalLabel.objects.filter(item__campaign_id=campaign_id)
        # the labels' rows only: the join's item rows stay free for grading while a background
        # refit stores its confidences
        .select_for_update(of=("self",))
        .only("pk", "item_id", "value")
    )
    changed, stale = [], []
    for label in labels:
        value, found = confidences.get(label.item_id, (None, None))
        if found is None:
            label.confidence = None
        elif value == label.value:
            label.confidence = round(min(1.0, max(0.0, found)), 6)
        else:  # changed while the model was fitted: stale, its change later than the fit
            stale.append(label.pk)
            continue
        changed.append(label)
    update_by_id(changed, ("confidence",))  # one statement for a campaign of any size
    if stale:
        of_ids(FinalLabel.objects.all(), "id", stale).update(updated_at=timezone.now())
