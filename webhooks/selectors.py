"""Reads of the webhooks app: the hooks and their deliveries (admins only: the views and the API
check the role), and what each event's payload says, read from the lower apps' rows."""

from __future__ import annotations

from django.db.models import Count, Max, Prefetch, QuerySet
from django.shortcuts import get_object_or_404

from adjudication.models import AdjudicationCase, FinalLabel
from exports.models import ExportJob
from webhooks.models import Delivery, DeliveryAttempt, Webhook

DELIVERIES_SHOWN = 50


def webhook_list() -> QuerySet[Webhook]:
    """Every hook with its number of deliveries and the time of the last one."""
    return (
        Webhook.objects.annotate(
            delivery_count=Count("deliveries"), last_delivery_at=Max("deliveries__created_at")
        )
        .select_related("owner")
        .order_by("-created_at", "-id")
    )


def webhook_get(*, webhook_id: int) -> Webhook:
    return get_object_or_404(Webhook.objects.select_related("owner"), pk=webhook_id)


def webhook_deliveries(*, webhook: Webhook, limit: int = DELIVERIES_SHOWN) -> list[Delivery]:
    """The hook's latest deliveries, each with its tries (two statements)."""
    return list(
        webhook.deliveries.prefetch_related(
            Prefetch("tries", queryset=DeliveryAttempt.objects.order_by("number", "id"))
        )[:limit]
    )


def delivery_get(*, delivery_id: int) -> Delivery:
    return get_object_or_404(
        Delivery.objects.select_related("webhook").prefetch_related("tries"), pk=delivery_id
    )


def hooks_for(event: str) -> list[Webhook]:
    """The active hooks told of `event` (one statement; none, and nothing else is read)."""
    return list(Webhook.objects.filter(active=True, events__contains=[event]))


# --- What each event says ----------------------------------------------------------------------


def _number(value) -> str | None:
    return None if value is None else format(value.normalize(), "f")


def item_labelled_data(*, item_id: int) -> dict | None:
    label = (
        FinalLabel.objects.select_related("item__campaign")
        .filter(item_id=item_id)
        .only(
            "value",
            "scale",
            "source",
            "policy",
            "case_id",
            "updated_at",
            "item__proof_id",
            "item__campaign__slug",
        )
        .first()
    )
    if label is None:  # the label went again before the event was read
        return None
    return {
        "item": item_id,
        "proof": label.item.proof_id,
        "campaign": label.item.campaign.slug,
        "label": {
            "value": _number(label.value),
            "scale": label.scale,
            "source": label.source,
            "policy": label.policy,
            "case": label.case_id,
            "updated_at": label.updated_at.isoformat(),
        },
    }


def case_data(*, case_id: int) -> dict | None:
    case = (
        AdjudicationCase.objects.select_related("item__campaign", "resolved_by")
        .filter(pk=case_id)
        .first()
    )
    if case is None:
        return None
    return {
        "case": case.pk,
        "item": case.item_id,
        "proof": case.item.proof_id,
        "campaign": case.item.campaign.slug,
        "status": case.status,
        "opened_reason": case.opened_reason,
        "disagreement": _number(case.disagreement),
        "resolution": case.resolution,
        "score": _number(case.score),
        "resolved_by": case.resolved_by.get_username() if case.resolved_by else None,
        "resolved_at": case.resolved_at.isoformat() if case.resolved_at else None,
    }


def export_data(*, job_id: int) -> dict | None:
    job = ExportJob.objects.select_related("campaign").filter(pk=job_id).first()
    if job is None:
        return None
    return {
        "export": job.pk,
        "campaign": job.campaign.slug,
        "format": job.format,
        "file_type": job.file_type,
        "status": job.status,
        "rows": job.processed,
        "size": job.size,
        "sha256": job.sha256 or None,
        "error": job.error,
        "finished_at": job.finished_at.isoformat() if job.finished_at else None,
        "api": f"/api/v1/exports/{job.pk}/",
    }
