"""Reads of the estimation app: the rater model's summary (the agreement page and API ask for it
through adjudication.rater_model, where estimation registers it)."""

from __future__ import annotations

from adjudication.models import FinalLabel
from annotation.models import Campaign
from estimation.models import RaterModelFit

LOW_CONFIDENCE = 0.9
MODEL_NAMES = {
    "dawid-skene": "Dawid-Skene (a full confusion matrix per rater)",
    "one-coin": "one-coin (one accuracy per rater)",
    "ordinal": "ordinal (a severity and a precision per rater)",
    "ordinal-shrunk": "Dawid-Skene shrunk towards each rater's ordinal matrix",
    "dawid-skene-pooled": "Dawid-Skene shrunk towards the pooled matrix of the rater's group",
}
LEAST_CONFIDENT_SHOWN = 20


def rater_model_summary(campaign: Campaign) -> dict | None:
    """The campaign's last rater-model fit (None before the first) with its labels' confidence:
    how many labels have one, their mean, how many fall below LOW_CONFIDENCE, the least
    confident ones, and whether a label changed since the fit (its confidence is then empty);
    the model held-out calibration chose, each candidate's held-out log loss (best first), the
    temperature and the held-out calibration measured at fit time (RaterModelFit.calibration;
    empty for a fit made before it was measured). Three queries."""
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
    calibration = fit.calibration or {}
    return {
        "fit": fit,
        "model": fit.model,
        "model_name": MODEL_NAMES.get(fit.model, fit.model),
        "heldout_scores": sorted(fit.heldout_scores.items(), key=lambda kv: (kv[1], kv[0])),
        "temperature": fit.temperature,
        "calibration": calibration or None,
        "raters": sorted(fit.raters, key=lambda r: (r["kind"] != "expert", r["error_rate"])),
        "labels": len(known),
        "with_confidence": len(scored),
        "without_confidence": len(known) - len(scored),
        "mean_confidence": sum(scored) / len(scored) if scored else None,
        "below": sum(c < LOW_CONFIDENCE for c in scored),
        "threshold": LOW_CONFIDENCE,
        "least_confident": least,
    }
