"""Reads of the estimation app: the rater model's summary (the agreement page and API ask for it
through adjudication.rater_model, where estimation registers it)."""

from __future__ import annotations

from adjudication.models import FinalLabel
from annotation.models import Campaign
from estimation.models import RaterModelFit

LOW_CONFIDENCE = 0.9
LEAST_CONFIDENT_SHOWN = 20


def rater_model_summary(campaign: Campaign) -> dict | None:
    """The campaign's last rater-model fit (None before the first) with its labels' confidence:
    how many labels have one, their mean, how many fall below LOW_CONFIDENCE, the least
    confident ones, and whether a label changed since the fit (its confidence is then empty).
    Three queries."""
    fit = RaterModelFit.objects.filter(campaign=campaign).first()
    if fit is None:
        return None
    labels = FinalLabel.objects.filter(item__campaign=campaign)
    known = list(labels.values_list("confidence", flat=True))
    scored = [c for c in known if c is not None]
    least = list(
        labels.filter(confidence__isnull=False)
        .order_by("confidence", "item_id")
        .values("item_id", "value", "source", "confidence")[:LEAST_CONFIDENT_SHOWN]
    )
    return {
        "fit": fit,
        "raters": sorted(fit.raters, key=lambda r: (r["kind"] != "expert", r["error_rate"])),
        "labels": len(known),
        "with_confidence": len(scored),
        "without_confidence": len(known) - len(scored),
        "mean_confidence": sum(scored) / len(scored) if scored else None,
        "below": sum(c < LOW_CONFIDENCE for c in scored),
        "threshold": LOW_CONFIDENCE,
        "least_confident": least,
    }
