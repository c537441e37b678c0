"""Gold items: final labels an admin vouches for, mixed into expert queues by annotation."""

from __future__ import annotations

from django.contrib.auth.models import AbstractBaseUser
from django.db import transaction

from adjudication.models import FinalLabel, LabelSource
from adjudication.services.detection import AdjudicationError
from annotation.models import Item

GOLD_SOURCES = {LabelSource.ADJUDICATION, LabelSource.AGREEMENT, LabelSource.IMPORTED}


@transaction.atomic
def item_gold_set(*, item: Item, gold: bool, user: AbstractBaseUser) -> Item:
    """Marks (or unmarks) an item as gold. Only an item with a final label reached by
    adjudication, agreement or import can be gold: its label is what experts are checked on."""
    item = Item.objects.select_for_update().get(pk=item.pk)
    if gold:
        label = FinalLabel.objects.filter(item=item).first()
        if label is None or label.source not in GOLD_SOURCES:
            raise AdjudicationError(
                f"item {item.pk} needs a final label by adjudication, agreement or import "
                "before it can be gold"
            )
    if item.is_gold != gold:
        item.is_gold = gold
        item.save(update_fields=["is_gold"])
    return item
