"""Reads of the estimation app: the rater model's summary (the agreement page and API ask for it
through adjudication.rater_model, where estimation registers it)."""

from __future__ import annotations

from datetime import datetime

from django.utils import timezone

from adjudication.models import FinalLabel
from annotation.models import Campaign
from estimation.models import RaterModelFit, RaterModelRefit
from jobs.models import JobStatus

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
    confident ones, how many labels changed since the fit (their confidence, the fit's, is
    stale until the refit their change queued lands) and the fit's age (`freshness`); the model
    held-out calibration chose, each candidate's held-out log loss (best first), the temperature
    and the held-out calibration measured at fit time (RaterModelFit.calibration; empty for a
    fit made before it was measured)."""
    fit = RaterModelFit.objects.filter(campaign=campaign).first()
    if fit is None:
        return None
    labels = FinalLabel.objects.filter(item__campaign=campaign)
    known = list(labels.values_list("confidence", flat=True))
    scored = [c for c in known if c is not None]
    least = list(
        labels.filter(confidence__isnull=False)
        .order_by("confidence", "item_id")
        .values("item_id", "value", "source", "confidence", "updated_at")[:LEAST_CONFIDENT_SHOWN]
    )
    for row in least:
        row["stale"] = row.pop("updated_at") > fit.fitted_at
    stale = labels.filter(confidence__isnull=False, updated_at__gt=fit.fitted_at)
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
        "stale": stale.count(),
        "freshness": rater_model_freshness(campaign),
    }


UNCHECKED_CAVEAT = (
    "Unchecked: {cases} held-out case{plural}, fewer than {minimum}, too few to measure how well "
    "these confidences are calibrated. On simulated campaigns this small (about 20 expert "
    "labels) such confidences were off by 0.10-0.17 on average (benchmarks/RESULTS.md): read "
    "them as the model's ranking of the labels (lower: more doubtful), not as probabilities, "
    "until more items are double-scored or gold."
)


def confidence_standing(calibration: dict | None) -> tuple[bool, str]:
    """Whether the fit's label confidences are backed by a measured calibration (at least the
    minimum of held-out cases) and, when not, the caveat the pages, the API and the export card
    state beside them. A fit from before calibration was measured is unchecked too."""
    calibration = calibration or {}
    if calibration.get("enough"):
        return True, ""
    cases = int(calibration.get("cases") or 0)
    minimum = int(calibration.get("minimum") or 30)
    return False, UNCHECKED_CAVEAT.format(
        cases=cases, plural="" if cases == 1 else "s", minimum=minimum
    )


def age_words(seconds: float) -> str:
    """'less than a minute ago', '3 min ago', '2 h ago', '4 days ago'."""
    seconds = max(0.0, seconds)
    if seconds < 60:
        return "less than a minute ago"
    if seconds < 3600:
        return f"{int(seconds // 60)} min ago"
    if seconds < 86400:
        return f"{int(seconds // 3600)} h ago"
    days = int(seconds // 86400)
    return f"{days} day{'s' if days != 1 else ''} ago"


def freshness_words(
    *, fitted_at: datetime | None, changes: int, state: str | None, now: datetime
) -> str:
    """The fit's age in words: "fitted 3 min ago", "fitted 3 min ago, before the 2 latest
    changes; refit queued", "not fitted yet; refit queued"."""
    if fitted_at is None:
        words = "not fitted yet"
    else:
        words = f"fitted {age_words((now - fitted_at).total_seconds())}"
        if changes:
            latest = "the latest change" if changes == 1 else f"the {changes} latest changes"
            words += f", before {latest}"
    if state == "queued":
        words += "; refit queued"
    elif state == "running":
        words += "; refitting now"
    elif state == "failed":
        words += "; the last refit failed"
    return words


def rater_model_freshness(campaign: Campaign) -> dict:
    """How current the campaign's label confidences are (adjudication.rater_model's
    `rater_model_freshness` says the fields). Two queries."""
    from estimation.services.refit import OPEN, WAITING, changes_since_fit

    fit = RaterModelFit.objects.filter(campaign=campaign).only("fitted_at", "calibration").first()
    fitted_at = fit.fitted_at if fit is not None else None
    checked, caveat = confidence_standing(fit.calibration if fit is not None else None)
    open_states = set(
        RaterModelRefit.objects.filter(campaign=campaign, status__in=OPEN).values_list(
            "status", flat=True
        )
    )
    changes = changes_since_fit(campaign.pk, fit)
    if open_states & set(WAITING):
        state = "queued"
    elif JobStatus.RUNNING in open_states:
        state = "running"
    elif changes:
        state = "failed"
    else:
        state = None
    return {
        "fitted_at": fitted_at,
        "changes": changes,
        "state": state,
        "words": freshness_words(
            fitted_at=fitted_at, changes=changes, state=state, now=timezone.now()
        ),
        # whether the confidences are backed by a measured calibration, and else the caveat
        "checked": checked if fit is not None else False,
        "caveat": caveat if fit is not None else "",
    }
