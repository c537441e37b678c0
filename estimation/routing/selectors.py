"""Reads of routing by uncertainty."""

from django.db.models import QuerySet

from annotation.models import Campaign


def routing_queue(campaign: Campaign) -> QuerySet:
    """The campaign's ranked items, rank 1 (most uncertain) first, with what the queue page and
    API show (proof, problem, final label) in one query."""
    return (
        campaign.items.filter(route_rank__isnull=False)
        .select_related("proof__problem", "final_label")
        .order_by("route_rank", "id")
    )
