"""Final labels: the one place that writes them, and finalises the item with annotation."""

from __future__ import annotations

from decimal import Decimal

from django.db import transaction

from adjudication.models import AdjudicationCase, FinalLabel, LabelSource
from annotation.models import Item
from annotation.services import item_finalize


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
) -> FinalLabel:
    """Creates or replaces the item's final label, then marks the item final (annotation)."""
    label, _ = FinalLabel.objects.update_or_create(
        item=item,
        defaults={
            "value": value,
            "scale": item.campaign.scale,
            "source": LabelSource(source).value,
            "policy": policy,
            "scheme_id": item.scheme_id,
            "grade_ids": sorted(grade_ids),
            "case": case,
            "native_value": native_value,
            "native_max": native_max,
        },
    )
    item_finalize(item=item)
    return label
