"""Label confidence: stores a campaign's rater-model fit and the confidence of each final label
(the fit itself is computed by exports.services.confidence, which sees every grader)."""

from __future__ import annotations

from decimal import Decimal

from django.db import transaction
from django.utils import timezone

from adjudication.models import FinalLabel, RaterModelFit


@transaction.atomic
def rater_model_store(
    *,
    campaign_id: int,
    classes: list[str],
    priors: list[float],
    raters: list[dict],
    items: int,
    gold: int,
    judgements: int,
    iterations: int,
    confidences: dict[int, tuple[Decimal, float]],
) -> RaterModelFit:
    """Replaces the campaign's fit and sets each labelled item's confidence (`confidences`:
    item id -> (the label value fitted, P(its class))). Labels left out, and labels whose value
    changed since it was read for the fit, get none (the next fit gives them one)."""
    fit, _ = RaterModelFit.objects.update_or_create(
        campaign_id=campaign_id,
        defaults={
            "classes": classes,
            "priors": priors,
            "raters": raters,
            "items": items,
            "gold": gold,
            "judgements": judgements,
            "iterations": iterations,
            "fitted_at": timezone.now(),
        },
    )
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
    return fit
