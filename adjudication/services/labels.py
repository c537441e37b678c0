"""Final labels: the one place that writes them (and their confidence), and finalises the item
with annotation."""

from __future__ import annotations

from decimal import Decimal

from django.db import transaction

from adjudication.models import AdjudicationCase, FinalLabel, LabelSource
from annotation.models import Item
from annotation.services import item_finalize
from core.rows import row_upsert


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
    every submission that completes an item runs it, hence no model instance
    (`core.rows.row_upsert`)."""
    source = LabelSource(source).value
    label_id = row_upsert(
        FinalLabel,
        unique="item_id",
        replaced=_REPLACED,
        values={
            "item_id": item_id,
            "scale": scale,
            "scheme_id": scheme_id,
            "source": source,
            "grade_ids": sorted(grade_ids),
            **columns,
        },
    )
    if source not in DERIVED_SOURCES:
        item_finalize(item_id=item_id)
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
    "confidence",  # a new label's confidence is unknown until the rater model is fitted again
    "updated_at",
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
    label value fitted, P(its class)), from estimation's rater model). Labels left out, and
    labels whose value changed since it was read for the fit, get none (the next fit gives them
    one)."""
    labels = list(
        FinalLabel.objects.filter(item__campaign_id=campaign_id)
        .select_for_update()
        .only("pk", "item_id", "value")
    )
    for label in labels:
        value, found = confidences.get(label.item_id, (None, None))
        fresh = found is not None and value == label.value
        label.confidence = round(min(1.0, max(0.0, found)), 6) if fresh else None
    FinalLabel.objects.bulk_update(labels, ["confidence"], batch_size=500)
