"""Writes of the annotation app (HackSoft style: keyword-only, typed, atomic).

Split by sub-domain: items (creation, finalising), campaigns, assignment (leases, next item),
grading (drafts, submission, revision).
"""

from annotation.services.items import (
    ItemsCreated,
    double_scored_keys,
    item_finalize,
    item_reveal_judgements,
    items_create_from_selection,
)

__all__ = [
    "ItemsCreated",
    "double_scored_keys",
    "item_finalize",
    "item_reveal_judgements",
    "items_create_from_selection",
]
